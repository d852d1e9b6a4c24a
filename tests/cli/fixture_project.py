"""A PyTorch-like CUDA project, made by the tests in a git repo: setup.py drives
CMake + Ninja, nvcc compiles several .cu files for exactly the archs in
TORCH_CUDA_ARCH_LIST (read once and kept in the CMake cache, as PyTorch does)
into a shared library, packaged as a wheel. It refuses to build without its
submodule and honours MAX_JOBS and CMAKE_FRESH. With FIXTURE_OOM_ABOVE_JOBS=N,
a compile beyond N at once is killed with SIGKILL, as the OOM killer would;
FIXTURE_LINK=zstd links a library of this machine's into it."""
import pathlib
import shutil

from gitrepos import add_submodule, git, make_repo
from harness import SOURCE_DIR, run as run_archbuild

SETUP_PY = r'''#!/usr/bin/env python3
"""Stand-in for PyTorch's setup.py: CMake + Ninja + nvcc, then a wheel."""
import base64, hashlib, os, pathlib, subprocess, sys, time, zipfile

ROOT = pathlib.Path(__file__).resolve().parent


def run(argv):
    code = subprocess.call(argv)
    if code:
        sys.exit(code)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    args = sys.argv[1:]
    if not args or args[0] != "bdist_wheel":
        sys.exit("usage: setup.py bdist_wheel [--dist-dir DIR]")
    dist = pathlib.Path(args[args.index("--dist-dir") + 1]) if "--dist-dir" in args else ROOT / "dist"
    if not (ROOT / "third_party" / "vecmath" / "vecmath.h").exists():
        sys.exit("third_party/vecmath is missing. Did you run 'git submodule update --init --recursive'?")
    for name in ("TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "CUDA_HOME", "CUDAHOSTCXX", "USE_NINJA", "CMAKE_FRESH", "TMPDIR",
                 "NVCC_APPEND_FLAGS", "CMAKE_CUDA_COMPILER_LAUNCHER", "CUDA_VISIBLE_DEVICES"):
        print(f"-- fixture env {name}={os.environ.get(name, '')}", flush=True)
    if os.environ.get("FIXTURE_DAEMON_TAG"):
        # a careless setup.py: a daemon double-forked into a session of its own
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                          os.environ["FIXTURE_DAEMON_TAG"]])
            os._exit(0)
        os.wait()
    if os.environ.get("FIXTURE_CONNECT_SOCKET"):
        # a socket file on the host, relaying elsewhere: reachable across network namespaces
        import socket
        try:
            relay = socket.socket(socket.AF_UNIX)
            relay.connect(os.environ["FIXTURE_CONNECT_SOCKET"])
            print("-- fixture socket: connected", flush=True)
        except OSError as e:
            print(f"-- fixture socket: {e.strerror}", flush=True)
        ours, theirs = socket.socketpair()  # between the build's own processes: still there
        ours.sendall(b"x")
        print(f"-- fixture socketpair: {theirs.recv(1).decode()}", flush=True)
    build = ROOT / "build"
    cmake = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CUDA_ARCHITECTURES=OFF"]
    if os.environ.get("CMAKE_FRESH") == "1":
        cmake.append("--fresh")
    if os.environ.get("CUDAHOSTCXX"):
        cmake.append("-DCMAKE_CUDA_HOST_COMPILER=" + os.environ["CUDAHOSTCXX"])
    run(cmake)
    jobs = os.environ.get("MAX_JOBS")
    run(["cmake", "--build", str(build)] + (["-j", jobs] if jobs else []))
    library = build / "libfixture.so"
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / "fixture-1.0-py3-none-linux_x86_64.whl"
    files = {
        "fixture/__init__.py": b"import os\nLIBRARY = os.path.join(os.path.dirname(__file__), 'libfixture.so')\n",
        "fixture/libfixture.so": library.read_bytes(),
        # FIXTURE_REQUIRES="a>=1,b": the wheel's Requires-Dist, as a project's dependencies
        "fixture-1.0.dist-info/METADATA": ("Metadata-Version: 2.1\nName: fixture\nVersion: 1.0\n" + "".join(
            f"Requires-Dist: {item}\n" for item in os.environ.get("FIXTURE_REQUIRES", "").split(",") if item)).encode(),
        "fixture-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n",
    }
    record = [record_line(name, data) for name, data in files.items()] + ["fixture-1.0.dist-info/RECORD,,"]
    # member times as wheel's bdist_wheel sets them: SOURCE_DATE_EPOCH, else the clock
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = (time.gmtime(int(epoch)) if epoch else time.localtime())[:6]
    files["fixture-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            member = zipfile.ZipInfo(name, stamp)
            member.external_attr = 0o600 << 16
            archive.writestr(member, data, compress_type=zipfile.ZIP_DEFLATED)
    print(f"creating '{wheel}'", flush=True)


if __name__ == "__main__":
    main()
'''

