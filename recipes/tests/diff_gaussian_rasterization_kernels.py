"""Kernel test for diff_gaussian_rasterization (the 3D Gaussian splatting
rasterizer of graphdeco-inria): on every GPU, a dozen Gaussians seen by a
rotated, translated pinhole camera are rasterized with the compiled
diff_gaussian_rasterization._C and compared with a plain-PyTorch float64
splatting reference written here from the paper's model (EWA projection with
the 0.3 px low-pass, 3-sigma tile culling on 16x16 tiles, depth-sorted
front-to-back alpha blending with alpha <= 0.99, the 1/255 cutoff and the
1e-4 transmittance stop). Checks: the image and the radii with precomputed
colours, the image with degree-1 spherical harmonics, the gradients of the
means, scales, rotations, opacities and colours against autograd of the
reference, and that Gaussians behind the near plane leave exactly the
background. The rasterizer allocates its buffers on the current CUDA device,
so each device is made current while it runs."""
import math
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    from diff_gaussian_rasterization import _C  # the compiled extension
    from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer
except ImportError as error:
    sys.exit(f"the wheel has no working diff_gaussian_rasterization._C: {error}")
for name in ("rasterize_gaussians", "rasterize_gaussians_backward", "mark_visible"):
    if not hasattr(_C, name):
        sys.exit(f"diff_gaussian_rasterization._C lacks {name}")

W, H = 70, 50          # not multiples of 16: partial tiles at the right and bottom
TAN_X = 0.5
TAN_Y = TAN_X * H / W
ZNEAR, ZFAR = 0.01, 100.0
SH_C0 = 0.28209479177387814
SH_C1 = 0.4886025119029199


def rotation_y(angle):
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]], dtype=torch.float64)


def camera():
    """World-to-camera V (column vectors), the projection P of 3DGS's
    getProjectionMatrix, and the camera centre."""
    R = rotation_y(0.1) @ torch.tensor([[1.0, 0, 0], [0, math.cos(0.05), -math.sin(0.05)],
                                        [0, math.sin(0.05), math.cos(0.05)]], dtype=torch.float64)
    t = torch.tensor([0.1, -0.05, 0.2], dtype=torch.float64)
    V = torch.eye(4, dtype=torch.float64)
    V[:3, :3], V[:3, 3] = R, t
    P = torch.zeros(4, 4, dtype=torch.float64)
    P[0, 0], P[1, 1] = 1 / TAN_X, 1 / TAN_Y
    P[3, 2] = 1.0
    P[2, 2] = ZFAR / (ZFAR - ZNEAR)
    P[2, 3] = -(ZFAR * ZNEAR) / (ZFAR - ZNEAR)
    return V, P, -R.T @ t


def quat_to_rot(q):
    r, x, y, z = q.unbind(-1)  # not normalised: the kernel does not normalise either
    return torch.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - r * z), 2 * (x * z + r * y),
        2 * (x * y + r * z), 1 - 2 * (x * x + z * z), 2 * (y * z - r * x),
        2 * (x * z - r * y), 2 * (y * z + r * x), 1 - 2 * (x * x + y * y)], -1).reshape(q.shape[:-1] + (3, 3))


def reference_render(means, scales, rots, opac, colors, bg, V, P):
    """float64 splatting of forward.cu's model; differentiable where it is."""
    n = means.shape[0]
    fx, fy = W / (2 * TAN_X), H / (2 * TAN_Y)
    hom = torch.cat([means, torch.ones(n, 1, dtype=means.dtype)], 1)
    p_view = hom @ V.T
    p_clip = hom @ (P @ V).T
    ndc = p_clip[:, :3] / (p_clip[:, 3:4] + 1e-7)
    px = ((ndc[:, 0] + 1) * W - 1) * 0.5
    py = ((ndc[:, 1] + 1) * H - 1) * 0.5
    Rq = quat_to_rot(rots)
    M = Rq * scales[:, None, :]
    sigma = M @ M.transpose(1, 2)
    tz = p_view[:, 2]
    tx = torch.clamp(p_view[:, 0] / tz, -1.3 * TAN_X, 1.3 * TAN_X) * tz
    ty = torch.clamp(p_view[:, 1] / tz, -1.3 * TAN_Y, 1.3 * TAN_Y) * tz
    zero = torch.zeros_like(tz)
    J = torch.stack([torch.stack([fx / tz, zero, -fx * tx / tz ** 2], -1),
                     torch.stack([zero, fy / tz, -fy * ty / tz ** 2], -1)], 1)  # [n, 2, 3]
    Rv = V[:3, :3]
    cov = J @ Rv @ sigma @ Rv.T @ J.transpose(1, 2)
    a, b, c = cov[:, 0, 0] + 0.3, cov[:, 0, 1], cov[:, 1, 1] + 0.3
    det = a * c - b * b
    conic = torch.stack([c / det, -b / det, a / det], -1)
    mid = 0.5 * (a + c).detach()
    disc = torch.clamp(mid * mid - det.detach(), min=0.1).sqrt()
    radius = torch.ceil(3 * torch.sqrt(torch.maximum(mid + disc, mid - disc)))
    gx, gy = (W + 15) // 16, (H + 15) // 16
    radii = torch.zeros(n, dtype=torch.int64)
    rects = []
    for i in range(n):
        if tz[i] <= 0.2:
            rects.append(None)
            continue
        x, y, r = px[i].item(), py[i].item(), radius[i].item()
        rmin = (min(gx, max(0, int((x - r) / 16))), min(gy, max(0, int((y - r) / 16))))
        rmax = (min(gx, max(0, int((x + r + 15) / 16))), min(gy, max(0, int((y + r + 15) / 16))))
        if (rmax[0] - rmin[0]) * (rmax[1] - rmin[1]) == 0:
            rects.append(None)
            continue
        rects.append((rmin, rmax))
        radii[i] = int(r)
    ys, xs = torch.meshgrid(torch.arange(H, dtype=torch.float64), torch.arange(W, dtype=torch.float64),
                            indexing="ij")
    tile_x, tile_y = (xs // 16).long(), (ys // 16).long()
    T = torch.ones(H, W, dtype=means.dtype)
    out = torch.zeros(3, H, W, dtype=means.dtype)
    done = torch.zeros(H, W, dtype=torch.bool)
    for i in sorted(range(n), key=lambda k: tz[k].item()):
        if rects[i] is None:
            continue
        (x0, y0), (x1, y1) = rects[i]
        inside = (tile_x >= x0) & (tile_x < x1) & (tile_y >= y0) & (tile_y < y1)
        dx, dy = px[i] - xs, py[i] - ys
        power = -0.5 * (conic[i, 0] * dx * dx + conic[i, 2] * dy * dy) - conic[i, 1] * dx * dy
        alpha = torch.clamp(opac[i] * torch.exp(power), max=0.99)
        use = inside & ~done & (power <= 0) & (alpha >= 1 / 255)
        test_T = T * (1 - alpha)
        stop = use & (test_T < 1e-4)
        done = done | stop
        add = use & ~stop
        out = out + torch.where(add, alpha * T, torch.zeros_like(T))[None] * colors[i][:, None, None]
        T = torch.where(add, test_T, T)
    return out + T[None] * bg[:, None, None], radii


def sh1_colors(means, shs, campos):
    d = means - campos
    d = d / d.norm(dim=1, keepdim=True)
    x, y, z = d[:, 0:1], d[:, 1:2], d[:, 2:3]
    rgb = SH_C0 * shs[:, 0] - SH_C1 * y * shs[:, 1] + SH_C1 * z * shs[:, 2] - SH_C1 * x * shs[:, 3] + 0.5
    return torch.clamp(rgb, min=0)


def settings(device, bg, V, P, campos, sh_degree):
    return GaussianRasterizationSettings(
        image_height=H, image_width=W, tanfovx=TAN_X, tanfovy=TAN_Y,
        bg=bg.float().to(device), scale_modifier=1.0,
        viewmatrix=V.T.contiguous().float().to(device),
        projmatrix=(P @ V).T.contiguous().float().to(device),
        sh_degree=sh_degree, campos=campos.float().to(device), prefiltered=False, debug=False)


def scene(generator):
    V, P, campos = camera()
    n = 12
    z = 2.0 + 3.0 * torch.rand(n, generator=generator, dtype=torch.float64)
    x = (torch.rand(n, generator=generator, dtype=torch.float64) * 1.2 - 0.6) * TAN_X * z
    y = (torch.rand(n, generator=generator, dtype=torch.float64) * 1.2 - 0.6) * TAN_Y * z
    p_cam = torch.stack([x, y, z], 1)
    R, t = V[:3, :3], V[:3, 3]
    means = (p_cam - t) @ R            # R^T (p - t), row-wise
    scales = 0.03 + 0.09 * torch.rand(n, 3, generator=generator, dtype=torch.float64)
    rots = torch.nn.functional.normalize(torch.randn(n, 4, generator=generator, dtype=torch.float64), dim=1)
    opac = 0.2 + 0.7 * torch.rand(n, 1, generator=generator, dtype=torch.float64)
    colors = torch.rand(n, 3, generator=generator, dtype=torch.float64)
    bg = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    return V, P, campos, means, scales, rots, opac, colors, bg


def rel_err(got, want):
    return (got.double().cpu() - want).abs().max().item() / max(want.abs().max().item(), 1e-6)


generator = torch.Generator().manual_seed(0)
V, P, campos, means, scales, rots, opac, colors, bg = scene(generator)
want_img, want_radii = reference_render(means, scales, rots, opac[:, 0], colors, bg, V, P)
shs = torch.randn(means.shape[0], 4, 3, generator=generator, dtype=torch.float64) * 0.5
want_sh_img, _ = reference_render(means, scales, rots, opac[:, 0], sh1_colors(means, shs, campos), bg, V, P)
grad_out = torch.randn(3, H, W, generator=generator, dtype=torch.float64)
leaves = [t.clone().requires_grad_() for t in (means, scales, rots, opac, colors)]
ref_img, _ = reference_render(leaves[0], leaves[1], leaves[2], leaves[3][:, 0], leaves[4], bg, V, P)
want_grads = torch.autograd.grad((ref_img * grad_out).sum(), leaves)
if (want_radii > 0).sum() < 8:
    sys.exit("test scene error: fewer than 8 Gaussians on screen in the reference")

for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    with torch.cuda.device(device):
        raster = GaussianRasterizer(settings(device, bg, V, P, campos, 0))
        dev = [t.float().to(device).requires_grad_() for t in (means, scales, rots, opac, colors)]
        means2d = torch.zeros_like(dev[0], requires_grad=True)
        img, radii = raster(means3D=dev[0], means2D=means2d, opacities=dev[3], colors_precomp=dev[4],
                            scales=dev[1], rotations=dev[2])
        diff = (img.double().cpu() - want_img).abs().max().item()
        if diff > 2e-4:
            sys.exit(f"rasterized image differs from the PyTorch reference on device {index}: max diff {diff:.3g}")
        rdiff = (radii.cpu().long() - want_radii).abs().max().item()
        if rdiff > 1:
            sys.exit(f"radii differ from the reference on device {index}: max diff {rdiff} px")
        print(f"device {index}: forward image ({W}x{H}, {int((want_radii > 0).sum())} Gaussians) and radii ok")

        (img * grad_out.float().to(device)).sum().backward()
        for name, leaf, want in zip(("means3D", "scales", "rotations", "opacities", "colors"), dev, want_grads):
            err = rel_err(leaf.grad, want)
            if not err <= 1e-2:
                sys.exit(f"gradient of {name} differs from autograd of the reference on device {index}: "
                         f"max diff {err:.3g} of its largest value")
        if not means2d.grad.abs().sum().item() > 0:
            sys.exit(f"no gradient reached means2D (the screen-space points) on device {index}")
        print(f"device {index}: backward (means, scales, rotations, opacities, colours) ok")

        raster_sh = GaussianRasterizer(settings(device, bg, V, P, campos, 1))
        img_sh, _ = raster_sh(means3D=dev[0].detach(), means2D=torch.zeros_like(dev[0]), opacities=dev[3].detach(),
                              shs=shs.float().to(device), scales=dev[1].detach(), rotations=dev[2].detach())
        diff = (img_sh.double().cpu() - want_sh_img).abs().max().item()
        if diff > 2e-4:
            sys.exit(f"image with SH degree 1 differs from the reference on device {index}: max diff {diff:.3g}")
        print(f"device {index}: spherical harmonics (degree 1) colours ok")

        p_cam = torch.tensor([[0.0, 0.0, -1.0]], dtype=torch.float64).expand_as(means)  # behind the camera
        behind = ((p_cam - V[:3, 3]) @ V[:3, :3]).float().to(device).contiguous()
        img_e, radii_e = raster(means3D=behind, means2D=torch.zeros_like(behind), opacities=dev[3].detach(),
                                colors_precomp=dev[4].detach(), scales=dev[1].detach(), rotations=dev[2].detach())
        if radii_e.abs().sum().item() != 0 or not torch.equal(img_e.cpu(), bg.float()[:, None, None].expand(3, H, W)):
            sys.exit(f"Gaussians behind the camera changed the image or got radii on device {index}")
        print(f"device {index}: culled scene gives exactly the background")
print("kernel test passed")
