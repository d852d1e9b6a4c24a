"""Shared helpers for the black-box CLI tests: run the real archbuild binary."""
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

BIN = os.environ.get("ARCHBUILD_BIN") or str(
    pathlib.Path(__file__).resolve().parents[2] / "build" / "src" / "archbuild")
SOURCE_DIR = pathlib.Path(os.environ.get("ARCHBUILD_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
# Downloads (PyPI toolkits, wheels) are kept here across runs.
TEST_CACHE = pathlib.Path(os.environ.get("ARCHBUILD_TEST_CACHE", "~/.cache/archbuild-test")).expanduser()
SYSTEM_NVCC = pathlib.Path("/usr/local/cuda/bin/nvcc")


# One compile cache for every build the suite runs through run(): ccache's
# file: remote storage, reached through archbuild's own
# compiler_cache_remote. A compile one module did is a hit in the next
# (hits cross cache dirs: CCACHE_BASEDIR is the cache). ctest sets it
# (tests/CMakeLists.txt) and scripts/test.sh empties it before a whole run;
# a test that must compile cold passes env={"ARCHBUILD_COMPILER_CACHE_REMOTE": None}.
SHARED_COMPILE_CACHE = os.environ.get("ARCHBUILD_TEST_COMPILE_CACHE", "")
SHARING_COMMANDS = ("build", "plan", "matrix")


def run(*args, env=None, cwd=None, timeout=600):
    """Runs archbuild; returns CompletedProcess with text stdout/stderr."""
    full_env = dict(os.environ)
    full_env.setdefault("NO_COLOR", "1")
    if SHARED_COMPILE_CACHE and args and args[0] in SHARING_COMMANDS:
        full_env.setdefault("ARCHBUILD_COMPILER_CACHE_REMOTE", "file:" + SHARED_COMPILE_CACHE)
    if env:
        for key, value in env.items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)


def run_json(*args, **kwargs):
    result = run(*args, "--json", **kwargs)
    try:
        return result, json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise AssertionError(f"not JSON ({error}):\n{result.stdout}\n{result.stderr}")


@contextlib.contextmanager
def test_cache_lock(name):
    """Holds TEST_CACHE/NAME.lock: modules running at once (ctest -j) make a
    shared download or venv one at a time, and the others then find it made."""
    lock = TEST_CACHE / f"{name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pip_target(name, requirements):
    """Installs requirements into TEST_CACHE/name once; returns the dir."""
    target = TEST_CACHE / name
    marker = target / ".complete"
    if marker.exists():
        return target
    with test_cache_lock(name):
        if marker.exists():
            return target
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--target", str(target), *requirements], check=True)
        marker.write_text(" ".join(requirements))
    return target


def pypi_cuda_13_2():
    """A second, real CUDA toolkit (13.2) from PyPI: nvcc + nvvm + runtime + crt.

    PyPI's nvidia-cuda-nvcc-cu12 wheels carry only ptxas (checked: 12.4 to 12.9),
    so the second toolkit with a real nvcc is the CUDA 13 one."""
    root = pip_target("toolkits/pypi-cuda-13.2", [
        "nvidia-cuda-nvcc==13.2.78", "nvidia-cuda-runtime==13.2.*",
        "nvidia-cuda-crt==13.2.*", "nvidia-nvvm==13.2.*"])
    return root / "nvidia" / "cu13"


def scratch_dir(test):
    """A temporary dir removed after the test (or, given a TestCase class, after the class)."""
    directory = tempfile.TemporaryDirectory(prefix="archbuild-cli-")
    (test.addClassCleanup if isinstance(test, type) else test.addCleanup)(directory.cleanup)
    return pathlib.Path(directory.name)


def pypi_cuobjdump():
    """cuobjdump from PyPI's nvidia-cuda-cuobjdump, the peer inspection is compared with."""
    root = pip_target("tools/cuobjdump", ["nvidia-cuda-cuobjdump==13.5.37"])
    binary = next(root.glob("nvidia/*/bin/cuobjdump"))
    binary.chmod(0o755)
    return binary


TORCH_VERSION = "2.11.0"


def torch_wheel(machine="x86_64"):
    """The real torch 2.11.0 (cu130) wheel from PyPI for `machine` (x86_64,
    about 530 MB; aarch64, about 420 MB), downloaded once."""
    wheels = TEST_CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    pattern = f"torch-{TORCH_VERSION}-{tag}-{tag}-manylinux*_{machine}.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0]
    with test_cache_lock(f"wheels/torch-{machine}"):
        found = sorted(wheels.glob(pattern))
        if found:
            return found[0]
        with tempfile.TemporaryDirectory(dir=wheels) as partial:  # renamed into place whole
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--only-binary=:all:", "--platform", f"manylinux_2_28_{machine}",
                            f"torch=={TORCH_VERSION}", "-d", partial], check=True)
            for wheel in pathlib.Path(partial).glob(pattern):
                wheel.rename(wheels / wheel.name)
        found = sorted(wheels.glob(pattern))
    return found[0]


