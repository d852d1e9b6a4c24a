#!/usr/bin/env bash
# On the GPU machine: builds real projects for `native` twice each, with arch
# enforcement (the default) and with --keep-project-archs, against the
# machine's torch; records wall time, the wheel's SASS/PTX and the
# enforcement summary of each in WORK/enforcement.json. A PROJECT is a
# directory or a recipe name (its repository from .fetched/, see
# docs/TESTING.md). Runs in the background (poll with:
# bench/arch_enforcement_device.sh --poll WORK).
# Usage: bench/arch_enforcement_device.sh WORK PYTHON_WITH_TORCH PROJECT [PROJECT...] [ENV=VALUE...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $1 == --poll ]]; then
  work=$2 start=$SECONDS
  while [[ ! -f $work/done ]] && ((SECONDS - start < ${3:-560})); do sleep 5; done
  tail -c 3000 "$work/enforcement.log"
  [[ -n ${OUT:-} && -f $work/enforcement.json ]] && cp "$work/enforcement.json" "$OUT/"
  [[ -f $work/done ]] && echo "bench finished" || echo "still running"
  exit 0
fi
work=$1 python=$2
if [[ -z ${ARCH_BENCH_DETACHED:-} ]]; then  # outlive this command: its process group ends with it
  mkdir -p "$work" && rm -f "$work/done"
  ARCH_BENCH_DETACHED=1 setsid nohup "$0" "$@" > "$work/enforcement.log" 2>&1 < /dev/null &
  echo "started: $work/enforcement.log"
  exit 0
fi
shift 2
projects=()
for argument in "$@"; do [[ $argument == *=* ]] && export "${argument?}" || projects+=("$argument"); done
rm -rf "$work/device" && cp -r .device "$work/device"  # a re-carry must not replace the running binary
export PATH="$work/device/bin:$(dirname "$python"):$PATH" NO_COLOR=1 ARCHBUILD_DATA_DIR=$PWD
archbuild="$work/device/bin/archbuild-wrapper"
results="[]"
for project in "${projects[@]}"; do
  name=$(basename "$project")
  for mode in enforced kept; do
    # a recipe that builds against no torch (bitsandbytes) takes no --use-installed-torch
    torch=(--use-installed-torch)
    grep -qs '^depends_on = \[\]' "recipes/$name.toml" && torch=()
    flags=(--arch native "${torch[@]}" --python "$python" --cache-dir "$work/cache-$mode" --out "$work/out-$name-$mode"
           --mirror "https://github.com/=file://$PWD/.fetched/" --json)
    [[ $mode == kept ]] && flags+=(--keep-project-archs)
    start=$(date +%s.%N)
    "$archbuild" build "$project" "${flags[@]}" > "$work/$name-$mode.json" 2> "$work/$name-$mode.err" || true
    seconds=$(python3 -c "import time; print(round(time.time() - $start, 1))")
    wheel=$(ls "$work/out-$name-$mode/wheels/"*.whl 2>/dev/null | head -1 || true)
    archs="{}"
    [[ -n $wheel ]] && archs=$("$archbuild" inspect --json "$wheel" | python3 -c \
      "import json,sys; f=json.load(sys.stdin)['files']; print(json.dumps({x['path'].split('!')[-1]: [sorted(x['sass']), sorted(x['ptx'])] for x in f}))") || archs="{}"
    results=$(python3 -c "
import json, sys
report = json.load(open('$work/$name-$mode.json')) if open('$work/$name-$mode.json').read().strip() else {}
build = report.get('build', {})
row = {'project': '$name', 'mode': '$mode', 'seconds': $seconds, 'published': report.get('published'), 'wheel': '$(basename "${wheel:-none}")',
       'archs': json.loads('''$archs'''), 'enforcement': {k: v for k, v in build.get('arch_enforcement', {}).items() if k != 'changes'},
       'changes': build.get('arch_enforcement', {}).get('changes', [])[:3], 'validation': report.get('validation_scope'),
       'build_seconds': build.get('seconds'),
       'tests': ((report.get('validation') or [{}])[0].get('device') or {}).get('project_tests', {}).get('summary'),
       'checks': [(c.get('name'), c.get('ok'), c.get('detail', '')[:200]) for c in ((report.get('validation') or [{}])[0].get('device') or {}).get('checks', [])]}
print(json.dumps(json.loads('''$results''') + [row]))")
    echo "$name $mode: $seconds s"
    tail -8 "$work/$name-$mode.err"
    echo "$results" > "$work/enforcement.json"
  done
done
touch "$work/done"
