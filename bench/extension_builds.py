#!/usr/bin/env python3
"""Real CUDA extension builds with archbuild on a GPU machine:
for each recipe, a build for `native` and one for PyTorch's official cu130
list, one after the other; wall time, peak memory of the whole build's
process tree, jobs, nvcc threads; a second invocation (cache hit); and a
rebuild of the same commit in a fresh work tree with a warm ccache.

Usage: extension_builds.py --archbuild BIN --python PY --mirror FROM=TO
       --cache DIR --out results.json RECIPE [RECIPE...]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

OFFICIAL = "7.5;8.0;8.6;9.0;10.0;12.0+PTX"


def tree_rss_bytes(root):
    """Sum of VmRSS over `root` and all its descendants."""
    parents, rss = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields.get("PPid", "0").strip())
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024 if "VmRSS" in fields else 0
    total = 0
    for pid in rss:
        walk = pid
        while walk and walk != root:
            walk = parents.get(walk, 0)
        if walk == root:
            total += rss[pid]
    return total


def timed(argv, env):
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.5):
            peak[0] = max(peak[0], tree_rss_bytes(process.pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = process.communicate()
    done.set()
    sampler.join()
    return {"seconds": round(time.monotonic() - start, 2), "peak_rss_gib": round(peak[0] / 2**30, 2),
            "rc": process.returncode, "stdout": out, "stderr": err}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--mirror", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--native-only", action="store_true", help="skip the official-list build")
    parser.add_argument("recipes", nargs="+", help="RECIPE, or RECIPE:native / RECIPE:official for one of the two builds")
    args = parser.parse_args()
    env = dict(os.environ, NO_COLOR="1")
    cache = pathlib.Path(args.cache)
    results = {}
    for entry in args.recipes:
        # "extension-cpp:native" = that recipe without the official list, ":official" without native
        recipe, _, only = entry.partition(":")
        row = results.setdefault(recipe, {})
        sets = (("native", "native"), ("official", OFFICIAL))
        if args.native_only or only == "native":
            sets = sets[:1]
        elif only == "official":
            sets = sets[1:]
        for label, arch in sets:
            argv = [args.archbuild, recipe, "--arch", arch, "--use-installed-torch", "--python", args.python,
                    "--mirror", args.mirror, "--cache-dir", str(cache), "--out", str(cache / "out" / f"{recipe}-{label}"),
                    "--json"]
            run = timed(argv, env)
            report = json.loads(run["stdout"]) if run["stdout"].startswith("{") else {}
            validation = (report.get("validation") or [{}])[0]
            row[label] = {"seconds": run["seconds"], "peak_rss_gib": run["peak_rss_gib"], "rc": run["rc"],
                          "jobs": report.get("plan", {}).get("jobs"), "nvcc_threads": report.get("plan", {}).get("nvcc_threads"),
                          "build_seconds": report.get("build", {}).get("seconds"),
                          "wheel": [w["file"] for w in report.get("wheels", [])],
                          "validation_scope": report.get("validation_scope"),
                          "device_checks": [(c["name"], c["ok"], c["detail"]) for c in validation.get("device", {}).get("checks", [])],
                          "stderr_tail": run["stderr"][-1500:] if run["rc"] else ""}
            print(recipe, label, {k: v for k, v in row[label].items() if k != "stderr_tail"}, flush=True)
            if run["rc"]:
                print(run["stderr"][-3000:], flush=True)
            pathlib.Path(args.out).write_text(json.dumps(results, indent=2))  # partial results survive a stop
            if label == sets[0][0]:  # the first build also gets a cache-hit run and a warm rebuild
                hit = timed(argv, env)
                row["cache_hit_seconds"] = hit["seconds"]
                row["cache_hit"] = json.loads(hit["stdout"]).get("cache_hit") if hit["stdout"].startswith("{") else None
                # same commit, fresh work tree, warm ccache
                shutil.rmtree(cache / "worktrees" / f"{recipe}-master", ignore_errors=True)
                ccache_env = dict(env, CCACHE_DIR=str(cache / "ccache"))
                libs = pathlib.Path(args.archbuild).resolve().parent.parent / "lib"  # .device/lib (packaged ccache)
                if libs.is_dir():
                    ccache_env["LD_LIBRARY_PATH"] = str(libs)
                subprocess.run(["ccache", "--zero-stats"], capture_output=True, env=ccache_env)  # count this rebuild only
                warm = timed(argv + ["--rebuild"], env)
                row["warm_rebuild_seconds"] = warm["seconds"]
                row["warm_rc"] = warm["rc"]
                warm_report = json.loads(warm["stdout"]) if warm["stdout"].startswith("{") else {}
                row["warm_build_seconds"] = warm_report.get("build", {}).get("seconds")
                stats = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, env=ccache_env).stdout
                row["ccache_stats"] = {k: v for k, v in (l.split("\t", 1) for l in stats.splitlines() if "\t" in l)
                                       if k in ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")}
                print(recipe, "hit", row["cache_hit_seconds"], "warm", warm["seconds"], warm["rc"], row["ccache_stats"], flush=True)
        if "native" in row and "official" in row and row["native"]["seconds"]:
            row["official_over_native"] = round(row["official"]["seconds"] / row["native"]["seconds"], 2)
        cold = row[sets[0][0]]  # the build the warm rebuild repeated
        if row.get("warm_rebuild_seconds"):
            row["cold_over_warm"] = round(cold["seconds"] / row["warm_rebuild_seconds"], 2)
        if row.get("warm_build_seconds") and cold.get("build_seconds"):
            row["cold_over_warm_build_step"] = round(cold["build_seconds"] / row["warm_build_seconds"], 2)
        pathlib.Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps({r: {k: v for k, v in row.items() if k not in ("native", "official")} for r, row in results.items()}, indent=1))


if __name__ == "__main__":
    main()
