"""Kernel test for autoawq_kernels: the AWQ 4-bit kernels on every GPU against
float32 PyTorch references, with weights packed the way AutoAWQ packs them.

The wheel installs four top-level extension modules and no Python package:
awq_ext (GEMM/GEMV/dequantise, plus vLLM's MoE top-k softmax and SiLU-and-mul),
awq_v2_ext (the newer prefill GEMM and decode GEMV, sm_80+), exl_ext and
exlv2_ext (ExLlama v1/v2 GPTQ kernels). All four are imported; the checks:

- awq_ext.dequantize_weights_cuda and awq_ext.gemm_forward_cuda (what
  AutoAWQ's WQLinear_GEMM runs) on weights packed as in
  awq/modules/linear/gemm.py (8 nibbles per int32 column, order 0 2 4 6 1 3 5 7,
  zero points packed alike, fp16 scales per group of 128 input rows);
- awq_v2_ext.gemm_forward_cuda_prefill and gemv_forward_cuda_decode on weights
  packed as in awq/modules/linear/gemv_fast.py (pack_intweight, interleave 4,
  kstride 64; scales and negated scaled zeros padded to a multiple of 8
  groups, transposed);
- awq_ext.topk_softmax for 8 experts (the fused warp kernel) and 6 experts
  (moeSoftmax + moeTopK, the code the recipe's CCCL 3 patch touches);
- awq_ext.silu_and_mul.
"""
import importlib
import sys

import numpy as np
import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
modules = {}
for name in ("awq_ext", "awq_v2_ext", "exl_ext", "exlv2_ext"):
    try:
        modules[name] = importlib.import_module(name)
    except ImportError as error:
        sys.exit(f"the wheel has no working {name}: {error}")
awq_ext, awq_v2_ext = modules["awq_ext"], modules["awq_v2_ext"]

torch.backends.cuda.matmul.allow_tf32 = False
ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # AutoAWQ's nibble order within an int32


def to_int32(packed):
    """int64 bit patterns below 2**32 as the int32 tensors AutoAWQ stores."""
    return torch.where(packed >= 2 ** 31, packed - 2 ** 32, packed).to(torch.int32)


