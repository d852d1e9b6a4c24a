"""Kernel test for sageattention: the compiled INT8/FP8 attention kernels on
every GPU against a plain-PyTorch softmax attention in float32.

sageattention hides its CUDA modules: sageattention/core.py imports
sm80_compile, sm89_compile and sm90_compile inside bare try/except blocks and
only asserts later, so a wheel without _qattn_sm90 imports fine and fails at
the first call (or, for sm86, silently runs Triton). This test therefore
imports the compiled modules each device needs by name first, then calls the
per-arch entry points with qk_quant_gran="per_warp" (Q/K quantised by the
compiled _fused module, not by Triton), and the public sageattn() where it
dispatches to a CUDA kernel (not on 8.6, where it runs Triton).

Which modules a device needs (setup.py's selection): _fused and _qattn_sm80
for every CC >= 8.0; _qattn_sm89 (INT8 QK, FP8 PV) for 8.9, 9.0, 10.0, 12.0,
12.1; _qattn_sm90 (wgmma, sm_90a) for 9.0 only.

The kernels quantise Q and K to INT8 and (fp8 paths) P and V to FP8 e4m3, so
the outputs are compared as the project's papers do: cosine similarity and
relative L1 error against the float32 reference, per check; a kernel that
computes nothing (uninitialised output), mis-masks the causal triangle or
mixes heads falls far below these bounds."""
import importlib
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import triton  # noqa: F401  sageattention/core.py imports its Triton kernels unconditionally
except ImportError as error:
    sys.exit(f"sageattention needs triton at import time (sageattention/core.py): {error}")

from sageattention import (sageattn, sageattn_qk_int8_pv_fp16_cuda, sageattn_qk_int8_pv_fp8_cuda,
                           sageattn_qk_int8_pv_fp8_cuda_sm90)

torch.backends.cuda.matmul.allow_tf32 = False
MIN_COSINE = 0.99
MAX_REL_L1 = 0.10  # a CPU simulation of the INT8 QK + FP8 PV rounding gives 0.035-0.038, cosine 0.9993


def module(name):
    try:
        return importlib.import_module(f"sageattention.{name}")
    except ImportError as error:
        sys.exit(f"the wheel has no working sageattention.{name}: {error}")


def reference(q, k, v, causal):
    """softmax(Q K^T / sqrt(d)) V in float32, HND layout, GQA by repeating K/V heads."""
    q, k, v = q.float(), k.float(), v.float()
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        n_q, n_k = scores.shape[-2:]
        mask = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril(n_k - n_q)
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def check(name, fn, device, index, dtype, head_dim, causal, heads=(4, 2), seqlen=256):
    torch.manual_seed(0)
    q = torch.randn(2, heads[0], seqlen, head_dim, device=device, dtype=dtype)
    k = torch.randn(2, heads[1], seqlen, head_dim, device=device, dtype=dtype)
    v = torch.randn(2, heads[1], seqlen, head_dim, device=device, dtype=dtype)
    out = fn(q, k, v, tensor_layout="HND", is_causal=causal)
    torch.cuda.synchronize(device)
    want = reference(q, k, v, causal)
    got = out.float()
    if got.shape != want.shape or not torch.isfinite(got).all():
        sys.exit(f"{name} gave a wrong shape or non-finite values on device {index}")
    cosine = torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0).item()
    rel_l1 = ((got - want).abs().sum() / want.abs().sum()).item()
    label = f"{name} {str(dtype).split('.')[-1]} d={head_dim}{' causal' if causal else ''}"
    if cosine < MIN_COSINE or rel_l1 > MAX_REL_L1:
        sys.exit(f"{label} differs from the float32 softmax attention on device {index}: cosine {cosine:.4f}, "
                 f"relative L1 {rel_l1:.4f}, max diff {(got - want).abs().max().item():.3g}")
    print(f"device {index}: {label} ok (cosine {cosine:.4f}, relative L1 {rel_l1:.4f})")


checked = 0
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    cc = torch.cuda.get_device_capability(device)
    if cc < (8, 0):
        print(f"device {index}: compute capability {cc[0]}.{cc[1]} is below SageAttention's 8.0; skipped")
        continue
    module("_fused")
    module("_qattn_sm80")
    variants = [("sageattn_qk_int8_pv_fp16_cuda", lambda q, k, v, **kw: sageattn_qk_int8_pv_fp16_cuda(
        q, k, v, qk_quant_gran="per_warp", pv_accum_dtype="fp32", **kw))]
    if cc in ((8, 9), (9, 0), (10, 0), (12, 0), (12, 1)):
        module("_qattn_sm89")
        variants.append(("sageattn_qk_int8_pv_fp8_cuda", lambda q, k, v, **kw: sageattn_qk_int8_pv_fp8_cuda(
            q, k, v, qk_quant_gran="per_warp", pv_accum_dtype="fp32+fp32", **kw)))
    if cc == (9, 0):
        module("_qattn_sm90")
        variants.append(("sageattn_qk_int8_pv_fp8_cuda_sm90", lambda q, k, v, **kw: sageattn_qk_int8_pv_fp8_cuda_sm90(
            q, k, v, qk_quant_gran="per_warp", pv_accum_dtype="fp32+fp32", **kw)))
    if cc in ((8, 0), (8, 9), (9, 0), (12, 0), (12, 1)):  # sageattn() picks a CUDA kernel here (Triton on 8.6)
        variants.append(("sageattn", sageattn))
    for name, fn in variants:
        for dtype in (torch.float16, torch.bfloat16):
            for head_dim in (64, 128):
                for causal in (False, True):
                    check(name, fn, device, index, dtype, head_dim, causal)
                    checked += 1
if not checked:
    sys.exit("no visible GPU has compute capability 8.0 or newer: nothing of sageattention was run")
print(f"kernel test passed ({checked} checks)")