CMAKELISTS = r'''cmake_minimum_required(VERSION 3.18)
project(fixture LANGUAGES CXX CUDA)
# Like PyTorch: the arch list is read once and kept in the cache, so a changed
# TORCH_CUDA_ARCH_LIST is ignored unless the configure is fresh.
if(NOT DEFINED FIXTURE_ARCH_LIST)
  set(FIXTURE_ARCH_LIST "$ENV{TORCH_CUDA_ARCH_LIST}" CACHE STRING "arch list, read once")
endif()
if(DEFINED ENV{FIXTURE_FORCE_ARCH_LIST})  # a build that ignores the asked archs, for validation tests
  set(FIXTURE_ARCH_LIST "$ENV{FIXTURE_FORCE_ARCH_LIST}")
endif()
if(FIXTURE_ARCH_LIST STREQUAL "")
  message(FATAL_ERROR "TORCH_CUDA_ARCH_LIST is empty")
endif()
set(GENCODE "")
foreach(item IN LISTS FIXTURE_ARCH_LIST)
  string(REPLACE "+PTX" "" arch "${item}")
  string(REPLACE "." "" arch "${arch}")
  list(APPEND GENCODE "-gencode=arch=compute_${arch},code=sm_${arch}")
  if(item MATCHES "\\+PTX$")
    list(APPEND GENCODE "-gencode=arch=compute_${arch},code=compute_${arch}")
  endif()
endforeach()
if(DEFINED ENV{FIXTURE_OOM_ABOVE_JOBS})
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${CMAKE_SOURCE_DIR}/tools/oom_guard.py" ${CMAKE_CUDA_COMPILER_LAUNCHER})
endif()
add_library(fixture SHARED src/scale.cu src/add.cu src/reduce.cu src/norm.cu)
target_include_directories(fixture PRIVATE third_party/vecmath)
target_compile_options(fixture PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${GENCODE}>)
if(DEFINED ENV{FIXTURE_LINK})  # a library of this machine's, e.g. zstd: a need no node promises
  target_link_libraries(fixture PRIVATE -Wl,--no-as-needed $ENV{FIXTURE_LINK})
endif()
file(WRITE "${CMAKE_BINARY_DIR}/arch_list.txt" "${FIXTURE_ARCH_LIST}")
message(STATUS "fixture arch list: ${FIXTURE_ARCH_LIST}")
'''

OOM_GUARD = r'''#!/usr/bin/env python3
"""Stands in for the kernel's OOM killer: a compile beyond FIXTURE_OOM_ABOVE_JOBS
at once is killed with SIGKILL and reported the way nvcc reports it."""
import fcntl, os, signal, subprocess, sys, tempfile

limit = int(os.environ["FIXTURE_OOM_ABOVE_JOBS"])
slots = os.environ.get("FIXTURE_OOM_DIR", tempfile.gettempdir())
held = None
for index in range(limit):
    handle = open(os.path.join(slots, f"fixture-oom-slot-{index}"), "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = handle
        break
    except OSError:
        handle.close()
if held is None:
    child = subprocess.Popen(sys.argv[1:])
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    print("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", file=sys.stderr, flush=True)
    sys.exit(1)
sys.exit(subprocess.call(sys.argv[1:]))
'''

