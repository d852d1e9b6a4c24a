"""Kernel test for apex (--cpp_ext --cuda_ext): on every GPU,
FusedLayerNorm and FusedRMSNorm forward and backward against plain-PyTorch
formulas in float64, fused_layer_norm_cuda called directly, FusedAdam (Adam
and AdamW modes) three steps against torch.optim.Adam/AdamW, and FusedDense
against F.linear. apex has no Python fallback for these CUDA paths, but its
modules import the extensions lazily, so each is imported explicitly first."""
import importlib
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
modules = {}
for name in ("apex_C", "amp_C", "fused_layer_norm_cuda", "fused_dense_cuda"):
    try:
        modules[name] = importlib.import_module(name)
    except ImportError as error:
        sys.exit(f"the wheel has no working {name}: {error}")

from apex.fused_dense import FusedDense  # noqa: E402
from apex.normalization import FusedLayerNorm, FusedRMSNorm  # noqa: E402
from apex.optimizers import FusedAdam  # noqa: E402


def check(name, got, want, atol, rtol, index):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if got.shape != want.shape or not torch.allclose(got, want, atol=atol, rtol=rtol):
        diff = (got - want).abs().max().item() if got.shape == want.shape else f"shape {tuple(got.shape)}"
        sys.exit(f"{name} differs from the reference on device {index}: max diff {diff}")


def layer_norm_ref(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm_ref(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def norm_case(index, device, dtype, atol):
    hidden, eps = 1024, 1e-5
    x0 = torch.randn(64, hidden, dtype=torch.float64)
    w0 = 1 + 0.1 * torch.randn(hidden, dtype=torch.float64)
    b0 = 0.1 * torch.randn(hidden, dtype=torch.float64)
    grad0 = torch.randn(64, hidden, dtype=torch.float64)
    label = str(dtype).replace("torch.", "")

    # LayerNorm: the module's parameters in the input's dtype (FusedLayerNorm)
    ln = FusedLayerNorm(hidden, eps=eps).to(device=device, dtype=dtype)
    with torch.no_grad():
        ln.weight.copy_(w0)
        ln.bias.copy_(b0)
    x = x0.to(device=device, dtype=dtype).requires_grad_()
    out = ln(x)
    out.backward(grad0.to(device=device, dtype=dtype))
    xr, wr, br = (t.clone().requires_grad_() for t in (x0.to(dtype).double(), w0.to(dtype).double(), b0.to(dtype).double()))
    want = layer_norm_ref(xr, wr, br, eps)
    want.backward(grad0.to(dtype).double())
    check(f"FusedLayerNorm {label} forward", out, want, atol, atol, index)
    check(f"FusedLayerNorm {label} grad input", x.grad, xr.grad, 4 * atol, 4 * atol, index)
    check(f"FusedLayerNorm {label} grad weight", ln.weight.grad, wr.grad, 40 * atol, 4 * atol, index)
    check(f"FusedLayerNorm {label} grad bias", ln.bias.grad, br.grad, 40 * atol, 4 * atol, index)
    print(f"device {index}: FusedLayerNorm {label} forward/backward ok")

    # RMSNorm
    rms = FusedRMSNorm(hidden, eps=eps).to(device=device, dtype=dtype)
    with torch.no_grad():
        rms.weight.copy_(w0)
    x = x0.to(device=device, dtype=dtype).requires_grad_()
    out = rms(x)
    out.backward(grad0.to(device=device, dtype=dtype))
    xr, wr = (t.clone().requires_grad_() for t in (x0.to(dtype).double(), w0.to(dtype).double()))
    want = rms_norm_ref(xr, wr, eps)
    want.backward(grad0.to(dtype).double())
    check(f"FusedRMSNorm {label} forward", out, want, atol, atol, index)
    check(f"FusedRMSNorm {label} grad input", x.grad, xr.grad, 4 * atol, 4 * atol, index)
    check(f"FusedRMSNorm {label} grad weight", rms.weight.grad, wr.grad, 40 * atol, 4 * atol, index)
    print(f"device {index}: FusedRMSNorm {label} forward/backward ok")


def adam_case(index, device, adam_w_mode):
    torch.manual_seed(1)
    shapes = [(256, 128), (1000,), (3, 5, 7)]
    init = [torch.randn(s) for s in shapes]
    grads = [[torch.randn(s) for s in shapes] for _ in range(3)]
    kwargs = dict(lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.05)
    fused_params = [p.clone().to(device).requires_grad_() for p in init]
    ref_params = [p.clone().to(device).requires_grad_() for p in init]
    fused = FusedAdam(fused_params, adam_w_mode=adam_w_mode, **kwargs)
    ref_cls = torch.optim.AdamW if adam_w_mode else torch.optim.Adam
    ref = ref_cls(ref_params, foreach=False, **kwargs)
    for step in grads:
        for p, q, g in zip(fused_params, ref_params, step):
            p.grad = g.to(device)
            q.grad = g.to(device)
        fused.step()
        ref.step()
    name = "FusedAdam (AdamW mode)" if adam_w_mode else "FusedAdam (Adam mode)"
    for p, q in zip(fused_params, ref_params):
        check(f"{name} after 3 steps vs {ref_cls.__name__}", p, q, 1e-5, 1e-4, index)
    print(f"device {index}: {name} matches torch.optim.{ref_cls.__name__} ok")


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    # FusedAdam keeps a flag tensor on the current device and the extensions
    # launch on it: make this device current.
    with torch.cuda.device(device):
        norm_case(index, device, torch.float32, 1e-4)
        norm_case(index, device, torch.bfloat16, 3e-2)

        # the extension module itself, no autograd wrapper
        x = torch.randn(8, 4, 96, device=device)
        w, b = torch.randn(4, 96, device=device), torch.randn(4, 96, device=device)
        out, mean, invvar = modules["fused_layer_norm_cuda"].forward_affine(x.contiguous(), [4, 96], w, b, 1e-6)
        check("fused_layer_norm_cuda.forward_affine", out, F.layer_norm(x.double(), (4, 96), w.double(), b.double(), 1e-6), 1e-4, 1e-4, index)
        print(f"device {index}: fused_layer_norm_cuda.forward_affine ok")

        adam_case(index, device, adam_w_mode=False)
        adam_case(index, device, adam_w_mode=True)

        dense = FusedDense(256, 192).to(device=device, dtype=torch.float16)
        with torch.no_grad():
            dense.weight.copy_(torch.randn(192, 256) / 16)
            dense.bias.copy_(torch.randn(192))
        x = torch.randn(64, 256, device=device, dtype=torch.float16)
        check("FusedDense float16", dense(x), F.linear(x.double(), dense.weight.double(), dense.bias.double()), 2e-2, 1e-2, index)
        print(f"device {index}: FusedDense float16 ok")
print("kernel test passed")
