#!/usr/bin/env bash
# bench/tools/qemu_insn_count.sh — dynamic aarch64 instruction counts under qemu-user (issue 14):
# instructions per element of W1 and per FMA of an n x n x n sgemm, torchtpu against Eigen 3.4's
# NEON build of the same workload (bench/aarch64_counts.cpp, one thread).
#
# Usage (from the checkout):
#   bench/tools/qemu_insn_count.sh                 # the table: W1 (N=4096), sgemm n=64, 96, 128
#   bench/tools/qemu_insn_count.sh count PROG ARGS # total instructions of one run of an aarch64 PROG
# Environment: TORCHTPU_CPU_ISA / TORCHTPU_DISABLE_SIMD pass through to the program (rerun with
# TORCHTPU_CPU_ISA=scalar to count the scalar path once the NEON path exists); W1_N, GEMM_NS
# override the sizes; CXX (default aarch64-linux-gnu-g++), CXXFLAGS_EXTRA (e.g. -mcpu=neoverse-n1).
#
# How it counts: Debian's qemu-user 7.2 has no TCG plugins, so the program runs with
# `-singlestep` (one guest instruction per translation block) and `-d exec,nochain` (a "Trace"
# log line for every block executed, none skipped by block chaining); the count of those lines
# is the number of guest instructions executed, all threads together. A region is measured by
# difference: the program runs its workload once untimed and then REPS times, with REPS = 1 and
# REPS = 2, so start-up, set-up and the warm-up run cancel and the difference is one run of the
# workload. (Checked on a 3-instruction asm loop: 1000 more iterations = 3000 more lines.)
# Single-stepping is slow (~10-30 M instructions/s here): keep sizes small.
set -euo pipefail
cd "$(dirname "$0")/../.."
sysroot=/usr/aarch64-linux-gnu
qemu=(qemu-aarch64 -L "$sysroot")

# count PROG ARGS...: prints the number of guest instructions of one run (program output: stderr).
count() {
  # qemu writes its log to fd 3 (the pipe to grep); the program's stdout goes to our stderr.
  { "${qemu[@]}" -singlestep -d exec,nochain -D /dev/fd/3 "$@" 3>&1 1>&2; } | grep -c '^Trace' || true
}

if [ "${1:-}" = "count" ]; then
  shift
  count "$@"
  exit 0
fi

# Build the workload program for aarch64: -O2, NEON is baseline (no -march needed for Eigen's
# NEON kernels); header-only fmt; headers of host-only packages through scripts/cross's shim.
out=build-aarch64-counts
mkdir -p "$out"
prog=$out/aarch64_counts
cxx=${CXX:-aarch64-linux-gnu-g++}
if [ ! -x "$prog" ] || [ bench/aarch64_counts.cpp -nt "$prog" ] || [ -n "$(find include -newer "$prog" -name '*.hpp' | head -n 1)" ]; then
  echo "building $prog ($cxx -O2)" >&2
  # shellcheck disable=SC2086
  "$cxx" -std=c++20 -O2 -DNDEBUG -DFMT_HEADER_ONLY=1 -Wall -Wextra -Werror -Wno-psabi ${CXXFLAGS_EXTRA:-} \
    -isystem scripts/cross/aarch64-include -Iinclude bench/aarch64_counts.cpp -o "$prog" -pthread -ldl
fi
export TORCHTPU_NUM_THREADS=1

# The two implementations compute the same values (else the counts compare different work).
"${qemu[@]}" "$prog" check w1 4096 0
"${qemu[@]}" "$prog" check gemm 64 0

# per WORK N UNITS IMPL: instructions per unit of one run (REPS=2 minus REPS=1).
per() {
  local work=$1 n=$2 units=$3 impl=$4 c1 c2
  c1=$(count "$prog" "$impl" "$work" "$n" 1 2>/dev/null)
  c2=$(count "$prog" "$impl" "$work" "$n" 2 2>/dev/null)
  python3 -c "import sys; print(f'{($c2 - $c1) / $units:.3f}')"
}

w1_n=${W1_N:-4096}
isa="${TORCHTPU_CPU_ISA:-default}${TORCHTPU_DISABLE_SIMD:+ (TORCHTPU_DISABLE_SIMD=$TORCHTPU_DISABLE_SIMD)}"
echo "aarch64 dynamic instructions under qemu-user (-singlestep), one thread; torchtpu ISA: $isa"
printf '%-28s %14s %14s %8s\n' "workload" "torchtpu" "Eigen 3.4" "ratio"
t=$(per w1 "$w1_n" "$w1_n" torchtpu)
e=$(per w1 "$w1_n" "$w1_n" eigen)
printf '%-28s %14s %14s %8s\n' "W1 N=$w1_n (insn/elem)" "$t" "$e" "$(python3 -c "print(f'{$t / $e:.2f}')")"
for n in ${GEMM_NS:-64 96 128}; do
  fmas=$((n * n * n))
  t=$(per gemm "$n" "$fmas" torchtpu)
  e=$(per gemm "$n" "$fmas" eigen)
  printf '%-28s %14s %14s %8s\n' "sgemm n=$n (insn/FMA)" "$t" "$e" "$(python3 -c "print(f'{$t / $e:.2f}')")"
done
