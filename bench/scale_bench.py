#!/usr/bin/env python3
"""The build path at PyTorch's shape: a generated project with thousands of
ninja steps (a few hundred of them nvcc), nested submodules and a configure
that takes seconds, built by `archbuild build` the way a user runs it.

Measures, in one run:
  - archbuild's CPU share of the build and its memory (peak, and its RSS
    sampled through the build: flat means it does not grow with steps);
  - the live line under a terminal (a pty): updates, and an ETA from the
    forecast before the first step finished;
  - the log, the Chrome trace (one event per step), the first error of a
    build that breaks in the middle, and resume after SIGINT (the rerun runs
    only the steps left);
  - the forecast: after one clean build, clean builds with another arch list
    and with another job count are predicted (target: within 30%).

  python3 bench/scale_bench.py --archbuild build/src/archbuild [--c-files 3000 --cuda-files 200]
  python3 bench/scale_bench.py --archbuild build/src/archbuild --trace-only trace.json --arch '8.0;9.0;10.0;12.0'
"""
import argparse
import json
import os
import pathlib
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
os.environ.setdefault("ARCHBUILD_SOURCE_DIR", str(ROOT))
from fixture_project import SETUP_PY, data_dir_with_recipe  # noqa: E402
from gitrepos import add_submodule, git, make_repo  # noqa: E402

CMAKELISTS = r'''cmake_minimum_required(VERSION 3.18)
project(fixture LANGUAGES C CXX CUDA)
if(NOT DEFINED FIXTURE_ARCH_LIST)
  set(FIXTURE_ARCH_LIST "$ENV{TORCH_CUDA_ARCH_LIST}" CACHE STRING "arch list, read once")
endif()
set(GENCODE "")
foreach(item IN LISTS FIXTURE_ARCH_LIST)
  string(REPLACE "+PTX" "" arch "${item}")
  string(REPLACE "." "" arch "${arch}")
  list(APPEND GENCODE "-gencode=arch=compute_${arch},code=sm_${arch}")
endforeach()
file(GLOB HOST_SOURCES "${CMAKE_SOURCE_DIR}/src/host/*.c")
file(GLOB CUDA_SOURCES "${CMAKE_SOURCE_DIR}/src/cuda/*.cu")
if(DEFINED ENV{SCALE_BREAK})  # a build that fails in its middle
  list(APPEND CUDA_SOURCES "${CMAKE_SOURCE_DIR}/src/broken/broken.cu")
endif()
# A configure that takes seconds, as PyTorch's does (its checks, its codegen).
foreach(i RANGE 40)
  try_compile(probe_${i} "${CMAKE_BINARY_DIR}/probes/${i}" SOURCES "${CMAKE_SOURCE_DIR}/probe.c")
endforeach()
add_library(fixture SHARED ${HOST_SOURCES} ${CUDA_SOURCES})
target_include_directories(fixture PRIVATE third_party/vecmath)
target_compile_options(fixture PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${GENCODE}>)
'''

CUDA_FILE = r'''#include "vecmath.h"
template <int N> __global__ void k{index}(float* x) {{
  float acc = 0;
  for (int i = 0; i < N; ++i) acc += vecmath::twice(x[threadIdx.x + i]) * {index};
  x[threadIdx.x] = acc;
}}
template __global__ void k{index}<1>(float*);
template __global__ void k{index}<4>(float*);
template __global__ void k{index}<16>(float*);
extern "C" void launch{index}(float* x) {{ k{index}<4><<<1, 32>>>(x); }}
'''


