"""planted_defect: a deliberately wrong-on-sm_90 fixture for archbuild's
validation tests. Its CUDA kernel for scale_add adds 1.0 to every element when
compiled for sm_90 (and only then); the CPU kernels and the scale op are right,
so a CPU-vs-GPU comparison of scale_add on an H200 must fail and one of scale
must pass."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="planted_defect",
    version="0.1.0",
    packages=["planted_defect"],
    ext_modules=[CUDAExtension("planted_defect._C", ["csrc/ops.cpp", "csrc/ops_cuda.cu"],
                               extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2"]})],
    cmdclass={"build_ext": BuildExtension},
)
