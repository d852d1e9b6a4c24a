"""`archbuild validate` (static part): RECORD hashes and per-arch SASS/PTX of
the CUDA libraries in real wheels built from nvcc output."""
import base64
import hashlib
import json
import unittest
import zipfile

from harness import SYSTEM_NVCC, nvcc, run, scratch_dir

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] += 1.f; }\n"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(directory, files, tamper=None, unlisted=None):
    wheel = directory / "demo-1.0-cp311-cp311-linux_x86_64.whl"
    files = dict(files)
    files["demo-1.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
    record = [record_line(name, data) for name, data in files.items()] + ["demo-1.0.dist-info/RECORD,,"]
    if tamper:
        files[tamper] = files[tamper] + b"tampered"
    if unlisted:
        files[unlisted] = b"sneaked in"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("demo-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Validate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        (cls.dir / "k.cu").write_text(KERNEL)
        nvcc("-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
             "arch=compute_90,code=[sm_90,compute_90]", "-o", str(cls.dir / "lib.so"), str(cls.dir / "k.cu"))
        cls.library = (cls.dir / "lib.so").read_bytes()

    def validate(self, wheel, arch):
        result = run("validate", str(wheel), "--arch", arch, "--json", env={"ARCHBUILD_FAKE_GPUS": None})
        return result, (json.loads(result.stdout) if result.stdout.startswith("{") else None)

    def test_a_test_wheelhouse_that_is_no_directory_is_refused_naming_it(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library, "demo/__init__.py": b""})
        missing = scratch_dir(self) / "no-such-wheelhouse"
        result = run("validate", str(wheel), "--arch", "9.0", "--test-wheelhouse", str(missing),
                     env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"test_wheelhouse '{missing}' (from --test-wheelhouse) is not a directory or a URL",
                      result.stderr)
        # pip's own variable, read when the setting is unset, is read as pip reads it: a missing dir is left out
        result = run("validate", str(wheel), "--arch", "9.0", "-v", env={"ARCHBUILD_FAKE_GPUS": None,
                                                                          "PIP_FIND_LINKS": str(missing)})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"PIP_FIND_LINKS entry '{missing}' is not a directory: left out", result.stderr)

    def test_valid_wheel(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library, "demo/__init__.py": b""})
        result, report = self.validate(wheel, "8.0;9.0+PTX")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertTrue(report["record"]["ok"])
        self.assertEqual(report["record"]["files_checked"], 3)
        self.assertEqual(report["gaps"], [])
        self.assertEqual(report["cuda_libraries"][0]["sass"], {"sm_80": 2, "sm_90": 2})
        self.assertFalse(report["device"]["ran"])
        self.assertIn("device check skipped, no GPU", report["scope"])
        text = run("validate", str(wheel), "--arch", "8.0;9.0+PTX", env={"ARCHBUILD_FAKE_GPUS": None}).stdout
        self.assertIn("skip device: no GPU", text)
        self.assertIn("valid (static only: device check skipped", text)

    def test_only_the_gpus_a_target_serves_through_the_users_visible_devices(self):
        # Two GPUs the driver shows (the user's CUDA_VISIBLE_DEVICES=3,7), one a target: the
        # checks get the H200 alone, named as the user's device 3. (No driver here: they then fail.)
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library, "demo/__init__.py": b""})
        result = run("validate", str(wheel), "--arch", "9.0", "--json", "--work-dir", str(scratch_dir(self) / "w"),
                     env={"ARCHBUILD_FAKE_GPUS": "NVIDIA H200:9.0:143771,NVIDIA A100:8.0:81920",
                          "CUDA_VISIBLE_DEVICES": "3,7"})
        device = json.loads(result.stdout)["device"]
        self.assertEqual(device["gpus"], [{"index": 0, "name": "NVIDIA H200", "cc": "9.0"}])
        self.assertEqual(device["cuda_visible_devices"], "3")
        self.assertEqual(device["user_cuda_visible_devices"], "3,7")

    def test_missing_arch_is_named_by_file_and_target(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library})
        result, report = self.validate(wheel, "8.0;12.0;9.0a")
        self.assertEqual(result.returncode, 1)
        self.assertEqual({(g["file"], g["target"]) for g in report["gaps"]},
                         {("demo/_C.so", "12.0"), ("demo/_C.so", "9.0a")})
        result = run("validate", str(wheel), "--arch", "12.0")
        self.assertIn("missing demo/_C.so: SASS that runs natively on 12.0", result.stdout)
        self.assertIn("INVALID", result.stdout)

    def test_tampered_and_unlisted_files_fail_record(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library, "demo/__init__.py": b"x = 1\n"},
                           tamper="demo/__init__.py", unlisted="demo/extra.py")
        result, report = self.validate(wheel, "8.0")
        self.assertEqual(result.returncode, 1)
        errors = "\n".join(report["record"]["errors"])
        self.assertIn("demo/__init__.py: sha256 does not match RECORD", errors)
        self.assertIn("demo/extra.py: in the wheel but not in RECORD", errors)

    def test_no_cuda_code_is_invalid(self):
        wheel = make_wheel(scratch_dir(self), {"demo/__init__.py": b""})
        result, report = self.validate(wheel, "9.0")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(report["cuda_libraries"], [])

    def test_not_a_wheel(self):
        bogus = scratch_dir(self) / "bogus.whl"
        bogus.write_text("not a zip")
        result = run("validate", str(bogus), "--arch", "9.0")
        self.assertEqual(result.returncode, 2)
        self.assertIn("bogus.whl", result.stderr)
        self.assertEqual(run("validate", str(bogus) + ".missing", "--arch", "9.0").returncode, 2)


if __name__ == "__main__":
    unittest.main()
