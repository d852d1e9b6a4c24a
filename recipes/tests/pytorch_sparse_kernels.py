"""Kernel test for torch_sparse: SparseTensor times dense (spmm with sum, mean
and max) on every GPU against the CPU, and the sum against a dense matmul.
Building a SparseTensor on the GPU also runs its index conversion kernels."""
import sys

import torch
from torch_sparse import SparseTensor, matmul

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")


def random_sparse(device, rows=300, cols=200, nnz=3000):
    torch.manual_seed(0)
    flat = torch.unique(torch.randint(0, rows * cols, (nnz,)))  # no duplicates: to_dense would keep only one
    row, col = flat // cols, flat % cols
    value = torch.randn(flat.numel())
    return SparseTensor(row=row.to(device), col=col.to(device), value=value.to(device), sparse_sizes=(rows, cols))


dense = torch.randn(200, 32)
cpu = random_sparse("cpu")
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    gpu = random_sparse(device)
    for reduce in ("sum", "mean", "max"):
        got = matmul(gpu, dense.to(device), reduce=reduce).cpu()
        if not torch.allclose(got, matmul(cpu, dense, reduce=reduce), rtol=1e-4, atol=1e-4):
            sys.exit(f"spmm ({reduce}) differs from the CPU on device {index}")
        print(f"device {index}: spmm {reduce} ok")
    if not torch.allclose(matmul(gpu, dense.to(device)).cpu(), gpu.to_dense().cpu() @ dense, rtol=1e-4, atol=1e-4):
        sys.exit(f"spmm (sum) differs from the dense product on device {index}")
print("kernel test passed")
