"""Kernel test for marlin: the FP16 x INT4 GEMM (marlin_cuda.mul) on every GPU
against a float32 matmul with the dequantised weights, through the public
marlin.Layer (pack + forward) and marlin.mul with explicit thread tiles, for
per-column and grouped (128) scales.

The weights are quantised the way the project's test.py does it (symmetric
4-bit, zero point 8, scale = max|w| * 2/15 per column or per group of 128
rows), so packing recovers the integers exactly and the only difference left
is the kernel's fp16 arithmetic. marlin_cuda is the compiled top-level module;
marlin/__init__.py imports it, so a wheel without it fails at `import marlin`."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import marlin_cuda  # noqa: F401  the compiled extension, imported by name
except ImportError as error:
    sys.exit(f"the wheel has no working marlin_cuda: {error}")
import marlin

torch.backends.cuda.matmul.allow_tf32 = False
# test.py accepts a mean relative error below 1e-3 against an fp16 matmul; the
# reference here is float32, so allow twice that, and bound the worst element.
MAX_MEAN_REL = 2e-3
MAX_ABS_SHARE = 2e-2


def quantised_linear(k, n, groupsize, device):
    """(reference weight (k, n) in fp16, scales (groups, n), nn.Linear holding it)."""
    group = k if groupsize == -1 else groupsize
    w = torch.randn(k // group, group, n, dtype=torch.half, device=device)
    scales = w.abs().amax(dim=1) * (2 / 15)                                 # (groups, n)
    q = torch.clamp(torch.round(w / scales[:, None, :]).int() + 8, 0, 15)
    ref = ((q - 8).half() * scales[:, None, :]).reshape(k, n)
    linear = torch.nn.Linear(k, n, bias=False).to(device)
    linear.weight.data = ref.t().contiguous()                               # (n, k), fp16
    return ref, scales, linear


def check(name, got, a, ref, index):
    want = a.float() @ ref.float()
    got = got.float()
    mean_rel = ((got - want).abs().mean() / want.abs().mean()).item()
    worst = (got - want).abs().max().item()
    if not torch.isfinite(got).all() or mean_rel > MAX_MEAN_REL or worst > MAX_ABS_SHARE * want.abs().max().item():
        sys.exit(f"{name} differs from the float32 reference on device {index}: mean relative error "
                 f"{mean_rel:.3g}, max diff {worst:.3g}")
    print(f"device {index}: {name} ok (mean relative error {mean_rel:.2g})")


for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    if torch.cuda.get_device_capability(device) < (8, 0):
        sys.exit(f"device {index} is below compute capability 8.0, which Marlin's cp.async / mma kernel needs")
    for groupsize in (-1, 128):
        torch.manual_seed(0)
        k, n = 1024, 512
        ref, scales, linear = quantised_linear(k, n, groupsize, device)
        layer = marlin.Layer(k, n, groupsize=groupsize).to(device)
        layer.pack(linear, scales.t())
        for m in (1, 16, 33, 128):
            a = torch.randn(m, k, dtype=torch.half, device=device)
            check(f"Layer(groupsize={groupsize}) m={m}", layer(a), a, ref, index)
        for m, thread_k, thread_n in ((16, 128, 128), (16, 64, 256), (96, 64, 256)):
            a = torch.randn(m, k, dtype=torch.half, device=device)
            c = torch.zeros(m, n, dtype=torch.half, device=device)
            workspace = torch.zeros(n // 128 * 16, dtype=torch.int, device=device)
            marlin.mul(a, layer.B, c, layer.s, workspace, thread_k, thread_n, -1)
            check(f"mul(groupsize={groupsize}) m={m} thread_k={thread_k} thread_n={thread_n}", c, a, ref, index)
print("kernel test passed")
