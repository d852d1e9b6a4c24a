"""Kernel test for simple_knn: distCUDA2 (the mean of the squared distances of
each point to its 3 nearest other points) on every GPU against a brute-force
torch.cdist + topk in float64 on the CPU. Sizes above 1024 points use several
of its Morton-sorted boxes, so the box pruning is exercised too; the search
is exact, so the results must agree to float32 rounding."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    from simple_knn._C import distCUDA2  # the compiled extension is the whole package
except ImportError as error:
    sys.exit(f"the wheel has no working simple_knn._C: {error}")


def reference(points):
    d2 = torch.cdist(points, points).pow(2)
    d2.fill_diagonal_(float("inf"))  # the point itself does not count
    return d2.topk(3, dim=1, largest=False).values.mean(dim=1)


torch.manual_seed(0)
clouds = {
    "uniform cube (500)": torch.rand(500, 3, dtype=torch.float64) * 2 - 1,
    "gaussian blob (3000)": torch.randn(3000, 3, dtype=torch.float64),
    "clustered (5000)": (torch.randn(50, 1, 3, dtype=torch.float64) * 5
                         + torch.randn(50, 100, 3, dtype=torch.float64) * 0.1).reshape(-1, 3),
}
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for name, cloud in clouds.items():
        points = cloud.float()
        got = distCUDA2(points.to(device).contiguous())
        if got.device != device:
            sys.exit(f"distCUDA2 returned a tensor on {got.device}, not {device}")
        want = reference(points.double())
        rel = ((got.double().cpu() - want).abs() / want.clamp_min(1e-12)).max().item()
        if not rel <= 1e-4:
            sys.exit(f"distCUDA2 ({name}) differs from brute force on device {index}: max relative diff {rel:.3g}")
        print(f"device {index}: distCUDA2 {name} ok")
print("kernel test passed")
