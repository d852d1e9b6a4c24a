"""`archbuild doctor` on fixture site-packages (nvcc-built libraries in package
folders, a stand-in torch) and on a real torch wheel from PyPI."""
import json
import os
import subprocess
import sys
import unittest

from harness import SYSTEM_NVCC, nvcc, run, scratch_dir, torch_venv

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"


def write_torch(root, version="2.9.1+cu130", cuda="13.0", arch=("compute_80", "sm_80"), import_error=True):
    """A stand-in torch: version.py as PyTorch writes it, a CUDA library built by nvcc."""
    package = root / "torch"
    (package / "lib").mkdir(parents=True)
    (package / "__init__.py").write_text(
        'raise ImportError("libcudart.so.13: cannot open shared object file: No such file or directory")\n'
        if import_error else "__version__ = %r\n" % version)
    cuda_text = "None" if cuda is None else repr(cuda)
    (package / "version.py").write_text(
        "from typing import Optional\n\n__version__ = %r\ndebug = False\ncuda: Optional[str] = %s\n" % (version, cuda_text))
    build_library(root, package / "lib" / "libtorch_cuda.so", arch)
    return package


def build_library(root, target, arch):
    source = root / "k.cu"
    source.write_text(KERNEL)
    target.parent.mkdir(parents=True, exist_ok=True)
    nvcc("-shared", "-Xcompiler", "-fPIC", "-gencode", f"arch={arch[0]},code={arch[1]}", "-o", str(target), str(source))
    source.unlink()


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class DoctorOnFixtures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.venv = scratch_dir(cls) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(cls.venv)], check=True)
        cls.python = str(cls.venv / "bin" / "python")

    def doctor(self, fixture_dirs, *args, env=None):
        full_env = {"PYTHONPATH": os.pathsep.join(map(str, fixture_dirs)), "ARCHBUILD_FAKE_GPUS": None}
        full_env.update(env or {})
        result = run("doctor", "--python", self.python, "--json", *args, env=full_env)
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError:
            self.fail(f"not JSON (rc {result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result, report

    def packages(self, report):
        return {p["name"]: p for p in report["interpreters"][0]["packages"]}

    def fixture(self):
        site = scratch_dir(self) / "site"
        write_torch(site)
        build_library(site, site / "myext" / "_C.so", ("compute_80", "compute_80"))  # PTX only
        (site / "myext" / "__init__.py").write_text("")
        build_library(site, site / "nvidia" / "fakelib" / "lib" / "libfake.so", ("compute_90", "sm_90"))
        return site

    def test_verdicts_per_package_and_device(self):
        site = self.fixture()
        result, report = self.doctor([site], "--device-cc", "8.6")
        self.assertEqual(result.returncode, 0, result.stderr)  # nvidia/fakelib is shown, not judged
        interpreter = report["interpreters"][0]
        self.assertEqual(interpreter["torch_version"], "2.9.1+cu130")
        self.assertEqual(interpreter["torch_cuda"], "13.0")
        self.assertFalse(interpreter["import_ok"])
        self.assertIn("libcudart.so.13", interpreter["import_error"])
        packages = self.packages(report)
        self.assertEqual(packages["torch"]["verdict"], "ok")          # sm_80 runs on 8.6
        self.assertEqual(packages["myext"]["verdict"], "ptx-jit")     # compute_80 JITs on 8.6
        # one verdict in text and JSON: not judged; what its fatbins alone say stays per file
        self.assertEqual(packages["nvidia/fakelib"]["verdict"], "not-judged")
        self.assertFalse(packages["nvidia/fakelib"]["judged"])
        self.assertEqual(packages["nvidia/fakelib"]["problems"], [])
        self.assertEqual(packages["nvidia/fakelib"]["files"][0]["verdicts"], {"8.6": "no-kernel-image"})
        self.assertEqual(packages["torch"]["files"][0]["sass"], {"sm_80": 2})  # nvcc -shared: two containers

    def test_no_kernel_image_names_the_fix(self):
        site = self.fixture()
        result, report = self.doctor([site], "--device-cc", "9.0")
        self.assertEqual(result.returncode, 1)
        torch = self.packages(report)["torch"]
        self.assertEqual(torch["verdict"], "no-kernel-image")
        self.assertIn("archbuild torch --arch 9.0 --ref v2.9.1", torch["fixes"])
        self.assertIn("libtorch_cuda.so has no kernel image for CC 9.0", torch["problems"][0])
        self.assertEqual(self.packages(report)["nvidia/fakelib"]["verdict"], "not-judged")
        self.assertEqual(self.packages(report)["nvidia/fakelib"]["files"][0]["verdicts"], {"9.0": "native"})
        result, report = self.doctor([site], "--device-cc", "7.5")
        myext = self.packages(report)["myext"]
        self.assertEqual(myext["verdict"], "no-kernel-image")
        self.assertEqual(myext["fixes"], ["archbuild build <source of myext> --arch 7.5"])

    def test_plain_output_says_verdict_and_fix(self):
        site = self.fixture()
        result = run("doctor", "--python", self.python, "--device-cc", "9.0",
                     env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 1)
        self.assertIn("no-kernel-image", result.stdout)
        self.assertRegex(result.stdout, r"not-judged +nvidia/fakelib")  # the word --json gives
        self.assertIn("fix: archbuild torch --arch 9.0 --ref v2.9.1", result.stdout)
        self.assertIn("import      FAILED", result.stdout)
        self.assertIn("verdict: problem found", result.stdout)

    def test_driver_too_old(self):
        site = self.fixture()
        gpu = {"ARCHBUILD_FAKE_GPUS": "NVIDIA H200:9.0:143771", "ARCHBUILD_FAKE_DRIVER_CUDA": "12.8"}
        result, report = self.doctor([site], env=gpu)
        self.assertEqual(result.returncode, 1)
        findings = report["interpreters"][0]["findings"]
        self.assertTrue(any(f["problem"] and "580.65.06" in f["fix"] for f in findings), findings)
        # PTX from a newer CUDA than the driver's cannot JIT
        site2 = scratch_dir(self) / "site"
        write_torch(site2, cuda="13.2", arch=("compute_80", "compute_80"))
        gpu["ARCHBUILD_FAKE_DRIVER_CUDA"] = "13.0"
        result, report = self.doctor([site2], env=gpu)
        self.assertEqual(self.packages(report)["torch"]["verdict"], "driver-too-old")
        self.assertEqual(result.returncode, 1)

    def test_mixed_environment(self):
        first = scratch_dir(self) / "user-site"
        write_torch(first, version="2.8.0+cu128", cuda="12.8", arch=("compute_90", "sm_90"))
        second = self.fixture()
        result, report = self.doctor([first, second], "--device-cc", "9.0")
        interpreter = report["interpreters"][0]
        self.assertEqual(interpreter["torch_version"], "2.8.0+cu128")  # the first on sys.path wins
        self.assertEqual(len(interpreter["torch_dirs"]), 2)
        messages = "\n".join(f["message"] for f in interpreter["findings"])
        self.assertIn("2 torch installs", messages)
        self.assertIn("(shadowed)", messages)
        self.assertIn("nvcc on PATH is CUDA 13.0 but torch uses CUDA 12.8", messages)

    def test_nothing_to_diagnose(self):
        result, report = self.doctor([], "--device-cc", "9.0")
        self.assertEqual(result.returncode, 3)
        self.assertEqual(report["verdict"], "nothing-to-diagnose")
        result = run("doctor", "--python", "/nonexistent/python3", "--device-cc", "9.0")
        self.assertEqual(result.returncode, 3)
        self.assertIn("not found", result.stderr)

    def test_no_gpu_and_no_device_cc(self):
        result = run("doctor", "--python", self.python, env={"ARCHBUILD_FAKE_GPUS": None})
        if "CC " in result.stdout.splitlines()[0] and "--device-cc" not in result.stdout.splitlines()[0]:
            self.skipTest("this machine has a GPU")
        self.assertEqual(result.returncode, 3)
        self.assertIn("--device-cc", result.stderr)

    def test_several_interpreters(self):
        site = self.fixture()
        result = run("doctor", "--python", self.python, "--python", sys.executable, "--device-cc", "8.6", "--json",
                     env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None})
        report = json.loads(result.stdout)
        self.assertEqual(len(report["interpreters"]), 2)


