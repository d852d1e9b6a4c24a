#!/usr/bin/env python3
"""Scale on paper: the wall time a build would take with N build servers,
predicted from its archbuild trace (trace.json: one event per ninja step,
with its duration).

The model, deliberately simple:
  - compile steps (outputs ending in .o) can run anywhere; the others
    (links, code generators, copies) run here, one after another, after
    the compiles they need: their sum is taken as serial time;
  - each compile keeps a local part here (nvcc --dryrun, the preprocessor:
    `--local-part`, the share measured on the one-machine cluster) and
    sends the rest to a slot of the cluster;
  - slots: this machine's cores plus N servers x their cores, bounded by the
    jobs this machine's memory allows for the local parts (`--max-jobs`);
  - compiles are placed longest first on the first free slot (LPT), and the
    compile phase lasts at least as long as the longest compile and as long
    as the local parts take on this machine's cores.

  python3 bench/cluster_scaling.py TRACE.json [--local-cores 16 --server-cores 16 --local-part 0.1 --max-jobs 256]
"""
import argparse
import heapq
import json
import pathlib


def steps_of(trace_path):
    events = json.loads(pathlib.Path(trace_path).read_text())["traceEvents"]
    compiles, others = [], []
    for event in events:
        if event.get("ph") != "X":
            continue
        seconds = event["dur"] / 1e6
        (compiles if event["name"].endswith((".o", ".obj")) else others).append(seconds)
    return compiles, others


def makespan(durations, slots):
    """Longest-processing-time-first list scheduling on `slots` identical slots."""
    finish = [0.0] * max(1, slots)
    heapq.heapify(finish)
    for duration in sorted(durations, reverse=True):
        heapq.heappush(finish, heapq.heappop(finish) + duration)
    return max(finish)


def predict(compiles, others, servers, local_cores, server_cores, local_part, max_jobs):
    slots = min(local_cores + servers * server_cores, max_jobs)
    remote = [d * (1 - local_part) for d in compiles] if servers else compiles
    local_load = sum(d * local_part for d in compiles) / local_cores if servers else 0.0
    compile_phase = max(makespan(remote, slots), max(compiles, default=0.0), local_load)
    return compile_phase + sum(others), slots


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--local-cores", type=int, default=16)
    parser.add_argument("--server-cores", type=int, default=16)
    parser.add_argument("--local-part", type=float, default=0.1)
    parser.add_argument("--max-jobs", type=int, default=256)
    parser.add_argument("--servers", default="0,4,16,64")
    args = parser.parse_args()
    compiles, others = steps_of(args.trace)
    print(f"{args.trace}: {len(compiles)} compiles, {sum(compiles):.1f} s of compile time "
          f"(longest {max(compiles, default=0):.1f} s), {len(others)} other steps, {sum(others):.1f} s serial")
    print("| build servers | slots | predicted wall | speedup |")
    print("| --- | --- | --- | --- |")
    base = None
    for servers in (int(s) for s in args.servers.split(",")):
        wall, slots = predict(compiles, others, servers, args.local_cores, args.server_cores, args.local_part,
                              args.max_jobs)
        base = base or wall
        print(f"| {servers} | {slots} | {wall:.1f} s | {base / wall:.2f}x |")


if __name__ == "__main__":
    main()
