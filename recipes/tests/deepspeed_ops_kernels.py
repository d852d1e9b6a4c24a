"""Kernel test for deepspeed-ops (DeepSpeed with FusedAdam and FusedLion
prebuilt). DeepSpeed JIT-compiles any op the wheel lacks, which would hide a
missing prebuilt op, so the compiled modules are loaded from the wheel's
files directly (no `import deepspeed`, whose runtime dependencies such as
pydantic and hjson the validation interpreter may lack), and on every GPU
their kernels run three optimizer steps against torch.optim.Adam, AdamW and
a plain-PyTorch Lion. When `import deepspeed` works, the public
deepspeed.ops.adam.FusedAdam is checked too, and that it loaded the
prebuilt op rather than a JIT build."""
import importlib.metadata
import importlib.util
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")

CHUNK = 2048 * 32  # deepspeed's MultiTensorApply chunk size


def load_prebuilt(stem):
    files = importlib.metadata.distribution("deepspeed").files or []
    for entry in files:
        path = str(entry)
        name = path.rsplit("/", 1)[-1]
        if path.startswith("deepspeed/ops/") and name.startswith(stem + ".") and name.endswith(".so"):
            spec = importlib.util.spec_from_file_location(stem, entry.locate())
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    sys.exit(f"the wheel has no prebuilt {stem} (DS_BUILD_* did not take effect)")


def check(name, got, want, index):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if not torch.allclose(got, want, atol=1e-5, rtol=1e-4):
        sys.exit(f"{name} differs from the reference on device {index}: max diff {(got - want).abs().max().item():.3g}")


def make_case(seed, fixed_sign=False):
    """Parameters and three steps of gradients. With fixed_sign every
    element's gradient keeps one sign and |g| >= 0.5, so Lion's sign(c) is
    never decided by rounding."""
    generator = torch.Generator().manual_seed(seed)
    shapes = [(256, 128), (1000,), (3, 5, 7)]
    params = [torch.randn(s, generator=generator) for s in shapes]
    if not fixed_sign:
        return params, [[torch.randn(s, generator=generator) for s in shapes] for _ in range(3)]
    signs = [torch.randint(0, 2, s, generator=generator) * 2.0 - 1 for s in shapes]
    return params, [[sign * (0.5 + torch.rand(sign.shape, generator=generator)) for sign in signs] for _ in range(3)]


def adam_direct(adam_op, index, device, adam_w_mode):
    lr, beta1, beta2, eps, decay = 1e-2, 0.9, 0.99, 1e-8, 0.05
    init, grads = make_case(1)
    params = [p.clone().to(device) for p in init]
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_avg_sq = [torch.zeros_like(p) for p in params]
    ref_params = [p.clone().to(device).requires_grad_() for p in init]
    ref_cls = torch.optim.AdamW if adam_w_mode else torch.optim.Adam
    ref = ref_cls(ref_params, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=decay, foreach=False)
    flag = torch.zeros(1, dtype=torch.int, device=device)
    for step, step_grads in enumerate(grads, start=1):
        g = [x.to(device) for x in step_grads]
        adam_op.multi_tensor_adam(CHUNK, flag, [g, params, exp_avg, exp_avg_sq],
                                  lr, beta1, beta2, eps, step, 1 if adam_w_mode else 0, 1, decay)
        for q, x in zip(ref_params, g):
            q.grad = x
        ref.step()
    name = f"fused_adam_op.multi_tensor_adam ({'AdamW' if adam_w_mode else 'Adam'} mode)"
    for p, q in zip(params, ref_params):
        check(f"{name} after 3 steps vs torch.optim.{ref_cls.__name__}", p, q, index)
    print(f"device {index}: {name} matches torch.optim.{ref_cls.__name__} ok")


def lion_direct(lion_op, index, device):
    lr, beta1, beta2, decay = 1e-3, 0.9, 0.99, 0.1
    init, grads = make_case(2, fixed_sign=True)
    params = [p.clone().to(device) for p in init]
    exp_avg = [torch.zeros_like(p) for p in params]
    ref_params = [p.clone().double() for p in init]
    ref_avg = [torch.zeros_like(p) for p in ref_params]
    flag = torch.zeros(1, dtype=torch.int, device=device)
    for step, step_grads in enumerate(grads, start=1):
        lion_op.multi_tensor_lion(CHUNK, flag, [[x.to(device) for x in step_grads], params, exp_avg],
                                  lr, beta1, beta2, step, decay)
        for i, x in enumerate(step_grads):
            x = x.double()
            c = beta1 * ref_avg[i] + (1 - beta1) * x
            # the kernel steps by -lr where c > 0 and by +lr elsewhere
            ref_params[i] = ref_params[i] * (1 - lr * decay) + torch.where(c > 0, -lr, lr)
            ref_avg[i] = beta2 * ref_avg[i] + (1 - beta2) * x
    for p, q in zip(params, ref_params):
        check("fused_lion_op.multi_tensor_lion after 3 steps vs plain-PyTorch Lion", p, q, index)
    print(f"device {index}: fused_lion_op.multi_tensor_lion matches plain-PyTorch Lion ok")


def public_fused_adam(index, device):
    from deepspeed.git_version_info import installed_ops
    from deepspeed.ops.adam import FusedAdam
    if not installed_ops.get("fused_adam"):
        sys.exit(f"deepspeed.git_version_info.installed_ops says fused_adam is not prebuilt: {installed_ops}")
    init, grads = make_case(3)
    params = [p.clone().to(device).requires_grad_() for p in init]
    ref_params = [p.clone().to(device).requires_grad_() for p in init]
    kwargs = dict(lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.05)
    fused = FusedAdam(params, adam_w_mode=True, **kwargs)
    # OpBuilder.load() imports the prebuilt op under this name; a JIT build
    # would be loaded as "fused_adam" from the torch_extensions cache instead
    if "deepspeed.ops.adam.fused_adam_op" not in sys.modules:
        sys.exit("deepspeed.ops.adam.FusedAdam did not load the prebuilt fused_adam_op")
    ref = torch.optim.AdamW(ref_params, foreach=False, **kwargs)
    for step_grads in grads:
        for p, q, x in zip(params, ref_params, step_grads):
            p.grad = x.to(device)
            q.grad = x.to(device)
        fused.step()
        ref.step()
    for p, q in zip(params, ref_params):
        check("deepspeed.ops.adam.FusedAdam after 3 steps vs torch.optim.AdamW", p, q, index)
    print(f"device {index}: deepspeed.ops.adam.FusedAdam matches torch.optim.AdamW ok")


adam_op = load_prebuilt("fused_adam_op")
lion_op = load_prebuilt("fused_lion_op")
try:
    import deepspeed  # noqa: F401
    public_api = True
except ModuleNotFoundError as error:
    if error.name and error.name.split(".")[0] == "deepspeed":
        raise
    public_api = False
    print(f"public API check skipped: deepspeed needs {error.name} at import, which this interpreter lacks")

for index in range(torch.cuda.device_count()):
    device = torch.device("cuda", index)
    with torch.cuda.device(device):  # the ops launch on the current device
        adam_direct(adam_op, index, device, adam_w_mode=False)
        adam_direct(adam_op, index, device, adam_w_mode=True)
        lion_direct(lion_op, index, device)
        if public_api:
            public_fused_adam(index, device)
print("kernel test passed")
