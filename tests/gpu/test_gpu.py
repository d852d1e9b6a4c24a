#!/usr/bin/env python3
"""GPU-machine checks: the real driver probe, `arch native`, the preflight,
inspection against cuobjdump on every CUDA library of the installed torch,
torchvision and torchaudio, doctor on the real torch, and kernel launches that
prove doctor's verdicts. Exits 77 (ctest: Skipped) with the reason when there
is no GPU."""
import base64
import ctypes
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("ARCHBUILD_BIN", str(ROOT / "build" / "src" / "archbuild"))
CUOBJDUMP = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
PYTHON = os.environ.get("ARCHBUILD_GPU_PYTHON", "python3")
SKIP_CODE = 77

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from harness import archbuild_inventory, cuobjdump_inventory  # noqa: E402


def archbuild(*args, env=None):
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.pop("ARCHBUILD_FAKE_GPUS", None)
    full_env.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=full_env, timeout=900)


def gpu_ccs():
    """Compute capabilities as nvidia-smi reports them: the reference for archbuild's probe."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout
    return sorted({line.strip() for line in out.splitlines() if line.strip()}, key=lambda v: tuple(map(int, v.split("."))))


LAUNCHER = r"""
#include <cuda_runtime.h>
__global__ void twice(float* x) { x[threadIdx.x] *= 2.f; }
extern "C" int launch_twice() {
  float* device = nullptr;
  if (cudaMalloc(&device, 32 * sizeof(float)) != cudaSuccess) return -1;
  cudaMemset(device, 0, 32 * sizeof(float));
  twice<<<1, 32>>>(device);
  int status = static_cast<int>(cudaGetLastError());
  if (status == 0) status = static_cast<int>(cudaDeviceSynchronize());
  cudaFree(device);
  return status;  // 0 ok, 209 cudaErrorNoKernelImageForDevice
}
"""


def print_checks(validation):
    for check in validation["device"]["checks"]:
        print(f"    {'ok  ' if check['ok'] else 'FAIL'} {check['name']}: {check['detail']} [{check['seconds']:.1f} s]")


def launch_in_child(library, env_extra=None):
    """Loads the library in a fresh process and returns the launch status."""
    code = f"import ctypes,sys; sys.exit(ctypes.CDLL({str(library)!r}).launch_twice())"
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], env=env).returncode


class Gpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-gpu-"))
        cls.addClassCleanup(shutil.rmtree, cls.work, True)

    def test_detect_reports_every_gpu_with_its_cc(self):
        result = archbuild("detect", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        ccs = sorted({d["cc"] for d in report["gpus"]["devices"]}, key=lambda v: tuple(map(int, v.split("."))))
        self.assertEqual(ccs, gpu_ccs())
        self.assertTrue(report["gpus"]["driver_cuda"])
        self.assertTrue(report["gpus"]["driver_version"])
        self.assertEqual(report["machine"], platform.machine())
        print("\n  detect:", [(d["name"], d["cc"]) for d in report["gpus"]["devices"]],
              "driver", report["gpus"]["driver_version"], "CUDA", report["gpus"]["driver_cuda"])

    def test_arch_native_is_the_gpus(self):
        result = archbuild("arch", "native")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), ";".join(gpu_ccs()))
        print("\n  arch native:", result.stdout.strip())

    def test_check_native_passes_with_the_driver_checked(self):
        result = archbuild("check", "--arch", "native", "--json")
        report = json.loads(result.stdout)
        driver = next(c for c in report["checks"] if c["name"] == "driver")
        self.assertEqual(driver["verdict"], "ok", driver)
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_inspect_matches_cuobjdump_on_installed_packages(self):
        site = subprocess.run([PYTHON, "-c", "import torch,os;print(os.path.dirname(os.path.dirname(torch.__file__)))"],
                              capture_output=True, text=True, check=True).stdout.strip()
        roots = [pathlib.Path(site) / name for name in ("torch", "torchvision", "torchaudio")
                 if (pathlib.Path(site) / name).is_dir()]
        compared = 0
        for root in roots:
            result = archbuild("inspect", "--json", str(root))
            self.assertEqual(result.returncode, 0, result.stderr)
            for entry in json.loads(result.stdout)["files"]:
                with self.subTest(path=entry["path"]):
                    for every in (False, True):
                        self.assertEqual(archbuild_inventory(entry, every),
                                         cuobjdump_inventory(CUOBJDUMP, entry["path"], every))
                compared += 1
        print(f"\n  inspect == cuobjdump on {compared} CUDA libraries under {[r.name for r in roots]}")
        self.assertGreater(compared, 0)

    def test_doctor_on_the_real_torch_is_ok(self):
        result = archbuild("doctor", "--python", PYTHON, "--json")
        report = json.loads(result.stdout)
        interpreter = report["interpreters"][0]
        packages = {p["name"]: p["verdict"] for p in interpreter["packages"]}
        print("\n  doctor:", interpreter["torch_version"], "import_ok", interpreter["import_ok"], packages)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertTrue(interpreter["import_ok"], interpreter["import_error"])
        self.assertEqual(packages.get("torch"), "ok")
        self.assertIn(f"sm_{gpu_ccs()[0].replace('.', '')}", interpreter["arch_list"])

    def test_doctor_fixes_and_matrix_on_the_real_environment(self):
        # The real driver, the real torch; devices this machine does not have through --device-cc
        driver = json.loads(archbuild("doctor", "--python", PYTHON, "--matrix", "--json").stdout)
        matrix = driver["matrix"]
        here = gpu_ccs()[0]
        cells = {row["build"]: row["cells"] for row in matrix["rows"]}
        print("\n  doctor --matrix: devices", matrix["devices"], "driver CUDA", matrix["driver_cuda"],
              {build: cell for build, cell in cells.items() if build.startswith("torch 2.11.0")})
        self.assertEqual(matrix["devices"], [here])
        self.assertIsNotNone(matrix["driver_cuda"])
        # this machine runs the very torch it has: its matrix row says native
        installed = json.loads(archbuild("doctor", "--python", PYTHON, "--json").stdout)["interpreters"][0]
        row = "torch " + installed["torch_version"].split("+")[0] + "+" + installed["torch_version"].split("+")[1]
        if row in cells:
            self.assertEqual(cells[row], ["native"])
        firsts = {}
        for cc in ("6.1", "7.0", "8.6", "10.3", "11.0", "12.1"):
            report = json.loads(archbuild("doctor", "--python", PYTHON, "--device-cc", cc, "--json").stdout)
            torch = {p["name"]: p for p in report["interpreters"][0]["packages"]}["torch"]
            firsts[cc] = (torch["verdict"], [(f["kind"], (f["lines"] or ["none"])[0]) for f in torch["fixes"]][:1])
        print("  doctor --device-cc, the first fix:", json.dumps(firsts, indent=1))
        self.assertEqual(firsts["8.6"][0], "ok")
        self.assertEqual(firsts["6.1"][1][0][0], "official-build")
        self.assertIn("/whl/cu126", firsts["6.1"][1][0][1])  # CUDA 13 dropped Pascal; cu126 holds sm_60
        self.assertEqual(firsts["11.0"][1][0], ("official-build", "none"))  # no x86-64 wheel holds sm_110
        self.assertEqual(installed["machine"], platform.machine())  # the interpreter's CPU picks the rows
        # A Thor / GB10 fleet on this driver: the aarch64 rows (2.11.0+cu130 holds sm_110 and sm_120)
        fleet = json.loads(archbuild("doctor", "--matrix", "--machine", "aarch64", "--device-cc", "11.0",
                                     "--device-cc", "12.1", "--json").stdout)["matrix"]
        fleet_cells = {row["build"]: row["cells"] for row in fleet["rows"]}
        print("  doctor --matrix --machine aarch64:", {b: c for b, c in fleet_cells.items() if "2.11.0" in b})
        self.assertEqual(fleet_cells["torch 2.11.0+cu130"], ["native", "native"])

    def test_verdicts_are_proved_by_launching(self):
        source = self.work / "twice.cu"
        source.write_text(LAUNCHER)
        builds = {"sm80": "arch=compute_80,code=sm_80", "ptx80": "arch=compute_80,code=compute_80",
                  "native": f"arch=compute_{gpu_ccs()[0].replace('.', '')},code=sm_{gpu_ccs()[0].replace('.', '')}"}
        site = self.work / "site"
        for name, gencode in builds.items():
            package = site / f"fixture_{name}"
            package.mkdir(parents=True)
            (package / "__init__.py").write_text("")
            subprocess.run([NVCC, "-shared", "-Xcompiler", "-fPIC", "-gencode", gencode, "-o",
                            str(package / "_C.so"), str(source)], check=True)
        result = archbuild("doctor", "--python", PYTHON, "--json", env={"PYTHONPATH": str(site)})
        verdicts = {p["name"]: p["verdict"] for p in json.loads(result.stdout)["interpreters"][0]["packages"]}
        # No JIT cache: a cached JIT result would run even with the JIT disabled.
        no_cache = {"CUDA_CACHE_DISABLE": "1"}
        statuses = {name: launch_in_child(site / f"fixture_{name}" / "_C.so", no_cache) for name in builds}
        no_jit = launch_in_child(site / "fixture_ptx80" / "_C.so", {**no_cache, "CUDA_DISABLE_PTX_JIT": "1"})
        print("\n  doctor verdicts:", {k: v for k, v in verdicts.items() if k.startswith("fixture")},
              "\n  launch status:", statuses, "ptx80 with CUDA_DISABLE_PTX_JIT=1:", no_jit)
        self.assertEqual(verdicts["fixture_sm80"], "no-kernel-image")
        self.assertEqual(statuses["sm80"], 209)  # cudaErrorNoKernelImageForDevice
        self.assertEqual(verdicts["fixture_ptx80"], "ptx-jit")
        self.assertEqual(statuses["ptx80"], 0)
        self.assertNotEqual(no_jit, 0)  # it ran only through the JIT
        self.assertEqual(verdicts["fixture_native"], "ok")
        self.assertEqual(statuses["native"], 0)
        self.assertEqual(result.returncode, 1)  # the sm_80 fixture is a problem


class BuiltWheelRunsHere(unittest.TestCase):
    """archbuild builds the PyTorch-like fixture for `native`, publishes it, and
    its kernels run on this GPU from native SASS (JIT disabled)."""

    def test_native_build_runs_with_jit_disabled(self):
        sys.path.insert(0, str(ROOT / "tests" / "cli"))
        os.environ.setdefault("ARCHBUILD_SOURCE_DIR", str(ROOT))
        from fixture_project import data_dir_with_recipe, make_cuda_project
        work = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-gpu-build-"))
        self.addCleanup(shutil.rmtree, work, True)
        data = data_dir_with_recipe(work, make_cuda_project(work))
        result = archbuild("build", "fixture", "--arch", "native", "--cache-dir", str(work / "cache"), "--json",
                           env={"ARCHBUILD_DATA_DIR": str(data)})
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertTrue(report["published"])
        wheel = next(pathlib.Path(report["store"]).glob("wheels/*.whl"))
        import zipfile
        with zipfile.ZipFile(wheel) as archive:
            archive.extract("fixture/libfixture.so", work / "unpacked")
        code = ("import ctypes, torch; lib = ctypes.CDLL(%r); x = torch.ones(4096, device='cuda'); "
                "lib.fixture_scale(ctypes.c_void_p(x.data_ptr()), 4096); torch.cuda.synchronize(); "
                "assert bool((x == 2).all()), x[:4]; print('fixture_scale ran natively')") % str(work / "unpacked/fixture/libfixture.so")
        env = dict(os.environ, CUDA_DISABLE_PTX_JIT="1", CUDA_CACHE_DISABLE="1", CUDA_LAUNCH_BLOCKING="1")
        run = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True)
        print("\n  build:", report["build"]["seconds"], "s, jobs", report["plan"]["jobs"], "nvcc threads",
              report["plan"]["nvcc_threads"], "->", run.stdout.strip() or run.stderr.strip()[-300:])
        self.assertEqual(run.returncode, 0, run.stderr)
        again = archbuild("build", "fixture", "--arch", "native", "--cache-dir", str(work / "cache"), "--json",
                          env={"ARCHBUILD_DATA_DIR": str(data)})
        self.assertTrue(json.loads(again.stdout)["cache_hit"])


class DeviceValidation(unittest.TestCase):
    """archbuild's device validation on this GPU: the fixture wheel and a real
    torch extension wheel pass every check (module loads with the JIT
    disabled, pip into a fresh venv, kernel tests), and a wheel without SASS
    for this GPU is kept out of the cache."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(ROOT / "tests" / "cli"))
        os.environ.setdefault("ARCHBUILD_SOURCE_DIR", str(ROOT))
        from fixture_project import data_dir_with_recipe, make_cuda_project
        cls.work = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-gpu-validate-"))
        cls.addClassCleanup(shutil.rmtree, cls.work, True)
        cls.data = data_dir_with_recipe(cls.work, make_cuda_project(cls.work))
        cls.cc = gpu_ccs()[0]

    def build(self, what, arch, *args, env=None):
        full_env = {"ARCHBUILD_DATA_DIR": str(self.data), **(env or {})}
        return archbuild("build", what, "--arch", arch, "--cache-dir", str(self.work / "cache"), "--json",
                         "--python", PYTHON, *args, env=full_env)

    def checks(self, report):
        """The validation and its device checks by name ("kernel test" is the native one, "kernel test
        from PTX" the one under CUDA_FORCE_PTX_JIT=1)."""
        (validation,) = report["validation"]
        named = {}
        for check in validation["device"]["checks"]:
            name = check["name"].split(" (")[0]
            from_ptx = name == "kernel test" and "CUDA_FORCE_PTX_JIT" in check["name"]
            named[name + " from PTX" if from_ptx else name] = check
        return validation, named

    def test_fixture_wheel_passes_device_validation(self):
        for arch in ("native", f"{self.cc}+PTX"):
            result = self.build("fixture", arch)
            self.assertEqual(result.returncode, 0, result.stderr)
            report = json.loads(result.stdout)
            validation, checks = self.checks(report)
            print(f"\n  fixture --arch {arch}: {report['validation_scope']}")
            print_checks(validation)
            self.assertTrue(validation["device"]["ran"])
            self.assertTrue(validation["device"]["ok"], validation["device"])
            # a non-torch CUDA library: the launch recorder saw its kernel test launch the wheel's own kernels
            census = validation["device"]["kernel_census"]
            print(f"  census: {census['summary']}")
            self.assertTrue(census["recorded"], census)
            self.assertGreater(census["launched_count"], 0, census)
            self.assertEqual(report["validation_level"], "checked")  # its kernel test compares with a reference
            self.assertTrue(report["validation_scope"].startswith("static + device: launched "), report)
            self.assertIn("kernel test passed", checks["kernel test"]["detail"])
            self.assertTrue(report["published"])
            if arch.endswith("+PTX"):
                names = [c["name"] for c in validation["device"]["checks"]]
                self.assertIn("fatbins load from PTX (CUDA_FORCE_PTX_JIT=1)", names)
                self.assertIn("kernel test (CUDA_FORCE_PTX_JIT=1)", names)

    def test_a_device_validated_build_is_signed_and_verifies(self):
        key = self.work / "site.key"
        made = archbuild("cache", "keygen", str(key))
        self.assertEqual(made.returncode, 0, made.stderr)
        cache = self.work / "signed-cache"
        result = archbuild("build", "fixture", "--arch", "native", "--cache-dir", str(cache), "--json", "--python",
                           PYTHON, "--signing-key", str(key), env={"ARCHBUILD_DATA_DIR": str(self.data)})
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["validation_level"], "checked")
        self.assertEqual(len(report["install"]), 2)  # pip and uv
        verify = archbuild("cache", "verify", "--cache-dir", str(cache), "--trusted-key", f"{key}.pub",
                           "--require-signature")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        shown = archbuild("cache", "show", report["key"][:12], "--cache-dir", str(cache), "--trusted-key",
                          f"{key}.pub").stdout
        print("\n  " + "\n  ".join(line for line in shown.splitlines() if line.startswith(("provenance", "sbom",
                                                                                             "validation", "kernels"))))
        self.assertIn("(verified)", shown)
        self.assertRegex(shown, r"kernels\s+launched [1-9]")
        listed = json.loads(archbuild("cache", "ls", "--cache-dir", str(cache), "--json").stdout)["entries"]
        self.assertEqual(listed[0]["validation"], "checked")
        self.assertGreater(listed[0]["kernels_launched"], 0)
        statement = json.loads(base64.b64decode(json.loads(
            (pathlib.Path(report["store"]) / "provenance.intoto.json").read_text())["payload"]))
        (byproduct,) = statement["predicate"]["runDetails"]["byproducts"]
        self.assertEqual(byproduct["annotations"]["level"], "checked")

    def test_enforcement_fixes_a_project_that_ignores_the_list(self):
        # its own arch list, so that the other tests' `native` builds do not find its wheel in the cache
        result = self.build("fixture", "8.0;9.0", "--rebuild", env={"FIXTURE_FORCE_ARCH_LIST": "8.0"})
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertTrue(report["published"])
        self.assertEqual(report["validation_level"], "checked")
        enforcement = report["build"]["arch_enforcement"]
        self.assertEqual(enforcement["rewritten"], enforcement["nvcc_calls"])
        print(f"\n  sm_80-only project for --arch 8.0;9.0, enforced: {enforcement['nvcc_calls']} nvcc calls rewritten, "
              f"{report['validation_scope']}")

    def test_wheel_without_sass_for_this_gpu_fails(self):
        # with the project's own flags kept (enforcement would rewrite its nvcc calls to sm_90)
        result = self.build("fixture", "native", "--rebuild", "--keep-project-archs",
                            env={"FIXTURE_FORCE_ARCH_LIST": "8.0"})
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        self.assertFalse(report["published"])
        wheel = next(pathlib.Path(report["quarantine"]).glob("wheels/*.whl"))
        print(f"\n  sm_80-only wheel for --arch native: not published, kept in {report['quarantine']}")
        # the driver agrees: no module of it loads here without the JIT
        env = dict(os.environ, CUDA_DISABLE_PTX_JIT="1")
        loads = subprocess.run([BIN, "_load-fatbins", str(wheel)],
                               capture_output=True, text=True, env=env)
        self.assertEqual(loads.returncode, 1, loads.stderr)
        statuses = {load["status"] for load in json.loads(loads.stdout)["loads"]}
        print("  _load-fatbins with CUDA_DISABLE_PTX_JIT=1:", statuses)
        self.assertEqual(statuses, {"CUDA_ERROR_NO_BINARY_FOR_GPU"})
        # validating it for its own arch is fine, and says this GPU proves nothing about 8.0
        result = archbuild("validate", str(wheel), "--arch", "8.0", "--python", PYTHON,
                           env={"ARCHBUILD_DATA_DIR": str(self.data)})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("no visible GPU is a target of 8.0", result.stdout)
        # and for this GPU it is invalid
        result = archbuild("validate", str(wheel), "--arch", "native", "--python", PYTHON,
                           env={"ARCHBUILD_DATA_DIR": str(self.data)})
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"SASS that runs natively on {self.cc}", result.stdout)

    def test_torch_extension_wheel_passes_device_validation(self):
        from extension_project import make_extension_repo
        repo = make_extension_repo(self.work)
        # `native` is this machine's SASS in the extension dialect too (archbuild always sets the list)
        plan = archbuild("plan", str(repo), "--arch", "native", "--use-installed-torch", "--json", "--python", PYTHON,
                         "--cache-dir", str(self.work / "plan-cache"))
        self.assertEqual(plan.returncode, 0, plan.stderr[-2000:])
        self.assertEqual(json.loads(plan.stdout)["env"]["TORCH_CUDA_ARCH_LIST"], self.cc)
        # against the machine's torch; without the flag it would build torch first (depends_on)
        result = self.build(str(repo), "native+PTX", "--use-installed-torch")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        validation, checks = self.checks(report)
        print(f"\n  torch extension --arch native+PTX: build {report['build']['seconds']:.1f} s, {report['validation_scope']}")
        print_checks(validation)
        self.assertTrue(validation["device"]["ok"], validation["device"])
        self.assertIn("kernel test passed", checks["kernel test"]["detail"])
        self.assertGreater(validation["device"]["kernel_census"]["launched_count"], 0, validation["device"])
        log = pathlib.Path(checks["kernel test"]["log"]).read_text()
        self.assertIn("archbuild_demo_ext: device 0 ok", log)
        self.assertTrue(report["published"])
        # native+PTX: the GPU's SASS and PTX for it, and the label says so
        self.assertEqual(report["local_version_label"], "cu130.sm" + self.cc.replace(".", "") + "ptx")
        # torch's own cu130 kernels carry PTX only for a newer CC: under forced JIT the kernel test cannot
        # run torch, and says so instead of failing the wheel, whose PTX the fatbin load from PTX proved
        self.assertTrue(checks["fatbins load from PTX"]["ok"], checks["fatbins load from PTX"])
        from_ptx = checks["kernel test from PTX"]
        self.assertTrue(from_ptx["ok"], from_ptx)
        print("  kernel test from PTX:", from_ptx["detail"][:120])

    def test_a_portable_build_runs_its_kernel_test_in_the_clean_room(self):
        from extension_project import make_extension_repo
        repo = make_extension_repo(self.work / "portable")
        result = self.build(str(repo), "native", "--use-installed-torch", "--portable")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        (validation,) = report["validation"]
        room = validation["clean_room"]
        print(f"\n  --portable: {report['repair'][0]['summary']}; clean room {room['seconds']:.1f} s: {room['summary']}")
        self.assertEqual(report["repair"][0]["bundled"], [])  # torch's, CUDA's and the driver's stay theirs
        self.assertTrue(report["wheels"][0]["file"].endswith("_x86_64.whl") and
                        "manylinux_" in report["wheels"][0]["file"], report["wheels"])
        # only what a node has, the driver's libraries and /dev/nvidia* added: its kernels launched there
        self.assertTrue(room["ok"], room)
        self.assertTrue(room["kernel_test_ran"], room)
        self.assertTrue(validation["device"]["ok"], validation["device"])

    def test_dual_library_package_and_its_project_tests(self):
        # PyG's layout (a CPU and a CUDA build of one op library, both
        # registering the operator): validation imports the package the way
        # its users do, the project's own pytest suite runs on the GPU, and a
        # failing test keeps the wheel out of the store unless the budget allows it
        from extension_project import make_dual_library_repo
        repo = make_dual_library_repo(self.work)
        result = self.build(str(repo), "native", "--use-installed-torch", "--test", "pytest tests -q")
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        report = json.loads(result.stdout)
        validation, checks = self.checks(report)
        print(f"\n  dualops --arch native: build {report['build']['seconds']:.1f} s")
        print_checks(validation)
        self.assertIn("kernel test passed: archbuild_kernel_test of dualops", checks["kernel test"]["detail"])
        # the exerciser found dualops::twice (a CPU and a CUDA kernel) and compared them
        exercise = validation["device"]["op_exercise"]
        print("  op exerciser:", exercise["summary"])
        self.assertIn("dualops::twice", [op["op"].split(".")[0] for op in exercise["exercised"]], exercise)
        self.assertEqual(exercise["failed"], [], exercise)
        tests = validation["device"]["project_tests"]
        self.assertEqual((tests["passed"], tests["failed"]), (8, 1), tests)
        (failure,) = tests["failures"]
        self.assertEqual((failure["kind"], failure["test"].split("::")[-1]),
                         ("test", "test_twice_of_a_large_tensor_is_exact"), failure)
        self.assertFalse(report["published"])
        self.assertTrue(list(pathlib.Path(report["quarantine"]).glob("wheels/dualops-*.whl")))
        # the same wheel with a budget of one failed test: published, the failure still listed
        result = self.build(str(repo), "native", "--use-installed-torch", "--test", "pytest tests -q",
                            "--max-failed-tests", "1")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        validation, _ = self.checks(report)
        tests = validation["device"]["project_tests"]
        self.assertEqual((tests["passed"], tests["failed"], tests["max_failed_tests"]), (8, 1, 1), tests)
        self.assertTrue(report["published"])
        print(f"  with --max-failed-tests 1: published, build {report['build']['seconds']:.1f} s (the tree reused)")


