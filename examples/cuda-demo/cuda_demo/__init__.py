"""archbuild's demo package: two CUDA kernels behind a C ABI, loaded with ctypes."""
import ctypes
import os

LIBRARY = os.path.join(os.path.dirname(__file__), "libcuda_demo.so")


def checks():
    """{kernel name: check function(device) -> 0 | cudaError_t | -1}."""
    library = ctypes.CDLL(LIBRARY)
    return {"saxpy": library.cuda_demo_saxpy_check, "sum": library.cuda_demo_sum_check}
