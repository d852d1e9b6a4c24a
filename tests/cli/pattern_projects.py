"""Small CUDA projects made by the tests, one per pattern met in public
extensions that do not simply honour TORCH_CUDA_ARCH_LIST:

- `arch-flag`: setup.py compiles with a hardcoded `-arch=sm_80`;
- `cmake-fixed`: setup.py drives CMake, whose CMakeLists fixes the target's
  CUDA_ARCHITECTURES (75;80) whatever CUDAARCHS says, with separable
  compilation (two units and CMake's device-link step);
- `cpu-only`: setup.py builds its CUDA code only when it sees a GPU or
  FORCE_CUDA=1, as PyG-style packages do;
- `path-nvcc`: setup.py calls plain `nvcc` from PATH with its own
  `-gencode` list (built with a CMake-dialect recipe, no cpp_extension);
- `gated`: the CUDA code only behind DEMO_BUILD_LEGACY_CUDA=1, FORCE_CUDA
  mattering only inside it;
- `flagged`: a WITH_CUDA flag that starts as "is there a GPU" and that later
  env branches switch: FORCE_CUDA=1 on, FORCE_ONLY_CPU=1 off.

Each builds a wheel with setuptools (no torch needed)."""
import pathlib

from extension_project import NVCC_KERNEL_CU, NVCC_MODULE_C
from gitrepos import git

# the same kernel and module as extension_project's nvcc setuptools project
KERNEL_CU = NVCC_KERNEL_CU
MODULE_C = NVCC_MODULE_C.replace("nvcc_setuptools_demo", "NAME")

# $CUDA_HOME/bin/nvcc, as most setup.py files call it
CUDA_HOME_NVCC = 'f"{CUDA}/bin/nvcc"'

# setuptools with an nvcc step of its own; FLAGS, the nvcc it calls and the CUDA condition vary.
NVCC_SETUP_PY = '''\
import os
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
WITH_CUDA = {with_cuda}


class NvccBuildExt(build_ext):
    def build_extensions(self):
        self.compiler.src_extensions.append(".cu")
        default_compile = self.compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if src.endswith(".cu"):
                self.spawn([{nvcc}, "-c", src, "-o", obj, "-Xcompiler", "-fPIC", {flags}])
            else:
                default_compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        self.compiler._compile = compile_one
        super().build_extensions()


sources = ["module.c"] + (["kernel.cu"] if WITH_CUDA else [])
setup(name="{name}", version="0.1.0",
      ext_modules=[Extension("{module}", sources, library_dirs=[f"{{CUDA}}/lib64"],
                             libraries=["cudart"] if WITH_CUDA else [])],
      cmdclass={{"build_ext": NvccBuildExt}})
'''

CMAKE_SETUP_PY = '''\
"""The CMake pattern of pybind11-style projects: build_ext runs CMake and
copies the library it made into the package."""
import os
import pathlib
import shutil
import subprocess
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp) / "cmake"
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"])
        subprocess.check_call(["cmake", "--build", str(build), "-j", os.environ.get("MAX_JOBS", "1")])
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(build / "libcmake_demo_kernels.so", target)


setup(name="cmake-demo", version="0.1.0", ext_modules=[Extension("cmake_demo_kernels", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
'''

CMAKELISTS = '''\
cmake_minimum_required(VERSION 3.18)
project(cmake_demo LANGUAGES CUDA)
add_library(cmake_demo_kernels SHARED kernel_rdc.cu helper.cu)
# Fixed by the project: CUDAARCHS and CMAKE_CUDA_ARCHITECTURES do not reach it.
# Separable compilation: CMake adds a device-link step, run without the
# compiler launcher.
set_target_properties(cmake_demo_kernels PROPERTIES CUDA_ARCHITECTURES "75;80" CUDA_SEPARABLE_COMPILATION ON
                      PREFIX "lib")
'''

