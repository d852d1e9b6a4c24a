"""Kernel test for fast_transformers: on every GPU, the causal linear
attention prefix product (causal_product_cuda) forward and backward against
tril(Q K^T) V in float64, for shapes that reach each of its three kernel
families, and CausalLinearAttention (the
public layer: elu+1 feature map, normaliser) against a plain-PyTorch causal
linear attention. fast_transformers replaces a missing CUDA module by None
and fails only when called, so the module is imported explicitly first."""
import sys

import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    from fast_transformers.causal_product import causal_product_cuda
except ImportError as error:
    sys.exit(f"the wheel has no working fast_transformers.causal_product.causal_product_cuda: {error}")
from fast_transformers.attention.causal_linear_attention import CausalLinearAttention  # noqa: E402
from fast_transformers.causal_product import causal_dot_product  # noqa: E402
from fast_transformers.masking import LengthMask, TriangularCausalMask  # noqa: E402


def check(name, got, want, tol, index):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    scale = want.abs().max().item()
    if got.shape != want.shape or not torch.allclose(got, want, atol=tol * scale, rtol=tol):
        diff = (got - want).abs().max().item() if got.shape == want.shape else f"shape {tuple(got.shape)}"
        sys.exit(f"{name} differs from the reference on device {index}: max diff {diff} (scale {scale:.3g})")


def causal_product_reference(Q, K, V):
    """out[n,h,i] = sum_{j <= i} (Q[n,h,i] . K[n,h,j]) V[n,h,j]"""
    L = Q.shape[2]
    scores = torch.einsum("nhle,nhse->nhls", Q, K) * torch.tril(torch.ones(L, L, dtype=Q.dtype))
    return torch.einsum("nhls,nhsm->nhlm", scores, V)


def causal_linear_attention_reference(q, k, v, eps):
    """(N, L, H, E) layout, as the layer takes it."""
    Q, K = F.elu(q) + 1, F.elu(k) + 1
    L = q.shape[1]
    scores = torch.einsum("nlhe,nshe->nhls", Q, K) * torch.tril(torch.ones(L, L, dtype=q.dtype))
    numerator = torch.einsum("nhls,nshm->nlhm", scores, v)
    denominator = torch.einsum("nlhe,nlhe->nlh", Q, K.cumsum(1)) + eps
    return numerator / denominator[..., None]


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    # the kernels launch on the current device without a guard
    with torch.cuda.device(device):
        # its dispatch (lmha): N*H < 40 takes the low-occupancy kernels, more
        # the per-head kernels (templated on E up to 256), and E > 256 falls
        # back to the original shared-memory kernels
        for N, H, E, M in ((2, 4, 64, 64), (8, 8, 48, 80), (8, 8, 128, 100), (2, 2, 300, 40)):
            L = 100
            Q, K, V = (torch.rand(N, H, L, d) / d ** 0.5 for d in (E, E, M))
            grad_out = torch.randn(N, H, L, M)
            q, k, v = (t.to(device).requires_grad_() for t in (Q, K, V))
            out = causal_dot_product(q, k, v)
            out.backward(grad_out.to(device))
            qr, kr, vr = (t.double().requires_grad_() for t in (Q, K, V))
            want = causal_product_reference(qr, kr, vr)
            want.backward(grad_out.double())
            check(f"causal_dot_product N*H={N * H} E={E} M={M} forward", out, want, 1e-4, index)
            for name, got, ref in (("Q", q, qr), ("K", k, kr), ("V", v, vr)):
                check(f"causal_dot_product N*H={N * H} E={E} M={M} grad {name}", got.grad, ref.grad, 1e-4, index)
            print(f"device {index}: causal_dot_product N*H={N * H} E={E} M={M} forward/backward ok")

        N, L, H, E, M = 3, 50, 4, 32, 64
        q, k, v = torch.randn(N, L, H, E), torch.randn(N, L, H, E), torch.randn(N, L, H, M)
        layer = CausalLinearAttention(E)
        full = LengthMask(torch.full((N,), L, dtype=torch.long, device=device))
        out = layer(q.to(device), k.to(device), v.to(device), TriangularCausalMask(L, device=device), full, full)
        want = causal_linear_attention_reference(q.double(), k.double(), v.double(), layer.eps)
        check("CausalLinearAttention forward", out, want, 1e-4, index)
        print(f"device {index}: CausalLinearAttention forward ok")
print("kernel test passed")
