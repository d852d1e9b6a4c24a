"""Kernel test for the cuda-demo wheel: both kernels on every visible GPU,
checked against the host. Exits non-zero naming the kernel and GPU."""
import ctypes
import sys

import cuda_demo

driver = ctypes.CDLL("libcuda.so.1")
driver.cuInit(0)
count = ctypes.c_int(0)
driver.cuDeviceGetCount(ctypes.byref(count))
if count.value == 0:
    sys.exit("no CUDA device visible")
for device in range(count.value):
    for name, check in cuda_demo.checks().items():
        status = check(device)
        print(f"device {device} {name}: {'ok' if status == 0 else status}", flush=True)
        if status:
            sys.exit(f"{name} failed on device {device}: {status} (209 = no kernel image, -1 = wrong result)")
print(f"kernel test passed on {count.value} GPU(s)")
