"""y = alpha * x + beta, as a CUDA kernel built for exactly your GPUs."""
import torch

from . import _C


def scale_add(x, alpha, beta):
    return _C.scale_add(x, alpha, beta)


def archbuild_kernel_test(device):
    """Run by archbuild's device validation on every GPU: the kernel against the CPU."""
    x = torch.randn(1 << 16)
    got = scale_add(x.to(device), 2.0, 1.0).cpu()
    expected = x * 2.0 + 1.0
    if not torch.allclose(got, expected):
        raise AssertionError(f"scale_add on {device}: max error {(got - expected).abs().max().item()}")
