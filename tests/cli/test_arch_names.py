"""Arch names mean what the consumer means: `archbuild arch --dialect
extension --torch V` against the real torch.utils.cpp_extension
_get_cuda_arch_flags of several torch releases (their source read from the
releases' wheels on PyPI; the function needs no GPU when
TORCH_CUDA_ARCH_LIST is set): a name archbuild resolves gives exactly the
-gencode flags cpp_extension gives for that name, and `all` stays within
what cpp_extension accepts."""
import ast
import collections
import os
import re
import subprocess
import sys
import unittest
import zipfile

from harness import SYSTEM_NVCC, TEST_CACHE, run, run_json, torch_venv

# The releases whose tables differ (toolchains/torch/cpp_extension_arches.toml): 2.11 is the installed one.
OLDER_RELEASES = ["2.8.0", "2.6.0"]


def cpp_extension_source(version):
    """torch/utils/cpp_extension.py of torch VERSION, from its smallest wheel on PyPI (cached)."""
    cached = TEST_CACHE / "cpp-extension" / f"{version}.py"
    if cached.exists():
        return cached.read_text()
    download = TEST_CACHE / "cpp-extension" / f"download-{version}"
    download.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--only-binary=:all:", "--platform", "macosx_11_0_arm64", "--python-version", "3.11",
                    f"torch=={version}", "-d", str(download)], check=True)
    wheel = next(download.glob("torch-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("torch/utils/cpp_extension.py").decode()
    cached.write_text(text)
    wheel.unlink()
    return text


def installed_source():
    site = next(torch_venv().parent.parent.glob("lib/python3*/site-packages"))
    return (site / "torch" / "utils" / "cpp_extension.py").read_text()


def real_arch_flags(source, arch_list):
    """The real _get_cuda_arch_flags with TORCH_CUDA_ARCH_LIST=arch_list: sorted -gencode flags, or ValueError."""
    tree = ast.parse(source)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef)
                    and node.name == "_get_cuda_arch_flags")
    function.returns = None  # annotations name typing helpers each release imports its own way
    for argument in function.args.args:
        argument.annotation = None
    namespace = {"collections": collections, "os": os, "re": re, "torch": None, "logger": None}
    exec(compile(ast.Module(body=[function], type_ignores=[]), "cpp_extension.py", "exec"), namespace)
    saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    try:
        return namespace["_get_cuda_arch_flags"]()
    finally:
        if saved is None:
            del os.environ["TORCH_CUDA_ARCH_LIST"]
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = saved


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs the CUDA 13.0 toolkit at /usr/local/cuda")
class CppExtensionNames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sources = {"2.11.0": installed_source()}
        for version in OLDER_RELEASES:
            cls.sources[version] = cpp_extension_source(version)

    def resolve(self, spec, torch):
        result, report = run_json("arch", spec, "--dialect", "extension", "--torch", torch)
        self.assertEqual(result.returncode, 0, (spec, torch, result.stderr))
        return report

    def test_names_give_the_flags_cpp_extension_gives(self):
        # Names CUDA 13.0 can build every member of, in each release's meaning.
        names = {"2.11.0": ["Turing", "Ampere", "Ampere+Tegra", "Ada", "Hopper", "Blackwell", "Blackwell+Tegra"],
                 "2.8.0": ["Turing", "Ampere", "Ada", "Hopper", "Blackwell"],
                 "2.6.0": ["Ampere", "Hopper", "Blackwell"]}
        for torch, source in self.sources.items():
            for name in names[torch]:
                with self.subTest(torch=torch, name=name):
                    resolved = self.resolve(name, torch)
                    self.assertEqual(resolved["consumer"], f"torch {torch.rsplit('.', 1)[0]}'s cpp_extension")
                    self.assertEqual(real_arch_flags(source, resolved["torch_cuda_arch_list"]),
                                     real_arch_flags(source, name))
        # The names differ from PyTorch's CMake ones: Hopper is 9.0 there, 9.0+PTX here.
        self.assertEqual(run("arch", "Hopper").stdout.strip(), "9.0")
        self.assertEqual(self.resolve("Hopper", "2.11.0")["torch_cuda_arch_list"], "9.0+PTX")
        self.assertEqual(self.resolve("Blackwell", "2.6.0")["torch_cuda_arch_list"], "10.0+PTX")

    def test_all_and_official_keep_what_cpp_extension_accepts(self):
        for torch, source in self.sources.items():
            with self.subTest(torch=torch):
                resolved = self.resolve("all", torch)
                flags = real_arch_flags(source, resolved["torch_cuda_arch_list"])  # no ValueError
                self.assertTrue(flags)
                self.assertIn("8.8", " ".join(resolved["notes"]))
                self.assertNotIn("8.8", resolved["torch_cuda_arch_list"].split(";"))
                official = self.resolve("official", torch)
                real_arch_flags(source, official["torch_cuda_arch_list"])
        # 2.6 knows no 12.0: `all` leaves it out and says so
        older = self.resolve("all", "2.6.0")
        self.assertNotIn("12.0", older["torch_cuda_arch_list"])
        self.assertIn("torch 2.6's cpp_extension does not accept", " ".join(older["notes"]))

    def test_native_is_this_machines_sass_in_every_dialect_and_native_ptx_adds_ptx(self):
        env = {"ARCHBUILD_FAKE_GPUS": "NVIDIA H200:9.0:143771,NVIDIA RTX 6000 Ada:8.9:49140"}
        for dialect in ("extension", "cmake"):
            result = run("arch", "native", "--dialect", dialect, env=env)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout.strip(), "8.9;9.0", dialect)  # what the user asked for: this machine
            result = run("arch", "native+PTX", "--dialect", dialect, env=env)
            self.assertEqual(result.stdout.strip(), "8.9;9.0+PTX", dialect)
            self.assertIn("native+PTX: the visible GPUs, PTX for the newest", result.stderr)

    def test_an_arch_the_consumer_rejects_is_refused_naming_it(self):
        with self.assertRaises(ValueError):
            real_arch_flags(self.sources["2.11.0"], "8.8")
        result = run("arch", "8.0;8.8", "--dialect", "extension")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("torch 2.11's cpp_extension does not accept 8.8", result.stderr)
        # the CMake dialect builds it
        self.assertEqual(run("arch", "8.0;8.8").stdout.strip(), "8.0;8.8")
        result = run("arch", "9.0", "--torch", "2.8")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--torch goes with --dialect extension", result.stderr)


if __name__ == "__main__":
    unittest.main()
