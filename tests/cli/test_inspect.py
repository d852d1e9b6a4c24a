"""`archbuild inspect` on real nvcc 13 output, wheels, directories and broken files."""
import json
import shutil
import subprocess
import unittest
import zipfile

from harness import (SYSTEM_NVCC, archbuild_inventory, cuobjdump_inventory, nvcc, pypi_cuobjdump, run, run_json,
                     scratch_dir)

KERNEL = r"""
__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
extern "C" void launch_scale(float* x, float a, int n) { scale<<<(n + 255) / 256, 256>>>(x, a, n); }
"""


CENSUS_KERNELS = r"""
namespace census {
template <typename T> __global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
template __global__ void scale<float>(float*, float, int);
template __global__ void scale<double>(double*, double, int);
namespace { __global__ void hidden_fill(int* p) { p[threadIdx.x] = 7; } }
void launch_hidden(int* p) { hidden_fill<<<1, 32>>>(p); }
}
extern "C" __global__ void plain_c(int* p) { p[0] = 1; }
"""


def by_arch_from_cuobjdump(cuobjdump, path):
    """{"sm_90": {mangled entry names}} from `cuobjdump -symbols` (ENTRY symbols of each cubin)."""
    listing = subprocess.run([str(cuobjdump), "-symbols", str(path)], capture_output=True, text=True, check=True).stdout
    found, arch, in_elf = {}, None, False
    for line in listing.splitlines():
        if line.startswith("Fatbin "):
            in_elf = line.startswith("Fatbin elf")
        elif line.startswith("arch = "):
            arch = line.split("=", 1)[1].strip()
            if in_elf:
                found.setdefault(arch, set())
        elif in_elf and arch and " ENTRY " in f" {line} ":
            found[arch].add(line.split()[-1])
    return found


