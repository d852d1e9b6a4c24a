"""Kernel test for mamba_ssm: the selective scan (selective_scan_cuda) forward
and backward on every GPU against mamba_ssm's own PyTorch reference
(selective_scan_ref), in float32 and, forward only, bfloat16. Tolerances are
those of the project's tests/ops/test_selective_scan.py."""
import sys

import torch
from mamba_ssm.ops.selective_scan_interface import selective_scan_fn, selective_scan_ref

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")


def inputs(device, dtype, batch=2, dim=4, dstate=8, seqlen=256):
    torch.manual_seed(0)
    return {
        "u": torch.randn(batch, dim, seqlen, device=device, dtype=dtype),
        "delta": 0.5 * torch.rand(batch, dim, seqlen, device=device, dtype=dtype),
        "A": -0.5 * torch.rand(dim, dstate, device=device),
        "B": torch.randn(batch, dstate, seqlen, device=device, dtype=dtype),
        "C": torch.randn(batch, dstate, seqlen, device=device, dtype=dtype),
        "D": torch.randn(dim, device=device),
        "z": torch.randn(batch, dim, seqlen, device=device, dtype=dtype),
        "delta_bias": 0.5 * torch.rand(dim, device=device),
    }


def run(fn, tensors, backward):
    leaves = {name: t.detach().clone().requires_grad_(backward) for name, t in tensors.items()}
    out, state = fn(leaves["u"], leaves["delta"], leaves["A"], leaves["B"], leaves["C"], leaves["D"], z=leaves["z"],
                    delta_bias=leaves["delta_bias"], delta_softplus=True, return_last_state=True)
    grads = {}
    if backward:
        out.backward(torch.ones_like(out))
        grads = {name: leaf.grad for name, leaf in leaves.items()}
    return out, state, grads


for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for dtype, rtol, atol, backward in ((torch.float32, 6e-4, 2e-3, True), (torch.bfloat16, 3e-2, 5e-2, False)):
        tensors = inputs(device, dtype)
        out, state, grads = run(selective_scan_fn, tensors, backward)
        out_ref, state_ref, grads_ref = run(selective_scan_ref, tensors, backward)
        name = f"selective_scan {str(dtype).split('.')[-1]}"
        if not torch.allclose(out, out_ref.to(out.dtype), rtol=rtol, atol=atol):
            sys.exit(f"{name} forward differs from the reference on device {index}: "
                     f"max diff {(out.float() - out_ref.float()).abs().max().item():.3g}")
        if not torch.allclose(state, state_ref.to(state.dtype), rtol=rtol, atol=atol):
            sys.exit(f"{name} last state differs from the reference on device {index}")
        # the project's own gradient tolerances, as multiples of the forward ones
        for leaf, (rtol_times, atol_times) in (("u", (2, 2)), ("delta", (5, 10)), ("z", (2, 1))):
            if backward and not torch.allclose(grads[leaf], grads_ref[leaf], rtol=rtol_times * rtol,
                                               atol=atol_times * atol):
                sys.exit(f"{name} backward (d{leaf}) differs from the reference on device {index}")
        print(f"device {index}: {name} forward" + (" and backward" if backward else "") + " ok")
print("kernel test passed")