KERNEL_RDC_CU = '''\
extern __device__ float helper_add_one(float v);  // in helper.cu: needs the device link
__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = helper_add_one(x[i]);
}
extern "C" void launch_add_one(float* x, int n) { add_one<<<(n + 255) / 256, 256>>>(x, n); }
'''

HELPER_CU = "__device__ float helper_add_one(float v) { return v + 1.0f; }\n"

PATTERNS = {
    "arch-flag": {
        "setup.py": NVCC_SETUP_PY.format(with_cuda="True", flags='"-arch=sm_80"', name="arch-flag-demo",
                                         module="arch_flag_demo", nvcc=CUDA_HOME_NVCC),
        "module.c": MODULE_C.replace("NAME", "arch_flag_demo"),
        "kernel.cu": KERNEL_CU,
    },
    "cmake-fixed": {"setup.py": CMAKE_SETUP_PY, "CMakeLists.txt": CMAKELISTS, "kernel_rdc.cu": KERNEL_RDC_CU,
                    "helper.cu": HELPER_CU},
    "cpu-only": {
        # what PyG-style setup.py files do: CUDA when torch sees a GPU, or when forced
        "setup.py": NVCC_SETUP_PY.format(
            with_cuda='os.path.exists("/dev/nvidiactl") or os.getenv("FORCE_CUDA", "0") == "1"',
            flags='*[f"-gencode=arch=compute_{n},code=sm_{n}" for n in (i.replace(".", "") for i in '
            'os.environ["TORCH_CUDA_ARCH_LIST"].split(";"))]',
            name="cpu-only-demo", module="cpu_only_demo", nvcc=CUDA_HOME_NVCC),
        "module.c": MODULE_C.replace("NAME", "cpu_only_demo"),
        "kernel.cu": KERNEL_CU,
    },
    "path-nvcc": {
        # plain `nvcc` from PATH with its own -gencode list, built by a recipe of the CMake dialect
        "setup.py": NVCC_SETUP_PY.format(with_cuda="True", flags='"-gencode=arch=compute_80,code=sm_80", '
                                         '"-gencode=arch=compute_86,code=sm_86"', name="path-nvcc-demo",
                                         module="path_nvcc_demo", nvcc='"nvcc"'),
        "module.c": MODULE_C.replace("NAME", "path_nvcc_demo"),
        "kernel.cu": KERNEL_CU,
    },
    "flagged": {
        # torch-points-kernels' form: env branches switch the flag after its first value
        "setup.py": NVCC_SETUP_PY.format(
            with_cuda='os.path.exists("/dev/nvidiactl")\n'
            'if os.getenv("FORCE_CUDA", "0") == "1":\n    WITH_CUDA = True\n'
            'if os.getenv("FORCE_ONLY_CPU", "0") == "1":\n    WITH_CUDA = False',
            flags='"-arch=sm_80"', name="flagged-demo", module="flagged_demo", nvcc=CUDA_HOME_NVCC),
        "module.c": MODULE_C.replace("NAME", "flagged_demo"),
        "kernel.cu": KERNEL_CU,
    },
    "gated": {
        # CUDA only behind a legacy switch, FORCE_CUDA mattering only inside it
        "setup.py": NVCC_SETUP_PY.format(
            with_cuda='os.getenv("DEMO_BUILD_LEGACY_CUDA", "0") == "1" and '
            '(os.path.exists("/dev/nvidiactl") or os.getenv("FORCE_CUDA", "0") == "1")',
            flags='"-arch=sm_80"', name="gated-demo", module="gated_demo", nvcc=CUDA_HOME_NVCC),
        "module.c": MODULE_C.replace("NAME", "gated_demo"),
        "kernel.cu": KERNEL_CU,
    },
}


def make_pattern_repo(root, pattern):
    """The git repository of one pattern (branch main, one commit)."""
    repo = pathlib.Path(root) / pattern
    repo.mkdir(parents=True)
    for name, text in PATTERNS[pattern].items():
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", pattern)
    return repo