class DoctorOnRealTorch(unittest.TestCase):
    """torch 2.11.0+cu130 from PyPI, installed without its CUDA dependencies."""

    def test_ok_on_hopper_and_fix_for_pascal(self):
        python = str(torch_venv())
        result = run("doctor", "--python", python, "--device-cc", "9.0", "--json", env={"ARCHBUILD_FAKE_GPUS": None})
        report = json.loads(result.stdout)
        self.assertEqual(result.returncode, 0, result.stdout)
        interpreter = report["interpreters"][0]
        self.assertEqual(interpreter["torch_version"], "2.11.0+cu130")
        self.assertFalse(interpreter["import_ok"])  # CUDA libraries not installed
        packages = {p["name"]: p for p in interpreter["packages"]}
        self.assertEqual(packages["torch"]["verdict"], "ok")
        self.assertEqual(len(packages["torch"]["files"]), 3)

        result = run("doctor", "--python", python, "--device-cc", "6.1", env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 1)
        self.assertIn("no-kernel-image", result.stdout)
        # CUDA 13 dropped Pascal: the fix names the last toolkit that can build it
        self.assertIn("fix: archbuild torch --arch 6.1 --ref v2.11.0 --cuda 12.9", result.stdout)


if __name__ == "__main__":
    unittest.main()
