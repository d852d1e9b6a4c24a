#!/usr/bin/env bash
# README's test command: installs what is missing, builds, runs every unit and CLI test.
# Downloads (PyPI toolkits and wheels) are cached in $ARCHBUILD_TEST_CACHE
# (default ~/.cache/archbuild-test) and reused across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 1500 "$@"
