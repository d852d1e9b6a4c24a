#!/usr/bin/env python3
"""Benchmark: archbuild's libgit2 checkout (mirror + work tree + recursive
submodules) against `git clone --recurse-submodules -j8`, on a fixture of one
repository with 30 submodules (file:// URLs), measured in one run.

  cold: empty cache for archbuild, fresh clone for git
  warm: archbuild again into a new work tree, mirrors already present

  python3 bench/checkout_bench.py --archbuild build/src/archbuild [--submodules 30] [--runs 3]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "cli"))
from gitrepos import commit_files, git, make_repo  # noqa: E402


def make_fixture(root, count, files, commits):
    origin = root / "origin"
    top = make_repo(origin / "top", {"README": "top\n"})
    for index in range(count):
        sub = make_repo(origin / f"sub{index:02d}",
                        {f"src/file{f:03d}.c": f"int f{index}_{f}(void) {{ return {f}; }}\n" * 20 for f in range(files)})
        for c in range(commits - 1):
            commit_files(sub, {f"src/file{c:03d}.c": f"int changed{c}(void) {{ return {c}; }}\n" * 20}, f"change {c}")
        git(top, "submodule", "add", "-q", f"file://{sub}", f"third_party/sub{index:02d}")
    git(top, "commit", "-q", "-m", "add submodules")
    git(top, "tag", "v1.0")
    return f"file://{top}"


def timed(argv, cwd=None):
    start = time.perf_counter()
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{argv[0]} failed:\n{result.stderr}")
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--submodules", type=int, default=30)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-checkout-bench-"))
    try:
        url = make_fixture(root, args.submodules, args.files, args.commits)
        cold, warm, git_times = [], [], []
        for run in range(args.runs):
            cache = root / f"cache{run}"
            cold.append(timed([args.archbuild, "source", url, "--ref", "v1.0", "--cache-dir", str(cache),
                               "--dest", str(root / f"cold{run}")]))
            warm.append(timed([args.archbuild, "source", url, "--ref", "v1.0", "--cache-dir", str(cache),
                               "--dest", str(root / f"warm{run}")]))
            git_times.append(timed(["git", "-c", "protocol.file.allow=always", "clone", "-q", "--recurse-submodules",
                                    "-j8", "--branch", "v1.0", url, str(root / f"git{run}")]))
        cold_s, warm_s, git_s = (statistics.median(v) for v in (cold, warm, git_times))
        print(f"fixture: 1 repository + {args.submodules} submodules x {args.files} files x {args.commits} commits; "
              f"median of {args.runs}")
        print(f"{'git clone --recurse-submodules -j8':<40}{git_s:>8.2f} s")
        print(f"{'archbuild source (cold: empty cache)':<40}{cold_s:>8.2f} s   {git_s / cold_s:.2f}x git's speed")
        print(f"{'archbuild source (warm: mirrors present)':<40}{warm_s:>8.2f} s   {cold_s / warm_s:.1f}x faster than cold")
        print(f"| {args.submodules} submodules | {git_s:.2f} s | {cold_s:.2f} s | {warm_s:.2f} s | "
              f"{git_s / cold_s:.2f}x | {cold_s / warm_s:.1f}x |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
