"""Kernel test for a torch wheel: run on every visible GPU, compared with the CPU.
Exits non-zero naming the first op that fails (CUDA_LAUNCH_BLOCKING=1 makes
the failure point at its kernel)."""
import sys

import torch


def check(name, gpu, cpu, tolerance=1e-3):
    got = gpu.cpu()
    if got.dtype.is_floating_point:
        error = ((got - cpu).norm() / cpu.norm().clamp_min(1e-12)).item()
        ok = error < tolerance
    else:
        error = (got != cpu).sum().item()
        ok = error == 0
    print(f"  {name:<12} {'ok' if ok else 'MISMATCH'} ({error:.2e})")
    if not ok:
        sys.exit(f"{name}: GPU result differs from the CPU result")


def main():
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    torch.manual_seed(0)
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        print(f"device {index}: {torch.cuda.get_device_name(index)} CC {torch.cuda.get_device_capability(index)}")
        x = torch.randn(1 << 16)
        check("elementwise", (x.to(device) * 2 + 1).sin(), (x * 2 + 1).sin())
        check("reduction", x.to(device).sum(), x.sum())
        a, b = torch.randn(256, 256), torch.randn(256, 256)
        torch.backends.cuda.matmul.allow_tf32 = False
        check("matmul", a.to(device) @ b.to(device), a @ b)
        image, weight = torch.randn(2, 3, 32, 32), torch.randn(8, 3, 3, 3)
        torch.backends.cudnn.allow_tf32 = False
        check("conv2d", torch.nn.functional.conv2d(image.to(device), weight.to(device)),
              torch.nn.functional.conv2d(image, weight))
        values = torch.randint(0, 1000, (1 << 14,))
        check("sort", values.to(device).sort().values, values.sort().values)
        torch.cuda.synchronize(device)
    print("kernel test passed")


if __name__ == "__main__":
    main()
