"""Kernel test for gsplat: the compiled gsplat.csrc on every GPU, through
gsplat's public wrappers (gsplat.cuda._wrapper), against plain PyTorch:
- quat_scale_to_covar_preci, fully_fused_projection (pinhole, two cameras),
  isect_tiles / isect_offset_encode and spherical_harmonics (forward and
  backward) against gsplat's own float64 PyTorch versions in
  gsplat/cuda/_torch_impl.py, run on the CPU, plus the projected centres
  against K (R p + t) written here;
- rasterize_to_pixels (3 and 32 channels, with backgrounds; forward and
  backward) against a float64 front-to-back alpha blending written here from
  RasterizeToPixels3DGSFwd.cu's rules (pixel centres at +0.5, alpha =
  min(0.999, o exp(-sigma)), the 1/255 cutoff, the exclusive 1e-4
  transmittance stop). (gsplat's own _rasterize_to_pixels needs nerfacc and
  calls CUDA itself, so it is not used.)
gsplat falls back to JIT-compiling its sources when gsplat.csrc does not
import, so the test first makes sure the wheel holds the compiled module."""
import importlib.util
import math
import pathlib
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
spec = importlib.util.find_spec("gsplat")  # locates the package without running its __init__
if spec is None or not spec.submodule_search_locations:
    sys.exit("gsplat is not installed")
package_dir = pathlib.Path(list(spec.submodule_search_locations)[0])
if not list(package_dir.glob("csrc*.so")):
    sys.exit(f"the wheel has no compiled gsplat.csrc in {package_dir} (gsplat would JIT-compile instead)")
try:
    from gsplat import csrc
    from gsplat.cuda._backend import _C
    from gsplat.cuda import _torch_impl as ref
    from gsplat.cuda._wrapper import (fully_fused_projection, isect_offset_encode, isect_tiles,
                                      quat_scale_to_covar_preci, rasterize_to_pixels, spherical_harmonics)
except ModuleNotFoundError as error:
    sys.exit(f"gsplat does not import: {error} (gsplat needs its runtime requirements, e.g. rich and "
             f"packaging, in the validating interpreter: the wheel is installed with --no-deps)")
except ImportError as error:
    sys.exit(f"the wheel has no working gsplat.csrc: {error}")
if _C is not csrc:
    sys.exit("gsplat.cuda._backend did not take the compiled gsplat.csrc")

W, H, TILE = 64, 48, 16
N, C = 200, 2


def rotation(axis, angle):
    axis = torch.tensor(axis, dtype=torch.float64)
    axis = axis / axis.norm()
    K = torch.tensor([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]], dtype=torch.float64)
    return torch.eye(3, dtype=torch.float64) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def scene(generator):
    viewmats = torch.eye(4, dtype=torch.float64).repeat(C, 1, 1)
    viewmats[1, :3, :3] = rotation([0.2, 1.0, 0.1], 0.08)
    viewmats[1, :3, 3] = torch.tensor([0.1, -0.05, 0.1], dtype=torch.float64)
    Ks = torch.tensor([[60.0, 0, 32.0], [0, 60.0, 24.0], [0, 0, 1]], dtype=torch.float64).repeat(C, 1, 1)
    z = 2 + 3 * torch.rand(N, generator=generator, dtype=torch.float64)
    xy = (torch.rand(N, 2, generator=generator, dtype=torch.float64) * 1.4 - 0.7) * z[:, None] * 0.5
    means = torch.cat([xy, z[:, None]], 1)
    quats = torch.randn(N, 4, generator=generator, dtype=torch.float64)
    scales = 0.02 + 0.06 * torch.rand(N, 3, generator=generator, dtype=torch.float64)
    opacities = 0.3 + 0.65 * torch.rand(N, generator=generator, dtype=torch.float64)
    return means, quats, scales, opacities, viewmats, Ks


