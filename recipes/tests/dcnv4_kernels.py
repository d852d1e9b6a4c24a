"""Kernel test for DCNv4 (OpenGVLab): DCNv4Function (DCNv4.ext.dcnv4_forward /
dcnv4_backward) on every GPU against a plain-PyTorch deformable aggregation
written here from the kernel's definition, in float64 on the CPU, forward and
the gradients of the input and of offset_mask, for float32 and float16, with
and without the centre tap (remove_center), with dilation and offset_scale.

DCNv4's op is DCNv3 without softmax: channels-last input (N, H, W, G*D),
offset_mask (N, Ho, Wo, ceil(G*K*3 / 8) * 8) holding per group 2K offsets as
(dx, dy) pairs then K unnormalised weights, kernel taps ordered x-major
(for x in kw: for y in kh), sampling point
  p = (o*stride - pad + c) - c*s + (tap*dilation + offset)*s,  c = dilation*(k-1)//2,
  s = offset_scale,
bilinear with zeros outside the image (the torchvision deform_conv2d rule)."""
import math
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    from DCNv4 import ext
    from DCNv4 import DCNv4Function
except ImportError as error:
    sys.exit(f"the wheel has no working DCNv4.ext: {error}")
for name in ("dcnv4_forward", "dcnv4_backward", "flash_deform_attn_forward"):
    if not hasattr(ext, name):
        sys.exit(f"DCNv4.ext lacks {name}")


def bilinear(img, y, x):
    """img (C, H, W); y, x same-shaped; zero outside the image."""
    C, H, W = img.shape
    y0, x0 = torch.floor(y), torch.floor(x)
    out = img.new_zeros((C,) + tuple(y.shape))
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wgt = (1 - (y - yy).abs()) * (1 - (x - xx).abs())
            inside = (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
            out = out + img[:, yy.clamp(0, H - 1).long(), xx.clamp(0, W - 1).long()] * (wgt * inside)
    return out


def dcnv4_reference(value, offset_mask, k, stride, pad, dil, G, D, scale, remove_center):
    N, H, W, _ = value.shape
    Ho = (H + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
    Wo = (W + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
    taps = [(i, j) for i in range(k) for j in range(k)  # i: x tap, j: y tap
            if not (remove_center and i == k // 2 and j == k // 2)]
    K = len(taps)
    c = dil * (k - 1) // 2
    base_y = (torch.arange(Ho, dtype=value.dtype) * stride - pad + c - c * scale)[:, None]
    base_x = (torch.arange(Wo, dtype=value.dtype) * stride - pad + c - c * scale)[None, :]
    rows = []
    for n in range(N):
        groups = []
        for g in range(G):
            img = value[n, :, :, g * D:(g + 1) * D].permute(2, 0, 1)
            om = offset_mask[n, :, :, g * K * 3:(g + 1) * K * 3]
            acc = img.new_zeros(D, Ho, Wo)
            for t, (i, j) in enumerate(taps):
                x = base_x + (i * dil + om[..., 2 * t]) * scale
                y = base_y + (j * dil + om[..., 2 * t + 1]) * scale
                acc = acc + bilinear(img, y, x) * om[..., 2 * K + t]
            groups.append(acc.permute(1, 2, 0))
        rows.append(torch.cat(groups, -1))
    return torch.stack(rows)


torch.manual_seed(0)
N, H, W, G, D = 2, 10, 12, 4, 16
configs = [
    # kernel, stride, pad, dilation, offset_scale, remove_center
    (3, 1, 1, 1, 1.0, False),
    (3, 1, 2, 2, 2.0, False),
    (3, 1, 1, 1, 1.0, True),
]
for k, stride, pad, dil, scale, remove_center in configs:
    K = k * k - int(remove_center)
    Ho = (H + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
    Wo = (W + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
    width = int(math.ceil(G * K * 3 / 8) * 8)
    value = torch.randn(N, H, W, G * D, dtype=torch.float64)
    offset_mask = torch.zeros(N, Ho, Wo, width, dtype=torch.float64)
    for g in range(G):
        offset_mask[..., g * K * 3:g * K * 3 + 2 * K] = torch.rand(N, Ho, Wo, 2 * K, dtype=torch.float64) * 4 - 2
        offset_mask[..., g * K * 3 + 2 * K:(g + 1) * K * 3] = torch.rand(N, Ho, Wo, K, dtype=torch.float64)
    grad = torch.randn(N, Ho, Wo, G * D, dtype=torch.float64)
    # One reference per dtype, from the inputs rounded as the kernel gets them: float16 offsets
    # move sample points, and a bilinear gradient jumps where a point crosses a pixel edge.
    references = {}
    for dtype in (torch.float32, torch.float16):
        rv = value.to(dtype).double().requires_grad_()
        ro = offset_mask.to(dtype).double().requires_grad_()
        want = dcnv4_reference(rv, ro, k, stride, pad, dil, G, D, scale, remove_center)
        want.backward(grad.to(dtype).double())  # the output gradient too, as the kernel gets it
        references[dtype] = (want, rv, ro)
    label = f"k {k}, pad {pad}, dilation {dil}, offset_scale {scale}, remove_center {remove_center}"
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)  # the op launches on the current device (no device guard)
        for dtype, tol in ((torch.float32, 1e-4), (torch.float16, 2e-2)):
            want, rv, ro = references[dtype]
            v = value.to(device, dtype).requires_grad_()
            om = offset_mask.to(device, dtype).requires_grad_()
            out = DCNv4Function.apply(v, om, k, k, stride, stride, pad, pad, dil, dil, G, D, scale, N,
                                      int(remove_center))
            diff = (out.detach().cpu().double() - want.detach()).abs().max().item()
            if out.shape != want.shape or diff > tol * max(1.0, want.abs().max().item()):
                sys.exit(f"dcnv4 forward ({label}, {dtype}) differs from the PyTorch reference "
                         f"on device {index}: max diff {diff:.3g}")
            out.backward(grad.to(device, dtype))
            for name, got, ref in (("input", v.grad, rv.grad), ("offset_mask", om.grad, ro.grad)):
                got = got.cpu().double()
                diff = (got - ref).abs().max().item()
                if name == "offset_mask" and dtype == torch.float16:
                    # float16 arithmetic inside the kernel still rounds a few sample points across
                    # a pixel edge the float64 reference does not cross, each a whole step of the
                    # gradient: the error over all elements is the check.
                    diff = ((got - ref).norm() / ref.norm()).item()
                    if diff > 5e-2:
                        sys.exit(f"dcnv4 backward ({label}, {dtype}): grad of {name} differs from the "
                                 f"PyTorch reference on device {index}: relative L2 error {diff:.3g}")
                elif diff > 10 * tol * max(1.0, ref.abs().max().item()):
                    sys.exit(f"dcnv4 backward ({label}, {dtype}): grad of {name} differs from the "
                             f"PyTorch reference on device {index}: max diff {diff:.3g}")
            print(f"device {index}: dcnv4 {label} forward/backward ({dtype}) ok")
print("kernel test passed")
