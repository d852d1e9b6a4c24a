"""Kernel test for grouped_gemm: the CUTLASS grouped GEMM (bf16, one problem
per expert) on every GPU against per-expert float32 matmuls in plain PyTorch,
forward and backward, with the batch sizes on the host and on the GPU.

The recipe builds with GROUPED_GEMM_CUTLASS=1. Without it the extension is a
loop of cublasGemmEx calls (no kernel of its own) and rejects batch sizes
that live on the GPU, so the device-resident case below also proves the
CUTLASS mode is what was built. grouped_gemm_backend is the compiled module
(a top-level extension); grouped_gemm.backend and grouped_gemm.ops wrap it."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import grouped_gemm_backend  # noqa: F401  the compiled extension, imported by name
except ImportError as error:
    sys.exit(f"the wheel has no working grouped_gemm_backend: {error}")
from grouped_gemm import backend, ops

torch.backends.cuda.matmul.allow_tf32 = False
# bf16 results (8-bit mantissa, 0.4 % rounding) of float32-accumulated products of
# the same bf16 inputs the reference upcasts: 1.6 % of each value plus 1 % of the
# largest one.
RTOL, ATOL_SHARE = 1.6e-2, 1e-2


def reference(a, b, sizes, trans_b):
    """c[rows of expert e] = a[rows of e] @ b[e] (or b[e]^T), in float32."""
    out, start = [], 0
    for expert, size in enumerate(sizes):
        rhs = b[expert].t() if trans_b else b[expert]
        out.append(a[start:start + size] @ rhs)
        start += size
    return torch.cat(out)


def compare(name, got, want, index):
    atol = ATOL_SHARE * want.abs().max().item()
    if got.shape != want.shape or not torch.allclose(got.float(), want, rtol=RTOL, atol=atol):
        diff = (got.float() - want).abs().max().item() if got.shape == want.shape else float("nan")
        sys.exit(f"{name} differs from the float32 reference on device {index}: max diff {diff:.3g}")


sizes = [40, 0, 72, 16, 128]  # rows per expert, one expert with none
hidden_in, hidden_out = 256, 128  # multiples of 8: CUTLASS's bf16 alignment
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    if torch.cuda.get_device_capability(device) < (8, 0):
        sys.exit(f"device {index} is below compute capability 8.0, which the sm80 CUTLASS kernel needs")
    torch.manual_seed(0)
    tokens, experts = sum(sizes), len(sizes)
    a = (torch.randn(tokens, hidden_in, device=device) / hidden_in ** 0.5).bfloat16()
    for trans_b in (False, True):
        shape = (experts, hidden_out, hidden_in) if trans_b else (experts, hidden_in, hidden_out)
        b = torch.randn(*shape, device=device).bfloat16()
        want = reference(a.float(), b.float(), sizes, trans_b)
        for where in ("cpu", "cuda"):
            batch_sizes = torch.tensor(sizes, dtype=torch.long, device=device if where == "cuda" else "cpu")
            try:
                got = backend.gmm(a, b, batch_sizes, trans_b=trans_b)
            except RuntimeError as error:
                if where == "cuda":
                    sys.exit(f"grouped_gemm rejects batch sizes on the GPU (built without GROUPED_GEMM_CUTLASS=1?): "
                             f"{error}")
                raise
            torch.cuda.synchronize(device)
            name = f"gmm trans_b={trans_b} batch_sizes on {where}"
            compare(name, got, want, index)
            print(f"device {index}: {name} ok")

            # backward through ops.gmm: dA = dC @ B^T (grouped), dB[e] = A_e^T @ dC_e (the trans_a kernel)
            leaf_a = a.detach().clone().requires_grad_()
            leaf_b = b.detach().clone().requires_grad_()
            out = ops.gmm(leaf_a, leaf_b, batch_sizes, trans_b)
            grad = (torch.randn(out.shape, device=device) / hidden_out ** 0.5).bfloat16()
            out.backward(grad)
            ref_a = a.float().requires_grad_()
            ref_b = b.float().requires_grad_()
            reference(ref_a, ref_b, sizes, trans_b).backward(grad.float())
            compare(f"{name} backward (dA)", leaf_a.grad, ref_a.grad, index)
            compare(f"{name} backward (dB)", leaf_b.grad, ref_b.grad, index)
            print(f"device {index}: {name} backward ok")
print("kernel test passed")
