#!/usr/bin/env python3
"""The cache's cost against its size: a generated store of 10, 1,000 and
10,000 published entries (five projects, small but valid wheels with their
RECORD, manifests with their sha256), then, per size:
  - a publish: a real `archbuild build` of the tests' fixture project into
    that cache, and the index work it did (report.json build.index_seconds);
  - `archbuild cache ls`, `cache verify` and `cache gc --keep 1000000`
    (which removes nothing and rebuilds the whole index), wall time.
Targets at 10,000 entries: a publish adds under 50 ms of index work, `cache
ls` answers in under 0.5 s.

  python3 bench/index_bench.py --archbuild build/src/archbuild [--sizes 10,1000,10000] [--markdown]
"""
import argparse
import base64
import hashlib
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
os.environ.setdefault("ARCHBUILD_SOURCE_DIR", str(ROOT))
from fixture_project import data_dir_with_recipe, make_cuda_project  # noqa: E402

PROJECTS = ("fleet-torch", "fleet-vision", "fleet-audio", "fleet-scatter", "fleet-flash")


def digest(data):
    return hashlib.sha256(data).hexdigest()


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(path, name, version):
    module = name.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    files = {f"{module}/__init__.py": f"VERSION = {version!r}\n".encode(),
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{member},{record_hash(data)},{len(data)}\n" for member, data in files.items())
    record += f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
        archive.writestr(f"{dist}/RECORD", record)


def generate_store(cache, count):
    """`count` published entries, the way archbuild writes them, in five projects."""
    store = cache / "store"
    store.mkdir(parents=True)
    archs = ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")
    for i in range(count):
        project = PROJECTS[i % len(PROJECTS)]
        arch = archs[(i // len(PROJECTS)) % len(archs)]
        label = "sm" + arch.replace(".", "")
        version = f"1.{i // (len(PROJECTS) * len(archs))}.0+cu130.{label}"
        key_text = (f"cache_format 1\narch_list {arch}\ncuda 13.0.88\nrecipe {project}\n"
                    f"ref v1.{i // (len(PROJECTS) * len(archs))}.0\n")
        entry = store / digest(key_text.encode())
        (entry / "wheels").mkdir(parents=True)
        wheel = entry / "wheels" / f"{project.replace('-', '_')}-{version}-py3-none-any.whl"
        make_wheel(wheel, project, version)
        data = wheel.read_bytes()
        (entry / "key.txt").write_text(key_text)
        manifest = {"cache_hit": False, "key": entry.name, "published": True, "published_at": "2026-12-01T00:00:00Z",
                    "validation_level": "device", "validated": True, "validation": [], "build": {},
                    "local_version_label": version.split("+")[1],
                    "wheels": [{"file": wheel.name, "path": str(wheel), "sha256": digest(data), "size": len(data)}]}
        (entry / "manifest.json").write_text(json.dumps(manifest))
        # publish order: the newest last (entries are sorted by manifest time)
        stamp = 1_700_000_000 + i
        os.utime(entry / "manifest.json", (stamp, stamp))


def timed(argv, env, runs=1):
    walls = []
    for _ in range(runs):
        started = time.monotonic()
        result = subprocess.run(argv, env=env, capture_output=True, text=True)
        walls.append(time.monotonic() - started)
        if result.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed:\n{result.stderr[-2000:]}")
    return statistics.median(walls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", required=True)
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-index-bench-"))
    rows = []
    try:
        project = make_cuda_project(root)
        data = data_dir_with_recipe(root, project)
        env = dict(os.environ, ARCHBUILD_DATA_DIR=str(data), NO_COLOR="1")
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        for size in (int(text) for text in args.sizes.split(",")):
            cache = root / f"cache-{size}"
            generate_store(cache, size)
            gc = timed([args.archbuild, "cache", "gc", "--keep", "1000000", "--cache-dir", str(cache)], env)
            build = subprocess.run([args.archbuild, "build", "fixture", "--arch", "9.0", "--cache-dir", str(cache),
                                    "--out", str(root / f"out-{size}"), "--no-validate"], env=env,
                                   capture_output=True, text=True)
            if build.returncode != 0:
                sys.exit(build.stderr[-3000:])
            report = json.loads((root / f"out-{size}" / "report.json").read_text())
            index = report["build"]["index_seconds"]
            ls = timed([args.archbuild, "cache", "ls", "--cache-dir", str(cache)], env, runs=3)
            ls_json = timed([args.archbuild, "cache", "ls", "--json", "--cache-dir", str(cache)], env, runs=3)
            verify = timed([args.archbuild, "cache", "verify", "--cache-dir", str(cache)], env)
            rows.append((size + 1, index, ls, ls_json, verify, gc))
            shutil.rmtree(cache, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.markdown:
        print("| entries | publish: index work | cache ls | cache ls --json | cache verify | cache gc (full index) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for size, index, ls, ls_json, verify, gc in rows:
            print(f"| {size:,} | {index * 1000:.1f} ms | {ls:.3f} s | {ls_json:.3f} s | {verify:.2f} s | {gc:.2f} s |")
    else:
        for size, index, ls, ls_json, verify, gc in rows:
            print(f"{size} entries: publish index {index * 1000:.1f} ms, ls {ls:.3f} s, ls --json {ls_json:.3f} s, "
                  f"verify {verify:.2f} s, gc {gc:.2f} s")


if __name__ == "__main__":
    main()
