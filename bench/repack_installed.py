#!/usr/bin/env python3
"""Packs an installed distribution back into a wheel, from its own RECORD,
so that `archbuild validate` can judge a build that exists only installed
(the GPU machine's torch, which came without its wheel file and cannot be
downloaded there). Files outside site-packages (console scripts) and pip's
own additions (INSTALLER, REQUESTED, direct_url.json) are left out; every
other file keeps the hash and size RECORD gives it, and RECORD is checked
against the files as they are. Members are stored, not deflated (speed).

Usage: repack_installed.py DIST_NAME OUT_DIR [--python PY]
Prints the wheel's path.
"""
import argparse
import base64
import csv
import hashlib
import io
import json
import os
import pathlib
import subprocess
import sys
import zipfile

PIP_ADDITIONS = {"INSTALLER", "REQUESTED", "direct_url.json"}


def locate(python, name):
    code = ("import importlib.metadata as m, json, sys; d = m.distribution(sys.argv[1]); "
            "print(json.dumps({'site': str(d.locate_file('')), 'dist_info': str(d._path), 'version': d.version}))")
    return json.loads(subprocess.run([python, "-c", code, name], capture_output=True, text=True, check=True).stdout)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("out_dir")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    found = locate(args.python, args.name)
    site, dist_info = pathlib.Path(found["site"]), pathlib.Path(found["dist_info"])
    wheel_meta = (dist_info / "WHEEL").read_text()
    tag = next(line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:"))
    name = dist_info.name[: -len(".dist-info")].rsplit("-", 1)[0]
    out = pathlib.Path(args.out_dir) / f"{name}-{found['version']}-{tag}.whl"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows, kept = list(csv.reader((dist_info / "RECORD").read_text().splitlines())), []
    record_name = f"{dist_info.name}/RECORD"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for row in rows:
            path = row[0]
            if path.startswith("..") or os.path.isabs(path) or path == record_name:
                continue
            if path.startswith(dist_info.name + "/") and path.split("/", 1)[1] in PIP_ADDITIONS:
                continue
            data = (site / path).read_bytes()
            digest = record_hash(data)
            if len(row) > 1 and row[1] and row[1] != digest:
                sys.exit(f"{path}: differs from its RECORD hash; refusing to pack a changed install")
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if os.access(site / path, os.X_OK) else 0o644) << 16
            archive.writestr(info, data)
            kept.append([path, digest, str(len(data))])
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(kept + [[record_name, "", ""]])
        archive.writestr(zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0)), text.getvalue())
    print(out)


if __name__ == "__main__":
    main()
