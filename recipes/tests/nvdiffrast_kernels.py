"""Kernel test for nvdiffrast: the compiled _nvdiffrast_c (CUDA rasterizer,
interpolation, texture sampling) on every GPU through nvdiffrast.torch,
against plain PyTorch written here:
- rasterize: two overlapping triangles (depth test) and a perspective one
  (w = 1, 2, 4), vertices on whole pixels so that the rasterizer's 1/16-pixel
  snapping changes nothing; per pixel the covering triangle (nearest z/w),
  the perspective-correct barycentrics (u, v) and z/w against an edge-function
  rasterizer in float64, pixel centres at +0.5, row 0 at NDC y = -1 (OpenGL
  convention); pixels within 0.01 px of an edge are not judged (fill rule);
- interpolate: u*a0 + v*a1 + (1-u-v)*a2 of the rasterizer's own output, zero
  where no triangle is;
- texture (bilinear, clamp) forward and its gradient against
  torch.nn.functional.grid_sample (align_corners=False, border padding)."""
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import _nvdiffrast_c  # the compiled extension (a top-level module)
    import nvdiffrast.torch as dr
except ImportError as error:
    sys.exit(f"the wheel has no working _nvdiffrast_c: {error}")

W, H = 64, 48


def mesh(vertices):
    """vertices: (X, Y, z, w) with X, Y in pixels (0 ... W, 0 ... H from the bottom)."""
    pos = torch.tensor([[(2 * x / W - 1) * w, (2 * y / H - 1) * w, z * w, w] for x, y, z, w in vertices],
                       dtype=torch.float32)
    return pos


def reference_raster(vertices, tris):
    v = torch.tensor(vertices, dtype=torch.float64)
    xs = torch.arange(W, dtype=torch.float64) + 0.5
    ys = torch.arange(H, dtype=torch.float64) + 0.5
    py, px = torch.meshgrid(ys, xs, indexing="ij")
    out = torch.zeros(H, W, 4, dtype=torch.float64)
    best = torch.full((H, W), float("inf"), dtype=torch.float64)
    unsure = torch.zeros(H, W, dtype=torch.bool)
    for t, (i0, i1, i2) in enumerate(tris):
        P = v[[i0, i1, i2]]
        (x0, y0), (x1, y1), (x2, y2) = P[:, :2].tolist()
        area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
        l0 = ((x1 - px) * (y2 - py) - (x2 - px) * (y1 - py)) / area
        l1 = ((x2 - px) * (y0 - py) - (x0 - px) * (y2 - py)) / area
        l2 = 1 - l0 - l1
        lam = torch.stack([l0, l1, l2], -1)
        edge = torch.tensor([((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5, ((x0 - x2) ** 2 + (y0 - y2) ** 2) ** 0.5,
                             ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5], dtype=torch.float64)
        dist = lam * abs(area) / edge  # signed distance to the edge opposite each vertex, in pixels
        unsure |= (dist.abs() < 0.01).any(-1)
        inside = (lam >= 0).all(-1)
        zw = (lam * P[:, 2]).sum(-1)
        persp = lam / P[:, 3]
        bary = persp / persp.sum(-1, keepdim=True)
        take = inside & (zw < best)
        best = torch.where(take, zw, best)
        new = torch.stack([bary[..., 0], bary[..., 1], zw, torch.full_like(zw, t + 1)], -1)
        out = torch.where(take[..., None], new, out)
    return out, unsure


scenes = {
    "two overlapping triangles": ([(4, 4, 0.5, 1), (50, 8, 0.5, 1), (20, 40, 0.5, 1),
                                   (10, 30, 0.2, 1), (60, 20, 0.2, 1), (40, 2, 0.2, 1)], [(0, 1, 2), (3, 5, 4)]),
    "perspective triangle": ([(6, 5, 0.3, 1), (58, 12, 0.6, 2), (24, 44, 0.4, 4)], [(0, 1, 2)]),
}
torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    ctx = dr.RasterizeCudaContext(device=device)
    for name, (vertices, tris) in scenes.items():
        pos = mesh(vertices)[None].to(device)
        tri = torch.tensor(tris, dtype=torch.int32, device=device)
        rast, _ = dr.rasterize(ctx, pos, tri, resolution=(H, W))
        want, unsure = reference_raster(vertices, tris)
        got = rast[0].double().cpu()
        judged = ~unsure
        if not torch.equal(got[..., 3][judged], want[..., 3][judged]):
            wrong = int((got[..., 3] != want[..., 3])[judged].sum())
            sys.exit(f"rasterize ({name}): {wrong} pixels cover another triangle than the reference on device {index}")
        covered = judged & (want[..., 3] > 0)
        if covered.sum() < 100:
            sys.exit(f"test scene error: only {int(covered.sum())} covered pixels in '{name}'")
        diff = (got[..., :3] - want[..., :3])[covered].abs().max().item()
        if not diff <= 1e-4:
            sys.exit(f"rasterize ({name}): barycentrics or z/w differ from the reference on device {index}: "
                     f"max diff {diff:.3g}")
        if got[~(want[..., 3] > 0) & judged].abs().max().item() != 0:
            sys.exit(f"rasterize ({name}): empty pixels are not zero on device {index}")

        attr = torch.rand(1, len(vertices), 5, device=device)
        out, _ = dr.interpolate(attr, rast, tri)
        r = rast[0].double().cpu()
        tid = r[..., 3].long()
        a = attr[0].double().cpu()
        t = torch.tensor(tris, dtype=torch.int64)[(tid - 1).clamp_min(0)]  # [H, W, 3] vertex ids
        u, v = r[..., 0:1], r[..., 1:2]
        want_out = (u * a[t[..., 0]] + v * a[t[..., 1]] + (1 - u - v) * a[t[..., 2]]) * (tid > 0)[..., None]
        diff = (out[0].double().cpu() - want_out).abs().max().item()
        if not diff <= 1e-5:
            sys.exit(f"interpolate ({name}) differs from the barycentric sum on device {index}: max diff {diff:.3g}")
        print(f"device {index}: rasterize and interpolate, {name}: {int(covered.sum())} pixels ok")

    tex = torch.rand(1, 16, 24, 3, dtype=torch.float64)
    uv = torch.rand(1, 20, 30, 2, dtype=torch.float64) * 1.2 - 0.1  # some outside [0, 1]: clamped
    tex_dev = tex.float().to(device).requires_grad_()
    got = dr.texture(tex_dev, uv.float().to(device), filter_mode="linear", boundary_mode="clamp")
    tex_ref = tex.float().double().requires_grad_()
    want = F.grid_sample(tex_ref.permute(0, 3, 1, 2), uv.float().double() * 2 - 1, mode="bilinear",
                         padding_mode="border", align_corners=False).permute(0, 2, 3, 1)
    diff = (got.double().cpu() - want.detach()).abs().max().item()
    if not diff <= 1e-5:
        sys.exit(f"texture (linear, clamp) differs from grid_sample on device {index}: max diff {diff:.3g}")
    grad = torch.rand(want.shape, dtype=torch.float64)
    (got * grad.float().to(device)).sum().backward()
    (want * grad).sum().backward()
    diff = (tex_dev.grad.double().cpu() - tex_ref.grad).abs().max().item()
    if not diff <= 1e-4:
        sys.exit(f"texture gradient differs from grid_sample's on device {index}: max diff {diff:.3g}")
    print(f"device {index}: texture (bilinear, clamp) forward and backward ok")
print("kernel test passed")
