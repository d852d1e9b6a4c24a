"""pybind_kernels: pybind11 functions over CUDA kernels (see setup.py)."""
import torch  # noqa: F401  (the extension links against torch's libraries)

from ._C import scale_add_cpu, scale_add_cuda, square_cuda  # noqa: F401