def gencode(arch, code):
    return ["-gencode", f"arch={arch},code={code}"]


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class RealKernels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        source = cls.dir / "kernels.cu"
        source.write_text(KERNEL)
        multi = [*gencode("compute_80", "sm_80"), *gencode("compute_86", "sm_86"), *gencode("compute_90a", "sm_90a"),
                 *gencode("compute_100f", "sm_100f"), *gencode("compute_120", "[sm_120,compute_120]")]
        cls.cases = {
            # name: (nvcc args, expected {(kind, arch): count} per fatbin copy, compressed?)
            "multi_plain.so": (["-shared", "-Xcompiler", "-fPIC", *multi, "-Xfatbin", "-compress-mode=none"], False),
            "multi_compressed.so": (["-shared", "-Xcompiler", "-fPIC", *multi, "-Xfatbin", "-compress-all"], True),
            "multi_size.so": (["-shared", "-Xcompiler", "-fPIC", *multi, "-Xfatbin", "-compress-all",
                               "-Xfatbin", "-compress-mode=size"], True),
            "ptx_only.so": (["-shared", "-Xcompiler", "-fPIC", *gencode("compute_80", "compute_80")], True),
            "object.o": (["-c", *gencode("compute_90", "[sm_90,compute_90]")], True),
            "rdc.o": (["-c", "-rdc=true", *gencode("compute_90a", "sm_90a")], False),
            "app": ([*gencode("compute_75", "sm_75"), "-Xfatbin", "-compress-mode=none"], False),
            "kernels.fatbin": (["-fatbin", *gencode("compute_100", "sm_100"), *gencode("compute_89", "sm_89")], False),
            "kernels.cubin": (["-cubin", "-arch=sm_90a"], False),
        }
        for name, (args, _) in cls.cases.items():
            extra = ["-Xcompiler", "-Dmain_unused=1"]
            source_for = source
            if name == "app":
                source_for = cls.dir / "app.cu"
                source_for.write_text(KERNEL + "int main() { return 0; }\n")
            nvcc(*args, *extra, "-o", str(cls.dir / name), str(source_for))

    def inspect(self, name, *extra):
        result, report = run_json("inspect", str(self.dir / name), *extra)
        self.assertEqual(result.returncode, 0, result.stderr)
        (entry,) = report["files"]
        return entry

    def test_multi_arch_inventory_is_exact(self):
        # nvcc -shared from one .cu yields two containers with the same images
        for name in ["multi_plain.so", "multi_compressed.so", "multi_size.so"]:
            with self.subTest(name=name):
                entry = self.inspect(name)
                self.assertEqual(entry["format"], "shared object")
                self.assertEqual(entry["sass"], {"sm_80": 2, "sm_86": 2, "sm_90a": 2, "sm_100f": 2, "sm_120": 2})
                self.assertEqual(entry["ptx"], {"compute_120": 1})
                self.assertEqual(entry["containers"], 2)
                compressed = sum(entry["compressed"].values())
                if self.cases[name][1]:
                    self.assertEqual(compressed, entry["entry_count"])
                    self.assertEqual(set(entry["compressed"]), {"zstd"})
                else:
                    self.assertEqual(entry["compressed"], {})  # -compress-mode=none: PTX is not compressed either

    def test_other_kinds(self):
        self.assertEqual(self.inspect("ptx_only.so")["ptx"], {"compute_80": 1})
        self.assertEqual(self.inspect("ptx_only.so")["sass"], {})
        entry = self.inspect("object.o")
        self.assertEqual((entry["format"], entry["sass"], entry["ptx"]),
                         ("relocatable object", {"sm_90": 1}, {"compute_90": 1}))
        entry = self.inspect("rdc.o")
        self.assertEqual(entry["sass"], {"sm_90a": 1})
        self.assertTrue(all(e["section"] == "__nv_relfatbin" for e in entry["entries"]))
        entry = self.inspect("app")
        self.assertEqual((entry["format"], entry["sass"]), ("executable", {"sm_75": 2}))
        entry = self.inspect("kernels.fatbin")
        self.assertEqual((entry["format"], entry["sass"]), ("fatbin", {"sm_89": 1, "sm_100": 1}))
        entry = self.inspect("kernels.cubin")
        self.assertEqual((entry["format"], entry["sass"]), ("cubin", {"sm_90": 1}))

    def test_verify_cubins_decompresses_every_image(self):
        result = run("inspect", "--verify-cubins", *[str(self.dir / n) for n in self.cases])
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_device_verdicts(self):
        result, report = run_json("inspect", str(self.dir / "multi_compressed.so"), "--device-cc", "9.0",
                                  "--device-cc", "8.9", "--device-cc", "10.3", "--device-cc", "12.1", "--device-cc", "7.5")
        self.assertEqual(result.returncode, 1)  # no kernel image for 7.5
        verdicts = report["files"][0]["verdicts"]
        self.assertEqual(verdicts, {"9.0": "native", "8.9": "native", "10.3": "native", "12.1": "native",
                                    "7.5": "no-kernel-image"})
        verdicts = self.inspect("ptx_only.so", "--device-cc", "9.0")["verdicts"]
        self.assertEqual(verdicts, {"9.0": "ptx-jit"})
        result = run("inspect", str(self.dir / "multi_plain.so"), "--device-cc", "7.5")
        self.assertEqual(result.returncode, 1)
        self.assertIn("no-kernel-image", result.stdout)

    def test_same_entries_as_cuobjdump(self):
        cuobjdump = pypi_cuobjdump()
        for name in self.cases:
            if name == "kernels.cubin":
                continue  # cuobjdump lists no fatbin entries for a bare cubin
            with self.subTest(name=name):
                entry = self.inspect(name)
                for every in (False, True):
                    self.assertEqual(archbuild_inventory(entry, every),
                                     cuobjdump_inventory(cuobjdump, self.dir / name, every))

    def test_wheel_members_are_read_from_the_zip(self):
        wheel = self.dir / "demo-1.0-cp311-cp311-linux_x86_64.whl"
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(self.dir / "multi_compressed.so", "demo/_C.so")
            archive.write(self.dir / "ptx_only.so", "demo/lib/libptx.so")
            archive.writestr("demo/__init__.py", "")
            archive.writestr("demo-1.0.dist-info/RECORD", "")
        result, report = run_json("inspect", str(wheel), "--device-cc", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr)
        by_path = {f["path"]: f for f in report["files"]}
        self.assertEqual(set(by_path), {f"{wheel}!demo/_C.so", f"{wheel}!demo/lib/libptx.so"})
        self.assertEqual(by_path[f"{wheel}!demo/_C.so"]["sass"]["sm_90a"], 2)
        self.assertEqual(by_path[f"{wheel}!demo/lib/libptx.so"]["verdicts"], {"9.0": "ptx-jit"})
        self.assertEqual(sorted(p.name for p in self.dir.iterdir() if p.name.startswith("demo")), [wheel.name])

    def test_directory_is_walked_recursively(self):
        tree = scratch_dir(self) / "site-packages"
        (tree / "pkg" / "lib").mkdir(parents=True)
        shutil.copy(self.dir / "multi_plain.so", tree / "pkg" / "lib" / "libk.so.1")
        (tree / "pkg" / "lib" / "libk.so").symlink_to("libk.so.1")
        (tree / "pkg" / "__init__.py").write_text("")
        shutil.copy("/bin/true", tree / "pkg" / "not_cuda")
        result, report = run_json("inspect", str(tree))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([f["path"] for f in report["files"]], [str(tree / "pkg" / "lib" / "libk.so.1")])
        self.assertEqual(report["summary"]["binaries"], 2)
        self.assertEqual(report["summary"]["with_cuda_code"], 1)

    def test_broken_files_name_file_and_offset_and_others_go_on(self):
        broken = scratch_dir(self)
        data = (self.dir / "multi_plain.so").read_bytes()
        (broken / "truncated.so").write_bytes(data[: len(data) // 2])
        fatbin = bytearray((self.dir / "kernels.fatbin").read_bytes())
        fatbin[16:18] = b"\x07\x00"  # first entry's kind
        (broken / "corrupt.fatbin").write_bytes(bytes(fatbin))
        (broken / "empty.so").write_bytes(b"")
        (broken / "notes.txt").write_text("hello")
        good = self.dir / "object.o"
        paths = [broken / "truncated.so", broken / "corrupt.fatbin", good, broken / "notes.txt", broken / "missing.so"]
        result = run("inspect", *map(str, paths))
        self.assertEqual(result.returncode, 2)
        self.assertIn(str(good), result.stdout)  # the good file is still listed
        errors = result.stderr
        self.assertRegex(errors, r"truncated\.so: at offset \d+")
        self.assertRegex(errors, r"corrupt\.fatbin: at offset 16 .*kind 7")
        self.assertIn("notes.txt: not an ELF file", errors)
        self.assertIn("missing.so: no such file", errors)
        result = run("inspect", str(broken / "empty.so"))
        self.assertEqual(result.returncode, 2)
        result, report = run_json("inspect", str(broken / "truncated.so"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("offset", report["files"][0]["error"])

    def test_kernels_per_arch_match_cuobjdump_symbols(self):
        """`inspect --kernels`: the entry functions of every SASS and PTX image,
        demangled, equal to the ENTRY symbols `cuobjdump -symbols` lists, in
        plain and compressed fatbins, C++ templates, internal linkage and extern "C"."""
        source = self.dir / "census.cu"
        source.write_text(CENSUS_KERNELS)
        archs = [*gencode("compute_80", "sm_80"), *gencode("compute_90", "[sm_90,compute_90]")]
        for name, compress in (("census_plain.so", ["-Xfatbin", "-compress-mode=none"]),
                               ("census_zstd.so", ["-Xfatbin", "-compress-all"])):
            with self.subTest(name):
                nvcc("-shared", "-Xcompiler", "-fPIC", *archs, *compress, "-o", str(self.dir / name), str(source))
                _, report = run_json("inspect", "--kernels", str(self.dir / name))
                kernels = report["files"][0]["kernels"]
                by_arch = {arch: {k["name"] for k in listed} for arch, listed in kernels["by_arch"].items()}
                # nvcc names the anonymous namespace after the file and a hash: matched by its tail
                hidden = {n for n in by_arch.get("sm_90", ()) if n.endswith("11hidden_fillEPi")}
                self.assertEqual(len(hidden), 1, by_arch)
                expected = {"_ZN6census5scaleIfEEvPT_S1_i", "_ZN6census5scaleIdEEvPT_S1_i", "plain_c", *hidden}
                self.assertEqual(by_arch, {"sm_80": expected, "sm_90": expected, "compute_90": expected})
                self.assertEqual(kernels["count"], 4)
                demangled = {k["demangled"] for k in kernels["by_arch"]["sm_90"]}
                self.assertIn("void census::scale<double>(double*, double, int)", demangled)
                self.assertIn("plain_c", demangled)
                self.assertTrue(any(d.endswith("::hidden_fill(int*)") and "(anonymous namespace)" in d
                                    for d in demangled), demangled)
                self.assertEqual(by_arch_from_cuobjdump(pypi_cuobjdump(), self.dir / name),
                                 {arch: names for arch, names in by_arch.items() if arch.startswith("sm_")})
        text = run("inspect", "--kernels", str(self.dir / "census_plain.so")).stdout
        self.assertIn("kernels: 4 (sm_80, compute_90, sm_90)", text)
        self.assertIn("    void census::scale<float>(float*, float, int)", text)

    def test_bad_device_cc_is_usage_error(self):
        self.assertEqual(run("inspect", str(self.dir / "object.o"), "--device-cc", "nine").returncode, 2)


if __name__ == "__main__":
    unittest.main()
