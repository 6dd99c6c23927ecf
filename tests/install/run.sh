#!/usr/bin/env bash
# tests/install/run.sh — installs a configured Meson build of torchtpu and builds and runs small
# downstream programs against the installed tree, the ways README "Installing and using it"
# shows (issue 17):
#   1. DESTDIR staging, then the staged tree moved elsewhere: the README's plain g++ -I line
#      compiles tpu.cpp, which must find the moved emulator (TORCHTPU_TPU_EMULATOR=1, no path);
#      pkg-config's relocatable flags must point into the moved tree.
#   2. `meson install` into the build's --prefix, then: CMake find_package(torchtpu CONFIG)
#      (torchtpu::torchtpu, ::dlpack, ::torch when libtorch is found, and tpu.cpp with __FILE__
#      made relative so the libdir recorded in torchtpu/installed.hpp is what finds the emulator),
#      pkg-config with g++, Meson dependency('torchtpu') through pkg-config, plain g++ -I, and
#      CMake FetchContent of the source tree (the top-level CMakeLists.txt);
#      plus the installed torchtpu-run on "tpu" (emulator found next to its bindir).
# Every program prints values that are checked here.
# Usage: tests/install/run.sh BUILD_DIR WORK_DIR   (BUILD_DIR: configured, compiled)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$2
opt() {  # value of a Meson option of $build
  meson introspect "$build" --buildoptions |
    python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"
}
prefix=$(opt prefix)
libdir=$(opt libdir)
case "$libdir" in /*) libdir_abs=$libdir ;; *) libdir_abs=$prefix/$libdir ;; esac
case "$prefix" in "$HOME"|/|/usr|/usr/local) echo "run.sh: refusing to install into $prefix (give the build a temporary --prefix)"; exit 2 ;; esac
rm -rf "$work" "$prefix"
mkdir -p "$work"
work=$(cd "$work" && pwd)
cp "$src"/tests/install/*.cpp "$work"/
cxx=${CXX:-g++}
fail() { echo "tests/install: FAIL: $*"; exit 1; }
expect() {  # expect NAME OUTPUT SUBSTRING...
  local name=$1 out=$2; shift 2
  for want in "$@"; do
    grep -qF -- "$want" <<<"$out" || fail "$name: output lacks '$want':"$'\n'"$out"
  done
  echo "tests/install: ok: $name"
}
app_out=("tensor([[ 0.,  1.]," "[ 1., 15.]])" "sum 17")
tpu_out=("emulated 1" "sum 9")   # relu(2x - 3) of [[1, 2], [3, 4]] = [[0, 1], [3, 5]]
run_tpu() {  # run_tpu NAME EXE EXPECTED_PLUGIN: the emulator opted into, its path not given
  local out
  out=$(env -u TORCHTPU_TPU_EMULATOR_PATH TORCHTPU_TPU_EMULATOR=1 "$2") || fail "$1: exit $?: $out"
  expect "$1" "$out" "${tpu_out[@]}" "plugin $3"
  # Without the opt-in, "tpu" is never the emulator (a machine with libtpu would report that).
  set +e
  out=$(env -u TORCHTPU_TPU_EMULATOR_PATH -u TORCHTPU_TPU_EMULATOR "$2"); local rc=$?
  set -e
  { [ $rc -eq 3 ] || grep -qF "emulated 0" <<<"$out"; } || fail "$1 without TORCHTPU_TPU_EMULATOR used the emulator: $out"
}

# --- 1. DESTDIR staging, then moved: only relative paths may be used -------------------------
meson install -C "$build" --no-rebuild --quiet --destdir "$work/stage"
[ ! -e "$prefix" ] || fail "meson install --destdir wrote into $prefix"
mv "$work/stage$prefix" "$work/moved"
moved=$work/moved
moved_lib=$moved/${libdir_abs#"$prefix"/}
[ -f "$moved_lib/libtorchtpu_tpu_emulator.so" ] || fail "no emulator in $moved_lib"
"$cxx" -std=c++20 -O1 -I "$moved/include" "$work/tpu.cpp" -o "$work/tpu_moved" -lfmt -pthread
run_tpu "moved tree, g++ -I, tpu" "$work/tpu_moved" "$moved_lib/libtorchtpu_tpu_emulator.so"
cflags=$(PKG_CONFIG_PATH="$moved_lib/pkgconfig" pkg-config --cflags torchtpu)
expect "moved tree, pkg-config --cflags" "$cflags" "-I$moved_lib/pkgconfig/../../"
rm -rf "$work/stage"

# --- 2. meson install into the prefix ---------------------------------------------------------
meson install -C "$build" --no-rebuild --quiet
for f in include/torchtpu/torchtpu.hpp include/torchtpu/installed.hpp; do
  [ -f "$prefix/$f" ] || fail "not installed: $prefix/$f"
done
for f in libtorchtpu_tpu_emulator.so pkgconfig/torchtpu.pc cmake/torchtpu/torchtpuConfig.cmake \
         cmake/torchtpu/torchtpuConfigVersion.cmake; do
  [ -f "$libdir_abs/$f" ] || fail "not installed: $libdir_abs/$f"
done
emu=$libdir_abs/libtorchtpu_tpu_emulator.so
torch=OFF
[ -f "$libdir_abs/pkgconfig/torchtpu-torch.pc" ] && torch=ON

# CMake find_package (+ components; tpu.cpp with __FILE__ relative: the recorded libdir is used)
cmake -S "$src/tests/install/cmake" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DWITH_TORCH=$torch -DTPU_MACRO_PREFIX_MAP="$prefix/include/=" >/dev/null
cmake --build "$work/cmake" -j "$(nproc)" >/dev/null
expect "cmake find_package, torchtpu::torchtpu" "$("$work/cmake/app")" "${app_out[@]}"
expect "cmake find_package, torchtpu::dlpack" "$("$work/cmake/app_dlpack")" "shared 1" "sum 10"
[ $torch = OFF ] || expect "cmake find_package, torchtpu::torch" "$("$work/cmake/app_torch")" "shared 1" "sum 30"
[ $torch = ON ] || echo "tests/install: skipped: torchtpu::torch (libtorch not found by the build)"
run_tpu "cmake find_package, tpu (recorded libdir)" "$work/cmake/app_tpu" "$emu"
# A consumer asking for a version of another major is refused (SameMajorVersion).
if cmake -S "$src/tests/install/cmake" -B "$work/cmake-v1" -DCMAKE_PREFIX_PATH="$prefix" \
     -DTORCHTPU_VERSION_WANTED=1 >/dev/null 2>&1; then
  fail "find_package(torchtpu 1) accepted version $(opt version 2>/dev/null || echo 0.x)"
fi
echo "tests/install: ok: cmake find_package(torchtpu 1) refused (SameMajorVersion)"

# pkg-config with g++
export PKG_CONFIG_PATH="$libdir_abs/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# shellcheck disable=SC2046  # word splitting of the flags is intended
"$cxx" -std=c++20 -O1 $(pkg-config --cflags torchtpu) "$work/app.cpp" -o "$work/app_pc" $(pkg-config --libs torchtpu)
expect "pkg-config" "$("$work/app_pc")" "${app_out[@]}"
[ "$(pkg-config --variable=emulator torchtpu)" -ef "$emu" ] || fail "pkg-config --variable=emulator"

# Meson dependency('torchtpu') through pkg-config
mkdir -p "$work/meson-src"
cp "$src/tests/install/meson/meson.build" "$work/app.cpp" "$work/meson-src/"
meson setup "$work/meson" "$work/meson-src" --wrap-mode=nodownload >/dev/null
meson compile -C "$work/meson" >/dev/null
expect "meson dependency('torchtpu') via pkg-config" "$("$work/meson/app")" "${app_out[@]}"

# plain g++ -I, README's compile line
"$cxx" -std=c++20 -O2 -I "$prefix/include" "$work/app.cpp" -o "$work/app_plain" -lfmt -pthread
expect "g++ -I (README line)" "$("$work/app_plain")" "${app_out[@]}"

# CMake FetchContent of the source tree (top-level CMakeLists.txt), no download
cmake -S "$src/tests/install/fetchcontent" -B "$work/fetchcontent" -DCMAKE_BUILD_TYPE=Release \
  -DFETCHCONTENT_SOURCE_DIR_TORCHTPU="$src" >/dev/null
cmake --build "$work/fetchcontent" >/dev/null
expect "cmake FetchContent (source tree)" "$("$work/fetchcontent/app")" "${app_out[@]}"

# the installed torchtpu-run finds the emulator next to its bindir
if [ -x "$prefix/bin/torchtpu-run" ]; then
  out=$(cd "$src" && env -u TORCHTPU_TPU_EMULATOR_PATH TORCHTPU_TPU_EMULATOR=1 \
        "$prefix/bin/torchtpu-run" data/models/mlp.pt --data data/digits_test.csv --device tpu 2>&1) ||
    fail "torchtpu-run: $out"
  expect "installed torchtpu-run on tpu" "$out" "accelerator: tpu (TPU emulator" "EMULATED" "accuracy torchtpu"
fi
echo "tests/install: all consumer builds passed"
