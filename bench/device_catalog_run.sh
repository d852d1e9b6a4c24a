#!/usr/bin/env bash
# On the GPU machine: catalogued public projects built the way a user would,
# each from a local clone whose origin remote is the project's repository (so
# archbuild picks its recipe by itself), with `--arch native
# --use-installed-torch` and nothing else. bench/validation_proof.py records
# per project the build step, the whole command, each device check's seconds,
# the level and the kernels launched, and writes the table docs/BENCHMARKS.md
# keeps (results.md).
#
# Usage (carry .device and .fetched/src):
#   bench/device_catalog_run.sh [--background] [--parallel] WORK PYTHON NAME[=SOURCE]...
# SOURCE: what to build (an sdist file, say); else the clone
# $ARCHBUILD_CLONES/NAME (default .fetched/src; made by
# bench/catalog_clone.sh NAME REPOSITORY: at the recipe's default_ref, origin
# set to the recipe's repository). By default the
# projects build one after the other, each with the machine to itself;
# --parallel builds them all at once (each its own cache), for small projects
# when device time is short: their times then include the others' load.
# --background starts the run in a process session of its own (setsid), so
# that it outlives the device command, logging to WORK/catalog.log: for a
# build longer than one command (flash-attn, apex, pytorch3d). Poll it with
# bench/device_poll.sh WORK from the very next command, until it says
# "bench finished" (an idle machine is given back after 30 s, and the run
# with it); results.json and results.md then come back in $OUT.
# ARCHBUILD_MIRRORS="URL=file://DIR
# ..." passes --mirror to every build: on an offline machine, where a
# dependency built first (pytorch-sparse's pytorch-scatter) is fetched from.
set -uo pipefail
cd "$(dirname "$0")/.."
parallel=0 background=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --parallel) parallel=1 ;;
    --background) background=1 ;;
    *) echo "device_catalog_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
work=${1:?WORK} python=${2:?PYTHON}
if ((background)); then
  mkdir -p "$work"
  flags=()
  ((parallel)) && flags=(--parallel)
  setsid nohup bash "$PWD/bench/device_catalog_run.sh" "${flags[@]}" "$@" >"$work/catalog.log" 2>&1 </dev/null &
  echo "catalog run started in the background (pid $!): $work/catalog.log; poll with bench/device_poll.sh $work"
  exit 0
fi
shift 2
mkdir -p "$work"
rm -rf "$work/device" && cp -r .device "$work/device"  # a copy: archbuild re-executes its own binary
bin="$work/device/bin/archbuild-wrapper"
export NO_COLOR=1 ARCHBUILD_DATA_DIR=$PWD PATH="$work/device/bin:$(dirname "$python"):$PATH"
proof() {  # NAME... -> $work/$tag/results.json
  local tag=$1; shift
  local sources=()
  for name in "$@"; do
    if [[ $name == *=* ]]; then sources+=("$name"); else sources+=("$name=$PWD/${ARCHBUILD_CLONES:-.fetched/src}/$name"); fi
  done
  mkdir -p "$work/$tag"
  local mirrors=()
  for mirror in ${ARCHBUILD_MIRRORS:-}; do mirrors+=(--arg "*:--mirror" --arg "*:$mirror"); done
  python3 bench/validation_proof.py --archbuild "$bin" --python "$python" --cache "$work/$tag/cache" \
    --out "$work/$tag/results.json" --timeout "${ARCHBUILD_PROJECT_TIMEOUT:-420}" --arg "*:--test-timeout" --arg "*:120" \
    --arg "*:--test-wheelhouse" --arg "*:$work/device/wheelhouse" "${mirrors[@]}" "${sources[@]}" >"$work/$tag/run.log" 2>&1
}
tags=()
if ((parallel)); then
  for name in "$@"; do tags+=("${name%%=*}"); proof "${name%%=*}" "$name" & done
  wait
else
  tags=(all)
  proof all "$@"
fi
# One results.json and results.md for this run's projects, whichever way they
# ran (not those of an earlier run into the same work dir).
python3 - "$work" "${tags[@]}" <<'PY'
import json, pathlib, sys
sys.path.insert(0, "bench")
from validation_proof import markdown_table
work = pathlib.Path(sys.argv[1])
merged = {"projects": {}}
for tag in sys.argv[2:]:
    path = work / tag / "results.json"
    if path.exists():
        merged["projects"].update(json.loads(path.read_text())["projects"])
(work / "results.json").write_text(json.dumps(merged, indent=2))
(work / "results.md").write_text(markdown_table(merged))
print(markdown_table(merged))
PY
