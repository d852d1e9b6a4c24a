#!/usr/bin/env python3
"""Real public projects in the source layouts pip accepts, built on a GPU
machine by archbuild (`--arch native`, device validation, published) and by
`pip wheel --no-build-isolation --no-deps` with TORCH_CUDA_ARCH_LIST set by
hand to the GPU's CC, one after the other in the same run: wall time,
outcome, and what each wheel holds (`archbuild inspect --json`: SASS and PTX
per library). A source is whatever both take: a directory, a sdist file, a
git+URL#subdirectory=DIR.

Usage: source_patterns_vs_pip.py --archbuild BIN --python PY --cache DIR
       --out results.json --arch-list 9.0 [--arch SPEC] NAME=SOURCE [NAME=SOURCE...]
       [--env NAME:KEY=VALUE]... [--patch NAME:FILE]...
--arch is archbuild's (default native); a --patch goes to archbuild as
--patch and is applied (patch -p1) to a copy of a directory source for pip.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import time


def timed(argv, env, cwd=None):
    start = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    return result, round(time.monotonic() - start, 1)


def holds(archbuild, wheel, env):
    """SASS and PTX archs over the wheel's CUDA files, as `archbuild inspect --json` reads them."""
    result = subprocess.run([archbuild, "inspect", str(wheel), "--json"], capture_output=True, text=True, env=env)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        return {"error": (result.stderr or result.stdout)[-500:]}
    sass, ptx, files = set(), set(), 0
    for entry in report.get("files", []):
        if entry.get("sass") or entry.get("ptx"):
            files += 1
        sass.update(entry.get("sass", {}))
        ptx.update(entry.get("ptx", {}))
    return {"sass": sorted(sass), "ptx": sorted(ptx), "cuda_files": files}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--arch-list", required=True, help="what pip is told by hand: the GPU's CC")
    parser.add_argument("--env", action="append", default=[], help="NAME:KEY=VALUE for one project's two builds")
    parser.add_argument("--arch", default="native")
    parser.add_argument("--patch", action="append", default=[], help="NAME:FILE for one project's two builds")
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args()
    env = dict(os.environ, NO_COLOR="1")
    extra, patches = {}, {}
    for item in args.env:
        name, _, assignment = item.partition(":")
        extra.setdefault(name, []).append(assignment)
    for item in args.patch:
        name, _, patch = item.partition(":")
        patches.setdefault(name, []).append(patch)
    cache = pathlib.Path(args.cache)
    results = {}
    for entry in args.sources:
        name, _, source = entry.partition("=")
        print(f"== {name}: {source}", flush=True)
        out = cache / "out" / name
        shutil.rmtree(out, ignore_errors=True)
        argv = [args.archbuild, "build", source, "--arch", args.arch, "--use-installed-torch", "--python", args.python,
                "--cache-dir", str(cache / "archbuild"), "--out", str(out), "--json"]
        for assignment in extra.get(name, []):
            argv += ["--env", assignment]
        for patch in patches.get(name, []):
            argv += ["--patch", patch]
        built, seconds = timed(argv, env)
        report = json.loads(built.stdout) if built.stdout.strip().startswith("{") else {}
        wheels = [w.get("path") if isinstance(w, dict) else w for w in report.get("wheels", [])]
        log = out / "build.log"
        errors = [line.strip() for line in (log.read_text(errors="replace").splitlines() if log.exists() else [])
                  if "error" in line.lower()][:6]
        archbuild = {"rc": built.returncode, "seconds": seconds, "stderr_tail": built.stderr[-1500:], "first_errors": errors,
                     "validation_level": report.get("validation_level"), "wheels": wheels,
                     "source": report.get("source", {}), "holds": holds(args.archbuild, wheels[0], env) if wheels else None}
        print(json.dumps({k: archbuild[k] for k in ("rc", "seconds", "validation_level", "holds")}), flush=True)
        pip_dir = cache / "pip" / name
        shutil.rmtree(pip_dir, ignore_errors=True)
        pip_env = dict(env, TORCH_CUDA_ARCH_LIST=args.arch_list, MAX_JOBS=str(os.cpu_count()))
        for assignment in extra.get(name, []):
            key, _, value = assignment.partition("=")
            pip_env[key] = value
        pip_source = source
        if patches.get(name):  # a patched copy of the directory
            pip_source = str(cache / "pip-sources" / name)
            shutil.rmtree(pip_source, ignore_errors=True)
            shutil.copytree(source, pip_source, symlinks=True)
            for patch in patches[name]:
                subprocess.run(["patch", "-p1", "-i", patch], cwd=pip_source, check=True, capture_output=True)
        pipped, pip_seconds = timed([args.python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                                     "--disable-pip-version-check", "-w", str(pip_dir), pip_source], pip_env)
        pip_wheels = sorted(pip_dir.glob("*.whl")) if pip_dir.exists() else []
        output = (pipped.stderr or "") + (pipped.stdout or "")
        first_errors = [line.strip() for line in output.splitlines() if "error" in line.lower() or "fatal" in line][:6]
        pip = {"rc": pipped.returncode, "seconds": pip_seconds, "stderr_tail": output[-1500:], "first_errors": first_errors,
               "holds": holds(args.archbuild, pip_wheels[0], env) if pip_wheels else None}
        print(json.dumps({k: pip[k] for k in ("rc", "seconds", "holds")}), flush=True)
        results[name] = {"source": source, "archbuild": archbuild, "pip": pip}
        pathlib.Path(args.out).write_text(json.dumps(results, indent=1))
    print("all done", flush=True)


if __name__ == "__main__":
    main()
