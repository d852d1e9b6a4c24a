#!/usr/bin/env python3
"""Proof of the per-wheel GPU validation on a GPU machine: for each project,
`archbuild build SOURCE --arch native --use-installed-torch --json` and, from
its report, for every wheel what the device validation found: which of the
wheel's own CUDA kernels launched (`kernel_census`), the generic op exerciser's
CPU-vs-GPU comparison of the package's torch.library / TORCH_LIBRARY /
torch::RegisterOperators ops (`op_exercise`, `op_exercise_ptx`), the project's
own test/ or tests/ suite run report-only (`project_tests`), and every device
check's name, verdict and detail. Any of these may be missing from a report:
it is then recorded as null.

Usage: validation_proof.py --archbuild BIN --python PY --cache DIR --out results.json
       [--mirror FROM=TO] [--arch SPEC | --arch NAME:SPEC]... [--ref NAME:COMMIT]...
       [--env NAME:KEY=VALUE]... [--patch NAME:FILE]... [--arg NAME:ARG]...
       [--timeout SECONDS] NAME=SOURCE [NAME=SOURCE...]

SOURCE: a git URL (reached through --mirror, e.g.
`--mirror https://github.com/=file://$PWD/.fetched/` for the bare clones in
.fetched/<owner>/<repo>.git, so name them https://github.com/OWNER/REPO.git),
a local directory, or `export:GITDIR@COMMIT`: that commit's files written out
of a bare repository into DIR/sources/NAME (submodules and blobs the snapshot
lacks are left out and listed) and built as a plain directory, for projects
whose submodules or missing large files a git checkout could not get.
`--arch` without NAME: is every project's (default native). The results file
is rewritten after every project, so a stopped run keeps what it measured;
each project's whole report is kept beside it as NAME.report.json.
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEVICE_FIELDS = ("kernel_census", "op_exercise", "op_exercise_ptx", "project_tests")
CENSUS_KEYS = ("summary", "wheel_kernels", "launched_count", "devices", "recorded", "not_recorded", "other_kernels")
EXERCISE_KEYS = ("summary", "ops_found", "exercised_count", "failed_count", "skipped_count", "failed",
                 "budget_exhausted", "seconds")
TESTS_KEYS = ("summary", "origin", "passed", "failed", "skipped", "report_only", "missing_modules", "seconds")


def per_project(items, what):
    """NAME:VALUE options as {NAME: [VALUE, ...]}."""
    table = {}
    for item in items:
        name, colon, value = item.partition(":")
        if not colon or not name or not value:
            sys.exit(f"{what} takes NAME:VALUE, got {item!r}")
        table.setdefault(name, []).append(value)
    return table


def export_commit(spec, dest):
    """`GITDIR@COMMIT` -> the commit's files under dest; returns what was left out."""
    git_dir, at, commit = spec.rpartition("@")
    if not at or not git_dir:
        sys.exit(f"export: takes GITDIR@COMMIT, got {spec!r}")
    git = ["git", "--git-dir", git_dir]
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", "--full-tree", commit],
                             capture_output=True, check=True).stdout
    entries = []
    for record in filter(None, listing.split(b"\0")):
        meta, path = record.split(b"\t", 1)
        mode, kind, oid = meta.decode().split()
        entries.append((mode, kind, oid, path.decode()))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    left_out = []
    batch = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for mode, kind, oid, path in entries:
            if kind != "blob":  # a submodule (commit): not in this repository
                left_out.append(f"{path} ({kind})")
                continue
            batch.stdin.write(oid.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                left_out.append(f"{path} (blob missing from the snapshot)")
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)  # the newline after the content
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                target.symlink_to(data.decode())
            else:
                target.write_bytes(data)
                if mode == "100755":
                    target.chmod(0o755)
    finally:
        batch.stdin.close()
        batch.wait()
    return left_out


def run(argv, env, timeout):
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        rc = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)  # the build's own process group, nothing else
        try:
            out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
        rc = "timeout"
    return rc, round(time.monotonic() - start, 1), out or "", err or ""


