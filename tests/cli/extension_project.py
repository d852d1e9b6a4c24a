"""A git repository holding examples/torch-extension: a real
torch.utils.cpp_extension project with one CUDA kernel and an
archbuild_kernel_test(), built by the generic cpp-extension recipe."""
import pathlib
import shutil

from gitrepos import git
from harness import SOURCE_DIR


def make_extension_repo(root):
    repo = pathlib.Path(root) / "torch-extension"
    shutil.copytree(SOURCE_DIR / "examples" / "torch-extension", repo,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "torch extension example")
    git(repo, "tag", "v0.1.0")
    return repo


NVCC_SETUP_PY = '''\
"""Compiles its CUDA source with nvcc itself (no cpp_extension, no ninja):
setuptools then decides from timestamps alone whether the extension needs
building, as for pytorch_scatter (use_ninja=False)."""
import os
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def gencode():
    flags = []
    for item in os.environ["TORCH_CUDA_ARCH_LIST"].split(";"):
        number = item.removesuffix("+PTX").replace(".", "")
        flags.append(f"-gencode=arch=compute_{number},code=sm_{number}")
        if item.endswith("+PTX"):
            flags.append(f"-gencode=arch=compute_{number},code=compute_{number}")
    return flags


class NvccBuildExt(build_ext):
    def build_extensions(self):
        self.compiler.src_extensions.append(".cu")
        default_compile = self.compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if src.endswith(".cu"):
                self.spawn([f"{CUDA}/bin/nvcc", "-c", src, "-o", obj, "-Xcompiler", "-fPIC", *gencode()])
            else:
                default_compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        self.compiler._compile = compile_one
        super().build_extensions()


setup(name="nvcc-setuptools-demo", version="0.1.0",
      ext_modules=[Extension("nvcc_setuptools_demo", ["module.c", "kernel.cu"],
                             library_dirs=[f"{CUDA}/lib64"], libraries=["cudart"])],
      cmdclass={"build_ext": NvccBuildExt})
'''

NVCC_MODULE_C = '''\
#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nvcc_setuptools_demo", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_nvcc_setuptools_demo(void) { return PyModule_Create(&module); }
'''

NVCC_KERNEL_CU = '''\
__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" void launch_add_one(float* x, int n) { add_one<<<(n + 255) / 256, 256>>>(x, n); }
'''


def nvcc_project_repo(root, name, setup_py, message):
    """The nvcc setuptools project (module.c, kernel.cu) with this setup.py, one commit on main."""
    repo = pathlib.Path(root) / name
    repo.mkdir(parents=True)
    for file, text in (("setup.py", setup_py), ("module.c", NVCC_MODULE_C), ("kernel.cu", NVCC_KERNEL_CU)):
        (repo / file).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return repo


def make_nvcc_setuptools_repo(root):
    """A setuptools project whose build_ext runs nvcc for TORCH_CUDA_ARCH_LIST."""
    return nvcc_project_repo(root, "nvcc-setuptools", NVCC_SETUP_PY, "nvcc setuptools project")


def make_gpu_asking_repo(root):
    """DCNv2's form on the nvcc project: the CUDA source only when torch sees a GPU, no switch to say so;
    it prints what torch answered."""
    setup_py = NVCC_SETUP_PY.replace('CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")\n', '''CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
import torch
if torch.cuda.is_available():
    print("torch sees a GPU of capability", torch.cuda.get_device_capability())
''').replace('ext_modules=[Extension("nvcc_setuptools_demo", ["module.c", "kernel.cu"],',
              'ext_modules=[Extension("nvcc_setuptools_demo", ["module.c"] + (["kernel.cu"] if '
              'torch.cuda.is_available() else []),').replace("nvcc-setuptools-demo", "gpu-asking-demo")
    assert "kernel.cu\"] if torch.cuda.is_available()" in setup_py
    return nvcc_project_repo(root, "gpu-asking", setup_py, "a project asking torch for a GPU")


