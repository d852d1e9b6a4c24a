"""Kernel test for flash_attn (FlashAttention-2): flash_attn_func forward and
backward, flash_attn_varlen_func and flash_attn_with_kvcache (the split-KV
kernels) on every GPU, in fp16 and bf16, against a plain-PyTorch softmax
attention.

The acceptance rule is the project's own (tests/test_flash_attn.py): compute
the reference in float32 from the same low-precision inputs, and also in the
input dtype; the kernel's error against the float32 reference may be at most
a small multiple of the plain-PyTorch low-precision error (plus a floor), for
the output and each gradient. flash_attn_2_cuda is the compiled top-level
module; flash_attn_interface imports it unless
FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE (ROCm's Triton path), which this test
refuses."""
import itertools
import math
import os
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
if os.environ.get("FLASH_ATTENTION_TRITON_AMD_ENABLE", "FALSE") == "TRUE":
    sys.exit("FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE selects the Triton path, not the compiled kernels")
try:
    import flash_attn_2_cuda  # noqa: F401  the compiled extension, imported by name
except ImportError as error:
    sys.exit(f"the wheel has no working flash_attn_2_cuda: {error}")
from flash_attn import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

torch.backends.cuda.matmul.allow_tf32 = False
FLOOR = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def attention(q, k, v, causal, upcast=True):
    """softmax(Q K^T / sqrt(d)) V; (batch, seqlen, heads, dim) layout, GQA by repeating K/V
    heads, causal mask aligned to the bottom right as flash_attn does."""
    dtype = q.dtype
    if upcast:
        q, k, v = q.float(), k.float(), v.float()
    groups = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(groups, dim=2)
    v = v.repeat_interleave(groups, dim=2)
    scores = torch.einsum("bthd,bshd->bhts", q / math.sqrt(q.shape[-1]), k)
    if causal:
        n_q, n_k = scores.shape[-2:]
        keep = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril(n_k - n_q)
        scores = scores.masked_fill(~keep, float("-inf"))
    out = torch.einsum("bhts,bshd->bthd", torch.softmax(scores, dim=-1).to(v.dtype), v)
    return out.to(dtype)


def judge(name, got, ref, low, dtype, index, times=3):
    err = (got.float() - ref.float()).abs().max().item()
    allowed = times * (low.float() - ref.float()).abs().max().item() + FLOOR[dtype]
    if not torch.isfinite(got).all() or err > allowed:
        sys.exit(f"{name} differs from the PyTorch softmax attention on device {index}: max diff {err:.3g} "
                 f"(allowed {allowed:.3g})")
    return err


checked = 0
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    if torch.cuda.get_device_capability(device) < (8, 0):
        sys.exit(f"device {index} is below compute capability 8.0; FlashAttention-2 needs Ampere or newer")
    for dtype in (torch.float16, torch.bfloat16):
        tag = str(dtype).split(".")[-1]
        for head_dim in (64, 128):
            for causal in (False, True):
                torch.manual_seed(0)
                # seqlen_q != seqlen_k and a length that is no multiple of the tile size
                q = torch.randn(2, 113, 4, head_dim, device=device, dtype=dtype, requires_grad=True)
                k = torch.randn(2, 203, 2, head_dim, device=device, dtype=dtype, requires_grad=True)
                v = torch.randn(2, 203, 2, head_dim, device=device, dtype=dtype, requires_grad=True)
                out = flash_attn_func(q, k, v, causal=causal)
                ref = attention(q, k, v, causal)
                low = attention(q, k, v, causal, upcast=False)
                name = f"flash_attn_func {tag} d={head_dim}{' causal' if causal else ''}"
                err = judge(name, out, ref, low, dtype, index)
                grad = torch.randn_like(out)
                got_grads = torch.autograd.grad(out, (q, k, v), grad)
                ref_grads = torch.autograd.grad(ref, (q, k, v), grad)
                low_grads = torch.autograd.grad(low, (q, k, v), grad)
                for which, g, r, lo in zip("qkv", got_grads, ref_grads, low_grads):
                    judge(f"{name} backward (d{which})", g, r, lo, dtype, index)
                print(f"device {index}: {name} forward and backward ok (max diff {err:.2g})")
                checked += 1

        # variable-length batch (packed sequences), causal, d=128
        torch.manual_seed(1)
        lengths = [37, 128, 5]
        cu = torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=torch.int32, device=device)
        total = sum(lengths)
        q = torch.randn(total, 4, 128, device=device, dtype=dtype)
        k = torch.randn(total, 4, 128, device=device, dtype=dtype)
        v = torch.randn(total, 4, 128, device=device, dtype=dtype)
        out = flash_attn_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), causal=True)
        parts = [slice(int(cu[i]), int(cu[i + 1])) for i in range(len(lengths))]
        ref = torch.cat([attention(q[p][None], k[p][None], v[p][None], True)[0] for p in parts])
        low = torch.cat([attention(q[p][None], k[p][None], v[p][None], True, upcast=False)[0] for p in parts])
        judge(f"flash_attn_varlen_func {tag}", out, ref, low, dtype, index)
        print(f"device {index}: flash_attn_varlen_func {tag} ok")
        checked += 1

        # decoding against a KV cache with per-sequence lengths, forced to 4 splits
        torch.manual_seed(2)
        cache_seqlens = torch.tensor([300, 17, 512], dtype=torch.int32, device=device)
        q = torch.randn(3, 1, 8, 128, device=device, dtype=dtype)
        k_cache = torch.randn(3, 512, 2, 128, device=device, dtype=dtype)
        v_cache = torch.randn(3, 512, 2, 128, device=device, dtype=dtype)
        out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=cache_seqlens, num_splits=4)
        rows = [(q[b:b + 1], k_cache[b:b + 1, :n], v_cache[b:b + 1, :n]) for b, n in enumerate(cache_seqlens.tolist())]
        ref = torch.cat([attention(*row, False) for row in rows])
        low = torch.cat([attention(*row, False, upcast=False) for row in rows])
        judge(f"flash_attn_with_kvcache {tag} (split-KV)", out, ref, low, dtype, index)
        print(f"device {index}: flash_attn_with_kvcache {tag} (split-KV, GQA) ok")
        checked += 1
print(f"kernel test passed ({checked} checks)")