def reference_blend(means2d, conics, colors, opacities, depths, valid, backgrounds):
    """[C, H, W, ch] colours and [C, H, W, 1] alphas, float64, differentiable."""
    ys, xs = torch.meshgrid(torch.arange(H, dtype=torch.float64) + 0.5, torch.arange(W, dtype=torch.float64) + 0.5,
                            indexing="ij")
    images, alphas = [], []
    for c in range(means2d.shape[0]):
        T = torch.ones(H, W, dtype=torch.float64)
        out = torch.zeros(H, W, colors.shape[-1], dtype=torch.float64)
        done = torch.zeros(H, W, dtype=torch.bool)
        for g in sorted(torch.nonzero(valid[c]).flatten().tolist(), key=lambda k: depths[c, k].item()):
            dx, dy = means2d[c, g, 0] - xs, means2d[c, g, 1] - ys
            a, b, cc = conics[c, g]
            sigma = 0.5 * (a * dx * dx + cc * dy * dy) + b * dx * dy
            alpha = torch.clamp(opacities[c, g] * torch.exp(-sigma), max=0.999)
            use = ~done & (sigma >= 0) & (alpha >= 1 / 255)
            next_T = T * (1 - alpha)
            stop = use & (next_T <= 1e-4)
            done = done | stop
            add = use & ~stop
            out = out + torch.where(add, alpha * T, torch.zeros_like(T))[..., None] * colors[c, g]
            T = torch.where(add, next_T, T)
        images.append(out + T[..., None] * backgrounds[c])
        alphas.append((1 - T)[..., None])
    return torch.stack(images), torch.stack(alphas)


def close(name, got, want, rtol, atol, index):
    got = got.detach().double().cpu()
    want = want.detach().double()
    if got.shape != want.shape:
        sys.exit(f"{name}: shape {tuple(got.shape)} differs from the reference's {tuple(want.shape)} on device {index}")
    bad = (got - want).abs() > atol + rtol * want.abs()
    if bad.any():
        sys.exit(f"{name} differs from the reference on device {index}: max diff "
                 f"{(got - want).abs().max().item():.3g} ({int(bad.sum())} of {bad.numel()} values)")


def rel_close(name, got, want, tol, index):
    got, want = got.detach().double().cpu(), want.detach().double()
    err = (got - want).abs().max().item() / max(want.abs().max().item(), 1e-9)
    if not err <= tol:
        sys.exit(f"{name} differs from the reference on device {index}: max diff {err:.3g} of its largest value")