KERNEL = r'''#include <cuda_runtime.h>
#include "vecmath.h"
__global__ void fixture_{name}_kernel(float* x, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = vecmath::{op}(x[i]);
}}
extern "C" void fixture_{name}(float* x, int n) {{ fixture_{name}_kernel<<<(n + 255) / 256, 256>>>(x, n); }}
// The kernel test's entry: runs the kernel on `device` and compares with the
// host. Returns 0, a cudaError_t (209: no kernel image), or -1 on a mismatch.
extern "C" int fixture_{name}_check(int device) {{
  const int n = 1 << 12;
  float host[n], back[n];
  for (int i = 0; i < n; ++i) host[i] = 0.25f * (i % 97) - 3.f;
  float* x = nullptr;
  cudaError_t status = cudaSetDevice(device);
  if (status == cudaSuccess) status = cudaMalloc(&x, sizeof host);
  if (status == cudaSuccess) status = cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  if (status == cudaSuccess) {{
    fixture_{name}(x, n);
    status = cudaGetLastError();
  }}
  if (status == cudaSuccess) status = cudaMemcpy(back, x, sizeof back, cudaMemcpyDeviceToHost);
  if (x) cudaFree(x);
  if (status != cudaSuccess) return static_cast<int>(status);
  for (int i = 0; i < n; ++i) {{
    float v = host[i];
    if (back[i] != {host_op}) return -1;
  }}
  return 0;
}}
'''

KERNEL_TEST = r'''"""Kernel test of the fixture wheel: every kernel on every visible GPU, compared
with the host result. Exits non-zero naming the kernel that failed."""
import ctypes
import sys

import fixture

library = ctypes.CDLL(fixture.LIBRARY)
count = ctypes.c_int(0)
runtime = ctypes.CDLL("libcuda.so.1")
runtime.cuInit(0)
runtime.cuDeviceGetCount(ctypes.byref(count))
for device in range(count.value):
    for name in ("scale", "add", "reduce", "norm"):
        status = getattr(library, f"fixture_{name}_check")(device)
        print(f"device {device} fixture_{name}: {'ok' if status == 0 else status}", flush=True)
        if status:
            sys.exit(f"fixture_{name} failed on device {device}: {status} (209 = no kernel image, -1 = wrong result)")
print(f"kernel test passed on {count.value} GPU(s)")
'''

VECMATH = r'''#pragma once
namespace vecmath {
__device__ inline float twice(float v) { return 2.f * v; }
__device__ inline float inc(float v) { return v + 1.f; }
__device__ inline float square(float v) { return v * v; }
__device__ inline float half(float v) { return 0.5f * v; }
}
'''


def make_cuda_project(root):
    """Returns the project repository (tag v1.0)."""
    root = pathlib.Path(root)
    vecmath = make_repo(root / "origin" / "vecmath", {"vecmath.h": VECMATH})
    files = {
        "setup.py": SETUP_PY,
        "CMakeLists.txt": CMAKELISTS,
        "tools/oom_guard.py": OOM_GUARD,
        "fixture/__init__.py": "",
    }
    for name, op, host_op in (("scale", "twice", "2.f * v"), ("add", "inc", "v + 1.f"), ("reduce", "square", "v * v"),
                              ("norm", "half", "0.5f * v")):
        files[f"src/{name}.cu"] = KERNEL.format(name=name, op=op, host_op=host_op)
    project = make_repo(root / "origin" / "project", files)
    (project / "tools" / "oom_guard.py").chmod(0o755)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "executable guard")
    add_submodule(project, f"file://{vecmath}", "third_party/vecmath", "add vecmath")
    git(project, "tag", "v1.0")
    return project


