"""On PYTHONPATH of a build step with ARCHBUILD_STEP_GPU_CC=M.N: torch.cuda answers
the questions a setup.py asks before it decides to build its CUDA code as a
machine with one GPU of that compute capability would.

Many setup.py files build their CUDA extension only when
`torch.cuda.is_available()` (DCNv2, maskrcnn-benchmark's descendants) and
read no switch; archbuild's build step sees no GPU, on a GPU machine too, so
they build a CPU-only wheel. archbuild sets this for a second build when the
first had no CUDA code and the setup.py's condition asks torch for a GPU.
Only is_available, device_count, current_device, get_device_capability,
get_device_name and get_device_properties change; nothing runs on a GPU, and
what is compiled follows TORCH_CUDA_ARCH_LIST (arch enforcement holds it to
the asked list whatever the setup.py derives from the capability).
"""
import importlib.abc
import os
import sys
import types


def _capability():
    text = os.environ.get("ARCHBUILD_STEP_GPU_CC", "")
    major, _, minor = text.partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def _answer_as_one_gpu(cuda, capability):
    major, minor = capability
    name = f"archbuild build step (no GPU; building for {major}.{minor})"
    properties = types.SimpleNamespace(name=name, major=major, minor=minor, total_memory=0,
                                       multi_processor_count=0, is_integrated=False, is_multi_gpu_board=False)
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.get_device_capability = lambda device=None: (major, minor)
    cuda.get_device_name = lambda device=None: name
    cuda.get_device_properties = lambda device=None: properties


class _AfterTorchCuda(importlib.abc.MetaPathFinder):
    """Lets the usual finders load torch.cuda, then changes the answers above."""

    def __init__(self, capability):
        self.capability = capability

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch.cuda":
            return None
        for finder in sys.meta_path:
            # (another copy of this module, reached through a second path to it, is passed over too)
            if type(finder).__name__ == type(self).__name__ or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                loader, capability = spec.loader, self.capability
                load = loader.exec_module

                def exec_module(module):
                    load(module)
                    _answer_as_one_gpu(module, capability)

                loader.exec_module = exec_module
                return spec
        return None


def _chain_to_the_next_sitecustomize():
    # The interpreter's own sitecustomize (a distribution's, a venv's) still runs.
    here = os.path.realpath(__file__)
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        candidate = os.path.join(entry or os.curdir, "sitecustomize.py")
        if os.path.isfile(candidate) and os.path.realpath(candidate) != here:
            with open(candidate, "rb") as handle:
                code = compile(handle.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


_wanted = _capability()
if _wanted is not None and not getattr(sys, "_archbuild_gpu_view", False):
    sys._archbuild_gpu_view = True  # once per interpreter, however often this file runs
    if "torch.cuda" in sys.modules:
        _answer_as_one_gpu(sys.modules["torch.cuda"], _wanted)
    else:
        sys.meta_path.insert(0, _AfterTorchCuda(_wanted))
_chain_to_the_next_sitecustomize()
