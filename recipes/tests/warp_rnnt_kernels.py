"""Kernel test for warp_rnnt: the RNN-T loss and its gradient on every GPU,
in the plain, gather and compact layouts, against a plain-PyTorch alpha
recursion over the T x U lattice in float64 (gradients by autograd), on a
small padded batch. warp_rnnt has no CPU path; its compiled module is
imported explicitly and called directly once too."""
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
try:
    import warp_rnnt._C as core
except ImportError as error:
    sys.exit(f"the wheel has no working warp_rnnt._C: {error}")
from warp_rnnt import rnnt_loss  # noqa: E402

BLANK = 0


def reference_costs(log_probs, labels, frames, label_lengths):
    """-log P(labels | x) per sample: the forward (alpha) recursion."""
    costs = []
    for n in range(log_probs.shape[0]):
        T, U = int(frames[n]), int(label_lengths[n]) + 1
        lp, y = log_probs[n], labels[n]
        alpha = [[None] * U for _ in range(T)]
        for t in range(T):
            for u in range(U):
                if t == 0 and u == 0:
                    alpha[t][u] = lp.new_zeros(())
                    continue
                paths = []
                if t > 0:
                    paths.append(alpha[t - 1][u] + lp[t - 1, u, BLANK])
                if u > 0:
                    paths.append(alpha[t][u - 1] + lp[t, u - 1, y[u - 1]])
                alpha[t][u] = paths[0] if len(paths) == 1 else torch.logaddexp(paths[0], paths[1])
        costs.append(-(alpha[T - 1][U - 1] + lp[T - 1, U - 1, BLANK]))
    return torch.stack(costs)


def check(name, got, want, atol, index):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if got.shape != want.shape or not torch.allclose(got, want, atol=atol, rtol=1e-5):
        diff = (got - want).abs().max().item() if got.shape == want.shape else f"shape {tuple(got.shape)}"
        sys.exit(f"{name} differs from the reference on device {index}: max diff {diff}")


torch.manual_seed(0)
N, T, U, V = 4, 12, 6, 8
frames = torch.tensor([12, 9, 5, 12], dtype=torch.int32)
label_lengths = torch.tensor([5, 3, 4, 0], dtype=torch.int32)  # U - 1 is the longest; one empty transcript
labels = torch.randint(1, V, (N, U - 1), dtype=torch.int32)
log_probs = torch.randn(N, T, U, V).log_softmax(-1)  # float32, as the kernels take it

# the reference, with float64 gradients over the whole padded tensor
ref_lp = log_probs.double().requires_grad_()
ref_costs = reference_costs(ref_lp, labels.long(), frames, label_lengths)
weights = torch.arange(1, N + 1, dtype=torch.float64)  # distinct per-sample upstream gradients
(ref_costs * weights).sum().backward()
ref_grad = ref_lp.grad

for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    # the extension launches on the current device without a guard
    with torch.cuda.device(device):
        xs, ys = log_probs.to(device), labels.to(device)
        xn, yn = frames.to(device), label_lengths.to(device)

        costs, grads = core.rnnt_loss(xs=xs, ys=ys, xn=xn, yn=yn, blank=BLANK, fastemit_lambda=0.0)
        check("warp_rnnt._C.rnnt_loss costs", costs, ref_costs, 1e-4, index)
        check("warp_rnnt._C.rnnt_loss gradient", grads, ref_lp.grad / weights.view(-1, 1, 1, 1), 1e-5, index)
        print(f"device {index}: warp_rnnt._C.rnnt_loss costs and gradient ok")

        for gather in (False, True):
            x = xs.clone().requires_grad_()
            out = rnnt_loss(x, ys, xn, yn, reduction="none", blank=BLANK, gather=gather)
            (out * weights.to(device, torch.float32)).sum().backward()
            layout = "gather" if gather else "plain"
            check(f"rnnt_loss ({layout}) costs", out, ref_costs, 1e-4, index)
            check(f"rnnt_loss ({layout}) gradient", x.grad, ref_grad, 1e-4, index)
            print(f"device {index}: rnnt_loss ({layout}) forward/backward ok")

        # compact layout: (sum_n T_n * (U_n + 1), V) log-probs and concatenated labels
        rows = [log_probs[n, :frames[n], :label_lengths[n] + 1].reshape(-1, V) for n in range(N)]
        x = torch.cat(rows).to(device).requires_grad_()
        flat_labels = torch.cat([labels[n, :label_lengths[n]] for n in range(N)]).to(device)
        out = rnnt_loss(x, flat_labels, xn, yn, reduction="none", blank=BLANK, compact=True)
        (out * weights.to(device, torch.float32)).sum().backward()
        want_grad = torch.cat([ref_grad[n, :frames[n], :label_lengths[n] + 1].reshape(-1, V) for n in range(N)])
        check("rnnt_loss (compact) costs", out, ref_costs, 1e-4, index)
        check("rnnt_loss (compact) gradient", x.grad, want_grad, 1e-4, index)
        print(f"device {index}: rnnt_loss (compact) forward/backward ok")
print("kernel test passed")
