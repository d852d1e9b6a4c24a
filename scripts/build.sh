#!/usr/bin/env bash
# Configures and builds archbuild into ./build (idempotent, incremental).
#   scripts/build.sh              every target (archbuild, the tests, benches)
#   scripts/build.sh TARGET...    only those (the demo: archbuild, which
#                                 brings the kernel-launch recorder with it)
# Every caller configures ./build the same way, so the demo and the tests
# share one build and never reconfigure it under each other.
# ARCHBUILD_WERROR=1 (set by .ci/run) turns compiler warnings into errors.
# ARCHBUILD_UNITY_BUILD=0 compiles file by file (smaller incremental builds
# while editing); the default, a unity build of 16 sources at a time, makes a
# clean build in a third of the time. ARCHBUILD_BUILD_TYPE picks the CMake
# build type (default Quick: -O1 without debug info, half the compile time of
# RelWithDebInfo; RelWithDebInfo or Debug for a debugger).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
launcher=()
# ccache makes a rebuild after a fresh clone cheap; absent, nothing changes.
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
[[ ${ARCHBUILD_UNITY_BUILD:-1} == 0 ]] && unity=(-DCMAKE_UNITY_BUILD=OFF)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${ARCHBUILD_BUILD_TYPE:-Quick}" "${launcher[@]}" "${unity[@]}" \
  -DARCHBUILD_WERROR="${ARCHBUILD_WERROR:-OFF}" >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build --parallel "${targets[@]}"
