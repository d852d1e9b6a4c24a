#!/usr/bin/env bash
# README's test command: installs what is missing, builds, runs every unit and
# CLI test; then cross-builds archbuild for aarch64 and runs its unit tests
# and a part of the CLI suite under qemu-user (scripts/test-aarch64.sh;
# ARCHBUILD_SKIP_AARCH64=1 leaves that out). Arguments go to the first ctest.
# Downloads (PyPI toolkits and wheels) are cached in $ARCHBUILD_TEST_CACHE
# (default ~/.cache/archbuild-test) and reused across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 1500 "$@")
if [[ ${ARCHBUILD_SKIP_AARCH64:-0} != 1 ]]; then
  bash scripts/test-aarch64.sh
fi
