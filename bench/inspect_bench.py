#!/usr/bin/env python3
"""Benchmark: `archbuild inspect` vs `cuobjdump --list-elf --list-ptx` on one
library (default: the installed torch's libtorch_cuda.so), measured side by
side in one run. Wall time is the median of --runs; peak memory is each
child's own max RSS (wait4), so the two never mix.

  python3 bench/inspect_bench.py --archbuild build/src/archbuild \
      --cuobjdump /usr/local/cuda/bin/cuobjdump [--lib PATH] [--runs 5] [--markdown]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def build_runner():
    here = os.path.dirname(os.path.abspath(__file__))
    runner = os.path.join(tempfile.mkdtemp(prefix="archbuild-bench-"), "peak_rss")
    subprocess.run(["cc", "-O2", "-o", runner, os.path.join(here, "peak_rss.c")], check=True)
    return runner


def measure(runner, argv, runs):
    walls, peaks = [], []
    for _ in range(runs):
        wall, peak, status = subprocess.run([runner, *argv], capture_output=True, text=True,
                                            check=True).stdout.split()
        if int(status) not in (0, 1):
            sys.exit(f"{argv[0]} failed with status {status}")
        walls.append(float(wall))
        peaks.append(int(peak))
    return statistics.median(walls), max(peaks)


def default_library():
    out = subprocess.run([sys.executable, "-c", "import importlib.util,os;"
                          "print(os.path.dirname(importlib.util.find_spec('torch').origin))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return os.path.join(out, "lib", "libtorch_cuda.so")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--lib")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown", action="store_true", help="print a docs/BENCHMARKS.md table row set")
    args = parser.parse_args()
    library = args.lib or default_library()
    size = os.path.getsize(library)
    # Warm the page cache so both tools read from memory, not disk.
    with open(library, "rb") as f:
        while f.read(1 << 24):
            pass
    runner = build_runner()
    ours = measure(runner, [args.archbuild, "inspect", library], args.runs)
    peer_runs = max(1, min(args.runs, 3))
    theirs = measure(runner, [args.cuobjdump, "--list-elf", "--list-ptx", library], peer_runs)
    speedup = theirs[0] / ours[0]
    memory_share = ours[1] / theirs[1]
    print(f"library: {library} ({size / 1e6:.0f} MB)")
    print(f"{'tool':<28}{'wall (median)':>16}{'peak RSS':>14}")
    print(f"{'archbuild inspect':<28}{ours[0] * 1000:>13.1f} ms{ours[1] / 1e6:>11.1f} MB")
    print(f"{'cuobjdump --list-elf/-ptx':<28}{theirs[0] * 1000:>13.1f} ms{theirs[1] / 1e6:>11.1f} MB")
    print(f"speedup {speedup:.0f}x (target >= 100x); memory {memory_share * 100:.2f}% of cuobjdump's (target < 1%)")
    if args.markdown:
        print(f"| {os.path.basename(library)} ({size / 1e6:.0f} MB) | {ours[0] * 1000:.1f} ms | {ours[1] / 1e6:.1f} MB "
              f"| {theirs[0] * 1000:.0f} ms | {theirs[1] / 1e6:.0f} MB | {speedup:.0f}x | {memory_share * 100:.2f}% |")


if __name__ == "__main__":
    main()
