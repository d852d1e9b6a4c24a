"""Kernel test for pytorch3d: its compiled pytorch3d._C point-cloud kernels on
every GPU, through the public ops, against brute-force PyTorch written here
(float64 on the CPU):
- knn_points (D = 3 and D = 8, K = 1, 4, 16, heterogeneous cloud sizes;
  these pick different kernel versions) forward and backward;
- ball_query (first K neighbours in index order within the radius, -1 padded);
- chamfer_distance (mean/mean reduction) and its gradient;
- sample_farthest_points (iterative farthest point sampling from point 0; its
  CUDA kernel is the cub::KeyValuePair / cub::ArgMax block reduction).
pytorch3d has no silent fallback for these ops (they call _C directly), but
the test imports pytorch3d._C first so that a wheel built without CUDA
support (no WITH_CUDA) fails by name."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    from pytorch3d import _C
except ImportError as error:
    sys.exit(f"the wheel has no working pytorch3d._C: {error}")
from pytorch3d.loss import chamfer_distance
from pytorch3d.ops import ball_query, knn_points, sample_farthest_points

torch.manual_seed(0)


def sq_dists(p1, p2):
    return ((p1[:, :, None, :] - p2[:, None, :, :]) ** 2).sum(-1)


def fail(what, got, want, index):
    sys.exit(f"{what} differs from brute force on device {index}: max diff "
             f"{(got.double().cpu() - want.double()).abs().max().item():.3g}")


for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)

    # knn_points: N = 3 clouds, heterogeneous lengths, forward and backward.
    for D, K in ((3, 1), (3, 4), (3, 16), (8, 4)):
        p1 = torch.randn(3, 300, D).double()  # float32 values: the kernels see exactly these points
        p2 = torch.randn(3, 400, D).double()
        len1 = torch.tensor([300, 217, 150])
        len2 = torch.tensor([400, 333, 100])
        a = p1.float().to(device).requires_grad_()
        b = p2.float().to(device).requires_grad_()
        out = knn_points(a, b, lengths1=len1.to(device), lengths2=len2.to(device), K=K)
        weights = torch.rand(3, 300, K, dtype=torch.float64)
        for n in range(3):
            weights[n, len1[n]:] = 0  # rows past a cloud's length are padding
        (out.dists * weights.float().to(device)).sum().backward()
        r1, r2 = p1.clone().requires_grad_(), p2.clone().requires_grad_()
        grad_loss = torch.zeros((), dtype=torch.float64)
        for n in range(3):
            d = sq_dists(r1[n:n + 1, :len1[n]], r2[n:n + 1, :len2[n]])[0]
            want_d, want_i = d.topk(K, dim=1, largest=False)
            got_d = out.dists[n, :len1[n]].double().cpu()
            if not torch.allclose(got_d, want_d.detach(), rtol=1e-4, atol=1e-5):
                fail(f"knn_points (D={D}, K={K}) distances", got_d, want_d.detach(), index)
            if not torch.equal(out.idx[n, :len1[n]].cpu(), want_i):
                sys.exit(f"knn_points (D={D}, K={K}) indices differ from brute force on device {index}")
            grad_loss = grad_loss + (want_d * weights[n, :len1[n]]).sum()
        grad_loss.backward()
        for name, got, want in (("p1", a.grad, r1.grad), ("p2", b.grad, r2.grad)):
            if not torch.allclose(got.double().cpu(), want, rtol=1e-3, atol=1e-4):
                fail(f"knn_points (D={D}, K={K}) gradient of {name}", got, want, index)
        print(f"device {index}: knn_points D={D} K={K} forward and backward ok")

    # ball_query: the first K points of p2 (index order) with d^2 < r^2.
    p1 = torch.rand(2, 200, 3).double()
    p2 = torch.rand(2, 500, 3).double()
    K, radius = 10, 0.15
    out = ball_query(p1.float().to(device), p2.float().to(device), K=K, radius=radius)
    d = sq_dists(p1, p2)
    want_idx = torch.full((2, 200, K), -1, dtype=torch.int64)
    for n in range(2):
        for i in range(200):
            hits = torch.nonzero(d[n, i] < radius * radius).flatten()[:K]
            want_idx[n, i, :hits.numel()] = hits
    near = (d - radius * radius).abs() < 1e-5  # float32 may round these either way
    got_idx = out.idx.cpu()
    if not torch.equal(got_idx, want_idx):
        ambiguous = any(near[n, i].any() for n, i in torch.nonzero((got_idx != want_idx).any(-1)).tolist())
        if not ambiguous:
            sys.exit(f"ball_query indices differ from brute force on device {index}")
    else:
        valid = want_idx >= 0
        want_d = torch.gather(d, 2, want_idx.clamp_min(0)) * valid
        if not torch.allclose(out.dists.double().cpu(), want_d, rtol=1e-4, atol=1e-6):
            fail("ball_query distances", out.dists, want_d, index)
    print(f"device {index}: ball_query ok")

    # chamfer_distance, default reductions: mean over points, then over the batch.
    x = torch.randn(4, 250, 3).double()
    y = torch.randn(4, 180, 3).double()
    xd = x.float().to(device).requires_grad_()
    loss, _ = chamfer_distance(xd, y.float().to(device))
    loss.backward()
    xr = x.clone().requires_grad_()
    d = sq_dists(xr, y)
    want = (d.min(2).values.mean(1) + d.min(1).values.mean(1)).mean()
    want.backward()
    if abs(loss.item() - want.item()) > 1e-4 * abs(want.item()):
        sys.exit(f"chamfer_distance differs from brute force on device {index}: {loss.item()} vs {want.item()}")
    if not torch.allclose(xd.grad.double().cpu(), xr.grad, rtol=1e-3, atol=1e-6):
        fail("chamfer_distance gradient", xd.grad, xr.grad, index)
    print(f"device {index}: chamfer_distance forward and backward ok")

    # sample_farthest_points from point 0, heterogeneous lengths.
    pts = torch.rand(3, 1000, 3, dtype=torch.float64)
    lengths = torch.tensor([1000, 640, 300])
    K = 64
    got_pts, got_idx = sample_farthest_points(pts.float().to(device), lengths=lengths.to(device), K=K)
    p32 = pts.float().double()
    for n in range(3):
        cloud = p32[n, :lengths[n]]
        chosen = [0]
        best = torch.full((cloud.shape[0],), float("inf"), dtype=torch.float64)
        for _ in range(K - 1):
            best = torch.minimum(best, ((cloud - cloud[chosen[-1]]) ** 2).sum(1))
            chosen.append(int(best.argmax()))
        if got_idx[n].cpu().tolist() != chosen:
            sys.exit(f"sample_farthest_points (cloud {n}) picked other points than brute force on device {index}")
        if not torch.allclose(got_pts[n].double().cpu(), cloud[chosen]):
            sys.exit(f"sample_farthest_points (cloud {n}) returned other coordinates than its indices on device {index}")
    print(f"device {index}: sample_farthest_points ok")
print("kernel test passed")
