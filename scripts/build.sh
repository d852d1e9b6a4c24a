#!/usr/bin/env bash
# Configures and builds archbuild into ./build (idempotent, incremental).
# ARCHBUILD_WERROR=1 (set by .ci/run) turns compiler warnings into errors.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
launcher=()
# ccache makes a rebuild after a fresh clone cheap; absent, nothing changes.
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DARCHBUILD_WERROR="${ARCHBUILD_WERROR:-OFF}" >/dev/null
cmake --build build --parallel
