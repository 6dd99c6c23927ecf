#!/usr/bin/env bash
# tools/device_check.sh — one prepared run on a machine with a real accelerator (an NVIDIA
# H200 with jax, jaxlib and XLA's CUDA PJRT plugin, `jax-cuda13-pjrt` or `jax-cuda12-pjrt`):
#   1. build torchtpu (tests + bench) in build-device-check/,
#   2. point the `cuda` device at XLA's CUDA plugin (TORCHTPU_PJRT_PLUGIN_CUDA, else discovery),
#   3. run the device test subset (tests/device_ops lowering + modes) on `cuda`,
#   4. time a fused 3-layer MLP forward and a 10-op elementwise chain against jax.jit of the
#      same functions, and print the figures.
# Usage: tools/device_check.sh [reps=20]. Exit status: non-zero if the build or a test fails.
# Nothing here runs without such a machine; in CI the emulator covers the same code paths.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-20}
BUILD=build-device-check
PY=${PYTHON:-python3}
log() { printf '\n== %s\n' "$*"; }

log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi: not found"
"$PY" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, "devices", jax.devices())'

log "XLA CUDA PJRT plugin"
if [[ -z "${TORCHTPU_PJRT_PLUGIN_CUDA:-}" ]]; then
  TORCHTPU_PJRT_PLUGIN_CUDA=$("$PY" - <<'PY'
import importlib, os
for name in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
    try:
        mod = importlib.import_module(name)
    except Exception:
        continue
    path = os.path.join(os.path.dirname(mod.__file__), "xla_cuda_plugin.so")
    if os.path.isfile(path):
        print(path)
        break
PY
)
fi
if [[ -z "${TORCHTPU_PJRT_PLUGIN_CUDA}" ]]; then
  echo "no xla_cuda_plugin.so found via python; relying on torchtpu's own discovery (site-packages)"
  unset TORCHTPU_PJRT_PLUGIN_CUDA
else
  echo "TORCHTPU_PJRT_PLUGIN_CUDA=${TORCHTPU_PJRT_PLUGIN_CUDA}"
  export TORCHTPU_PJRT_PLUGIN_CUDA
fi
# XLA's GPU client grabs most GPU memory by default; leave room for jax in the same run.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.4}

log "build ($BUILD)"
if [[ ! -d $BUILD ]]; then meson setup "$BUILD" -Dbench=true -Dtests=true; fi
ninja -C "$BUILD"

log "device tests on cuda (tests/device_ops, emulator-only cases excluded)"
export TORCHTPU_TEST_DEVICE=cuda
status=0
for t in test_device_lowering test_device_modes; do
  "$BUILD/tests/device_ops/$t" '~[emulator]' --reporter compact || status=1
done

log "torchtpu on cuda: fused vs strict, compile latency (bench/device_modes.cpp)"
"$BUILD/bench/bench_device_modes" cuda "$REPS" | tee "$BUILD/device_modes_cuda.txt" || status=1

log "torchtpu vs jax.jit: 3-layer MLP forward and 10-op chain (same functions, same sizes)"
"$BUILD/bench/bench_device_vs_jax" "$REPS" | tee "$BUILD/torchtpu_cuda_times.txt" || status=1
"$PY" tools/device_check_jax.py "$REPS" | tee "$BUILD/jax_cuda_times.txt" || status=1
"$PY" - "$BUILD/torchtpu_cuda_times.txt" "$BUILD/jax_cuda_times.txt" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "time_ms":
            out[parts[1]] = float(parts[2])
    return out
tt, jx = read(sys.argv[1]), read(sys.argv[2])
print(f"{'case':<12} {'torchtpu ms':>12} {'jax.jit ms':>12} {'jax/torchtpu':>13}")
for k in sorted(tt):
    if k in jx:
        print(f"{k:<12} {tt[k]:12.3f} {jx[k]:12.3f} {jx[k] / tt[k]:13.2f}")
PY
exit $status
