"""Kernel test for a torchaudio wheel: forced_align's CUDA kernel against the CPU."""
import sys

import torch
import torchaudio.functional as F


def main():
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    torch.manual_seed(0)
    log_probs = torch.randn(1, 50, 10).log_softmax(-1)
    targets = torch.randint(1, 10, (1, 8), dtype=torch.int32)
    cpu_alignment, _ = F.forced_align(log_probs, targets, blank=0)
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        gpu_alignment, _ = F.forced_align(log_probs.to(device), targets.to(device), blank=0)
        if not torch.equal(gpu_alignment.cpu(), cpu_alignment):
            sys.exit("forced_align: GPU result differs from the CPU result")
        print(f"device {index}: forced_align ok")
    print("kernel test passed")


if __name__ == "__main__":
    main()
