#!/usr/bin/env bash
# On the GPU machine (see docs/TESTING.md for .device and .fetched): builds a
# real project cold with `--arch native` in the background, validated on the
# GPU with its own tests, and times it; poll with bench/device_poll.sh WORK.
# Usage: bench/device_project_tests.sh WORK_DIR PYTHON_WITH_TORCH WHAT [BUILD_ARGS...]
#   WHAT: a recipe (pytorch-scatter) or a path under .fetched/.
# pytest comes from the interpreter, or from .device/pytest when it has none
# (validation never downloads).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1 python=$2 what=$3
shift 3
mkdir -p "$work"
rm -rf "$work/device" && cp -r .device "$work/device"
export PATH="$work/device/bin:$(dirname "$python"):$PATH" NO_COLOR=1 ARCHBUILD_DATA_DIR=$PWD
if ! "$python" -c "import pytest" 2>/dev/null && [[ -d .device/pytest ]]; then
  export PYTHONPATH="$PWD/.device/pytest${PYTHONPATH:+:$PYTHONPATH}"
fi
name=$(basename "$what")
setsid nohup bash -c '
  SECONDS=0
  "$0" build "$1" --arch native --cache-dir "$2/cache-$3" --python "$4" --use-installed-torch \
    --mirror "https://github.com/=file://$PWD/.fetched/" --json "${@:6}" > "$2/$3.json" 2> "$2/$3.err"
  echo "exit $? after $SECONDS s" > "$2/$3.done"
' "$work/device/bin/archbuild-wrapper" "$what" "$work" "$name" "$python" -- "$@" < /dev/null > /dev/null 2>&1 &
echo "started $name: poll $work/$name.done"