def pick(value, keys):
    """The named keys of a dict (missing ones as null, extra ones kept under 'other'); null stays null."""
    if not isinstance(value, dict):
        return value
    picked = {key: value.get(key) for key in keys}
    other = {key: item for key, item in value.items() if key not in keys}
    if other:
        picked["other"] = other
    return picked


def wheel_summary(validation):
    device = validation.get("device") if isinstance(validation, dict) else None
    device = device if isinstance(device, dict) else {}
    checks = [{"name": check.get("name"), "ok": check.get("ok"), "detail": check.get("detail"),
               "seconds": check.get("seconds")}
              for check in device.get("checks", []) or [] if isinstance(check, dict)]
    return {
        "wheel": validation.get("wheel") or validation.get("file") if isinstance(validation, dict) else None,
        "kernel_census": pick(device.get("kernel_census"), CENSUS_KEYS),
        "op_exercise": pick(device.get("op_exercise"), EXERCISE_KEYS),
        "op_exercise_ptx": pick(device.get("op_exercise_ptx"), EXERCISE_KEYS),
        "project_tests": pick(device.get("project_tests"), TESTS_KEYS),
        "checks": checks,
        "device_keys": sorted(device),
    }


def count(value):
    return len(value) if isinstance(value, list) else value


def one_line(name, row):
    parts = [f"{name}: rc {row['rc']}", f"{row['seconds']} s", f"level {row['validation_level']}"]
    for index, wheel in enumerate(row["wheels"]):
        census = wheel["kernel_census"] or {}
        ops = wheel["op_exercise"] or {}
        tests = wheel["project_tests"] or {}
        failed_checks = [check["name"] for check in wheel["checks"] if check["ok"] is False]
        parts.append(f"wheel {index}: kernels {census.get('launched')}/{census.get('wheel_kernels')}"
                     f" ops found {ops.get('ops_found')} exercised {count(ops.get('exercised'))}"
                     f" failed {count(ops.get('failed'))} skipped {count(ops.get('skipped'))}"
                     f" tests {tests.get('summary')!r} failed checks {failed_checks}")
    return "; ".join(parts)