MULTI_SETUP_PY = '''\
"""Three extension modules of one CUDA and one C file each, built the way
torch.utils.cpp_extension builds without ninja: its build_ext swaps the
compiler for nvcc per file, so setuptools compiles one file at a time.
Each compile appends "start|end NAME TIME" to $FIXTURE_COMPILE_TIMES."""
import os
import time
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
MODULES = ["alpha", "beta", "gamma"]


def gencode():
    return [f"-gencode=arch=compute_{n},code=sm_{n}"
            for n in (item.replace(".", "") for item in os.environ["TORCH_CUDA_ARCH_LIST"].split(";"))]


def note(event, name):
    log = os.environ.get("FIXTURE_COMPILE_TIMES")
    if log:
        with open(log, "a") as handle:
            handle.write(f"{event} {os.path.basename(name)} {time.time():.3f}\\n")


class NvccBuildExt(build_ext):
    def build_extensions(self):
        self.compiler.src_extensions.append(".cu")
        default_compile = self.compiler._compile
        original = self.compiler.compiler_so

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            note("start", obj)
            try:
                if src.endswith(".cu"):  # as cpp_extension does: nvcc in place of the C compiler
                    self.compiler.set_executable("compiler_so", [f"{CUDA}/bin/nvcc", "-Xcompiler", "-fPIC", *gencode()])
                    self.spawn(self.compiler.compiler_so + ["-c", src, "-o", obj])
                else:
                    default_compile(obj, src, ext, cc_args, extra_postargs, pp_opts)
            finally:
                self.compiler.set_executable("compiler_so", original)
                note("end", obj)

        self.compiler._compile = compile_one
        super().build_extensions()


setup(name="multi-ext-demo", version="0.1.0", packages=["multi_ext_demo"],
      ext_modules=[Extension(f"multi_ext_demo._{m}", [f"src/{m}.c", f"src/{m}_kernel.cu"],
                             library_dirs=[f"{CUDA}/lib64"], libraries=["cudart"]) for m in MODULES],
      cmdclass={"build_ext": NvccBuildExt})
'''

MULTI_MODULE_C = '''\
#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_NAME", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__NAME(void) { return PyModule_Create(&module); }
'''

MULTI_KERNEL_CU = '''\
template <int N> __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * N + NAME_SEED;
}
extern "C" void launch_NAME(float* x, int n) {
  scale<2><<<(n + 255) / 256, 256>>>(x, n);
  scale<3><<<(n + 255) / 256, 256>>>(x, n);
}
'''


def make_multi_extension_repo(root):
    """A ninja-less setuptools project with three extension modules."""
    repo = pathlib.Path(root) / "multi-ext"
    (repo / "src").mkdir(parents=True)
    (repo / "multi_ext_demo").mkdir()
    (repo / "multi_ext_demo" / "__init__.py").write_text("")
    (repo / "setup.py").write_text(MULTI_SETUP_PY)
    for seed, name in enumerate(["alpha", "beta", "gamma"]):
        (repo / "src" / f"{name}.c").write_text(MULTI_MODULE_C.replace("NAME", name))
        (repo / "src" / f"{name}_kernel.cu").write_text(
            MULTI_KERNEL_CU.replace("NAME_SEED", f"{seed}.0f").replace("NAME", name))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "three extension modules")
    return repo


DOWNLOADING_SETUP_PY = '''\
"""Downloads a prebuilt wheel for this machine unless DEMO_FORCE_BUILD=TRUE,
as flash-attn and causal-conv1d do; compiles its kernel with nvcc when forced."""
import os
import urllib.request
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
FORCE_BUILD = os.getenv("DEMO_FORCE_BUILD", "FALSE") == "TRUE"


class CachedWheelsCommand(build_ext):
    def run(self):
        if not FORCE_BUILD:
            # what these projects do: fetch a binary someone built elsewhere
            urllib.request.urlopen("https://github.com/demo/releases/download/v0.1/demo-cu13-sm90.whl", timeout=20)
        super().run()

    def build_extensions(self):
        self.compiler.src_extensions.append(".cu")
        default_compile = self.compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if src.endswith(".cu"):
                number = os.environ["TORCH_CUDA_ARCH_LIST"].split(";")[0].replace(".", "")
                self.spawn([f"{CUDA}/bin/nvcc", "-c", src, "-o", obj, "-Xcompiler", "-fPIC",
                            f"-gencode=arch=compute_{number},code=sm_{number}"])
            else:
                default_compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        self.compiler._compile = compile_one
        super().build_extensions()


setup(name="downloading-demo", version="0.1.0",
      ext_modules=[Extension("downloading_demo", ["module.c", "kernel.cu"],
                             library_dirs=[f"{CUDA}/lib64"], libraries=["cudart"])],
      cmdclass={"build_ext": CachedWheelsCommand})
'''


