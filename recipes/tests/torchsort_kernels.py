"""Kernel test for torchsort: soft_rank and soft_sort (l2 and kl) on every GPU
against torchsort's CPU kernels, forward and backward. torchsort replaces a
missing CUDA module by a stub that raises on use, so its import is checked
first."""
import importlib
import sys

import torch
import torchsort

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    importlib.import_module("torchsort.isotonic_cuda")
except ImportError as error:
    sys.exit(f"the wheel has no working torchsort.isotonic_cuda: {error}")


def run(fn, x, regularization, device):
    leaf = x.detach().to(device).requires_grad_()
    out = fn(leaf, regularization=regularization, regularization_strength=0.5)
    out.backward(torch.arange(out.numel(), dtype=out.dtype, device=device).reshape(out.shape) / out.numel())
    return out.detach().cpu(), leaf.grad.cpu()


torch.manual_seed(0)
x = torch.randn(16, 100, dtype=torch.float64)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for fn in (torchsort.soft_rank, torchsort.soft_sort):
        for regularization in ("l2", "kl"):
            name = f"{fn.__name__} ({regularization})"
            out, grad = run(fn, x, regularization, device)
            want_out, want_grad = run(fn, x, regularization, "cpu")
            if not torch.allclose(out, want_out, rtol=1e-5, atol=1e-5):
                sys.exit(f"{name} differs from the CPU on device {index}: "
                         f"max diff {(out - want_out).abs().max().item():.3g}")
            if not torch.allclose(grad, want_grad, rtol=1e-5, atol=1e-5):
                sys.exit(f"{name} backward differs from the CPU on device {index}")
            print(f"device {index}: {name} ok")
print("kernel test passed")
