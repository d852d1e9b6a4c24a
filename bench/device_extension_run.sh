#!/usr/bin/env bash
# On the GPU machine (see docs/TESTING.md for .device and .fetched): the demo
# for `native` with device validation, then bench/extension_builds.py in the
# background (it outlives this command; poll $WORK/bench.log).
# Usage: bench/device_extension_run.sh WORK_DIR PYTHON_WITH_TORCH [BENCH_ARGS...]
#   BENCH_ARGS default to `extension-cpp pytorch-scatter` (see extension_builds.py);
#   SKIP_DEMO=1 skips the demo. Then poll with bench/device_poll.sh WORK.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1 python=$2
shift 2
(($#)) || set -- extension-cpp pytorch-scatter
mkdir -p "$work"
# Run a copy: the next call's carry replaces .device, and a build that
# re-executes itself (/proc/self/exe) would find its binary deleted.
rm -rf "$work/device" && cp -r .device "$work/device"
export PATH="$work/device/bin:$(dirname "$python"):$PATH" NO_COLOR=1
archbuild="$work/device/bin/archbuild-wrapper"
if [[ -z ${SKIP_DEMO:-} ]]; then
repo="$work/cuda-demo"
rm -rf "$repo" && cp -r examples/cuda-demo "$repo"
git -C "$repo" init -q && git -C "$repo" add -A
git -C "$repo" -c user.name=a -c user.email=a@b commit -q -m demo
ARCHBUILD_DATA_DIR=$PWD "$archbuild" build "$repo" --recipe cuda-demo --arch native --cache-dir "$work/demo-cache" \
  --python "$python" 2>&1 | tee "$work/demo.log"
fi
ARCHBUILD_DATA_DIR=$PWD setsid nohup python3 bench/extension_builds.py --archbuild "$archbuild" --python "$python" \
  --mirror "https://github.com/=file://$PWD/.fetched/" --cache "$work/ext" --out "$work/results.json" \
  "$@" > "$work/bench.log" 2>&1 < /dev/null &
echo "bench started: $work/bench.log"
