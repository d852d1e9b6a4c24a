"""Kernel test for torch_harmonics: on every GPU, DiscreteContinuousConvS2
(the DISCO convolution on the sphere) forward and backward through the CUDA
kernels against a dense float64 reference written here (the module's own
sparse filter tensor psi, densified, applied at every longitude shift), and
NeighborhoodAttentionS2 through the CUDA kernels against the same module on
torch_harmonics' plain-PyTorch path. The package falls back to that path
silently when its extension lacks CUDA kernels, so the helper's flag and the
CUDA registrations of the custom ops are checked first."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import disco_helpers
    import torch_harmonics.attention._C  # noqa: F401
    import torch_harmonics.disco._C  # noqa: F401
except ImportError as error:
    sys.exit(f"the wheel has no working torch_harmonics extension: {error}")
if not disco_helpers.cuda_kernels_is_available():
    sys.exit("torch_harmonics was built without its CUDA kernels (disco_helpers.cuda_kernels_is_available() is False)")
for op in ("disco_kernels::forward", "disco_kernels::backward", "attention_kernels::forward", "attention_kernels::backward"):
    if not torch._C._dispatch_has_kernel_for_dispatch_key(op, "CUDA"):
        sys.exit(f"the custom op {op} has no CUDA kernel registered")

from torch_harmonics import DiscreteContinuousConvS2, NeighborhoodAttentionS2  # noqa: E402


def check(name, got, want, tol, index):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    scale = want.abs().max().item()
    if got.shape != want.shape or not torch.allclose(got, want, atol=tol * scale, rtol=tol):
        diff = (got - want).abs().max().item() if got.shape == want.shape else f"shape {tuple(got.shape)}"
        sys.exit(f"{name} differs from the reference on device {index}: max diff {diff} (scale {scale:.3g})")


def disco_reference(conv, x, weight, bias):
    """out[b,o,h,w] = sum_{c,k} W[o,c,k] * sum_j psi[k,h,j] * x_shifted(w)[b,c,j] + bias[o],
    x_shifted(w) being x rolled left by w * (nlon_in // nlon_out) longitudes."""
    B, C, H_in, W_in = x.shape
    K, H_out, W_out = conv.kernel_size, conv.nlat_out, conv.nlon_out
    psi = torch.zeros(K, H_out, H_in * W_in, dtype=torch.float64)
    index = (conv.psi_ker_idx.cpu().long(), conv.psi_row_idx.cpu().long(), conv.psi_col_idx.cpu().long())
    psi.index_put_(index, conv.psi_vals.detach().cpu().double(), accumulate=True)
    pscale = W_in // W_out
    shifted = torch.stack([torch.roll(x, -pscale * w, dims=-1).reshape(B, C, H_in * W_in) for w in range(W_out)], dim=-1)
    contracted = torch.einsum("khj,bcjw->bckhw", psi, shifted)
    return torch.einsum("bckhw,ock->bohw", contracted, weight) + bias.view(1, -1, 1, 1)


torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    with torch.cuda.device(device):
        for in_shape, out_shape in (((16, 32), (16, 32)), ((24, 48), (12, 24))):
            conv = DiscreteContinuousConvS2(4, 6, in_shape=in_shape, out_shape=out_shape, kernel_shape=3,
                                            basis_type="piecewise linear", optimized_kernel=True).to(device)
            if not conv.optimized_kernel:
                sys.exit("DiscreteContinuousConvS2 did not select its optimized kernels")
            with torch.no_grad():
                conv.bias.copy_(torch.randn(6))
            x = torch.randn(2, 4, *in_shape, device=device, requires_grad=True)
            out = conv(x)
            grad_out = torch.randn_like(out)
            out.backward(grad_out)

            xr = x.detach().cpu().double().requires_grad_()
            wr = conv.weight.detach().cpu().double().requires_grad_()
            want = disco_reference(conv, xr, wr, conv.bias.detach().cpu().double())
            want.backward(grad_out.cpu().double())
            label = f"DiscreteContinuousConvS2 {in_shape}->{out_shape}"
            check(f"{label} forward", out, want, 1e-4, index)
            check(f"{label} grad input", x.grad, xr.grad, 1e-4, index)
            check(f"{label} grad weight", conv.weight.grad, wr.grad, 1e-4, index)
            print(f"device {index}: {label} forward/backward ok")

        attention = NeighborhoodAttentionS2(8, in_shape=(16, 32), out_shape=(16, 32), num_heads=2,
                                            optimized_kernel=True).to(device)
        reference = NeighborhoodAttentionS2(8, in_shape=(16, 32), out_shape=(16, 32), num_heads=2,
                                            optimized_kernel=False).to(device)
        if not attention.optimized_kernel or reference.optimized_kernel:
            sys.exit("NeighborhoodAttentionS2 did not select the asked paths")
        reference.load_state_dict(attention.state_dict())
        x = torch.randn(2, 8, 16, 32, device=device)
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        out, want = attention(xa), reference(xb)
        grad_out = torch.randn_like(out)
        out.backward(grad_out)
        want.backward(grad_out)
        check("NeighborhoodAttentionS2 forward (CUDA kernels vs torch path)", out, want, 1e-4, index)
        check("NeighborhoodAttentionS2 grad input (CUDA kernels vs torch path)", xa.grad, xb.grad, 1e-4, index)
        check("NeighborhoodAttentionS2 grad q_weights (CUDA kernels vs torch path)",
              attention.q_weights.grad, reference.q_weights.grad, 1e-4, index)
        print(f"device {index}: NeighborhoodAttentionS2 forward/backward ok")
print("kernel test passed")
