#!/usr/bin/env python3
"""Writes the wheel seeds of corpus/wheel/: small wheels as a build writes
them (RECORD with sha256 and sizes), holding CUDA binaries from corpus/inspect/
deflated and stored, so the fuzzer starts past libzip's checks and inside
RECORD and the binary walker. Run from anywhere; rewrites the files."""
import base64
import hashlib
import pathlib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(path, files, method):
    dist_info = "fixture-1.0.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = b"Metadata-Version: 2.1\nName: fixture\nVersion: 1.0\n"
    files[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: false\nTag: py3-none-any\n"
    record = [record_line(name, data) for name, data in files.items()] + [f"{dist_info}/RECORD,,"]
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in [*files.items(), (f"{dist_info}/RECORD", "\n".join(record).encode() + b"\n")]:
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data, method)


def main():
    out = CORPUS / "wheel"
    out.mkdir(exist_ok=True)
    init = b"import os\nLIBRARY = os.path.join(os.path.dirname(__file__), '_C.so')\n"
    cubin = (CORPUS / "inspect" / "sm120a.cubin").read_bytes()
    fatbin = (CORPUS / "inspect" / "fatbin_lz4.fatbin").read_bytes()
    wheel(out / "pure.whl", {"fixture/__init__.py": init}, zipfile.ZIP_DEFLATED)
    wheel(out / "cubin_deflated.whl", {"fixture/__init__.py": init, "fixture/_C.so": cubin}, zipfile.ZIP_DEFLATED)
    wheel(out / "fatbin_stored.whl", {"fixture/__init__.py": init, "fixture/kernels.fatbin": fatbin,
                                      "_bare.cpython-311-x86_64-linux-gnu.so": cubin[:64]}, zipfile.ZIP_STORED)


if __name__ == "__main__":
    main()
