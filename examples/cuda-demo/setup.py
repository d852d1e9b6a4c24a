#!/usr/bin/env python3
"""archbuild's built-in demo: a small CUDA library packaged as a wheel, built
the way PyTorch is (setup.py driving CMake + Ninja + nvcc, arch list from
TORCH_CUDA_ARCH_LIST). Usage: setup.py bdist_wheel [--dist-dir DIR]."""
import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent
VERSION = "1.0.0"


def cmake_architectures(arch_list):
    """TORCH_CUDA_ARCH_LIST ("8.0;9.0+PTX") -> CMAKE_CUDA_ARCHITECTURES ("80-real;90")."""
    out = []
    for item in arch_list.replace(",", ";").replace(" ", ";").split(";"):
        if not item:
            continue
        ptx = item.endswith("+PTX")
        number = item.removesuffix("+PTX").replace(".", "")
        out.append(number if ptx else f"{number}-real")
    if not out:
        sys.exit("TORCH_CUDA_ARCH_LIST is empty: set it, e.g. TORCH_CUDA_ARCH_LIST=9.0")
    return ";".join(out)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    args = sys.argv[1:]
    if not args or args[0] != "bdist_wheel":
        sys.exit(__doc__)
    dist = pathlib.Path(args[args.index("--dist-dir") + 1]) if "--dist-dir" in args else ROOT / "dist"
    build = ROOT / "build"
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_CUDA_ARCHITECTURES=" + cmake_architectures(os.environ.get("TORCH_CUDA_ARCH_LIST", ""))]
    if os.environ.get("CMAKE_FRESH") == "1":
        configure.append("--fresh")
    if os.environ.get("CUDAHOSTCXX"):
        configure.append("-DCMAKE_CUDA_HOST_COMPILER=" + os.environ["CUDAHOSTCXX"])
    for argv in (configure, ["cmake", "--build", str(build), "-j", os.environ.get("MAX_JOBS", "2")]):
        if subprocess.call(argv):
            sys.exit(f"failed: {' '.join(argv)}")
    files = {
        "cuda_demo/__init__.py": (ROOT / "cuda_demo" / "__init__.py").read_bytes(),
        "cuda_demo/libcuda_demo.so": (build / "libcuda_demo.so").read_bytes(),
        f"cuda_demo-{VERSION}.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: cuda-demo\nVersion: {VERSION}\nSummary: archbuild's demo\n".encode(),
        f"cuda_demo-{VERSION}.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: cuda-demo\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n",
    }
    record = [record_line(name, data) for name, data in files.items()] + [f"cuda_demo-{VERSION}.dist-info/RECORD,,"]
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / f"cuda_demo-{VERSION}-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"cuda_demo-{VERSION}.dist-info/RECORD", "\n".join(record) + "\n")
    print(f"created {wheel}")


if __name__ == "__main__":
    main()
