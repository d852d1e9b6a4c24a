#!/usr/bin/env python3
"""One clean build of scale_bench's PyTorch-shaped project (thousands of C
files, hundreds of .cu files), for its trace: the input of
bench/cluster_scaling.py.

  python3 bench/scaling_trace.py --archbuild build/src/archbuild --arch '8.0;9.0;10.0;12.0' --out trace.json
"""
import argparse
import os
import pathlib
import shutil
import tempfile

from scale_bench import Bench


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--c-files", type=int, default=3000)
    parser.add_argument("--cuda-files", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--arch", default="9.0")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-scaling-"))
    try:
        bench = Bench(args, root)
        code, text, _, _ = bench.build(args.arch, args.jobs, sample=False)
        assert code == 0, text[-3000:]
        report = bench.report()["build"]
        shutil.copy(root / "out" / "trace.json", args.out)
        print(f"{args.c_files} C + {args.cuda_files} .cu files for {args.arch} at {args.jobs} jobs: "
              f"{report['seconds']:.1f} s, build CPU {report['build_cpu_seconds']:.1f} s; trace in {args.out}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
