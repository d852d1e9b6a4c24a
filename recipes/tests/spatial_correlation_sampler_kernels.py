"""Kernel test for spatial_correlation_sampler (ClementPinard/Pytorch-Correlation-extension):
the CUDA correlation of spatial_correlation_sampler_backend, through the public
spatial_correlation_sample / SpatialCorrelationSampler, on every GPU, against a
plain-PyTorch correlation written here (zero padding, shifted slices), forward
and backward, for the FlowNet setting (kernel 1, patch 9/21, dilated patch) and
a general one (kernel 3, stride 2, padding, dilation); float64, float32, and
half and bfloat16 (CUDA only) with looser tolerances. The same data also runs
through the package's CPU kernel, which must agree as well."""
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import spatial_correlation_sampler_backend as backend
    from spatial_correlation_sampler import SpatialCorrelationSampler, spatial_correlation_sample
except ImportError as error:
    sys.exit(f"the wheel has no working spatial_correlation_sampler_backend: {error}")


def correlation_reference(x1, x2, kernel, patch, stride, pad, dil, dil_patch):
    """out[n, ph, pw, h, w] = sum over c and the kernel window (i, j) of
    x1[n, c, y, x] * x2[n, c, y + (ph - rad) * dil_patch, x + (pw - rad) * dil_patch],
    y = h * stride - pad + i * dil (likewise x), terms outside either image zero."""
    N, C, H, W = x1.shape
    rad = (patch - 1) // 2
    span = (kernel - 1) * dil + 1
    oh = (H + 2 * pad - span) // stride + 1
    ow = (W + 2 * pad - span) // stride + 1
    margin = pad + rad * dil_patch
    p1 = F.pad(x1, (margin,) * 4)
    p2 = F.pad(x2, (margin,) * 4)
    rows = []
    for ph in range(patch):
        cols = []
        for pw in range(patch):
            su, sv = (ph - rad) * dil_patch, (pw - rad) * dil_patch
            acc = x1.new_zeros(N, oh, ow)
            for i in range(kernel):
                for j in range(kernel):
                    y0 = margin - pad + i * dil
                    x0 = margin - pad + j * dil
                    a = p1[:, :, y0:y0 + (oh - 1) * stride + 1:stride, x0:x0 + (ow - 1) * stride + 1:stride]
                    b = p2[:, :, y0 + su:y0 + su + (oh - 1) * stride + 1:stride,
                           x0 + sv:x0 + sv + (ow - 1) * stride + 1:stride]
                    acc = acc + (a * b).sum(1)
            cols.append(acc)
        rows.append(torch.stack(cols, 1))
    return torch.stack(rows, 1)  # N, patch, patch, oh, ow


def check(name, got, want, tol, index):
    got, want = got.detach().cpu().double(), want.detach().cpu().double()
    scale = max(1.0, want.abs().max().item())
    if got.shape != want.shape:
        sys.exit(f"{name} shape {tuple(got.shape)} differs from {tuple(want.shape)} on device {index}")
    diff = (got - want).abs().max().item()
    if diff > tol * scale:
        sys.exit(f"{name} differs from the plain correlation on device {index}: max diff {diff:.3g}")


torch.manual_seed(0)
cases = [
    # kernel, patch, stride, pad, dil, dil_patch, (N, C, H, W)
    (1, 9, 1, 0, 1, 1, (2, 8, 12, 14)),    # FlowNetC / PWC-Net cost volume
    (1, 11, 1, 0, 1, 2, (1, 16, 10, 9)),   # dilated patch (FlowNetC: 21 x 21, step 2)
    (3, 5, 2, 1, 2, 1, (2, 4, 13, 11)),    # general: kernel window, stride, padding, dilation
]
tolerances = {torch.float64: 1e-9, torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 8e-2}
for kernel, patch, stride, pad, dil, dil_patch, shape in cases:
    x1 = torch.randn(shape, dtype=torch.float64)
    x2 = torch.randn(shape, dtype=torch.float64)
    grad = torch.randn_like(correlation_reference(x1, x2, kernel, patch, stride, pad, dil, dil_patch))
    r1, r2 = x1.clone().requires_grad_(), x2.clone().requires_grad_()
    want = correlation_reference(r1, r2, kernel, patch, stride, pad, dil, dil_patch)
    want.backward(grad)
    label = f"kernel {kernel}, patch {patch}, stride {stride}, pad {pad}, dil {dil}, dil_patch {dil_patch}"
    # The package's CPU kernel against the reference: the CUDA one must agree with both.
    c1, c2 = x1.clone().requires_grad_(), x2.clone().requires_grad_()
    cpu = spatial_correlation_sample(c1, c2, kernel, patch, stride, pad, dil, dil_patch)
    cpu.backward(grad)
    check(f"CPU correlation ({label})", cpu, want, 1e-9, "cpu")
    check(f"CPU correlation backward ({label})", c1.grad, r1.grad, 1e-9, "cpu")
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        module = SpatialCorrelationSampler(kernel, patch, stride, pad, dil, dil_patch)
        for dtype, tol in tolerances.items():
            g1 = x1.to(device, dtype).requires_grad_()
            g2 = x2.to(device, dtype).requires_grad_()
            out = module(g1, g2)
            check(f"correlation ({label}, {dtype})", out, want, tol, index)
            out.backward(grad.to(device, dtype))
            check(f"correlation backward, input1 ({label}, {dtype})", g1.grad, r1.grad, tol, index)
            check(f"correlation backward, input2 ({label}, {dtype})", g2.grad, r2.grad, tol, index)
        # The raw extension entry point, as the autograd Function calls it.
        raw = backend.forward(x1.to(device).float().contiguous(), x2.to(device).float().contiguous(),
                              kernel, kernel, patch, patch, pad, pad, dil, dil, dil_patch, dil_patch,
                              stride, stride)
        check(f"spatial_correlation_sampler_backend.forward ({label})", raw, want, 1e-4, index)
        print(f"device {index}: correlation {label}: forward/backward (float64, float32, half, bfloat16) ok")
print("kernel test passed")
