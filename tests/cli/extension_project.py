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


def make_nvcc_setuptools_repo(root):
    """A setuptools project whose build_ext runs nvcc for TORCH_CUDA_ARCH_LIST."""
    repo = pathlib.Path(root) / "nvcc-setuptools"
    repo.mkdir(parents=True)
    for name, text in (("setup.py", NVCC_SETUP_PY), ("module.c", NVCC_MODULE_C), ("kernel.cu", NVCC_KERNEL_CU)):
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "nvcc setuptools project")
    return repo