def make_downloading_repo(root):
    """A setup.py that downloads a prebuilt binary unless its switch is set."""
    repo = pathlib.Path(root) / "downloading"
    repo.mkdir(parents=True)
    for name, text in (("setup.py", DOWNLOADING_SETUP_PY),
                       ("module.c", NVCC_MODULE_C.replace("nvcc_setuptools_demo", "downloading_demo")),
                       ("kernel.cu", NVCC_KERNEL_CU)):
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "downloads unless forced")
    return repo


DUAL_SETUP_PY = '''\
"""PyG's layout: each op library is built twice, `_twice_cpu` (C++ only) and
`_twice_cuda` (C++ and CUDA), and both register the same operator with
TORCH_LIBRARY; dualops/__init__.py loads exactly one of them."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

setup(name="dualops", version="0.1.0", packages=["dualops"],
      ext_modules=[CppExtension("dualops._twice_cpu", ["csrc/twice.cpp"]),
                   CUDAExtension("dualops._twice_cuda", ["csrc/twice.cpp", "csrc/twice_cuda.cu"],
                                 define_macros=[("WITH_CUDA", None)])],
      cmdclass={"build_ext": BuildExtension.with_options(use_ninja=False)})
'''

DUAL_INIT_PY = '''\
"""Loads the CUDA build of the op library when torch sees a GPU, the CPU
build otherwise, never both: a second TORCH_LIBRARY(dualops) aborts."""
import importlib.machinery
import os

import torch

_variant = "cuda" if torch.cuda.is_available() else "cpu"
_spec = importlib.machinery.PathFinder().find_spec(f"_twice_{_variant}", [os.path.dirname(__file__)])
torch.ops.load_library(_spec.origin)


def twice(x):
    return torch.ops.dualops.twice(x)


def archbuild_kernel_test(device):
    x = torch.arange(1024, dtype=torch.float32, device=device)
    torch.testing.assert_close(twice(x).cpu(), 2 * x.cpu())
'''

# Per-operator headers (TORCH_ASSERT_ONLY_METHOD_OPERATORS), not <ATen/ATen.h>:
# a fraction of the compile time, for nvcc's per-arch passes most of all.
DUAL_TWICE_CPP = '''\
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <torch/library.h>
#include <ATen/core/Tensor.h>

at::Tensor twice_cpu(const at::Tensor& x) { return x.mul(2); }
#ifdef WITH_CUDA
at::Tensor twice_cuda(const at::Tensor& x);
#endif

TORCH_LIBRARY(dualops, m) { m.def("twice(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(dualops, CPU, m) { m.impl("twice", &twice_cpu); }
#ifdef WITH_CUDA
TORCH_LIBRARY_IMPL(dualops, CUDA, m) { m.impl("twice", &twice_cuda); }
#endif
'''

DUAL_TWICE_CU = '''\
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

__global__ void twice_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}

at::Tensor twice_cuda(const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kFloat, "dualops.twice: float32 only");
  auto input = x.contiguous();
  auto y = at::empty_like(input);
  const int64_t n = input.numel();
  if (n == 0) return y;
  twice_kernel<<<(n + 255) / 256, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(input.data_ptr<float>(),
                                                                               y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
'''

DUAL_TEST_OK = '''\
import pytest
import torch

import dualops

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [1, 255, 256, 4097])
def test_twice(device, size):
    x = torch.randn(size, device=device)
    torch.testing.assert_close(dualops.twice(x), 2 * x)
'''

DUAL_TEST_BROKEN = '''\
import torch

import dualops


def test_twice_of_a_large_tensor_is_exact():
    # wrong on purpose: a test that fails whatever the wheel holds
    x = torch.ones(1 << 20, device="cuda")
    assert dualops.twice(x).sum().item() == 3 * x.numel()
'''


def make_dual_library_repo(root):
    """A torch extension with a CPU and a CUDA build of one op library
    (tests/test_twice.py passes; tests/test_broken.py fails on purpose)."""
    repo = pathlib.Path(root) / "dualops"
    files = {"setup.py": DUAL_SETUP_PY, "dualops/__init__.py": DUAL_INIT_PY, "csrc/twice.cpp": DUAL_TWICE_CPP,
             "csrc/twice_cuda.cu": DUAL_TWICE_CU, "tests/test_twice.py": DUAL_TEST_OK,
             "tests/test_broken.py": DUAL_TEST_BROKEN}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one op library, a CPU and a CUDA build")
    return repo