def torch_venv():
    """A venv with that real torch installed --no-deps: its files are real, but
    `import torch` fails (its CUDA libraries and typing deps are missing)."""
    venv = TEST_CACHE / f"torch-venv-{TORCH_VERSION}"
    marker = venv / ".complete"
    if not marker.exists():
        with test_cache_lock(venv.name):
            if not marker.exists():
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                "--no-deps", "--no-index", str(torch_wheel())], check=True)
                marker.write_text("ok")
    return venv / "bin" / "python"


def torch_build_python():
    """A venv where the real torch 2.11.0+cu130 from PyPI imports without a GPU:
    its pure-Python dependencies, setuptools and ninja, and the three CUDA
    libraries /usr/local/cuda lacks (cuFile, cuSPARSELt, NVSHMEM; about 230 MB);
    the rest (cuBLAS, cuDNN, NCCL, ...) come from the CUDA 13.0 toolkit.
    What a torch.utils.cpp_extension build needs; made once, kept in the cache."""
    venv = TEST_CACHE / f"torch-build-venv-{TORCH_VERSION}"
    marker = venv / ".complete"
    if not marker.exists():
        with test_cache_lock(venv.name):
            if not marker.exists():
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
                pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                subprocess.run(pip + ["filelock", "typing-extensions>=4.10", "setuptools<82", "sympy>=1.13.3", "networkx",
                                      "jinja2", "fsspec", "numpy", "wheel", "ninja"], check=True)
                subprocess.run(pip + ["--no-deps", str(torch_wheel()), "nvidia-cufile==1.15.1.6", "nvidia-cusparselt-cu13==0.8.0",
                                      "nvidia-nvshmem-cu13==3.4.5"], check=True)
                marker.write_text("ok")
    return venv / "bin" / "python"


def nvcc(*args):
    subprocess.run([str(SYSTEM_NVCC), *args], check=True, capture_output=True)


def cuobjdump_inventory(binary, path, all_fatbins=False):
    """{arch: count} of SASS and PTX as cuobjdump lists them (sm_100f shows as sm_100)."""
    counts = {}
    for flag, kind in (("--list-elf", "sass"), ("--list-ptx", "ptx")):
        extra = ["-all"] if all_fatbins else []
        result = subprocess.run([str(binary), *extra, flag, str(path)], capture_output=True, text=True)
        for line in result.stdout.splitlines():
            # "ELF file    1: name.1.sm_90a.cubin" / "PTX file    1: name.1.sm_90.ptx"
            name = line.rsplit(":", 1)[-1].strip()
            arch = name.split(".")[-2]
            key = (kind, arch)
            counts[key] = counts.get(key, 0) + 1
    return counts


def archbuild_inventory(report_file, all_fatbins=False, fold_family=True):
    """The same shape from one `archbuild inspect --json` file entry."""
    counts = {}
    for kind in ("sass", "ptx"):
        for arch, count in report_file[("all_" if all_fatbins else "") + kind].items():
            arch = arch.replace("compute_", "sm_")
            if fold_family and arch.endswith("f"):
                arch = arch[:-1]
            counts[(kind, arch)] = counts.get((kind, arch), 0) + count
    return counts


def processes_mentioning(text):
    """PIDs whose command line mentions `text` (our build's processes)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append((int(entry.name), cmdline[:200]))
    return found


def session_processes(session_id):
    """(pid, command line) of the live processes of a session, zombies left out.

    A command started with start_new_session=True leads its own session, and
    every process it starts stays in that session even in a process group of
    its own (as archbuild starts its children): an empty session means
    nothing it started outlived it."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == session_id:
            found.append((int(entry.name), cmdline[:200]))
    return found


def stop_session(process):
    """Kills what is left of a Popen(start_new_session=True) command's session
    and reaps the command: a test's cleanup, so that a failed assertion leaves
    no process running."""
    for pid, _ in session_processes(process.pid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    process.kill()
    process.wait()


def pure_wheel(directory, name, version, files=None):
    """A pure-Python wheel pip installs: module NAME with VERSION in it, or the given files."""
    module = name.replace("-", "_")
    files = dict(files or {f"{module}/__init__.py": f"VERSION = {version!r}\n"})
    return wheel_of(directory, name, version, {path: text.encode() for path, text in files.items()}, "py3-none-any")


def wheel_of(directory, name, version, files, tag):
    """A wheel of FILES (member -> bytes) tagged TAG (a platform tag makes it platlib), with a RECORD of their hashes."""
    module = name.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    purelib = tag.endswith("-any")
    files = dict(files)
    files.update({f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
                  f"{dist}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                                    f"Tag: {tag}\n").encode()})
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for path, data in files.items()] + [f"{dist}/RECORD,,"]
    wheel = pathlib.Path(directory) / f"{module}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel
