"""Kernel test for detectron2: the CUDA ops of detectron2._C on every GPU.

- detectron2._C.has_cuda(): the wheel was built with WITH_CUDA (FORCE_CUDA=1),
  not the CPU-only fallback setup.py builds without a visible GPU;
- roi_align_rotated (torch.ops.detectron2, what ROIAlignRotated calls) forward
  and backward against its CPU kernel, and at angle 0 against a plain-PyTorch
  aligned ROIAlign (bilinear sampling written here);
- box_iou_rotated against its CPU kernel, and at angle 0 against a plain
  axis-aligned IoU;
- nms_rotated against its CPU kernel, and at angle 0 against a greedy NMS
  written here (thresholds kept away from every IoU, so rounding cannot flip
  a decision);
- DeformConv / ModulatedDeformConv (_C.deform_conv_*, _C.modulated_deform_conv_*)
  forward and backward against a plain-PyTorch deformable convolution.

`import detectron2` needs fvcore and PyYAML (detectron2/utils/env.py), and
detectron2.layers also torchvision and Pillow: the test says so when they are
missing instead of failing on a traceback."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import detectron2
    from detectron2 import _C
    from detectron2.layers import DeformConv, ModulatedDeformConv, ROIAlignRotated, nms_rotated
except ModuleNotFoundError as error:
    if error.name and not error.name.startswith("detectron2"):
        sys.exit(f"detectron2 needs {error.name} at import time (pip install fvcore pyyaml pillow "
                 f"and a torchvision for this torch): {error}")
    sys.exit(f"the wheel has no working detectron2._C: {error}")
except ImportError as error:
    sys.exit(f"the wheel has no working detectron2._C: {error}")

if not _C.has_cuda():
    sys.exit("detectron2._C was built without CUDA (has_cuda() is False): FORCE_CUDA=1 did not reach setup.py")
print(f"detectron2 {detectron2.__version__}: _C built with {_C.get_cuda_version()}, {_C.get_compiler_version()}")


def close(name, got, want, atol, rtol, index):
    got, want = got.detach().cpu().double(), want.detach().cpu().double()
    if got.shape != want.shape:
        sys.exit(f"{name} shape {tuple(got.shape)} differs from {tuple(want.shape)} on device {index}")
    if not torch.allclose(got, want, atol=atol, rtol=rtol):
        sys.exit(f"{name} differs from the reference on device {index}: "
                 f"max diff {(got - want).abs().max().item():.3g}")


def bilinear(img, y, x):
    """img (C, H, W); y, x same-shaped float tensors in pixel-index units;
    zero outside (the -1 < y < H rule of every DCN / ROIAlign kernel)."""
    C, H, W = img.shape
    y0, x0 = torch.floor(y), torch.floor(x)
    out = img.new_zeros((C,) + tuple(y.shape))
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wgt = (1 - (y - yy).abs()) * (1 - (x - xx).abs())
            inside = (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
            vals = img[:, yy.clamp(0, H - 1).long(), xx.clamp(0, W - 1).long()]
            out = out + vals * (wgt * inside)
    return out


def roi_align_reference(feat, boxes, out_h, out_w, scale, ratio):
    """torchvision.ops.roi_align(aligned=True) in plain PyTorch: boxes
    (K, 5) = (batch, x1, y1, x2, y2); detectron2's roi_align_rotated at angle 0
    is this op. Samples on the border clamp as the kernels do."""
    C, H, W = feat.shape[1:]
    rows = []
    for b, x1, y1, x2, y2 in boxes.tolist():
        x1, y1, x2, y2 = x1 * scale - 0.5, y1 * scale - 0.5, x2 * scale - 0.5, y2 * scale - 0.5
        bin_h, bin_w = (y2 - y1) / out_h, (x2 - x1) / out_w
        iy = torch.arange(out_h, dtype=feat.dtype)[:, None] * bin_h + y1
        ix = torch.arange(out_w, dtype=feat.dtype)[:, None] * bin_w + x1
        sy = (torch.arange(ratio, dtype=feat.dtype) + 0.5) * bin_h / ratio  # (ratio,)
        sx = (torch.arange(ratio, dtype=feat.dtype) + 0.5) * bin_w / ratio
        ys = (iy + sy).reshape(-1)  # out_h*ratio
        xs = (ix + sx).reshape(-1)
        y = ys[:, None].expand(-1, xs.numel())
        x = xs[None, :].expand(ys.numel(), -1)
        valid = (y >= -1) & (y <= H) & (x >= -1) & (x <= W)
        y, x = y.clamp(min=0), x.clamp(min=0)
        y = torch.where(y >= H - 1, torch.full_like(y, H - 1), y)
        x = torch.where(x >= W - 1, torch.full_like(x, W - 1), x)
        v = bilinear(feat[int(b)], y, x) * valid
        v = v.reshape(C, out_h, ratio, out_w, ratio).mean(dim=(2, 4))
        rows.append(v)
    return torch.stack(rows)


def iou_axis_aligned(rboxes):
    """IoU of (cx, cy, w, h, 0) boxes, plain PyTorch (float64)."""
    b = rboxes.double()
    x1, y1 = b[:, 0] - b[:, 2] / 2, b[:, 1] - b[:, 3] / 2
    x2, y2 = b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2
    iw = (torch.min(x2[:, None], x2[None]) - torch.max(x1[:, None], x1[None])).clamp(min=0)
    ih = (torch.min(y2[:, None], y2[None]) - torch.max(y1[:, None], y1[None])).clamp(min=0)
    inter = iw * ih
    area = b[:, 2] * b[:, 3]
    return inter / (area[:, None] + area[None] - inter)


def greedy_nms(iou, scores, threshold):
    order = torch.argsort(scores, descending=True).tolist()
    keep, removed = [], set()
    for i in order:
        if i in removed:
            continue
        keep.append(i)
        removed.update(j for j in order if iou[i, j] > threshold)
    return torch.tensor(keep, dtype=torch.int64)


def safe_threshold(iou):
    """An IoU threshold no off-diagonal IoU comes within 1e-3 of."""
    off = iou[~torch.eye(iou.shape[0], dtype=torch.bool)]
    for t in (0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7):
        if (off - t).abs().min() > 1e-3:
            return t
    sys.exit("could not pick an NMS threshold away from every IoU (test data)")


def deform_conv_reference(x, offset, mask, weight, bias, stride, pad, dil, groups, dgroups):
    """Modulated deformable convolution (DCNv2; mask None = DCNv1) in plain
    PyTorch: offset (N, dg*2*kh*kw, Ho, Wo) with (dy, dx) pairs per kernel tap
    in row-major tap order, mask (N, dg*kh*kw, Ho, Wo)."""
    N, C, H, W = x.shape
    Cout, _, kh, kw = weight.shape
    Ho = (H + 2 * pad - (dil * (kh - 1) + 1)) // stride + 1
    Wo = (W + 2 * pad - (dil * (kw - 1) + 1)) // stride + 1
    base_y = (torch.arange(Ho, dtype=x.dtype) * stride - pad)[:, None]
    base_x = (torch.arange(Wo, dtype=x.dtype) * stride - pad)[None, :]
    cpg = C // dgroups
    outs = []
    for n in range(N):
        cols = x.new_zeros(C, kh * kw, Ho, Wo)
        for g in range(dgroups):
            for i in range(kh):
                for j in range(kw):
                    k = i * kw + j
                    dy = offset[n, g * 2 * kh * kw + 2 * k]
                    dx = offset[n, g * 2 * kh * kw + 2 * k + 1]
                    v = bilinear(x[n, g * cpg:(g + 1) * cpg], base_y + i * dil + dy, base_x + j * dil + dx)
                    if mask is not None:
                        v = v * mask[n, g * kh * kw + k]
                    cols[g * cpg:(g + 1) * cpg, k] = v
        cin_g, cout_g = C // groups, Cout // groups
        out = []
        for g in range(groups):
            c = cols[g * cin_g:(g + 1) * cin_g].reshape(cin_g * kh * kw, Ho * Wo)
            w = weight[g * cout_g:(g + 1) * cout_g].reshape(cout_g, cin_g * kh * kw)
            out.append((w @ c).reshape(cout_g, Ho, Wo))
        out = torch.cat(out)
        if bias is not None:
            out = out + bias[:, None, None]
        outs.append(out)
    return torch.stack(outs)


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)  # the deform-conv launchers use the current device's stream

    # roi_align_rotated: CUDA against the CPU kernel (forward, backward),
    # angle 0 against the plain aligned ROIAlign.
    feat = torch.randn(2, 3, 16, 20, dtype=torch.float64)
    rois = torch.tensor([[0, 8.0, 7.0, 9.0, 6.0, 0.0], [1, 10.5, 8.0, 12.0, 5.0, 30.0],
                         [0, 5.0, 9.0, 4.0, 7.0, -60.0], [1, 12.0, 6.5, 7.0, 9.0, 135.0]], dtype=torch.float64)
    op = ROIAlignRotated(output_size=(4, 5), spatial_scale=1.0, sampling_ratio=2)
    for dtype, tol in ((torch.float32, 1e-4), (torch.float64, 1e-9)):
        # Fresh leaves each: feat.to(float64) is feat itself, and a copy of a
        # tensor that requires grad is no leaf (its .grad stays None).
        x_cpu = feat.to(dtype).detach().clone().requires_grad_()
        x_gpu = feat.detach().to(device, dtype).requires_grad_()
        out_cpu = op(x_cpu, rois.to(dtype))
        out_gpu = op(x_gpu, rois.to(device, dtype))
        close(f"roi_align_rotated ({dtype})", out_gpu, out_cpu, tol, tol, index)
        grad = torch.randn_like(out_cpu)
        out_cpu.backward(grad)
        out_gpu.backward(grad.to(device))
        close(f"roi_align_rotated backward ({dtype})", x_gpu.grad, x_cpu.grad, tol, tol, index)
    axis = rois[:1].clone()
    out_gpu = op(feat.to(device), axis.to(device))
    cx, cy, w, h = axis[0, 1:5].tolist()
    want = roi_align_reference(feat, torch.tensor([[0, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]],
                                                  dtype=torch.float64), 4, 5, 1.0, 2)
    close("roi_align_rotated at 0 degrees vs plain ROIAlign", out_gpu, want, 1e-9, 1e-9, index)
    print(f"device {index}: roi_align_rotated forward/backward (float32, float64) ok")

    # box_iou_rotated and nms_rotated.
    n = 40
    centers = torch.rand(n, 2, dtype=torch.float64) * 40
    sizes = torch.rand(n, 2, dtype=torch.float64) * 20 + 4
    boxes0 = torch.cat([centers, sizes, torch.zeros(n, 1, dtype=torch.float64)], 1).float()
    boxes = boxes0.clone()
    boxes[:, 4] = torch.rand(n) * 360 - 180
    scores = torch.rand(n)
    iou = torch.ops.detectron2.box_iou_rotated
    for name, b in (("angle 0", boxes0), ("random angles", boxes)):
        got = iou(b.to(device), b.to(device))
        want = iou(b, b)
        close(f"box_iou_rotated ({name})", got, want, 1e-4, 1e-4, index)
    close("box_iou_rotated at 0 degrees vs plain IoU", iou(boxes0.to(device), boxes0.to(device)),
          iou_axis_aligned(boxes0), 1e-4, 1e-4, index)
    t = safe_threshold(iou_axis_aligned(boxes0))
    keep = nms_rotated(boxes0.to(device), scores.to(device), t).cpu()
    want = greedy_nms(iou_axis_aligned(boxes0), scores, t)
    if not torch.equal(keep, want):
        sys.exit(f"nms_rotated (angle 0, threshold {t}) keeps {keep.tolist()}, plain NMS {want.tolist()} on device {index}")
    t = safe_threshold(iou(boxes, boxes).double())  # box_iou_rotated takes float32 only
    keep = nms_rotated(boxes.to(device), scores.to(device), t).cpu()
    want = nms_rotated(boxes, scores, t)
    if not torch.equal(keep, want):
        sys.exit(f"nms_rotated (random angles, threshold {t}) keeps {keep.tolist()}, the CPU {want.tolist()} on device {index}")
    print(f"device {index}: box_iou_rotated, nms_rotated ok ({len(keep)} of {n} kept)")

    # Deformable convolution v1 and v2 (CUDA only in detectron2) against the
    # plain reference, float64 for a tight check and float32 as used.
    N, C, H, W, Cout, k = 2, 4, 9, 11, 6, 3
    for modulated in (False, True):
        for dtype, tol in ((torch.float64, 1e-8), (torch.float32, 1e-3)):
            x = torch.randn(N, C, H, W, dtype=torch.float64)
            offset = torch.randn(N, 2 * 2 * k * k, H, W, dtype=torch.float64) * 2
            mask = torch.rand(N, 2 * k * k, H, W, dtype=torch.float64)
            weight = torch.randn(Cout, C // 2, k, k, dtype=torch.float64)
            bias = torch.randn(Cout, dtype=torch.float64) if modulated else None
            cls = ModulatedDeformConv if modulated else DeformConv
            layer = cls(C, Cout, k, stride=1, padding=1, groups=2, deformable_groups=2, bias=modulated)
            with torch.no_grad():
                layer.weight.copy_(weight)
                if modulated:
                    layer.bias.copy_(bias)
            layer = layer.to(device, dtype)
            xg = x.to(device, dtype).requires_grad_()
            og = offset.to(device, dtype).requires_grad_()
            mg = mask.to(device, dtype).requires_grad_()
            out = layer(xg, og, mg) if modulated else layer(xg, og)
            xr, orf, mr, wr = (t_.clone().requires_grad_() for t_ in (x, offset, mask, weight))
            want = deform_conv_reference(xr, orf, mr if modulated else None, wr, bias, 1, 1, 1, 2, 2)
            name = f"{cls.__name__} ({dtype})"
            close(name, out, want, tol, tol, index)
            grad = torch.randn_like(want)
            out.backward(grad.to(device, dtype))
            want.backward(grad)
            close(f"{name} grad input", xg.grad, xr.grad, 10 * tol, 10 * tol, index)
            close(f"{name} grad offset", og.grad, orf.grad, 10 * tol, 10 * tol, index)
            close(f"{name} grad weight", layer.weight.grad, wr.grad, 10 * tol, 10 * tol, index)
            if modulated:
                close(f"{name} grad mask", mg.grad, mr.grad, 10 * tol, 10 * tol, index)
        print(f"device {index}: {cls.__name__} forward/backward (float64, float32) ok")
print("kernel test passed")
