"""Kernel test for torch_cluster: grid_cluster and knn on every GPU against the
CPU. knn is compared by the distance to the neighbour it found (the CPU uses
a k-d tree, the GPU brute force; either may pick another of two equidistant
points)."""
import sys

import torch
import torch_cluster

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")


def nearest_distances(x, y):
    row, col = torch_cluster.knn(x, y, 1)
    order = torch.argsort(row)
    if not torch.equal(row[order].cpu(), torch.arange(y.size(0))):
        raise AssertionError("knn did not give every query point exactly one neighbour")
    return (x[col[order]] - y).norm(dim=1).cpu()


torch.manual_seed(0)
pos = torch.rand(5000, 3, dtype=torch.float64) * 10
size = torch.tensor([0.7, 0.7, 0.7], dtype=torch.float64)
x, y = torch.rand(2000, 3, dtype=torch.float64), torch.rand(500, 3, dtype=torch.float64)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    got = torch_cluster.grid_cluster(pos.to(device), size.to(device)).cpu()
    if not torch.equal(got, torch_cluster.grid_cluster(pos, size)):
        sys.exit(f"grid_cluster differs from the CPU on device {index}")
    print(f"device {index}: grid_cluster ok")
    try:
        got = nearest_distances(x.to(device), y.to(device))
    except AssertionError as error:
        sys.exit(f"knn on device {index}: {error}")
    if not torch.allclose(got, nearest_distances(x, y), rtol=1e-9, atol=1e-12):
        sys.exit(f"knn found farther neighbours than the CPU on device {index}")
    print(f"device {index}: knn ok")
print("kernel test passed")
