#!/usr/bin/env bash
# README's first command: the main job on a built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
archbuild=./build/src/archbuild

echo "== archbuild detect"
"$archbuild" detect || true
echo
if spec=$("$archbuild" arch native 2>/dev/null); then
  echo "== this machine's GPUs need TORCH_CUDA_ARCH_LIST=$spec"
  arch=native
else
  arch="${ARCHBUILD_DEMO_ARCH:-9.0}"
  echo "== no GPU here: using --arch $arch (set ARCHBUILD_DEMO_ARCH to change it)."
  echo "   Device validation is skipped on this machine."
fi
echo
echo "== archbuild check --arch $arch"
"$archbuild" check --arch "$arch"