def markdown_table(results):
    """The table docs/BENCHMARKS.md keeps: per project the build step, the
    rest of the command (validation and publishing), each device check's
    seconds, the level and the wheel's own kernels launched."""
    lines = ["| project | build step | whole command | validation / build | device checks (s) | level | "
             "own kernels launched |", "|---|---|---|---|---|---|---|"]
    for name, row in results["projects"].items():
        build = row.get("build_seconds")
        whole = row.get("seconds")
        ratio = f"{(whole - build) / build:.2f}" if isinstance(build, (int, float)) and build and whole else "-"
        checks, launched = [], []
        for wheel in row.get("wheels", []):
            for check in wheel["checks"]:
                if isinstance(check.get("seconds"), (int, float)):
                    checks.append(f"{check['name']} {check['seconds']:.1f}")
            census = wheel.get("kernel_census") or {}
            launched.append(f"{census.get('launched_count')} of {census.get('wheel_kernels')}")
        build_text = f"{build:.0f} s" if isinstance(build, (int, float)) else "-"
        lines.append(f"| {name} | {build_text} | {whole} s (rc {row.get('rc')}) | {ratio} | "
                     f"{'; '.join(checks) or '-'} | {row.get('validation_level')} | {', '.join(launched) or '-'} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--cache", required=True, help="archbuild's --cache-dir; outputs and exported sources go under it")
    parser.add_argument("--out", required=True, help="results JSON, rewritten after every project")
    parser.add_argument("--mirror", action="append", default=[], help="FROM=TO, passed to archbuild")
    parser.add_argument("--arch", action="append", default=[], help="SPEC for every project, or NAME:SPEC for one")
    parser.add_argument("--ref", action="append", default=[], help="NAME:COMMIT (or tag/branch)")
    parser.add_argument("--env", action="append", default=[], help="NAME:KEY=VALUE for one project's build")
    parser.add_argument("--patch", action="append", default=[], help="NAME:FILE, passed to archbuild as --patch")
    parser.add_argument("--arg", action="append", default=[], help="NAME:ARG, any other archbuild argument")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per archbuild run")
    parser.add_argument("sources", nargs="+", help="NAME=SOURCE")
    args = parser.parse_args()

    default_arch = "native"
    for item in [item for item in args.arch if ":" not in item]:
        default_arch = item
    arch = {name: values[-1] for name, values in per_project([i for i in args.arch if ":" in i], "--arch").items()}
    refs = {name: values[-1] for name, values in per_project(args.ref, "--ref").items()}
    envs, patches, extra = per_project(args.env, "--env"), per_project(args.patch, "--patch"), per_project(args.arg, "--arg")

    env = dict(os.environ, NO_COLOR="1")
    env.setdefault("ARCHBUILD_DATA_DIR", str(ROOT))
    has_pytest = subprocess.run([args.python, "-c", "import pytest"], capture_output=True).returncode == 0
    if not has_pytest and (ROOT / ".device" / "pytest").is_dir():  # what bench/device_project_tests.sh does
        env["PYTHONPATH"] = str(ROOT / ".device" / "pytest") + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")

    cache = pathlib.Path(args.cache).resolve()
    out_path = pathlib.Path(args.out)
    reports = out_path.with_suffix("").with_name(out_path.stem + "-reports")
    reports.mkdir(parents=True, exist_ok=True)
    results = {"archbuild": args.archbuild, "python": args.python, "projects": {}}
    for entry in args.sources:
        name, equals, source = entry.partition("=")
        if not equals or not name or not source:
            sys.exit(f"expected NAME=SOURCE, got {entry!r}")
        row = {"source": source}
        if source.startswith("export:"):
            directory = cache / "sources" / name
            row["left_out"] = export_commit(source[len("export:"):], directory)
            source = str(directory)
        elif os.path.isdir(source):
            source = str(pathlib.Path(source).resolve())
        out_dir = cache / "out" / name
        shutil.rmtree(out_dir, ignore_errors=True)
        argv = [args.archbuild, "build", source, "--arch", arch.get(name, default_arch), "--use-installed-torch",
                "--python", args.python, "--cache-dir", str(cache), "--out", str(out_dir), "--json"]
        for mirror in args.mirror:
            argv += ["--mirror", mirror]
        if name in refs:
            argv += ["--ref", refs[name]]
        for assignment in envs.get(name, []):
            argv += ["--env", assignment]
        for patch in patches.get(name, []):
            argv += ["--patch", str(pathlib.Path(patch).resolve())]
        argv += extra.get("*", []) + extra.get(name, [])
        row["argv"] = argv
        print(f"== {name}: {' '.join(argv)}", flush=True)
        rc, seconds, stdout, stderr = run(argv, env, args.timeout)
        (reports / f"{name}.report.json").write_text(stdout)
        (reports / f"{name}.stderr").write_text(stderr)
        try:
            report = json.loads(stdout) if stdout.strip().startswith("{") else {}
        except json.JSONDecodeError:
            report = {}
        log = out_dir / "build.log"
        errors = [line.strip() for line in (log.read_text(errors="replace").splitlines() if log.exists() else [])
                  if "error" in line.lower()][:8] if rc else []
        validations = report.get("validation") or []
        row.update({
            "rc": rc, "seconds": seconds,
            "validation_level": report.get("validation_level"),
            "validation_scope": report.get("validation_scope"),
            "cache_hit": report.get("cache_hit"),
            "commit": (report.get("source") or {}).get("commit"),
            "build_seconds": (report.get("build") or {}).get("seconds"),
            "wheel_files": [w.get("file") or w.get("path") if isinstance(w, dict) else w for w in report.get("wheels", [])],
            "wheels": [wheel_summary(v) for v in validations],
            "stderr_tail": stderr[-2000:] if rc else "",
            "first_errors": errors,
        })
        results["projects"][name] = row
        out_path.write_text(json.dumps(results, indent=1))  # partial results survive a stop
        out_path.with_suffix(".md").write_text(markdown_table(results))
        print(one_line(name, row), flush=True)
    print("all done", flush=True)


if __name__ == "__main__":
    main()
