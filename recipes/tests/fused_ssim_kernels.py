"""Kernel test for fused_ssim: the compiled fused_ssim_cuda kernels (2D and
3D SSIM maps) and the public fused_ssim / fused_ssim3d (mean SSIM and its
gradient) on every GPU, against a plain-PyTorch float64 SSIM with the same
11-tap Gaussian window (sigma 1.5), zero padding ("same") and C1 = 0.01^2,
C2 = 0.03^2 (the reference in the project's tests, from 3DGS' loss_utils).
The kernels are built with --use_fast_math: the means agree to 1e-4, the
per-pixel maps of the 3D case to 1e-2 (see below)."""
import math
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import fused_ssim_cuda  # the compiled extension (fused_ssim imports it only when a GPU is visible)
    from fused_ssim import fused_ssim, fused_ssim3d
except ImportError as error:
    sys.exit(f"the wheel has no working fused_ssim_cuda: {error}")

C1, C2 = 0.01 ** 2, 0.03 ** 2
g = torch.tensor([math.exp(-(x - 5) ** 2 / (2 * 1.5 ** 2)) for x in range(11)], dtype=torch.float64)
g = g / g.sum()


def reference_map(img1, img2):
    ch, dims = img1.shape[1], img1.dim() - 2
    if dims == 2:
        window, conv = (g[:, None] * g[None, :]), F.conv2d
    else:
        window, conv = (g[:, None, None] * g[None, :, None] * g[None, None, :]), F.conv3d
    window = window.expand((ch, 1) + (11,) * dims).contiguous()

    def blur(x):
        return conv(x, window, padding=5, groups=ch)
    mu1, mu2 = blur(img1), blur(img2)
    # as the project's own reference (tests/test.py, tests/test_3D.py): no clamping
    sigma1 = blur(img1 * img1) - mu1 * mu1
    sigma2 = blur(img2 * img2) - mu2 * mu2
    sigma12 = blur(img1 * img2) - mu1 * mu2
    return ((2 * mu1 * mu2 + C1) * (2 * sigma12 + C2)) / ((mu1 * mu1 + mu2 * mu2 + C1) * (sigma1 + sigma2 + C2))


torch.manual_seed(0)
# Per case: the shape and the largest difference of one map value. The 3D
# map sums 1331 taps in float32 with --use_fast_math, and where a zero-padded
# border makes both variances tiny beside C2 the ratio amplifies that rounding:
# on an H200 single values differed by up to 3.3e-3 from the float64
# reference while the mean agreed to 1e-4 (the project's own test compares
# only the mean).
cases = {
    "2D [2, 3, 37, 53]": ((2, 3, 37, 53), 1e-4),    # not multiples of the 16x16 block
    "3D [1, 2, 13, 21, 18]": ((1, 2, 13, 21, 18), 1e-2),
}
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for name, (shape, map_tolerance) in cases.items():
        img1 = torch.rand(shape, dtype=torch.float64)
        img2 = (img1 + 0.2 * torch.randn(shape, dtype=torch.float64)).clamp(0, 1)
        leaf = img1.clone().requires_grad_()
        want_map = reference_map(leaf, img2)
        want_map.mean().backward()
        a, b = img1.float().to(device), img2.float().to(device)

        kernel = fused_ssim_cuda.fusedssim if len(shape) == 4 else fused_ssim_cuda.fusedssim3d
        got_map = kernel(C1, C2, a, b, False)[0]
        diff = (got_map.double().cpu() - want_map.detach()).abs().max().item()
        if not diff <= map_tolerance:
            sys.exit(f"SSIM map ({name}) differs from the PyTorch reference on device {index}: max diff {diff:.3g}")

        x = a.clone().requires_grad_()
        value = fused_ssim(x, b) if len(shape) == 4 else fused_ssim3d(x, b)
        diff = abs(value.item() - want_map.mean().item())
        if not diff <= 1e-4:
            sys.exit(f"mean SSIM ({name}) differs from the reference on device {index}: diff {diff:.3g}")
        value.backward()
        scale = leaf.grad.abs().max().item()
        diff = (x.grad.double().cpu() - leaf.grad).abs().max().item()
        if not diff <= 1e-3 * scale:
            sys.exit(f"SSIM gradient ({name}) differs from autograd of the reference on device {index}: "
                     f"max diff {diff:.3g} (largest gradient {scale:.3g})")
        print(f"device {index}: SSIM {name} map, mean and gradient ok")
print("kernel test passed")
