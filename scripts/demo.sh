#!/usr/bin/env bash
# README's first command: the whole pipeline on the built-in demo
# (examples/cuda-demo): detect -> archs -> preflight -> source -> plan ->
# build -> validate -> publish to the cache's pip index -> inventory.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the demo runs: the archbuild binary (and the kernel-launch
# recorder it loads into device checks), not the tests.
bash scripts/build.sh archbuild
archbuild="$PWD/build/src/archbuild"
cache="${ARCHBUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/archbuild}"

echo "== archbuild detect"
"$archbuild" detect || true
echo
if spec=$("$archbuild" arch native 2>/dev/null); then
  echo "== this machine's GPUs need TORCH_CUDA_ARCH_LIST=$spec"
  arch=native
else
  arch="${ARCHBUILD_DEMO_ARCH:-9.0}"
  echo "== no GPU here: building for --arch $arch (set ARCHBUILD_DEMO_ARCH to change it)."
  echo "   The wheel is checked statically; device validation is skipped on this machine."
fi
echo
echo "== archbuild check --arch $arch"
"$archbuild" check --arch "$arch" || true
echo

# archbuild builds commits: the example becomes a git repository in the cache
# (a new commit only when the example changed).
repo="$cache/examples/cuda-demo"
mkdir -p "$repo"
cp -r examples/cuda-demo/. "$repo/"
git -C "$repo" init -q -b main 2>/dev/null || git -C "$repo" init -q
git -C "$repo" add -A
if ! git -C "$repo" diff --cached --quiet 2>/dev/null || ! git -C "$repo" rev-parse -q --verify HEAD >/dev/null; then
  git -C "$repo" -c user.name=archbuild -c user.email=archbuild@localhost commit -q -m "archbuild demo"
fi

echo "== archbuild build $repo --recipe cuda-demo --arch $arch"
"$archbuild" build "$repo" --recipe cuda-demo --arch "$arch" --cache-dir "$cache"
echo
echo "== the published wheels (archbuild cache ls)"
"$archbuild" cache ls --cache-dir "$cache"
# The labelled wheel of the newest cuda-demo entry (the store also holds
# its variant wheel, which plain pip skips).
wheel=$("$archbuild" cache ls --json --cache-dir "$cache" | python3 -c '
import json, pathlib, sys
entry = next(e for e in json.load(sys.stdin)["entries"] if e["recipe"] == "cuda-demo")
print(pathlib.Path(entry["dir"]) / "wheels" / entry["wheels"][0])')
echo
echo "== its inventory (archbuild inspect)"
"$archbuild" inspect "$wheel"
