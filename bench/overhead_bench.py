#!/usr/bin/env python3
"""archbuild's own CPU time while it drives a build, against the build's total
CPU time (target under 1%), on the tests' PyTorch-like fixture project; and
the progress-parsing throughput (bench_progress, target over 1 million lines/s).

  python3 bench/overhead_bench.py --archbuild build/src/archbuild --progress build/bench/bench_progress
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
os.environ.setdefault("ARCHBUILD_SOURCE_DIR", str(ROOT))
from fixture_project import data_dir_with_recipe, make_cuda_project  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--progress", required=True)
    parser.add_argument("--arch", default="8.0;8.6;9.0;12.0+PTX")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-overhead-"))
    try:
        project = make_cuda_project(root)
        data = data_dir_with_recipe(root, project)
        env = dict(os.environ, ARCHBUILD_DATA_DIR=str(data), NO_COLOR="1")
        result = subprocess.run([args.archbuild, "build", "fixture", "--arch", args.arch, "--cache-dir",
                                 str(root / "cache"), "--out", str(root / "out"), "--compiler-launcher", "none"],
                                env=env, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(result.stderr)
        build = json.loads((root / "out" / "report.json").read_text())["build"]
        ours, theirs = build["archbuild_cpu_seconds"], build["build_cpu_seconds"]
        lines = sum(1 for _ in open(root / "out" / "build.log", errors="replace"))
        print(f"fixture build for {args.arch}: {build['seconds']:.1f} s wall, {lines} log lines")
        print(f"archbuild CPU {ours:.3f} s vs build CPU {theirs:.1f} s = {100 * ours / theirs:.2f}% (target < 1%)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(subprocess.run([args.progress], capture_output=True, text=True, check=True).stdout.strip())


if __name__ == "__main__":
    main()