def make_scale_project(root, c_files, cuda_files):
    """The project repo (tag v1.0): third_party/vecmath is a submodule with a submodule of its own."""
    inner = make_repo(root / "origin" / "inner", {"inner.h": "#pragma once\n#define INNER 1\n"})
    vecmath = make_repo(root / "origin" / "vecmath", {
        "vecmath.h": "#pragma once\nnamespace vecmath {\n__device__ inline float twice(float v) { return 2.f * v; }\n}\n"})
    add_submodule(vecmath, f"file://{inner}", "deps/inner", "add inner")
    files = {"setup.py": SETUP_PY, "CMakeLists.txt": CMAKELISTS, "probe.c": "int main(void) { return 0; }\n",
             "src/broken/broken.cu": "__global__ void broken( { this is not CUDA }\n"}
    for i in range(c_files):
        files[f"src/host/h{i:05d}.c"] = f"int host{i}(int x) {{ return x * {i} + {i % 7}; }}\n"
    for i in range(cuda_files):
        files[f"src/cuda/c{i:04d}.cu"] = CUDA_FILE.format(index=i)
    project = make_repo(root / "origin" / "project", files)
    add_submodule(project, f"file://{vecmath}", "third_party/vecmath", "add vecmath")
    git(project, "tag", "v1.0")
    return project


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Bench:
    def __init__(self, args, root):
        self.args = args
        self.root = root
        self.project = make_scale_project(root, args.c_files, args.cuda_files)
        self.data = data_dir_with_recipe(root, self.project)
        self.cache = root / "cache"
        self.env = dict(os.environ, ARCHBUILD_DATA_DIR=str(self.data), NO_COLOR="1")
        self.env.pop("ARCHBUILD_FAKE_GPUS", None)
        self.tree = self.cache / "worktrees" / "fixture-v1.0"

    def argv(self, arch, jobs, *extra):
        return [self.args.archbuild, "build", "fixture", "--arch", arch, "--jobs", str(jobs), "--cache-dir",
                str(self.cache), "--out", str(self.root / "out"), "--compiler-launcher", "none", "--no-validate",
                "--rebuild", *extra]

    def plan(self, arch, jobs):
        result = subprocess.run([self.args.archbuild, "plan", "fixture", "--arch", arch, "--jobs", str(jobs),
                                 "--cache-dir", str(self.cache), "--compiler-launcher", "none", "--json"],
                                env=self.env, capture_output=True, text=True, check=True)
        return json.loads(result.stdout)["forecast"]

    def report(self):
        return json.loads((self.root / "out" / "report.json").read_text())

    def clean(self):
        """Every step runs again: the work tree's build dir goes."""
        shutil.rmtree(self.tree / "build", ignore_errors=True)
        (self.tree / ".git" / "archbuild-configured.json").unlink(missing_ok=True)

    def build(self, arch, jobs, *extra, sample=True):
        """Runs a build with stderr on a pty (archbuild draws its live line);
        returns (exit code, the pty's text, RSS samples in KiB)."""
        leader, follower = pty.openpty()
        process = subprocess.Popen(self.argv(arch, jobs, *extra), env=self.env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        text, samples, started = bytearray(), [], time.monotonic()
        first_eta = None
        while True:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                text += chunk
                if first_eta is None and b"ETA " in chunk:
                    first_eta = time.monotonic() - started
            if sample and (kib := rss_kib(process.pid)):
                samples.append((time.monotonic() - started, kib))
        process.wait()
        os.close(leader)
        return process.returncode, text.decode(errors="replace"), samples, first_eta

    def interrupted_then_resumed(self, arch, jobs):
        """SIGINT once ninja is 40% through, then the same command again."""
        self.clean()
        process = subprocess.Popen(self.argv(arch, jobs), env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        log = self.root / "out" / "build.log"
        start = log.stat().st_size if log.exists() else 0  # the log is appended to, build after build
        deadline = time.monotonic() + 3600
        total = None
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            steps = re.findall(r"^\[(\d+)/(\d+)\]", log.read_text(errors="replace")[start:], re.M)
            if steps:
                done, total = map(int, steps[-1])
                if done > 0.4 * total:
                    process.send_signal(signal.SIGINT)
                    break
        signalled_at = done if total else None
        code = process.wait()
        log_size = log.stat().st_size
        rerun = subprocess.run(self.argv(arch, jobs), env=self.env, capture_output=True, text=True)
        after = log.read_text(errors="replace")[log_size:]
        resumed = [int(m) for m in re.findall(r"^\[\d+/(\d+)\]", after, re.M)]
        return {"interrupted_exit": code, "steps_before": total, "signalled_at_step": signalled_at,
                "rerun_exit": rerun.returncode,
                "rerun_steps": max(resumed) if resumed else None}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--c-files", type=int, default=3000)
    parser.add_argument("--cuda-files", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--keep", action="store_true", help="keep the scratch dir")
    parser.add_argument("--trace-only", metavar="OUT",
                        help="one clean build for --arch only, its trace.json copied to OUT (bench/cluster_scaling.py)")
    parser.add_argument("--arch", default="9.0", help="the arch list of --trace-only's build")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-scale-"))
    out = {}
    try:
        bench = Bench(args, root)
        jobs, fewer = args.jobs, max(1, args.jobs // 2)
        if args.trace_only:
            code, text, _, _ = bench.build(args.arch, jobs, sample=False)
            assert code == 0, text[-3000:]
            build = bench.report()["build"]
            shutil.copy(root / "out" / "trace.json", args.trace_only)
            print(f"{args.c_files} C + {args.cuda_files} .cu files for {args.arch} at {jobs} jobs: "
                  f"{build['seconds']:.1f} s, build CPU {build['build_cpu_seconds']:.1f} s; trace in {args.trace_only}")
            return
        # 1. The first build: nothing to forecast from.
        code, text, samples, first_eta = bench.build("9.0", jobs)
        assert code == 0, text[-3000:]
        first = bench.report()["build"]
        lines = sum(1 for _ in open(root / "out" / "build.log", errors="replace"))
        events = json.loads((root / "out" / "trace.json").read_text())["traceEvents"]
        updates = text.count("\r")
        rss = [kib for _, kib in samples]
        third = max(1, len(rss) // 3)
        out["first"] = {"seconds": first["seconds"], "steps": len(events), "log_lines": lines,
                        "archbuild_cpu": first["archbuild_cpu_seconds"], "build_cpu": first["build_cpu_seconds"],
                        "peak_rss_mib": first["archbuild_peak_rss_bytes"] / 2**20,
                        "rss_first_third_mib": max(rss[:third]) / 1024, "rss_last_third_mib": max(rss[-third:]) / 1024,
                        "live_line_updates": updates}
        # 2. Another arch list, and 3. another job count: forecast, then built clean.
        for name, arch, n in (("another_arch_list", "8.0;9.0", jobs), ("another_job_count", "9.0", fewer)):
            bench.clean()
            forecast = bench.plan(arch, n)
            code, text, _, first_eta = bench.build(arch, n, sample=False)
            assert code == 0, text[-3000:]
            actual = bench.report()["build"]["seconds"]
            out[name] = {"arch": arch, "jobs": n, "predicted": forecast["seconds"], "actual": actual,
                         "error_percent": 100 * (forecast["seconds"] - actual) / actual,
                         "first_eta_after_s": first_eta, "basis": forecast["basis"]}
        # 4. A build that breaks in its middle: the first error names the file.
        bench.clean()
        code, _, _, _ = bench.build("9.0", jobs, "--env", "SCALE_BREAK=1", sample=False)
        failed = bench.report()["build"]
        out["failure"] = {"exit": code, "failed_target": failed["failed_target"],
                          "error_line": next((line for line in failed["first_error"] if "error" in line), None)}
        # 5. SIGINT at 40%, then the same command resumes.
        out["resume"] = bench.interrupted_then_resumed("9.0", jobs)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=2))
    first = out["first"]
    print(f"\n{first['steps']} steps ({args.cuda_files} nvcc), {first['log_lines']} log lines, "
          f"{first['seconds']:.1f} s at {args.jobs} jobs")
    print(f"archbuild CPU {first['archbuild_cpu']:.2f} s of {first['build_cpu']:.1f} s = "
          f"{100 * first['archbuild_cpu'] / first['build_cpu']:.2f}% (target < 1%)")
    print(f"archbuild RSS: peak {first['peak_rss_mib']:.1f} MiB; first third {first['rss_first_third_mib']:.1f} MiB, "
          f"last third {first['rss_last_third_mib']:.1f} MiB; {first['live_line_updates']} live-line updates")
    print(f"failure: exit {out['failure']['exit']}, {out['failure']['failed_target']}: {out['failure']['error_line']}")
    resume = out["resume"]
    print(f"resume: SIGINT at step {resume['signalled_at_step']} of {resume['steps_before']} exited {resume['interrupted_exit']}; the rerun "
          f"ran {resume['rerun_steps']} steps and exited {resume['rerun_exit']}")
    for name in ("another_arch_list", "another_job_count"):
        case = out[name]
        print(f"{name}: predicted {case['predicted']:.1f} s, took {case['actual']:.1f} s, "
              f"error {case['error_percent']:+.1f}% (target within 30%); first ETA on the live line after "
              f"{case['first_eta_after_s']:.1f} s")


if __name__ == "__main__":
    main()