class KernelProofTest(unittest.TestCase):
    """Validation proves the wheel's own kernels ran and computed right: a
    planted defect (a CUDA op wrong only in its sm_90 code) is caught by the
    op exerciser, and a suite found in the tree runs report-only."""

    @classmethod
    def setUpClass(cls):
        cls.work = pathlib.Path(tempfile.mkdtemp(prefix="archbuild-gpu-proof-"))
        cls.addClassCleanup(shutil.rmtree, cls.work, True)

    def test_planted_defect_is_caught_by_the_exerciser(self):
        source = self.work / "planted_defect"
        shutil.copytree(ROOT / "tests" / "gpu" / "planted_defect", source)
        result = archbuild("build", str(source), "--arch", "native", "--use-installed-torch", "--json",
                           "--cache-dir", str(self.work / "cache"), "--python", PYTHON)
        report = json.loads(result.stdout)
        (validation,) = report["validation"]
        print_checks(validation)
        exercise = validation["device"]["op_exercise"]
        print("  op exerciser:", exercise["summary"])
        print("  census:", validation["device"]["kernel_census"]["summary"])
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        self.assertFalse(report["published"])
        failed = {entry["op"].split(".")[0]: entry for entry in exercise["failed"]}
        self.assertIn("planted_defect::scale_add", failed, exercise)
        self.assertAlmostEqual(failed["planted_defect::scale_add"]["max_abs_diff"], 1.0, places=3)
        exercised = [entry["op"].split(".")[0] for entry in exercise["exercised"]]
        self.assertIn("planted_defect::scale", exercised, exercise)
        self.assertNotIn("planted_defect::scale", failed)
        self.assertGreater(validation["device"]["kernel_census"]["launched_count"], 0)

    def test_pybind11_functions_are_driven_without_a_recipe(self):
        """The most common extension shape, pybind11 functions and no torch.library op: each function is
        fed from its docstring; one with a CPU twin is compared with it (a defect planted in its sm_90
        code is caught, naming the function and the inputs), one without runs on the GPU alone, and one
        that crashes the process on guessed arguments is skipped, not held against the build."""
        source = self.work / "pybind_kernels"
        shutil.copytree(ROOT / "tests" / "gpu" / "pybind_kernels", source)
        cache = str(self.work / "pybind-cache")
        common = ("build", str(source), "--arch", "native", "--use-installed-torch", "--json", "--cache-dir", cache,
                  "--python", PYTHON)
        planted = archbuild(*common, "--env", "PLANT_DEFECT=1")
        report = json.loads(planted.stdout)
        (validation,) = report["validation"]
        exercise = validation["device"]["op_exercise"]
        print("\n  planted: " + exercise["summary"])
        self.assertEqual(planted.returncode, 1, planted.stderr[-3000:])
        self.assertFalse(report["published"])
        failed = by_op(exercise["failed"])
        self.assertIn("pybind_kernels._C::scale_add_cuda", failed, exercise)
        self.assertAlmostEqual(failed["pybind_kernels._C::scale_add_cuda"]["max_abs_diff"], 1.0, places=3)
        self.assertIn("x: float32", failed["pybind_kernels._C::scale_add_cuda"]["inputs"])

        # the right build; its own tests need expecttest, which only the carried wheelhouse has
        wheelhouse = ROOT / ".device" / "wheelhouse"
        right = archbuild(*common, "--test-wheelhouse", str(wheelhouse))
        report = json.loads(right.stdout)
        (validation,) = report["validation"]
        exercise = validation["device"]["op_exercise"]
        print("  right: " + exercise["summary"] + "; level " + report["validation_level"])
        print("  census:", validation["device"]["kernel_census"]["summary"])
        self.assertEqual(right.returncode, 0, right.stderr[-3000:])
        self.assertTrue(report["published"])
        exercised = by_op(exercise["exercised"])
        self.assertEqual(exercised["pybind_kernels._C::scale_add_cuda"]["category"], "pybind cpu+cuda")
        self.assertEqual(exercised["pybind_kernels._C::square_cuda"]["category"], "pybind cuda-only")
        self.assertNotIn("pybind_kernels._C::scale_add_cpu", by_op(exercise["exercised"] + exercise["skipped"]))
        # a function that crashes the process on guessed inputs (no CUDA error) is skipped, saying why
        unchecked = by_op(exercise["skipped"])["pybind_kernels._C::unchecked_rows_cuda"]
        self.assertIn("SIGSEGV on cuda:0 with guessed inputs", unchecked["reason"])
        self.assertIn("the function does not check its arguments", unchecked["reason"])
        # runs that differ, from a function whose arguments have no names: nothing says the guessed
        # input was valid, so it is skipped with the reason, not held against the build
        unwritten = by_op(exercise["skipped"])["pybind_kernels._C::unwritten_cuda"]
        self.assertIn("two runs on cuda:0 differ for inputs guessed without argument names", unwritten["reason"])
        self.assertEqual(validation["device"]["kernel_census"]["launched_count"], 2)
        # it needs only torch's, CUDA's and the system's libraries: portable, as the audit says
        self.assertTrue(validation["audit"]["portable"], validation["audit"])
        self.assertEqual(report["validation_level"], "checked")
        tests = validation["device"]["project_tests"]
        print("  project tests: " + tests["summary"])
        self.assertEqual(tests["test_dependencies"]["installed"], ["expecttest"], tests)
        self.assertEqual(tests["passed"], 2, tests)
        self.assertEqual(tests["failed"], 0, tests)


def by_op(entries):
    return {entry["op"]: entry for entry in entries}


if __name__ == "__main__":
    probe = subprocess.run([BIN, "detect", "--json"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "ARCHBUILD_FAKE_GPUS"})
    try:
        devices = json.loads(probe.stdout)["gpus"]
    except (json.JSONDecodeError, KeyError):
        devices = {"devices": [], "unavailable_reason": probe.stderr.strip()}
    if not devices["devices"]:
        print(f"SKIPPED: GPU tests need a GPU: {devices.get('unavailable_reason', 'none found')}")
        sys.exit(SKIP_CODE)
    unittest.main(verbosity=2)
