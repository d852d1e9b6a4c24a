"""Kernel test for a torchvision wheel: its own CUDA ops against the CPU."""
import sys

import torch
import torchvision


def main():
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    torch.manual_seed(0)
    boxes = torch.rand(200, 4) * 100
    boxes[:, 2:] += boxes[:, :2]
    scores = torch.rand(200)
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        keep_gpu = torchvision.ops.nms(boxes.to(device), scores.to(device), 0.5).cpu()
        keep_cpu = torchvision.ops.nms(boxes, scores, 0.5)
        if not torch.equal(keep_gpu, keep_cpu):
            sys.exit("nms: GPU result differs from the CPU result")
        features = torch.randn(1, 4, 16, 16)
        rois = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0]])
        pooled_gpu = torchvision.ops.roi_align(features.to(device), rois.to(device), (4, 4)).cpu()
        pooled_cpu = torchvision.ops.roi_align(features, rois, (4, 4))
        if not torch.allclose(pooled_gpu, pooled_cpu, atol=1e-4):
            sys.exit("roi_align: GPU result differs from the CPU result")
        print(f"device {index}: nms ok, roi_align ok")
    print("kernel test passed")


if __name__ == "__main__":
    main()
