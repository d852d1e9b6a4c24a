"""The wheel audit: which shared libraries a wheel's ELF files need and where
each comes from on a node (recipes/frontends/wheel_audit.py, auditwheel pinned
and installed once per cache by archbuild). Real wheels with real nvcc code,
the real auditwheel from PyPI, through `archbuild validate`."""
import json
import os
import pathlib
import shutil
import subprocess
import unittest
import zipfile

from harness import SYSTEM_NVCC, run, scratch_dir, torch_build_python, wheel_of

KERNEL = r"""
#include <cuda_runtime.h>
__global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
extern "C" void* PyInit_demo_ext() { scale<<<1, 1>>>(nullptr, 2.0f, 0); return nullptr; }
"""
ZSTD_USER = r"""
#include <zstd.h>
extern "C" unsigned demo_zstd_version() { return ZSTD_versionNumber(); }
"""


def platform_wheel(directory, name, files):
    """A wheel of a CPython extension for this machine."""
    return wheel_of(directory, name, "1.0", files, "cp311-cp311-linux_x86_64")


@unittest.skipUnless(shutil.which("python3"), "needs python3")
class WheelAudit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.cache = cls.dir / "cache"
        source = cls.dir / "kernel.cu"
        source.write_text(KERNEL + ZSTD_USER)
        # one extension linking libzstd, which a node need not have (not in any manylinux policy) ...
        zstd_so = cls.dir / "zstd" / "demo_ext.cpython-311-x86_64-linux-gnu.so"
        zstd_so.parent.mkdir()
        subprocess.run([str(SYSTEM_NVCC), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", str(zstd_so),
                        str(source), "-Xlinker", "--no-as-needed", "-lzstd", "-cudart", "shared"], check=True)
        # (with Python and a header beside it, which the audit leaves out of what it unpacks)
        cls.zstd_wheel = platform_wheel(cls.dir / "zstd", "demo_ext", {zstd_so.name: zstd_so.read_bytes(),
                                                                         "demo_pkg/__init__.py": b"VERSION = 1\n",
                                                                         "demo_pkg/kernel.h": b"// a header\n"})
        # ... and one that needs only the CUDA runtime (the nvidia-* wheels) and the system's libraries
        source.write_text(KERNEL)
        cuda_so = cls.dir / "cuda" / "demo_ext.cpython-311-x86_64-linux-gnu.so"
        cuda_so.parent.mkdir()
        subprocess.run([str(SYSTEM_NVCC), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", str(cuda_so),
                        str(source), "-cudart", "shared"], check=True)
        cls.cuda_wheel = platform_wheel(cls.dir / "cuda", "demo_ext", {cuda_so.name: cuda_so.read_bytes()})
        cls.env = {"ARCHBUILD_CACHE_DIR": str(cls.cache), "ARCHBUILD_FAKE_GPUS": None}

    def validate(self, wheel, *extra, env=None):
        result = run("validate", str(wheel), "--arch", "9.0", "--json", *extra, env={**self.env, **(env or {})})
        audit = json.loads(result.stdout)["audit"]
        if audit["ran"] and (not audit["portable"] or audit["own_cxx_runtime"]):
            self.assertEqual(result.returncode, 1, result.stderr)  # a need met only here, or a second C++ runtime, fails it
        else:
            self.assertIn(result.returncode, (0, 3), result.stderr)  # 3: no GPU here for the device checks
        return audit

    def test_a_library_only_this_machine_has_is_named_with_where_it_was_found(self):
        audit = self.validate(self.zstd_wheel)
        self.assertTrue(audit["ran"], audit)
        self.assertFalse(audit["portable"])
        self.assertEqual(audit["platform_tag"], "linux_x86_64")
        self.assertTrue(audit["symbol_tag"].startswith("manylinux_2_"), audit)
        (need,) = audit["not_portable"]
        self.assertEqual((need["soname"], need["from"]), ("libzstd.so.1", "machine"))
        self.assertTrue(os.path.exists(need["path"]), need)
        self.assertIn("not portable: libzstd.so.1 (", audit["summary"])
        self.assertFalse(audit["ok"])  # the wheel fails: a node without libzstd could not load it
        sources = {n["soname"]: n["from"] for f in audit["files"] for n in f["needs"]}
        self.assertEqual(sources.get("libcudart.so.13"), "cuda", sources)
        self.assertEqual(sources.get("libc.so.6"), "system", sources)
        # the terminal says it on the audit line
        text = run("validate", str(self.zstd_wheel), "--arch", "9.0", env=self.env).stdout
        self.assertIn("audit: not portable: libzstd.so.1", text)

    def test_a_wheel_needing_only_cuda_and_the_system_is_portable(self):
        audit = self.validate(self.cuda_wheel)
        self.assertTrue(audit["portable"], audit)
        self.assertEqual(audit["not_portable"], [])
        self.assertTrue(audit["platform_tag"].startswith("manylinux_2_"), audit)
        self.assertIn("portable as " + audit["platform_tag"], audit["summary"])
        # auditwheel was installed once, pinned, into the cache's tools dir
        self.assertTrue((self.cache / "tools" / "auditwheel-6.8.2" / ".archbuild-complete").is_file())
        self.assertEqual(audit["auditwheel"], "6.8.2")

    def test_the_clean_room_reads_its_answer_not_what_the_wheel_prints(self):
        # a library that prints a JSON line when it loads, an object file and a cubin-like ELF for the GPU
        # beside it (neither can be dlopen'ed): the clean room loads the shared object alone and is not fooled
        root = scratch_dir(self)
        source = root / "noisy.cu"
        source.write_text(KERNEL + '#include <stdio.h>\n__attribute__((constructor)) static void hello(void) '
                          '{ printf("{\\"loaded\\": []}\\n"); }\n')
        library, objfile = root / "libnoisy.so", root / "noisy.o"
        subprocess.run([str(SYSTEM_NVCC), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", str(library),
                        str(source), "-cudart", "shared"], check=True)
        subprocess.run([str(SYSTEM_NVCC), "-c", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", str(objfile),
                        str(source)], check=True)
        wheel = platform_wheel(root, "noisy", {"noisy/__init__.py": b"", "noisy/libnoisy.so": library.read_bytes(),
                                               "noisy/noisy.o": objfile.read_bytes()})
        # its work dir reached through a symlink, as a ~/.cache linked to a scratch disk
        real = root / "real-work"
        real.mkdir()
        (root / "work").symlink_to(real)
        result = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", "--work-dir",
                     str(root / "work"), env=self.env)
        room = json.loads(result.stdout)["clean_room"]
        self.assertTrue(room["ran"], room)
        self.assertEqual(room["failures"], [], room)
        self.assertEqual(room["loaded"], 1, room)  # the shared object, not the .o

    def test_a_wheel_whose_record_does_not_match_is_not_unpacked(self):
        tampered = scratch_dir(self) / self.zstd_wheel.name
        with zipfile.ZipFile(self.zstd_wheel) as source, zipfile.ZipFile(tampered, "w") as copy:
            for member in source.infolist():
                data = source.read(member)
                copy.writestr(member, data + b"\0" if member.filename.endswith(".so") else data)
        result = run("validate", str(tampered), "--arch", "9.0", "--json", env=self.env)
        self.assertEqual(result.returncode, 1, result.stderr)
        audit = json.loads(result.stdout)["audit"]
        self.assertFalse(audit["ran"])
        self.assertIn("RECORD", audit["skipped_reason"])

    def test_an_extension_with_a_cxx_runtime_of_its_own_beside_torchs_fails(self):
        # linked against torch's libc10 with the static libstdc++: torch's C++
        # exceptions would cross two runtimes in one process
        python = str(torch_build_python())
        torch_lib = subprocess.run([python, "-c", "import os, torch; print(os.path.dirname(torch.__file__) + '/lib')"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        source = self.dir / "own_runtime.cu"
        source.write_text(KERNEL + '#include <string>\nextern "C" int demo_len(int n) { return std::to_string(n).size(); }\n')
        wheels = {}
        for name, flags in (("own", ["-Xcompiler", "-static-libstdc++"]), ("shared", [])):
            so = self.dir / f"runtime-{name}" / "demo_ext.cpython-311-x86_64-linux-gnu.so"
            so.parent.mkdir()
            subprocess.run([str(SYSTEM_NVCC), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", str(so), str(source),
                            *flags, "-Xlinker", "--no-as-needed", f"-L{torch_lib}", "-lc10", "-cudart", "shared"], check=True)
            wheels[name] = platform_wheel(so.parent, "demo_ext", {so.name: so.read_bytes()})
        audit = self.validate(wheels["own"], "--python", python)
        self.assertEqual(audit["own_cxx_runtime"], ["demo_ext.cpython-311-x86_64-linux-gnu.so"], audit)
        text = run("validate", str(wheels["own"]), "--arch", "9.0", "--python", python, env=self.env).stdout
        self.assertIn("C++ runtime: demo_ext.cpython-311-x86_64-linux-gnu.so links torch's C++ libraries but carries "
                      "its own static libstdc++", text)
        self.assertEqual(self.validate(wheels["shared"], "--python", python)["own_cxx_runtime"], [])

    def test_offline_without_the_tool_the_audit_says_how_to_get_it(self):
        cache = scratch_dir(self) / "offline-cache"
        audit = self.validate(self.zstd_wheel, env={"ARCHBUILD_CACHE_DIR": str(cache), "ARCHBUILD_OFFLINE": "1"})
        self.assertFalse(audit["ran"])
        self.assertIn("--offline installs nothing", audit["skipped_reason"])
        self.assertIn("pip install --target", audit["skipped_reason"])
        self.assertFalse((cache / "tools" / "auditwheel-6.8.2").exists())

    def test_an_index_url_with_a_password_never_reaches_the_report(self):
        cache = scratch_dir(self) / "secret-cache"
        audit = self.validate(self.zstd_wheel, env={"ARCHBUILD_CACHE_DIR": str(cache),
                                                    "PIP_INDEX_URL": "http://user:s3cr3t-token@127.0.0.1:9/simple"})
        self.assertFalse(audit["ran"], audit)
        self.assertNotIn("s3cr3t-token", json.dumps(audit))


AARCH64_GCC = shutil.which("aarch64-linux-gnu-gcc")
SYSROOT_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "aarch64-sysroot.sh"


@unittest.skipUnless(AARCH64_GCC, "needs Debian's aarch64 cross compiler (scripts/install-deps.sh --tests)")
class AarchWheelAudit(unittest.TestCase):
    """An aarch64 wheel audited (in the aarch64 stage, by the aarch64 archbuild under qemu-user): the
    arm64 sysroot stands in for an aarch64 builder's libraries."""

    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        sysroot = pathlib.Path(subprocess.run(["bash", str(SYSROOT_SCRIPT)], check=True, capture_output=True,
                                              text=True).stdout.strip())
        cls.libs = [sysroot / "usr" / "lib" / "aarch64-linux-gnu", sysroot / "lib" / "aarch64-linux-gnu"]
        cls.wheels = {}
        for name, source, libs in (("zstd", ZSTD_USER.replace('extern "C" ', ""), ["-Wl,--no-as-needed", "-lzstd"]),
                                   ("plain", "#include <math.h>\n#include <stdlib.h>\n"
                                             "double demo_cos(double x) { return cos(x); }\n"
                                             "void* demo_alloc(size_t n) { return malloc(n); }\n", ["-lm"])):
            (cls.dir / name).mkdir()
            module = cls.dir / name / "demo_ext.cpython-311-aarch64-linux-gnu.so"
            (cls.dir / name / "demo.c").write_text(source)
            subprocess.run([AARCH64_GCC, f"--sysroot={sysroot}", "-shared", "-fPIC", "-O2", "-o", str(module),
                            str(cls.dir / name / "demo.c"), *libs], check=True)
            cls.wheels[name] = wheel_of(cls.dir / name, "demo_ext", "1.0", {module.name: module.read_bytes()},
                                        "cp311-cp311-linux_aarch64")
        cls.env = {"ARCHBUILD_CACHE_DIR": str(cls.dir / "cache"), "ARCHBUILD_FAKE_GPUS": None,
                   # where an aarch64 builder's loader would look (auditwheel reads this as LD_LIBRARY_PATH)
                   "AUDITWHEEL_LD_LIBRARY_PATH": ":".join(str(d) for d in cls.libs)}

    def audit(self, name):
        result = run("validate", str(self.wheels[name]), "--arch", "9.0", "--json", env=self.env)
        self.assertIn(result.returncode, (0, 1), result.stderr)  # 1: no CUDA code in these wheels
        return json.loads(result.stdout)["audit"]

    def test_an_aarch64_wheel_needing_a_library_of_the_builder_is_not_portable(self):
        audit = self.audit("zstd")
        self.assertTrue(audit["ran"], audit)
        self.assertFalse(audit["portable"])
        (need,) = audit["not_portable"]
        self.assertEqual((need["soname"], need["from"]), ("libzstd.so.1", "machine"))
        self.assertTrue(any(need["path"].startswith(str(d)) for d in self.libs), need)
        self.assertEqual(audit["platform_tag"], "linux_aarch64")
        self.assertRegex(audit["symbol_tag"], r"^manylinux_2_\d+_aarch64$")

    def test_an_aarch64_wheel_needing_only_the_system_is_portable_as_manylinux_aarch64(self):
        audit = self.audit("plain")
        self.assertTrue(audit["portable"], audit)
        self.assertRegex(audit["platform_tag"], r"^manylinux_2_\d+_aarch64$")
        sources = {n["soname"]: n["from"] for f in audit["files"] for n in f["needs"]}
        self.assertEqual(sources.get("libc.so.6"), "system", sources)


if __name__ == "__main__":
    unittest.main()