generator = torch.Generator().manual_seed(0)
means, quats, scales, opacities, viewmats, Ks = scene(generator)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    on = {k: v.float().to(device) for k, v in dict(means=means, quats=quats, scales=scales, opacities=opacities,
                                                   viewmats=viewmats, Ks=Ks).items()}

    covars, _ = quat_scale_to_covar_preci(on["quats"], on["scales"], triu=False)
    want_covars, _ = ref._quat_scale_to_covar_preci(quats, scales, triu=False)
    close("quat_scale_to_covar_preci", covars, want_covars, 1e-4, 1e-6, index)
    print(f"device {index}: quat_scale_to_covar_preci ok")

    radii, means2d, depths, conics, _ = fully_fused_projection(
        on["means"], None, on["quats"], on["scales"], on["viewmats"], on["Ks"], W, H)
    want_radii, want_means2d, want_depths, want_conics, _ = ref._fully_fused_projection(
        means, want_covars, viewmats, Ks, W, H)
    valid = (radii > 0).all(-1).cpu() & (want_radii > 0).all(-1)
    if valid.sum() < N * C:  # every Gaussian is in front of both cameras and near the middle of the image
        sys.exit(f"fully_fused_projection culled {int(N * C - valid.sum())} of {N * C} visible Gaussians on device {index}")
    close("fully_fused_projection radii", radii.long(), want_radii.long(), 0, 1, index)
    close("fully_fused_projection means2d", means2d[valid.to(device)], want_means2d[valid], 1e-4, 1e-4, index)
    close("fully_fused_projection depths", depths[valid.to(device)], want_depths[valid], 1e-4, 1e-4, index)
    close("fully_fused_projection conics", conics[valid.to(device)], want_conics[valid], 1e-4, 1e-4, index)
    cam = torch.einsum("cij,nj->cni", viewmats[:, :3, :3], means) + viewmats[:, None, :3, 3]
    pinhole = torch.stack([60 * cam[..., 0] / cam[..., 2] + 32, 60 * cam[..., 1] / cam[..., 2] + 24], -1)
    close("projected centres (K (R p + t))", means2d, pinhole, 1e-5, 1e-3, index)
    print(f"device {index}: fully_fused_projection ({C} cameras, {N} Gaussians) ok")

    tw, th = math.ceil(W / TILE), math.ceil(H / TILE)
    tiles_per_gauss, isect_ids, flatten_ids = isect_tiles(means2d, radii, depths, TILE, tw, th)
    offsets = isect_offset_encode(isect_ids, C, tw, th)
    want_tpg, want_ids, want_flat = ref._isect_tiles(means2d.cpu(), radii.cpu(), depths.cpu(), TILE, tw, th)
    want_offsets = ref._isect_offset_encode(want_ids, C, tw, th)
    for name, got, want in (("tiles_per_gauss", tiles_per_gauss, want_tpg), ("isect_ids", isect_ids, want_ids),
                            ("flatten_ids", flatten_ids, want_flat), ("isect offsets", offsets, want_offsets)):
        if not torch.equal(got.cpu(), want):
            sys.exit(f"isect_tiles: {name} differs from the PyTorch version on device {index}")
    print(f"device {index}: isect_tiles and isect_offset_encode ({isect_ids.numel()} intersections) ok")

    offsets = offsets.reshape(C, th, tw)
    for channels in (3, 32):
        colors = torch.rand(C, N, channels, generator=generator, dtype=torch.float64)
        backgrounds = torch.rand(C, channels, generator=generator, dtype=torch.float64)
        opac = opacities.expand(C, N)
        leaves = [t.detach().double().cpu().clone().requires_grad_() for t in (means2d, conics, colors, opac)]
        want_img, want_alpha = reference_blend(leaves[0], leaves[1], leaves[2], leaves[3], depths.detach().cpu(),
                                               radii.cpu().gt(0).all(-1), backgrounds)
        dev = [t.detach().float().to(device).contiguous().requires_grad_() for t in leaves]
        img, alpha = rasterize_to_pixels(dev[0], dev[1], dev[2], dev[3], W, H, TILE, offsets, flatten_ids,
                                         backgrounds=backgrounds.float().to(device))
        close(f"rasterize_to_pixels colours ({channels} channels)", img, want_img, 1e-4, 1e-4, index)
        close(f"rasterize_to_pixels alphas ({channels} channels)", alpha, want_alpha, 1e-4, 1e-4, index)
        v_img = torch.randn(want_img.shape, generator=generator, dtype=torch.float64)
        v_alpha = torch.randn(want_alpha.shape, generator=generator, dtype=torch.float64)
        want_grads = torch.autograd.grad((want_img * v_img).sum() + (want_alpha * v_alpha).sum(), leaves)
        grads = torch.autograd.grad((img * v_img.float().to(device)).sum() + (alpha * v_alpha.float().to(device)).sum(),
                                    dev)
        for name, got, want in zip(("means2d", "conics", "colors", "opacities"), grads, want_grads):
            rel_close(f"rasterize_to_pixels gradient of {name} ({channels} channels)", got, want, 1e-2, index)
        print(f"device {index}: rasterize_to_pixels {channels} channels, forward and backward ok")

    dirs = torch.randn(500, 3, generator=generator, dtype=torch.float64)
    coeffs = torch.randn(500, 16, 3, generator=generator, dtype=torch.float64)
    for degree in (0, 1, 3):
        d_leaf, c_leaf = dirs.clone().requires_grad_(), coeffs.clone().requires_grad_()
        want = ref._spherical_harmonics(degree, d_leaf, c_leaf)
        v = torch.randn(want.shape, generator=generator, dtype=torch.float64)
        want_gd, want_gc = torch.autograd.grad((want * v).sum(), (d_leaf, c_leaf), allow_unused=True)
        d_dev = dirs.float().to(device).requires_grad_()
        c_dev = coeffs.float().to(device).requires_grad_()
        got = spherical_harmonics(degree, d_dev, c_dev)
        close(f"spherical_harmonics degree {degree}", got, want, 1e-4, 1e-4, index)
        got_gd, got_gc = torch.autograd.grad((got * v.float().to(device)).sum(), (d_dev, c_dev), allow_unused=True)
        close(f"spherical_harmonics degree {degree} coefficient gradient", got_gc, want_gc, 1e-4, 1e-4, index)
        if degree > 0:
            close(f"spherical_harmonics degree {degree} direction gradient", got_gd, want_gd, 1e-3, 1e-3, index)
        print(f"device {index}: spherical_harmonics degree {degree}, forward and backward ok")
print("kernel test passed")
