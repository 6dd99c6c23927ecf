#!/usr/bin/env bash
# tests/xla/stablehlo_corpus.sh — every StableHLO module torchtpu emits, compiled by XLA's CPU
# plugin (issue 11 item 4). Runs the PJRT device suites and the TorchScript suites with
# TORCHTPU_DUMP_STABLEHLO set (each module the TPU emulator compiled lands in
# <corpus>/tpu/<hash>.mlir, deduplicated by content), then the three digits models of
# data/models through torchtpu-run on the emulator, then compiles the whole corpus with
# xla_cpu_pjrt.so through torchtpu's PJRT client (tests/xla/compile_corpus.cpp): it prints the
# corpus size and fails on a rejection, naming the module and XLA's message.
#
# Usage: tests/xla/stablehlo_corpus.sh [BUILD] [--reuse]
#   BUILD    a build directory (default build) whose pjrt and jit tests and torchtpu-run are built
#            (meson compile -C BUILD); they are run as they are (--no-rebuild).
#   --reuse  do not run the test suites: the corpus was dumped by the caller's own test run
#            (scripts/test runs its main `meson test` with TORCHTPU_DUMP_STABLEHLO=BUILD/stablehlo-corpus).
# Environment: TORCHTPU_XLA_CPU_PLUGIN (default: the one in .venv).
# Exit status 77 (skipped) when XLA's CPU plugin is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
reuse=${2:-}
corpus=$PWD/$build/stablehlo-corpus
plugin=${TORCHTPU_XLA_CPU_PLUGIN:-$(ls .venv/lib/python3*/site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so 2>/dev/null | head -n 1)}
if [ -z "$plugin" ] || [ ! -f "$plugin" ]; then
  echo "stablehlo_corpus: skipped: XLA's CPU plugin not found (scripts/deps.sh setup_venv installs it)"
  exit 77
fi
meson compile -C "$build" tests/xla/compile_corpus >/dev/null
if [ "$reuse" != "--reuse" ]; then
  rm -rf "$corpus"
  # Every pjrt and jit test but those that feed fake plugins made-up programs, and the XLA checks.
  mapfile -t tests < <(meson test -C "$build" --list 2>/dev/null | grep -E '(^|[:+])(pjrt|jit)([+ ]|$)' |
    sed 's/.* \/ //' | grep -vE '^(device_fake_plugin|xla_abi|xla_abi_header)$')
  echo "stablehlo_corpus: running ${#tests[@]} test programs with TORCHTPU_DUMP_STABLEHLO=$corpus"
  TORCHTPU_DUMP_STABLEHLO=$corpus meson test -C "$build" --no-rebuild --print-errorlogs "${tests[@]}" >"$build/stablehlo-corpus.log" 2>&1 ||
    { tail -n 40 "$build/stablehlo-corpus.log"; echo "stablehlo_corpus: the test suites failed"; exit 1; }
fi
# The digits models (traced and frozen in data/models) on the emulator, one batch each.
if [ -x "$build/tools/torchtpu-run" ] || meson compile -C "$build" torchtpu-run >/dev/null 2>&1; then
  for m in mlp cnn transformer; do
    TORCHTPU_DUMP_STABLEHLO=$corpus TORCHTPU_CACHE_DIR= TORCHTPU_TPU_EMULATOR=1 \
      TORCHTPU_TPU_EMULATOR_PATH="$PWD/$build/src/device/libtorchtpu_tpu_emulator.so" \
      "$build/tools/torchtpu-run" "data/models/$m.pt" --data data/digits_test.csv --device tpu >/dev/null ||
      { echo "stablehlo_corpus: $m on the TPU emulator failed"; exit 1; }
  done
  echo "stablehlo_corpus: dumped the digits models (mlp, cnn, transformer)"
else
  echo "stablehlo_corpus: torchtpu-run not built (no libtorch): the digits models are not in the corpus"
fi
"$build/tests/xla/compile_corpus" "$plugin" "$corpus/tpu"
