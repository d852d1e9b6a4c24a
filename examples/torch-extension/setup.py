"""A small torch.utils.cpp_extension project: one CUDA kernel (y = alpha * x + beta).
archbuild builds it with its generic recipe:

    archbuild build examples/torch-extension --arch native --use-installed-torch
"""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="archbuild-demo-ext",
    version="0.1.0",
    packages=["archbuild_demo_ext"],
    ext_modules=[CUDAExtension("archbuild_demo_ext._C", ["csrc/ops.cpp", "csrc/scale_add.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
