"""Kernel test for torch_scatter: scatter sum/max and segment_csr on every GPU against the CPU."""
import sys

import torch
import torch_scatter

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    src = torch.randn(10000, 16)
    group = torch.randint(0, 100, (10000,))
    for name, fn in (("scatter_sum", torch_scatter.scatter_sum), ("scatter_max", lambda s, i, dim: torch_scatter.scatter_max(s, i, dim=dim)[0])):
        got = fn(src.to(device), group.to(device), dim=0).cpu()
        want = fn(src, group, dim=0)
        if not torch.allclose(got, want, atol=1e-4):
            sys.exit(f"{name} differs from the CPU on device {index}")
        print(f"device {index}: {name} ok")
    ptr = torch.tensor([0, 3, 3, 7, 10000])
    got = torch_scatter.segment_csr(src.to(device), ptr.to(device), reduce="mean").cpu()
    if not torch.allclose(got, torch_scatter.segment_csr(src, ptr, reduce="mean"), atol=1e-4):
        sys.exit(f"segment_csr differs from the CPU on device {index}")
    print(f"device {index}: segment_csr ok")
print("kernel test passed")
