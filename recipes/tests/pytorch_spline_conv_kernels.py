"""Kernel test for torch_spline_conv: spline_conv (its basis and weighting
kernels) on every GPU against the CPU, forward for B-spline degrees 1 to 3 and
backward for degree 2, in float64."""
import sys

import torch
from torch_spline_conv import spline_conv

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")

torch.manual_seed(0)
nodes, edges, channels_in, channels_out = 300, 2000, 8, 16
kernel_size = torch.tensor([5, 5])
inputs = {
    "x": torch.randn(nodes, channels_in, dtype=torch.float64),
    "edge_index": torch.randint(0, nodes, (2, edges)),
    "pseudo": torch.rand(edges, 2, dtype=torch.float64),
    "weight": torch.randn(int(kernel_size.prod()), channels_in, channels_out, dtype=torch.float64),
    "kernel_size": kernel_size,
    "is_open_spline": torch.tensor([1, 1], dtype=torch.uint8),
    "root_weight": torch.randn(channels_in, channels_out, dtype=torch.float64),
    "bias": torch.randn(channels_out, dtype=torch.float64),
}


def run(device, degree, backward):
    args = {name: t.detach().clone().to(device) for name, t in inputs.items()}  # fresh leaves per run
    for name in ("x", "weight"):
        args[name].requires_grad_(backward)
    out = spline_conv(args["x"], args["edge_index"], args["pseudo"], args["weight"], args["kernel_size"],
                      args["is_open_spline"], degree, True, args["root_weight"], args["bias"])
    if not backward:
        return out.detach().cpu(), []
    out.sum().backward()
    return out.detach().cpu(), [args["x"].grad.cpu(), args["weight"].grad.cpu()]


for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for degree in (1, 2, 3):
        backward = degree == 2
        out, grads = run(device, degree, backward)
        want_out, want_grads = run("cpu", degree, backward)
        if not torch.allclose(out, want_out, rtol=1e-9, atol=1e-9):
            sys.exit(f"spline_conv (degree {degree}) differs from the CPU on device {index}")
        for name, got, want in zip(("x", "weight"), grads, want_grads):
            if not torch.allclose(got, want, rtol=1e-9, atol=1e-9):
                sys.exit(f"spline_conv backward (d{name}, degree {degree}) differs from the CPU on device {index}")
        print(f"device {index}: spline_conv degree {degree}" + (" forward and backward" if backward else "") + " ok")
print("kernel test passed")
