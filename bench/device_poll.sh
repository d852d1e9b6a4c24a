#!/usr/bin/env bash
# On the GPU machine: waits while a background bench runs (at most SECONDS,
# default 570, inside one 10-minute command): bench/extension_builds.py
# (bench/device_extension_run.sh) or a catalog run
# (bench/device_catalog_run.sh --background). Then prints the end of its log
# (WORK/bench.log or WORK/catalog.log) and copies WORK/results.json (and
# results.md) to $OUT. Call it again at once while it says "still running":
# an idle machine is given back after 30 s.
# Usage: bench/device_poll.sh WORK [SECONDS]
set -uo pipefail
work=$1 limit=${2:-570}
bench_pids() {
  ps -eo pid,args | awk '($2 ~ /python3/ && $3 ~ /extension_builds|validation_proof/) || ($2 ~ /bash/ && $3 ~ /device_catalog_run/) {print $1}'
}
start=$SECONDS
while [[ -n $(bench_pids) ]] && ((SECONDS - start < limit)); do sleep 5; done
log=$work/bench.log  # or the catalog run's, when it is the newer
[[ -f $work/catalog.log && ! $work/bench.log -nt $work/catalog.log ]] && log=$work/catalog.log
cut -c1-1500 "$log" 2>/dev/null | tail -20 || echo "no $log (a fresh machine?)"
if [[ -n ${OUT:-} ]]; then
  for name in results.json results.md; do [[ -f $work/$name ]] && cp "$work/$name" "$OUT/"; done
fi
if [[ -n $(bench_pids) ]]; then echo "still running after $((SECONDS - start)) s"; else echo "bench finished"; fi
