#!/usr/bin/env bash
# bench/compile_time/run.sh — compile-time benchmark: the same 10-op elementwise expression
# materialized once, in torchtpu, xtensor 0.24 and Eigen 3.4 translation units, each compiled
# at -O2 (-c, object file only). Runs are interleaved (torchtpu, xtensor, eigen, repeat) so
# machine load affects all three alike; prints the median of N runs (default 3) of wall time
# and of CPU time (user + sys, steadier on a shared machine), in seconds.
# Usage: bench/compile_time/run.sh [runs]      (CXX=clang++ to use another compiler)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${1:-3}
cxx=${CXX:-g++}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A flags=(
  [torchtpu]="-I$root/include"
  [xtensor]=""
  [eigen]="-I/usr/include/eigen3"
)
libs=(torchtpu xtensor eigen)
for lib in "${libs[@]}"; do : >"$out/$lib.times"; done
for ((r = 1; r <= runs; ++r)); do
  for lib in "${libs[@]}"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S" -o "$out/t" "$cxx" -std=c++20 -O2 ${flags[$lib]} \
      -c "$here/${lib}_tu.cpp" -o "$out/$lib.o"
    cat "$out/t" >>"$out/$lib.times"
  done
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "compiler: $($cxx --version | head -1); $runs interleaved runs; median seconds"
printf '%-10s %8s %8s\n' library wall cpu
for lib in "${libs[@]}"; do
  wall=$(awk '{print $1}' "$out/$lib.times" | median)
  cpu=$(awk '{printf "%.2f\n", $2 + $3}' "$out/$lib.times" | median)
  printf '%-10s %8s %8s\n' "$lib" "$wall" "$cpu"
done
