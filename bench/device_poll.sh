#!/usr/bin/env bash
# On the GPU machine: waits while bench/extension_builds.py runs (at most
# SECONDS, default 570, inside one 10-minute command), then prints the end of
# WORK/bench.log and copies WORK/results.json to $OUT. Call it again at once
# while it says "still running": an idle machine is given back after 30 s.
# Usage: bench/device_poll.sh WORK [SECONDS]
set -uo pipefail
work=$1 limit=${2:-570}
bench_pids() { ps -eo pid,args | awk '$2 ~ /python3/ && $3 ~ /extension_builds/ {print $1}'; }
start=$SECONDS
while [[ -n $(bench_pids) ]] && ((SECONDS - start < limit)); do sleep 5; done
cut -c1-1500 "$work/bench.log" 2>/dev/null | tail -20 || echo "no $work/bench.log (a fresh machine?)"
[[ -n ${OUT:-} && -f $work/results.json ]] && cp "$work/results.json" "$OUT/"
if [[ -n $(bench_pids) ]]; then echo "still running after $((SECONDS - start)) s"; else echo "bench finished"; fi