def data_dir_with_recipe(root, project):
    """archbuild's data dir plus a recipe for the fixture project."""
    data = pathlib.Path(root) / "data"
    for name in ("recipes", "patches", "toolchains"):
        shutil.copytree(SOURCE_DIR / name, data / name)
    (data / "recipes" / "tests" / "fixture_kernels.py").write_text(KERNEL_TEST)
    (data / "recipes" / "fixture.toml").write_text(f'''name = "fixture"
description = "the PyTorch-like fixture project of the tests"
repository = "file://{project}"
default_ref = "v1.0"
submodules = true
arch_dialect = "cmake"
job_memory_gb = 1.0
kernel_test = "recipes/tests/fixture_kernels.py"

[[build]]
versions = "*"
system = "setup.py"
command = ["{{python}}", "setup.py", "bdist_wheel", "--dist-dir", "{{wheel_dir}}"]
[build.env]
USE_CUDA = "1"
''')
    return data


def two_builders_caches(root):
    """Two builders' caches of the fixture, `a` with 8.0 and 9.0, `b` with 8.6
    and 9.0 (one key in both): (data dir, archbuild env, {name: cache dir})."""
    data = data_dir_with_recipe(root, make_cuda_project(root))
    env = {"ARCHBUILD_DATA_DIR": str(data), "ARCHBUILD_FAKE_GPUS": None}
    caches = {"a": pathlib.Path(root) / "cache-a", "b": pathlib.Path(root) / "cache-b"}
    for name, archs in (("a", ("8.0", "9.0")), ("b", ("8.6", "9.0"))):
        for arch in archs:
            result = run_archbuild("build", "fixture", "--arch", arch, "--cache-dir", str(caches[name]), env=env)
            assert result.returncode == 0, result.stderr
    return data, env, caches


CONSUMER_SETUP = r'''#!/usr/bin/env python3
import base64, hashlib, os, pathlib, sys, zipfile
import fixture  # from the build environment archbuild made: the dependency's wheel

lib = pathlib.Path(fixture.LIBRARY).read_bytes()
print("consumer: building against", fixture.__file__, flush=True)
dist = pathlib.Path(sys.argv[sys.argv.index("--dist-dir") + 1])
dist.mkdir(parents=True, exist_ok=True)
files = {"consumer/__init__.py": f"FIXTURE_FROM = {fixture.__file__!r}\n".encode(),
         "consumer/libfixture_copy.so": lib,
         # as torchvision's setup.py: PYTORCH_VERSION set -> Requires-Dist: torch==PYTORCH_VERSION
         "consumer-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: consumer\nVersion: 1.0\n" + (
             f"Requires-Dist: fixture=={os.environ['FIXTURE_VERSION']}\n".encode() if os.environ.get("FIXTURE_VERSION") else b""),
         "consumer-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"}
def line(name, data):
    return f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
with zipfile.ZipFile(dist / "consumer-1.0-py3-none-linux_x86_64.whl", "w") as archive:
    for name, data in files.items():
        archive.writestr(name, data)
    archive.writestr("consumer-1.0.dist-info/RECORD", "\n".join([line(n, d) for n, d in files.items()] + ["consumer-1.0.dist-info/RECORD,,"]) + "\n")
'''


def add_consumer_recipe(root, data):
    """A `consumer` project and recipe that depends on the fixture (as
    torchvision depends on torch): its setup.py imports the fixture package
    from the build environment and ships a copy of its CUDA library."""
    consumer = make_repo(pathlib.Path(root) / "origin" / "consumer", {"setup.py": CONSUMER_SETUP})
    git(consumer, "tag", "v1.0")
    (pathlib.Path(data) / "recipes" / "consumer.toml").write_text(f'''name = "consumer"
description = "depends on the fixture"
repository = "file://{consumer}"
default_ref = "v1.0"
submodules = false
arch_dialect = "cmake"
job_memory_gb = 1.0
depends_on = ["fixture"]

[[build]]
versions = "*"
system = "setup.py"
command = ["{{python}}", "setup.py", "bdist_wheel", "--dist-dir", "{{wheel_dir}}"]
[build.env]
FIXTURE_VERSION = "{{version:fixture}}"

# as torchvision 0.24.1 pairs with torch 2.9.1
[[pairs]]
versions = "==1.0"
fixture = "1.0"
''')
    return consumer
