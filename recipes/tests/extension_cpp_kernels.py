"""Kernel test for pytorch/extension-cpp: mymuladd (a * b + c) on every GPU against the CPU."""
import sys

import torch
import extension_cpp  # noqa: F401  (registers torch.ops.extension_cpp)

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    a, b = torch.randn(1 << 16), torch.randn(1 << 16)
    got = torch.ops.extension_cpp.mymuladd(a.to(device), b.to(device), 2.5).cpu()
    # atol: the GPU fuses a * b + c (one rounding), the CPU rounds twice
    if not torch.allclose(got, a * b + 2.5, rtol=1e-5, atol=1e-5):
        sys.exit(f"mymuladd differs from the CPU on device {index}")
    print(f"device {index}: mymuladd ok")
print("kernel test passed")
