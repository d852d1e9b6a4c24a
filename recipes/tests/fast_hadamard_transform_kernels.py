"""Kernel test for fast_hadamard_transform: hadamard_transform on every GPU
against a dense Sylvester Hadamard matrix (what scipy.linalg.hadamard builds),
forward and backward, for power-of-two sizes and one that is padded."""
import math
import sys

import torch
from fast_hadamard_transform import hadamard_transform

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")


def hadamard_matrix(n, device):
    h = torch.ones(1, 1, dtype=torch.float64, device=device)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for dim in (64, 1024, 4096, 137):
        padded = 1 << math.ceil(math.log2(dim))
        scale = 1 / math.sqrt(dim)
        x = torch.randn(8, dim, device=device, requires_grad=True)
        out = hadamard_transform(x, scale=scale)
        h = hadamard_matrix(padded, device)[:dim, :dim]  # zero padding drops the rest
        want = (x.detach().double() @ h) * scale
        if not torch.allclose(out.double(), want, rtol=1e-4, atol=1e-4):
            sys.exit(f"hadamard_transform (dim {dim}) differs from the dense product on device {index}: "
                     f"max diff {(out.double() - want).abs().max().item():.3g}")
        grad = torch.randn_like(out)
        out.backward(grad)
        if not torch.allclose(x.grad.double(), (grad.double() @ h) * scale, rtol=1e-4, atol=1e-4):
            sys.exit(f"hadamard_transform backward (dim {dim}) differs from the dense product on device {index}")
        print(f"device {index}: hadamard_transform dim {dim} ok")
print("kernel test passed")
