#!/usr/bin/env bash
# The extension recipes' PEP 517 frontend (recipes/frontends/pep517_wheel.py)
# against the `pip wheel --no-build-isolation --no-deps -v` it replaced, on
# examples/torch-extension: one cold build (fills ccache), then warm rebuilds
# in a fresh work tree, alternating frontend and pip wheel (a copy of the
# data dir whose cpp-extension recipe runs pip wheel).
# Usage: bench/frontend_vs_pip.sh PYTHON_WITH_TORCH [WORK_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
python=$1 work=${2:-/tmp/archbuild-frontend-bench} rounds=${3:-2}
archbuild=${ARCHBUILD_BIN:-$PWD/build/src/archbuild}
rm -rf "$work" && mkdir -p "$work/data"
cp -r examples/torch-extension "$work/repo"
rm -rf "$work/repo/build" "$work/repo"/*.egg-info
git -C "$work/repo" init -q -b main && git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=bench -c user.email=bench@localhost commit -qm bench
cp -r recipes toolchains patches "$work/data/"
sed -i 's|^command = .*pep517_wheel.*|command = ["{python}", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", "--wheel-dir", "{wheel_dir}", "{source_dir}"]|' \
  "$work/data/recipes/cpp-extension.toml"
build() {  # MODE [--rebuild]; prints "MODE wall build_step"
  local mode=$1; shift
  local data=$PWD; [[ $mode == pip-wheel ]] && data=$work/data
  local start end
  start=$(date +%s.%N)
  ARCHBUILD_DATA_DIR=$data NO_COLOR=1 "$archbuild" build "$work/repo" --arch 9.0 --use-installed-torch --python "$python" \
    --cache-dir "$work/cache" --json "$@" > "$work/report.json" 2> "$work/build.log"
  end=$(date +%s.%N)
  python3 -c "import json,sys; r=json.load(open('$work/report.json')); print(f'$mode {$end-$start:.1f} s wall, build step {r[\"build\"][\"seconds\"]:.1f} s')"
}
echo "cold (fills ccache): $(build frontend)"
for ((round = 1; round <= rounds; round++)); do
  for mode in frontend pip-wheel; do
    rm -rf "$work/cache/worktrees/repo-main"  # the same commit in a fresh work tree
    echo "warm, round $round: $(build $mode --rebuild)"
  done
done
CCACHE_DIR=$work/cache/ccache ccache --print-stats | grep -E '^(direct_cache_hit|cache_miss)'
