"""Kernel test for bitsandbytes: 8-bit blockwise and 4-bit (nf4) quantisation
round trips on every GPU through libbitsandbytes_cuda*.so. The error bounds
are the project's own (tests/test_functional.py): a mean absolute error under
0.011 for 8-bit blocks of 256, and for nf4 blocks of 64 under 0.08 (its
measured mean is 0.0728); a kernel that did not run or ran wrong misses them
by an order of magnitude."""
import sys

import torch
import bitsandbytes.functional as F

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
torch.manual_seed(0)
for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    x = torch.randn(1024, 1024, device=device)

    codes, state = F.quantize_blockwise(x, blocksize=256)
    error = (F.dequantize_blockwise(codes, state) - x).abs().mean().item()
    if not error < 0.011:
        sys.exit(f"8-bit blockwise round trip on device {index}: mean error {error:.4g} (want < 0.011)")
    print(f"device {index}: quantize_blockwise / dequantize_blockwise ok (mean error {error:.4f})")

    packed, state = F.quantize_4bit(x, blocksize=64, quant_type="nf4")
    error = (F.dequantize_4bit(packed, state) - x).abs().mean().item()
    if not error < 0.08:
        sys.exit(f"nf4 round trip on device {index}: mean error {error:.4g} (want < 0.08)")
    print(f"device {index}: quantize_4bit / dequantize_4bit (nf4) ok (mean error {error:.4f})")
print("kernel test passed")
