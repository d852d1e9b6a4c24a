"""Kernel test for MultiScaleDeformableAttention (Deformable-DETR models/ops):
ms_deform_attn_forward / ms_deform_attn_backward of the compiled module, through
the project's MSDeformAttnFunction, on every GPU, against the pure-PyTorch
ms_deform_attn_core_pytorch formulation (grid_sample per level, written out
here as upstream's test.py uses it) in float64 on the CPU, forward and the
gradients of value, sampling locations and attention weights.

The package installs three top-level names: the extension
MultiScaleDeformableAttention and the Python packages `functions` and
`modules` (its setup.py runs find_packages() inside models/ops); `modules`
cannot be imported on its own (`from ..functions import`), so the test uses
`functions`, as upstream's test.py does."""
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import MultiScaleDeformableAttention as MSDA
    from functions.ms_deform_attn_func import MSDeformAttnFunction
except ImportError as error:
    sys.exit(f"the wheel has no working MultiScaleDeformableAttention extension: {error}")
for name in ("ms_deform_attn_forward", "ms_deform_attn_backward"):
    if not hasattr(MSDA, name):
        sys.exit(f"MultiScaleDeformableAttention lacks {name}")


def ms_deform_attn_reference(value, shapes, sampling_locations, attention_weights):
    """value (N, S, M, D); shapes (L, 2) as (H, W); sampling_locations
    (N, Lq, M, L, P, 2) as (x, y) in [0, 1]; attention_weights (N, Lq, M, L, P).
    Returns (N, Lq, M*D)."""
    N, S, M, D = value.shape
    _, Lq, _, L, P, _ = sampling_locations.shape
    per_level = value.split([h * w for h, w in shapes], dim=1)
    grids = 2 * sampling_locations - 1
    sampled = []
    for level, (h, w) in enumerate(shapes):
        v = per_level[level].flatten(2).transpose(1, 2).reshape(N * M, D, h, w)
        g = grids[:, :, :, level].transpose(1, 2).flatten(0, 1)  # N*M, Lq, P, 2
        sampled.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
    weights = attention_weights.transpose(1, 2).reshape(N * M, 1, Lq, L * P)
    out = (torch.stack(sampled, dim=-2).flatten(-2) * weights).sum(-1).view(N, M * D, Lq)
    return out.transpose(1, 2).contiguous()


torch.manual_seed(0)
shapes_list = [(12, 10), (6, 5), (3, 3)]
N, M, D, Lq, P = 2, 4, 8, 7, 4
L = len(shapes_list)
S = sum(h * w for h, w in shapes_list)
value = torch.randn(N, S, M, D, dtype=torch.float64)
# Mostly inside [0, 1], a few samples past the border (zero padding).
locations = torch.rand(N, Lq, M, L, P, 2, dtype=torch.float64) * 1.1 - 0.05
weights = torch.rand(N, Lq, M, L, P, dtype=torch.float64) + 1e-5
weights = weights / weights.sum((-1, -2), keepdim=True)
grad_out = torch.randn(N, Lq, M * D, dtype=torch.float64)

leaves = [t.clone().requires_grad_() for t in (value, locations, weights)]
want = ms_deform_attn_reference(leaves[0], shapes_list, leaves[1], leaves[2])
want.backward(grad_out)
want_grads = [t.grad for t in leaves]

for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)  # the op launches on the current device (no device guard)
    shapes = torch.tensor(shapes_list, dtype=torch.long, device=device)
    level_start = torch.cat((shapes.new_zeros(1), shapes.prod(1).cumsum(0)[:-1]))
    for dtype, tol in ((torch.float64, 1e-9), (torch.float32, 1e-4)):
        inputs = [t.to(device, dtype).requires_grad_() for t in (value, locations, weights)]
        out = MSDeformAttnFunction.apply(inputs[0], shapes, level_start, inputs[1], inputs[2], 2)
        diff = (out.detach().cpu().double() - want.detach()).abs().max().item()
        if out.shape != want.shape or diff > tol * max(1.0, want.abs().max().item()):
            sys.exit(f"ms_deform_attn forward ({dtype}) differs from the PyTorch reference on device {index}: "
                     f"max diff {diff:.3g}")
        out.backward(grad_out.to(device, dtype))
        for name, got, ref in zip(("value", "sampling_locations", "attention_weights"), inputs, want_grads):
            diff = (got.grad.cpu().double() - ref).abs().max().item()
            if diff > 100 * tol * max(1.0, ref.abs().max().item()):
                sys.exit(f"ms_deform_attn backward ({dtype}): grad of {name} differs from the PyTorch "
                         f"reference on device {index}: max diff {diff:.3g}")
        print(f"device {index}: ms_deform_attn forward/backward ({dtype}) ok")
print("kernel test passed")
