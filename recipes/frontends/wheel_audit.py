"""Where each shared library a wheel's ELF files need comes from, on a node
that installs the wheel: auditwheel's reading of the ELF tree and its
manylinux policies, archbuild's sorting of the needs.

  python wheel_audit.py WHEEL

Run with the validating interpreter and auditwheel on PYTHONPATH (archbuild
installs a pinned one); torch's libraries are those of the torch that
interpreter has (found, not imported).
Prints one JSON object:
  {"auditwheel": VERSION, "platform_tag": TAG, "symbol_tag": TAG,
   "policy": NAME, "system_libraries": [SONAME], "files": [{"file": MEMBER,
   "needs": [{"soname", "from", "path"}]}]}
where "from" is one of
  wheel    a file of the wheel itself
  system   the manylinux policy's system libraries (libc, libstdc++, ...)
  driver   the NVIDIA driver's libcuda (every GPU node has its own)
  torch    a library of torch (torch/lib of the interpreter's torch)
  cuda     a CUDA library torch's nvidia-* dependency wheels provide
  machine  found only on this machine (PATH): a node without it fails
  missing  found nowhere here
platform_tag is the tag the wheel can carry with torch's, CUDA's and the
driver's libraries left to their own wheels (auditwheel's `--exclude`):
linux_ARCH while a need is met only by this machine; symbol_tag is the
manylinux tag its glibc and libstdc++ symbol versions allow. Exit 2 with a
message for a wheel auditwheel cannot read."""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from auditwheel.error import NonPlatformWheelError
from auditwheel.lddtree import ldd
from auditwheel.wheel_abi import analyze_wheel_abi

# The dynamic loader every glibc system has (the policies list libraries, not it).
LOADER = re.compile(r"^ld-linux(-[\w-]+)?\.so\.\d+$|^ld64\.so\.\d+$")
DRIVER = re.compile(r"^libcuda\.so(\.\d+)*$|^libnvidia-ml\.so(\.\d+)*$")
# What the nvidia-* wheels torch depends on install (and a CUDA toolkit has).
CUDA_NAMES = ["cudart", "cublas", "cublasLt", "cufft", "cufftw", "curand", "cusolver", "cusolverMg", "cusparse",
              "cusparseLt", "nvrtc", "nvrtc-builtins", "nvJitLink", "cudnn*", "nccl", "nvToolsExt", "nvtx3interop",
              "cupti", "cufile", "cufile_rdma", "nvshmem_host", "nvperf_host", "nvblas"]
CUDA = re.compile(r"^lib(" + "|".join(n.replace("*", r"\w*") for n in CUDA_NAMES) + r")\.so(\.[\d.]+)*$")
# torch's own libraries by name, for an interpreter without torch (a CI machine validating a wheel)
TORCH = re.compile(r"^lib(c10|c10_cuda|torch|torch_cpu|torch_cuda|torch_python|torch_global_deps|shm)\.so$")
# What `auditwheel repair --exclude` leaves to their own wheels, matched against each soname and real path
# at every depth of the tree: a bundled library's own need of the driver or CUDA is left out too.
EXCLUDE_PATTERNS = (["libcuda.so*", "libnvidia-*.so*"] + [f"lib{n}.so*" for n in CUDA_NAMES]
                    + ["*/torch/lib/*", "*/nvidia/*/lib/*"])


def is_elf(path):
    with open(path, "rb") as handle:
        return handle.read(4) == b"\x7fELF"


def torch_libraries():
    """The file names in torch/lib of the torch this interpreter has (none without torch)."""
    spec = importlib.util.find_spec("torch")
    for location in (spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(location, "lib")
        if os.path.isdir(lib):
            return set(os.listdir(lib))
    return set()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("wheel", type=Path)
    args = parser.parse_args()
    torch_libs = torch_libraries()
    by_name = not torch_libs  # no torch here: its libraries are known by their names

    with tempfile.TemporaryDirectory(prefix="archbuild-audit-") as scratch:
        root = Path(scratch) / "files"
        slim = Path(scratch) / args.wheel.name
        # Only the ELF files and the metadata are read, once: a slim copy of
        # the wheel is what auditwheel analyzes (a torch wheel's Python and
        # headers are most of its members, none of its ELF needs).
        with zipfile.ZipFile(args.wheel) as archive, zipfile.ZipFile(slim, "w") as kept:
            members = [m for m in archive.infolist() if not m.is_dir()]
            chosen = []
            for member in members:
                with archive.open(member) as handle:
                    head = handle.read(4)
                if head == b"\x7fELF":
                    archive.extract(member, root)  # zipfile drops absolute and '..' parts and makes no links
                if head == b"\x7fELF" or ".dist-info/" in member.filename:
                    chosen.append(member)
            names = {member.filename for member in chosen}
            for member in chosen:
                if member.filename.endswith(".dist-info/RECORD"):  # auditwheel walks the files RECORD lists
                    lines = archive.read(member).decode("utf-8", "replace").splitlines()
                    kept.writestr(member, "\n".join(l for l in lines if l.split(",", 1)[0] in names) + "\n")
                    continue
                with archive.open(member) as source, kept.open(member.filename, "w", force_zip64=True) as copy:
                    shutil.copyfileobj(source, copy, 1 << 20)
        elves = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))
        if not elves:  # nothing a node has to provide
            print(json.dumps({"auditwheel": importlib.metadata.version("auditwheel"), "platform_tag": "",
                              "symbol_tag": "", "policy": "", "exclude_patterns": EXCLUDE_PATTERNS, "files": []}))
            return
        own = {p.name for p in elves}
        needs_by_file, provided = [], set()
        for path in elves:
            tree = ldd(path)
            needs = []
            for soname in tree.needed:
                library = tree.libraries.get(soname)
                found = library.realpath if library is not None and library.realpath is not None else None
                needs.append({"soname": soname, "path": str(found) if found else ""})
                if DRIVER.match(soname) or CUDA.match(soname) or soname in torch_libs or \
                        (by_name and TORCH.match(soname)):
                    provided.add(soname)
            needs_by_file.append((str(path.relative_to(root)), needs))
        try:
            info = analyze_wheel_abi(None, None, slim, frozenset(provided), disable_isa_ext_check=True,
                                     allow_graft=False)
        except NonPlatformWheelError as error:
            sys.exit(f"auditwheel: {error}")
    policy = info.overall_policy if info.overall_policy.whitelist else info.sym_policy
    system = policy.whitelist

    files = []
    for member, needs in needs_by_file:
        for need in needs:
            soname = need["soname"]
            if soname in own:
                need["from"] = "wheel"
            elif soname in system or LOADER.match(soname):
                need["from"] = "system"
            elif DRIVER.match(soname):
                need["from"] = "driver"
            elif soname in torch_libs or (by_name and TORCH.match(soname)):
                need["from"] = "torch"
            elif CUDA.match(soname):
                need["from"] = "cuda"
            elif need["path"]:
                need["from"] = "machine"
            else:
                need["from"] = "missing"
        files.append({"file": member, "needs": needs})
    print(json.dumps({"auditwheel": importlib.metadata.version("auditwheel"),
                      "platform_tag": info.overall_policy.name, "symbol_tag": info.sym_policy.name,
                      "policy": policy.name, "system_libraries": sorted(system),
                      "exclude_patterns": EXCLUDE_PATTERNS, "files": files}))


if __name__ == "__main__":
    main()
