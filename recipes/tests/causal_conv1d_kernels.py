"""Kernel test for causal-conv1d: causal_conv1d_fn (forward and backward, with
and without SiLU, fp32 and bf16) and causal_conv1d_update on every GPU against
a plain-PyTorch depthwise causal convolution (F.conv1d with width-1 left
padding), the reference the project's own tests use."""
import importlib
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    importlib.import_module("causal_conv1d_cuda")  # the compiled kernels; the Python API calls only these
except ImportError as error:
    sys.exit(f"the wheel has no working causal_conv1d_cuda: {error}")
from causal_conv1d import causal_conv1d_fn, causal_conv1d_update  # noqa: E402


def reference(x, weight, bias, activation):
    seqlen, width = x.shape[-1], weight.shape[1]
    out = F.conv1d(x.float(), weight.float().unsqueeze(1), None if bias is None else bias.float(),
                   padding=width - 1, groups=x.shape[1])[..., :seqlen]
    return F.silu(out) if activation == "silu" else out


def check(name, got, want, tolerance):
    diff = (got.float().cpu() - want.float().cpu()).abs().max().item()
    if diff > tolerance:
        sys.exit(f"{name} differs from the plain-PyTorch reference: max diff {diff:.3g} (tolerance {tolerance})")
    print(f"{name} ok (max diff {diff:.2g})")


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    for dtype, tolerance in ((torch.float32, 1e-4), (torch.bfloat16, 3e-2)):
        for width in (2, 4):
            for activation in (None, "silu"):
                x = torch.randn(2, 64, 128, dtype=dtype)
                weight = torch.randn(64, width, dtype=dtype)
                bias = torch.randn(64, dtype=dtype)
                leaf = x.to(device).requires_grad_()
                out = causal_conv1d_fn(leaf, weight.to(device), bias.to(device), activation=activation)
                name = f"device {index}: causal_conv1d_fn {dtype} width {width} activation {activation}"
                want_leaf = x.float().requires_grad_()
                want = reference(want_leaf, weight, bias, activation)
                check(name, out, want, tolerance)
                grad = torch.randn_like(want)
                out.backward(grad.to(device, dtype))
                want.backward(grad)
                check(name + " backward (dx)", leaf.grad, want_leaf.grad, tolerance * 10)
    # one decoding step: the state holds the last width-1 inputs
    state = torch.randn(2, 64, 3, device=device)
    weight = torch.randn(64, 4, device=device)
    step = torch.randn(2, 64, device=device)
    want = (torch.cat([state, step.unsqueeze(-1)], dim=-1) * weight).sum(-1)
    got = causal_conv1d_update(step, state.clone(), weight, None, None)
    check(f"device {index}: causal_conv1d_update", got, want, 1e-4)
print("kernel test passed")