def pack_gemm(values):
    """(rows, cols) ints 0..15 -> (rows, cols / 8) int32, as WQLinear_GEMM.from_linear."""
    rows, cols = values.shape
    nibbles = values.to(torch.int64).reshape(rows, cols // 8, 8)[..., ORDER]
    shifts = torch.arange(0, 32, 4, dtype=torch.int64, device=values.device)
    return to_int32((nibbles << shifts).sum(-1))


def pack_intweight(unpacked, interleave=4, kstride=64):
    """awq/modules/linear/gemv_fast.py's pack_intweight: (N, K) ints -> (N / 4, K) int16."""
    n, k = unpacked.shape
    w = unpacked.cpu().numpy().astype(np.int32).reshape(n, k // 32, 32)
    w = w.reshape(n, k // 32, 4, 4, 2).transpose(0, 1, 3, 2, 4).reshape(n, k // 32, 32)
    w = w.reshape(n, k // 32, 4, 8).reshape(n, k // 32, 4, 4, 2).transpose(0, 1, 2, 4, 3).reshape(n, k)
    w = w.reshape(n // interleave, interleave, k // kstride, kstride).transpose(0, 2, 1, 3)
    w = w.reshape(n // interleave, k // kstride, kstride, interleave)
    w = w[..., 0] | (w[..., 1] << 4) | (w[..., 2] << 8) | (w[..., 3] << 12)
    return torch.tensor(w.reshape(n // interleave, k).astype("int16")).to(unpacked.device).contiguous()


def close(name, got, want, index, rtol=1e-2, share=1e-2):
    got = got.float()
    atol = share * want.abs().max().item()
    if got.shape != want.shape or not torch.allclose(got, want, rtol=rtol, atol=atol):
        diff = (got - want).abs().max().item() if got.shape == want.shape else float("nan")
        sys.exit(f"{name} differs from the float32 reference on device {index}: max diff {diff:.3g}")
    print(f"device {index}: {name} ok")


IN, OUT, GROUP = 512, 256, 128
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    if torch.cuda.get_device_capability(device) < (8, 0):
        sys.exit(f"device {index} is below compute capability 8.0, which awq_v2_ext needs")
    torch.manual_seed(0)
    groups = IN // GROUP

    # --- awq_ext: WQLinear_GEMM layout, weights (IN, OUT) ---
    q = torch.randint(0, 16, (IN, OUT), device=device)
    zeros = torch.randint(0, 16, (groups, OUT), device=device)
    scales = (torch.rand(groups, OUT, device=device) * 0.02 + 0.005).half()
    w = (q - zeros.repeat_interleave(GROUP, 0)).float() * scales.float().repeat_interleave(GROUP, 0)
    qweight, qzeros = pack_gemm(q), pack_gemm(zeros)
    dequant = awq_ext.dequantize_weights_cuda(qweight, scales, qzeros, 0, 0, 0, False)
    close("awq_ext.dequantize_weights_cuda", dequant, w, index, rtol=1e-3, share=1e-3)
    x = torch.randn(8, IN, device=device).half()
    close("awq_ext.gemm_forward_cuda (split_k 8)", awq_ext.gemm_forward_cuda(x, qweight, scales, qzeros, 8),
          x.float() @ w, index)

    # --- awq_v2_ext: WQLinear_GEMVFast layout, weights (OUT, IN) ---
    q2 = torch.randint(0, 16, (OUT, IN), device=device, dtype=torch.int32)
    zeros2 = torch.randint(0, 16, (OUT, groups), device=device)
    scales2 = (torch.rand(OUT, groups, device=device) * 0.02 + 0.005).half()
    scaled_zeros2 = (-(scales2.float() * zeros2.float())).half()     # what from_linear stores
    width = ((groups + 7) // 8) * 8                                  # calculate_zeros_width(IN, 128) * 8
    padded_scales = torch.zeros(OUT, width, dtype=torch.half, device=device)
    padded_zeros = torch.zeros(OUT, width, dtype=torch.half, device=device)
    padded_scales[:, :groups], padded_zeros[:, :groups] = scales2, scaled_zeros2
    v2_scales, v2_zeros = padded_scales.t().contiguous(), padded_zeros.t().contiguous()
    v2_weight = pack_intweight(q2)
    w2 = (q2.float() * scales2.float().repeat_interleave(GROUP, 1)
          + scaled_zeros2.float().repeat_interleave(GROUP, 1))    # (OUT, IN)
    x2 = torch.randn(2, 20, IN, device=device).half()
    close("awq_v2_ext.gemm_forward_cuda_prefill",
          awq_v2_ext.gemm_forward_cuda_prefill(x2, v2_weight, v2_scales, v2_zeros), x2.float() @ w2.t(), index)
    x3 = torch.randn(3, 1, IN, device=device).half()
    close("awq_v2_ext.gemv_forward_cuda_decode",
          awq_v2_ext.gemv_forward_cuda_decode(x3, v2_weight, v2_scales, v2_zeros, 3, OUT, IN, GROUP),
          x3.float() @ w2.t(), index)

    # --- awq_ext: MoE top-k softmax and SiLU-and-mul ---
    for experts in (8, 6):
        tokens, top = 33, 2
        gating = torch.randn(tokens, experts, device=device)
        weights = torch.empty(tokens, top, device=device)
        indices = torch.empty(tokens, top, dtype=torch.int32, device=device)
        sources = torch.empty(tokens, top, dtype=torch.int32, device=device)
        awq_ext.topk_softmax(weights, indices, sources, gating)
        want_weights, want_indices = torch.softmax(gating, dim=-1).topk(top, dim=-1)
        if not torch.equal(indices.long(), want_indices) or not torch.allclose(weights, want_weights, atol=1e-5):
            sys.exit(f"awq_ext.topk_softmax ({experts} experts) differs from softmax + topk on device {index}")
        print(f"device {index}: awq_ext.topk_softmax ({experts} experts) ok")
    gate_up = torch.randn(17, 2 * 96, device=device).half()
    out = torch.empty(17, 96, device=device).half()
    awq_ext.silu_and_mul(out, gate_up)
    g, u = gate_up.float().chunk(2, dim=-1)
    close("awq_ext.silu_and_mul", out, torch.nn.functional.silu(g) * u, index, rtol=2e-3, share=2e-3)
print("kernel test passed")
