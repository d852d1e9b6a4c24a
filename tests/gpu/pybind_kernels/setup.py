"""pybind_kernels: a CUDA extension of the most common shape, pybind11 functions
and no torch.library ops, for archbuild's recipe-less validation tests.

scale_add_cuda has a CPU twin (scale_add_cpu) the exerciser compares it with;
square_cuda has none (run on the GPU only). With PLANT_DEFECT=1 in the build
environment, scale_add_cuda's sm_90 code adds 1.0 to every element: a
comparison with the CPU twin on an H200 must catch it."""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

defines = ["-DPLANT_DEFECT=1"] if os.environ.get("PLANT_DEFECT") == "1" else []
setup(
    name="pybind_kernels",
    version="0.1.0",
    packages=["pybind_kernels"],
    ext_modules=[CUDAExtension("pybind_kernels._C", ["csrc/bindings.cpp", "csrc/kernels.cu"],
                               extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2", *defines]})],
    cmdclass={"build_ext": BuildExtension},
)
