# scripts/deps.sh — sourced by the set-up scripts: installs the Debian packages torchtpu's
# build, tests, examples and main job need, when any is missing.
TORCHTPU_DEBS=(meson ninja-build pkg-config cmake doxygen g++ libfmt-dev catch2 libxsimd-dev xtl-dev
  libdlpack-dev libopenblas-dev libtorch-dev python3-torch python3-torchvision python3-sklearn
  python3-numpy clang-14 libclang-rt-14-dev)
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
