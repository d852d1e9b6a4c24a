"""Shared helpers for the black-box CLI tests: run the real archbuild binary."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

BIN = os.environ.get("ARCHBUILD_BIN") or str(
    pathlib.Path(__file__).resolve().parents[2] / "build" / "src" / "archbuild")
SOURCE_DIR = pathlib.Path(os.environ.get("ARCHBUILD_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
# Downloads (PyPI toolkits, wheels) are kept here across runs.
TEST_CACHE = pathlib.Path(os.environ.get("ARCHBUILD_TEST_CACHE", "~/.cache/archbuild-test")).expanduser()
SYSTEM_NVCC = pathlib.Path("/usr/local/cuda/bin/nvcc")


def run(*args, env=None, cwd=None, timeout=600):
    """Runs archbuild; returns CompletedProcess with text stdout/stderr."""
    full_env = dict(os.environ)
    full_env.setdefault("NO_COLOR", "1")
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


def pip_target(name, requirements):
    """Installs requirements into TEST_CACHE/name once; returns the dir."""
    target = TEST_CACHE / name
    marker = target / ".complete"
    if not marker.exists():
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
    directory = tempfile.TemporaryDirectory(prefix="archbuild-cli-")
    test.addCleanup(directory.cleanup)
    return pathlib.Path(directory.name)
