"""Exercise every op a package registers with the torch dispatcher, comparing the GPU with the CPU.

Usage:
    python exercise_ops.py PACKAGE [PACKAGE...] --out RESULT.json [--budget-s 120] [--devices cuda|cpu]
                           [--save OUTPUTS.pt] [--compare-with OUTPUTS.pt] [--label native|ptx]
                           [--also-import MODULE]...

The ops are found generically: the dispatcher's op names are listed before and after importing each
PACKAGE (torch.library, TORCH_LIBRARY and legacy torch::RegisterOperators registrations all show up
there). Inputs are generated from each op's schema by a bounded search over small shapes and dtypes;
the first input the reference device accepts is used. The reference (the CPU, or with --compare-with
the outputs an earlier --save run stored) and each target device run the op twice on fresh copies of
the same inputs, with the allocators poisoned between runs, so that an op reading uninitialised memory
or racing is caught as well as a kernel that computes something else than the CPU.

--devices cuda (the default): the CPU is the reference, every visible CUDA device a target. Ops with
only a CUDA kernel run twice per GPU and must agree with themselves and be finite.
--devices cpu: no GPU use at all; every op with a CPU kernel runs (twice) on the CPU only.
--save FILE: torch.save the target outputs, keyed "OP | INPUTS" and then by device.
--compare-with FILE: use those saved outputs as the reference (e.g. SASS run vs CUDA_FORCE_PTX_JIT=1 run).
A cpu+cuda op's input must be accepted by the CPU and by the first GPU (CPU kernels often check less).

The process is a supervisor; the work happens in a worker subprocess (this script with --worker) that
reports each op to a progress file. A worker that crashes, hits a CUDA error (the CUDA context is then
unusable) or outlives the time budget is killed and replaced; the op in flight is recorded.

Exit status: 0 ran without mismatch (skips allowed); 1 a mismatch, a kernel error, a GPU crash, or no
GPU with --devices cuda; 2 usage error or a PACKAGE failed to import; 3 torch is not importable.

RESULT.json (written atomically via RESULT.json.tmp in every case where --out is known):
    packages          the PACKAGE arguments, in order
    label             --label ("native" unless given)
    devices           target devices, e.g. ["cuda:0"]; ["cpu"] with --devices cpu
    reference         "cpu" or "saved LABEL outputs" (LABEL: the --label of the --save run)
    namespaces        op namespaces the packages registered, e.g. ["torch_scatter"]
    ops_found         number of ops found in those namespaces
    exercised         [{op, category, inputs, devices, max_abs_diff}]: ran and agreed
    failed            [{op, category, device, inputs, detail, max_abs_diff}]: disagreed or broke on a GPU
    skipped           [{op, category, reason}]: not compared, with the reason
    seconds, budget_s, budget_exhausted, worker_restarts
    summary           one line; starts with "MISMATCH" when an op failed (also the last stdout line)
    skipped_reason    why PACKAGE torch was not exercised, else null
    import_errors     [{package, error}]
    optional_import_errors  [{package, error}] of the --also-import modules (they never fail the run)
    ignored_namespaces  torch's own namespaces that appeared while importing (not exercised)
    other_packages    modules of other distributions that importing the packages pulls in
                      (DeepSpeed imports transformers, and transformers torchvision): imported first,
                      so that the ops they register are theirs, not the package's
    other_namespaces  the op namespaces those other packages registered (not exercised)
    other_packages_note  null, or why other packages could not be looked for (then every new op counts)
    torch_kernel_probe  null, or why one of torch's own CUDA kernels failed on the first GPU (e.g. under
                      CUDA_FORCE_PTX_JIT=1: torch wheels ship no PTX, so kernel errors may be torch's)
Categories: "cpu+cuda", "cuda-only", "cpu-only", "no-kernel". max_abs_diff is a number, or null where
no number describes the difference (shape, dtype or NaN/infinity mismatch, a crash).
"""
import argparse
import ctypes
import importlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib


def _load_sibling(name):
    """A module beside this script, loaded by path: the script's directory stays off sys.path, so
    it cannot shadow a package under test."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pybind_functions = _load_sibling("pybind_functions")

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_NO_TORCH = 0, 1, 2, 3
WORKER_EXIT_CUDA_ERROR = 17  # the worker stops after a CUDA error: its context is unusable
MAX_ATTEMPTS = 40
DEFAULT_MAX_RESTARTS = 20
TORCH_SKIP_REASON = "torch's own ops are covered by its kernel test"
PYBIND = "pybind"  # a function of a pybind11 extension module: its signature comes from its docstring
# Namespaces torch itself registers lazily (while a package imports torch._dynamo etc.); the
# namespaces present right after `import torch` are ignored as well.
TORCH_LAZY_NAMESPACES = {
    "aten", "prim", "prims", "inductor", "_inductor_test", "quantized", "_quantized", "quantized_decomposed",
    "c10d", "c10d_functional", "_c10d_functional", "_c10d_functional_autograd", "_dtensor", "fsdp", "symm_mem",
    "streams", "flex_lib", "onnx", "onnx_symbolic", "higher_order", "mkldnn", "onednn", "profiler", "rngprims",
    "debugprims", "_test", "_TorchScriptTesting"}
CUDA_ERROR_MARKERS = (
    "CUDA error", "device-side assert", "illegal memory access", "CUDA driver error", "cudaError",
    "unspecified launch failure", "misaligned address", "illegal instruction", "CUBLAS_STATUS_EXECUTION_FAILED",
    "CUDNN_STATUS_EXECUTION_FAILED", "CUDA kernel errors")
# (rtol, atol) by dtype name; complex types use their real type's entry.
TOLERANCES = {
    "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9),
    "complex32": (1e-2, 1e-3), "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}
FLOAT8_TOLERANCE = (1.25e-1, 1e-2)
INDEX_LIKE = re.compile(r"index|indices|idx|ptr|batch|perm|(^|_)(row|col|ids?)($|_)")
MASK_LIKE = re.compile(r"mask")
DIM_LIKE = re.compile(r"(^|_)(dim|axis|dims)($|_|\d)")
# Legacy torch::RegisterOperators schemas name no argument: _0, _1, ... (PyG's packages)
ANONYMOUS = re.compile(r"_\d+$")
# ... nor does a pybind11 function bound without py::arg: arg0, arg1, ...
UNNAMED = re.compile(r"^(arg|_)\d+$")
M_PERTURB = -6  # glibc mallopt: fill new CPU allocations with the complement of a byte

torch = None  # imported lazily: the supervisor never imports torch


def _torch():
    global torch
    if torch is None:
        import torch as imported
        torch = imported
    return torch


# ----------------------------------------------------------------------------------------------
# Comparison


class Labelled(list):
    """Outputs already flattened into (label, value) pairs."""


class Opaque:
    """An output with no value to compare (a pybind11 class instance, a handle): it stands in for the
    object, equal to another of the same type, and survives torch.save for --compare-with."""

    PLAIN = (type(None), bool, int, float, complex, str, bytes)

    def __init__(self, type_name):
        self.type_name = type_name

    @classmethod
    def of(cls, value):
        t = _torch()
        if isinstance(value, (t.Tensor, t.dtype, t.device, *cls.PLAIN)):
            return value
        kind = type(value)
        return cls(f"{kind.__module__}.{kind.__qualname__}")

    def __eq__(self, other):
        return isinstance(other, Opaque) and other.type_name == self.type_name

    def __hash__(self):
        return hash(self.type_name)

    def __repr__(self):
        return f"<{self.type_name} object>"


class Comparison:
    def __init__(self, equal, max_abs_diff, detail=""):
        self.equal, self.max_abs_diff, self.detail = equal, max_abs_diff, detail

    def __repr__(self):
        return f"Comparison(equal={self.equal}, max_abs_diff={self.max_abs_diff}, detail={self.detail!r})"


def flatten_outputs(value, prefix="output"):
    """(label, leaf) pairs of a Tensor / nested tuple or list / scalar / None result."""
    if isinstance(value, Labelled):
        return list(value)
    if isinstance(value, (tuple, list)):
        pairs = []
        for index, item in enumerate(value):
            label = f"{prefix} {index}" if prefix == "output" else f"{prefix}.{index}"
            pairs.extend(flatten_outputs(item, label) if isinstance(item, (tuple, list)) else [(label, item)])
        return pairs
    return [(f"{prefix} 0" if prefix == "output" else prefix, value)]


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _tolerance(dtype):
    name = dtype_name(dtype)
    if name.startswith("float8"):
        return FLOAT8_TOLERANCE
    return TOLERANCES.get(name, TOLERANCES["float32"])


def _scalar_text(value):
    if isinstance(value, float):
        return repr(value) if math.isnan(value) or math.isinf(value) else f"{value:.9g}"
    if isinstance(value, complex):
        return f"({value.real:.9g}{value.imag:+.9g}j)"
    return repr(value)


def _compare_scalars(label, expected, actual, expected_name, actual_name):
    numbers = (int, float, complex)
    if type(expected) is not type(actual) and not (isinstance(expected, numbers) and isinstance(actual, numbers)
                                                   and not isinstance(expected, bool) and not isinstance(actual, bool)):
        return Comparison(False, None, f"{label}: {type(expected).__name__} ({expected_name}) vs "
                                       f"{type(actual).__name__} ({actual_name})")
    if isinstance(expected, (float, complex)) or isinstance(actual, (float, complex)):
        a, b = complex(expected), complex(actual)
        a_nan, b_nan = a != a, b != b
        if a_nan or b_nan:
            equal = a_nan and b_nan
            return Comparison(equal, 0.0 if equal else None, "" if equal else
                              f"{label}: NaN mismatch ({expected_name} {_scalar_text(expected)}, "
                              f"{actual_name} {_scalar_text(actual)})")
        if a == b:
            return Comparison(True, 0.0)
        difference = abs(a - b)
        rtol, atol = TOLERANCES["float64"]
        if math.isinf(difference):
            return Comparison(False, None, f"{label}: infinity mismatch ({expected_name} {_scalar_text(expected)}, "
                                           f"{actual_name} {_scalar_text(actual)})")
        equal = difference <= atol + rtol * abs(a)
        return Comparison(equal, difference, "" if equal else
                          f"{label}: largest difference {difference:.6g} ({expected_name} {_scalar_text(expected)}, "
                          f"{actual_name} {_scalar_text(actual)})")
    equal = expected == actual
    difference = abs(expected - actual) if isinstance(expected, int) and isinstance(actual, int) else None
    return Comparison(equal, 0.0 if equal else (float(difference) if difference is not None else None),
                      "" if equal else f"{label}: {expected_name} {_scalar_text(expected)}, "
                                       f"{actual_name} {_scalar_text(actual)}")


def _element(flat, index):
    return flat[index].item()


def _compare_tensors(label, expected, actual, expected_name, actual_name):
    t = _torch()
    expected, actual = expected.detach().cpu(), actual.detach().cpu()
    if expected.layout != t.strided:
        expected = expected.to_dense()
    if actual.layout != t.strided:
        actual = actual.to_dense()
    if expected.is_quantized:
        expected = expected.dequantize()
    if actual.is_quantized:
        actual = actual.dequantize()
    if expected.shape != actual.shape:
        return Comparison(False, None, f"{label}: shape {list(expected.shape)} ({expected_name}) vs "
                                       f"{list(actual.shape)} ({actual_name})")
    if expected.dtype != actual.dtype:
        return Comparison(False, None, f"{label}: dtype {dtype_name(expected.dtype)} ({expected_name}) vs "
                                       f"{dtype_name(actual.dtype)} ({actual_name})")
    if expected.numel() == 0:
        return Comparison(True, 0.0)
    count = expected.numel()
    if not (expected.is_floating_point() or expected.is_complex()):
        if expected.dtype == t.bool:
            e, a = expected.reshape(-1).to(t.int64), actual.reshape(-1).to(t.int64)
        else:
            e, a = expected.reshape(-1), actual.reshape(-1)
        bad = e != a
        # float64 for the magnitude: int64 subtraction can overflow
        difference = (e.to(t.float64) - a.to(t.float64)).abs()
        largest = float(difference.max())
        if not bool(bad.any()):
            return Comparison(True, 0.0)
        index = int(t.where(bad, difference, t.full_like(difference, -1.0)).argmax())
        return Comparison(False, largest, f"{label}: largest difference {largest:.6g} at flat index {index} "
                                          f"({expected_name} {_element(e, index)}, "
                                          f"{actual_name} {_element(a, index)}), {int(bad.sum())} of {count} elements "
                                          "differ")
    rtol, atol = _tolerance(expected.dtype)
    wide = t.complex128 if expected.is_complex() else t.float64
    e, a = expected.reshape(-1).to(wide), actual.reshape(-1).to(wide)
    e_nan, a_nan = t.isnan(e), t.isnan(a)
    nan_mismatch = e_nan != a_nan
    if bool(nan_mismatch.any()):
        index = int(nan_mismatch.nonzero()[0])
        return Comparison(False, None, f"{label}: NaN mismatch at flat index {index} "
                                       f"({expected_name} {_scalar_text(_element(e, index))}, "
                                       f"{actual_name} {_scalar_text(_element(a, index))}), "
                                       f"{int(nan_mismatch.sum())} of {count} elements")
    finite = t.isfinite(e) & t.isfinite(a)
    infinity_mismatch = ~e_nan & ~finite & (e != a)
    if bool(infinity_mismatch.any()):
        index = int(infinity_mismatch.nonzero()[0])
        return Comparison(False, None, f"{label}: infinity mismatch at flat index {index} "
                                       f"({expected_name} {_scalar_text(_element(e, index))}, "
                                       f"{actual_name} {_scalar_text(_element(a, index))})")
    zero = t.zeros((), dtype=t.float64)
    difference = t.where(finite, (e - a).abs(), zero)
    largest = float(difference.max())
    bad = difference > atol + rtol * t.where(finite, e.abs(), zero)
    if not bool(bad.any()):
        return Comparison(True, largest)
    index = int(t.where(bad, difference, t.full_like(difference, -1.0)).argmax())
    return Comparison(False, largest, f"{label}: largest difference {float(difference[index]):.6g} at flat index "
                                      f"{index} ({expected_name} {_scalar_text(_element(e, index))}, "
                                      f"{actual_name} {_scalar_text(_element(a, index))}), "
                                      f"{int(bad.sum())} of {count} elements beyond tolerance "
                                      f"(rtol {rtol:g}, atol {atol:g})")


def compare_outputs(expected, actual, expected_name="reference", actual_name="target"):
    """Compares two op results (Tensor, nested tuples/lists, scalars, None) element by element.

    Returns a Comparison: equal, max_abs_diff (largest absolute difference over all outputs, None where
    no number describes it) and detail (one line naming the first differing output, empty if equal)."""
    t = _torch()
    expected_pairs, actual_pairs = flatten_outputs(expected), flatten_outputs(actual)
    if len(expected_pairs) != len(actual_pairs):
        return Comparison(False, None, f"{len(expected_pairs)} outputs ({expected_name}) vs "
                                       f"{len(actual_pairs)} ({actual_name})")
    results = []
    for (label, left), (_, right) in zip(expected_pairs, actual_pairs):
        if isinstance(left, t.Tensor) and isinstance(right, t.Tensor):
            results.append(_compare_tensors(label, left, right, expected_name, actual_name))
        elif isinstance(left, t.Tensor) or isinstance(right, t.Tensor):
            results.append(Comparison(False, None, f"{label}: {type(left).__name__} ({expected_name}) vs "
                                                   f"{type(right).__name__} ({actual_name})"))
        else:
            results.append(_compare_scalars(label, left, right, expected_name, actual_name))
    largest = None if any(result.max_abs_diff is None for result in results) else max(
        [result.max_abs_diff for result in results], default=0.0)
    first_failure = next((result for result in results if not result.equal), None)
    if first_failure is not None:
        return Comparison(False, largest, first_failure.detail)
    return Comparison(True, largest)


def first_non_finite(outputs):
    """Detail of the first NaN/infinity in floating outputs, or ''."""
    t = _torch()
    for label, value in flatten_outputs(outputs):
        if isinstance(value, t.Tensor) and (value.is_floating_point() or value.is_complex()) and value.numel():
            bad = ~t.isfinite(value.detach().cpu().reshape(-1))
            if bool(bad.any()):
                index = int(bad.nonzero()[0])
                return (f"{label}: non-finite value {_scalar_text(value.reshape(-1)[index].item())} at flat index "
                        f"{index}, {int(bad.sum())} of {value.numel()} elements")
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{label}: non-finite value {value!r}"
    return ""


# ----------------------------------------------------------------------------------------------
# Schema-driven input generation


class Omit:
    """The argument is left out: its schema default applies."""

    def __repr__(self):
        return "<default>"


OMIT = Omit()
TENSOR, TENSORS = "<tensor>", "<tensors>"


class ArgSpec:
    def __init__(self, argument):
        self.name = argument.name
        self.kwarg_only = argument.kwarg_only
        self.is_write = bool(argument.alias_info is not None and argument.alias_info.is_write)
        self.has_default = argument.has_default_value()
        type_name = str(getattr(argument, "real_type", argument.type))
        self.optional = type_name.startswith("Optional[")
        self.inner = type_name[len("Optional["):-1] if self.optional else type_name
        self.type_name = type_name
        self.length = argument.N
        self.candidates = self._candidates()

    def _candidates(self):
        """Values to try, in order; None if the argument cannot be fed."""
        inner, default_first = self.inner, [OMIT] if self.has_default else []
        none_first = [None] if self.optional and not self.has_default else []
        if inner == "Tensor":
            return default_first + none_first + [TENSOR] if (self.optional or self.has_default) else [TENSOR]
        if inner in ("List[Tensor]", "List[Optional[Tensor]]"):
            return default_first + [TENSORS]
        if self.has_default:
            return [OMIT]
        if inner == "int":
            # no 0 for sizes: CPU kernels divide by them (SIGFPE); an unnamed int may be a dim too
            if DIM_LIKE.search(self.name.lower()):
                return none_first + [0, -1, 1]
            return none_first + ([1, 0, -1, 2] if ANONYMOUS.match(self.name) else [1, 2])
        if inner == "float":
            return none_first + [0.5]
        if inner == "bool":
            return none_first + [False]
        if inner == "number":
            return none_first + [0.5, 2]
        if inner == "List[int]":
            # a pybind11 list has no fixed length: one element, then two
            lengths = [self.length] * 2 if self.length else [1, 2]
            return none_first + [[1] * lengths[0], [2] * lengths[1]]
        if self.optional:
            return [None]
        return None

    @property
    def is_tensor(self):
        return self.inner in ("Tensor", "List[Tensor]", "List[Optional[Tensor]]")


class Attempt:
    def __init__(self, first_dtype, pattern, combo, optional_tensors=False, others_int=False, by_name=True):
        self.first_dtype, self.pattern, self.combo = first_dtype, pattern, combo
        self.optional_tensors, self.others_int = optional_tensors, others_int
        self.by_name = by_name  # index-like names get int64 tensors, mask-like names bool ones


# (first tensor's shape, every other tensor's shape): equal ranks, mixed ranks, boxes + scores, NCHW + rois
SHAPE_PATTERNS = [
    ((8,), (8,)), ((8, 8), (8, 8)), ((8, 8, 8), (8, 8, 8)), ((8, 8, 8, 8), (8, 8, 8, 8)),
    ((4,), (4,)), ((4, 4), (4, 4)), ((4, 4, 4), (4, 4, 4)), ((4, 4, 4, 4), (4, 4, 4, 4)),
    ((8, 8), (8,)), ((8, 8, 8), (8, 8)), ((8, 8, 8, 8), (8, 8, 8)),
    ((8, 4), (8,)), ((2, 3, 8, 8), (4, 5))]


def build_attempts(specs):
    """The bounded, ordered list of input variants tried on the reference device."""
    t = _torch()
    combos = max([len(spec.candidates) for spec in specs if not spec.is_tensor] + [1])
    has_optional_tensor = any(spec.is_tensor and len(spec.candidates) > 1 for spec in specs)
    attempts = [Attempt(t.float32, pattern, 0) for pattern in SHAPE_PATTERNS]
    if any(ANONYMOUS.match(spec.name) for spec in specs):
        # no names to guess index tensors and dims from: data first, indices after, each int candidate
        attempts = [Attempt(t.float32, pattern, combo, others_int=True)
                    for combo in range(combos) for pattern in SHAPE_PATTERNS[:2] + SHAPE_PATTERNS[8:9]] + attempts
    attempts += [Attempt(t.float32, pattern, 0, by_name=False) for pattern in SHAPE_PATTERNS]
    attempts += [Attempt(t.float32, pattern, combo)
                 for combo in range(1, combos) for pattern in SHAPE_PATTERNS[:4] + SHAPE_PATTERNS[8:]]
    if has_optional_tensor:
        attempts += [Attempt(t.float32, pattern, 0, optional_tensors=True) for pattern in SHAPE_PATTERNS]
    attempts += [Attempt(t.float64, pattern, 0) for pattern in SHAPE_PATTERNS]
    attempts += [Attempt(t.int64, pattern, 0) for pattern in SHAPE_PATTERNS]
    attempts += [Attempt(t.float32, pattern, 0, others_int=True) for pattern in SHAPE_PATTERNS]
    return attempts


class Inputs:
    """One generated input: CPU values per argument, and its description."""

    def __init__(self, specs, values):
        self.specs, self.values = specs, values

    def describe(self):
        parts = []
        for spec, value in zip(self.specs, self.values):
            if value is not OMIT:
                parts.append(f"{spec.name}: {describe_value(value)}")
        return ", ".join(parts) if parts else "(no arguments)"

    def materialize(self, device):
        """Fresh copies on `device` (args, kwargs); a copy per run, so mutating ops start equal."""
        args, kwargs, keyword = [], {}, False
        for spec, value in zip(self.specs, self.values):
            if value is OMIT:
                keyword = True  # later arguments must be named
                continue
            value = copy_to(value, device)
            if spec.kwarg_only or keyword:
                kwargs[spec.name] = value
            else:
                args.append(value)
        return args, kwargs

    def mutated(self, args, kwargs):
        """(label, tensor) of the arguments the op may write, after the call."""
        pairs, position = [], 0
        for spec, value in zip(self.specs, self.values):
            if value is OMIT:
                continue
            given = kwargs[spec.name] if spec.name in kwargs else args[position]
            if spec.name not in kwargs:
                position += 1
            if spec.is_write and isinstance(given, list):
                pairs.extend((f"argument {spec.name}.{index} (written)", item) for index, item in enumerate(given))
            elif spec.is_write and given is not None:
                pairs.append((f"argument {spec.name} (written)", given))
        return pairs


def describe_value(value):
    t = _torch()
    if isinstance(value, t.Tensor):
        return f"{dtype_name(value.dtype)}{list(value.shape)}"
    if isinstance(value, (list, tuple)) and any(isinstance(item, t.Tensor) for item in value):
        return "[" + ", ".join(describe_value(item) for item in value) + "]"
    return repr(value)


def copy_to(value, device):
    t = _torch()
    if isinstance(value, t.Tensor):
        return value.clone() if device == "cpu" else value.to(device)  # to(): a copy, no kernel of torch's
    if isinstance(value, list):
        return [copy_to(item, device) for item in value]
    return value


def make_inputs(op_name, attempt_number, specs, attempt):
    """The CPU values of one attempt, seeded by the op name so another run regenerates them."""
    t = _torch()
    generator = t.Generator().manual_seed(zlib.crc32(f"{op_name}#{attempt_number}".encode()))
    first_shape, other_shape = attempt.pattern
    smallest = min(first_shape + other_shape)
    values, first_seen = [], False

    def tensor(spec, shape, is_first):
        name = spec.name.lower() if attempt.by_name else ""
        if INDEX_LIKE.search(name):
            dtype = t.int64
        elif MASK_LIKE.search(name):
            return t.rand(shape, generator=generator) < 0.5
        elif is_first:
            dtype = attempt.first_dtype
        else:
            dtype = t.int64 if attempt.others_int else (
                attempt.first_dtype if attempt.first_dtype.is_floating_point else t.float32)
        if dtype.is_floating_point:
            return t.rand(shape, generator=generator, dtype=dtype)
        # sorted along the last dim: still in-range indices, and what ops that take sorted indices
        # (segment reductions over a COO index) require; unsorted ones crash some CPU kernels
        return t.randint(0, smallest, shape, generator=generator, dtype=dtype).sort(dim=-1).values

    for spec in specs:
        candidates = spec.candidates
        if spec.is_tensor:
            wanted = candidates[-1] if attempt.optional_tensors else candidates[0]
            if wanted == TENSOR:
                values.append(tensor(spec, other_shape if first_seen else first_shape, not first_seen))
                first_seen = True
            elif wanted == TENSORS:
                values.append([tensor(spec, other_shape, False) for _ in range(2)])
            else:
                values.append(wanted)
        else:
            values.append(candidates[min(attempt.combo, len(candidates) - 1)])
    return Inputs(specs, values)


def input_variants(op_name, specs):
    """Distinct generated inputs, in the order they are tried, at most MAX_ATTEMPTS."""
    seen, variants = set(), []
    for number, attempt in enumerate(build_attempts(specs)):
        inputs = make_inputs(op_name, number, specs, attempt)
        key = inputs.describe()
        if key not in seen:
            seen.add(key)
            variants.append(inputs)
        if len(variants) == MAX_ATTEMPTS:
            break
    return variants


# ----------------------------------------------------------------------------------------------
# Running an op


def is_cuda_error(error):
    if type(error).__name__ == "AcceleratorError":
        return True
    text = str(error)
    return any(marker in text for marker in CUDA_ERROR_MARKERS)


def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# torch's advice appended to CUDA errors: long, and the same for every op
CUDA_ERROR_BOILERPLATE = ("Search for `", "CUDA kernel errors might be asynchronously", "For debugging consider",
                          "Compile with `TORCH_USE_CUDA_DSA`")


def error_text(error):
    text = str(error)
    for marker in CUDA_ERROR_BOILERPLATE:
        text = text.split(marker, 1)[0]
    return one_line(f"{type(error).__name__}: {text.strip()}")


_libc = None


def _perturb_cpu_allocations(byte):
    """glibc fills each new malloc'ed block with ~byte, so uninitialised CPU memory differs per run."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None)
        _libc.mallopt(M_PERTURB, byte)
    except (OSError, AttributeError):
        pass


def poison_allocator(device, output_specs, run_number):
    """Leaves freed blocks the size of the last outputs filled with a pattern that differs per run."""
    t = _torch()
    for numel, dtype in output_specs:
        if dtype.is_floating_point or dtype.is_complex:
            if "float8" in str(dtype):
                continue
            fill = float("nan") if run_number == 0 else -12345.0
        elif dtype == t.bool:
            fill = run_number == 0
        else:
            info = t.iinfo(dtype)
            fill = info.max if run_number == 0 else info.min + 7
        buffers = [t.full((max(numel, 1),), fill, dtype=dtype) for _ in range(2)]
        if device != "cpu":
            buffers = [buffer.to(device) for buffer in buffers]  # a copy: no kernel needed
        del buffers


def run_op(op, inputs, device, output_specs, run_number):
    """Runs op on fresh copies of inputs; returns Labelled CPU outputs."""
    t = _torch()
    args, kwargs = inputs.materialize(device)
    poison_allocator(device, output_specs, run_number)
    if device == "cpu":
        _perturb_cpu_allocations(0x5A if run_number == 0 else 0xA5)
    try:
        with t.no_grad():
            result = op(*args, **kwargs)
        if device != "cpu":
            t.cuda.synchronize(device)
    finally:
        if device == "cpu":
            _perturb_cpu_allocations(0)
    pairs = flatten_outputs(result) + inputs.mutated(args, kwargs)
    return Labelled((label, value.detach().cpu() if isinstance(value, t.Tensor) else Opaque.of(value))
                    for label, value in pairs)


def has_meta_kernel(qualified_name):
    """Whether the op has a Meta kernel: torch.library.register_fake (and register_meta) put its fake
    implementation there."""
    try:
        return bool(_torch()._C._dispatch_has_kernel_for_dispatch_key(qualified_name, "Meta"))
    except RuntimeError:
        return False


def meta_refusal(op, inputs):
    """None when the op's fake kernel accepts the inputs (shapes and dtypes only, no data), else why not."""
    t = _torch()
    try:
        args, kwargs = inputs.materialize("meta")
        with t.no_grad():
            op(*args, **kwargs)
        return None
    except Exception as error:  # noqa: BLE001
        return error_text(error)


def output_specs_of(outputs):
    t = _torch()
    return [(value.numel(), value.dtype) for _, value in outputs if isinstance(value, t.Tensor)]


# ----------------------------------------------------------------------------------------------
# Discovery


def kernel_category(qualified_name):
    """cpu+cuda / cuda-only / cpu-only / no-kernel from the dispatcher's registrations.

    A catch-all kernel (legacy torch::RegisterOperators, TORCH_LIBRARY's m.def(name, fn)) is stored
    under CompositeImplicitAutograd; Composite* kernels run for tensors of any device."""
    c = _torch()._C

    def has(key):
        try:
            return bool(c._dispatch_has_kernel_for_dispatch_key(qualified_name, key))
        except RuntimeError:
            return False

    def computed(key):
        try:
            return bool(c._dispatch_has_computed_kernel_for_dispatch_key(qualified_name, key))
        except RuntimeError:
            return False

    generic = any(has(key) for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd",
                                       "CompositeExplicitAutogradNonFunctional"))
    cpu = generic or has("CPU") or computed("CPU")
    cuda = generic or has("CUDA") or computed("CUDA")
    if cpu and cuda:
        return "cpu+cuda"
    return "cuda-only" if cuda else "cpu-only" if cpu else "no-kernel"


def split_op_name(qualified_name):
    namespace, rest = qualified_name.split("::", 1)
    name, _, overload = rest.partition(".")
    return namespace, name, overload


def resolve_op(qualified_name):
    t = _torch()
    namespace, name, overload = split_op_name(qualified_name)
    packet = getattr(getattr(t.ops, namespace), name)
    return getattr(packet, overload or "default")


def paired_with_cpu(cuda_function, cpu_function):
    """One callable over a CUDA function and its CPU twin: CPU tensors go to the twin, so the CPU
    reference is the project's own CPU implementation."""
    t = _torch()

    def on_cuda(value):
        if isinstance(value, t.Tensor):
            return value.is_cuda
        return isinstance(value, (list, tuple)) and any(on_cuda(item) for item in value)

    def call(*args, **kwargs):
        cuda = any(on_cuda(value) for value in [*args, *kwargs.values()])
        return (cuda_function if cuda else cpu_function)(*args, **kwargs)

    return call


# Run in a fresh interpreter: imports the packages and writes to argv[1] {"found": [...], "note": ...}:
# the modules (full names, in the order they were imported) that came with them and belong to other
# installed distributions (not the packages' own, not the standard library, not torch). It ends with
# os._exit: a thread or child process the import left running must not hold the answer back.
OTHER_PACKAGES_PROBE = r"""
import importlib, importlib.metadata, json, os, sys
import torch
out, packages = sys.argv[1], sys.argv[2:]
before = set(sys.modules)
for package in packages:
    try:
        importlib.import_module(package)
    except BaseException:
        pass
owners = importlib.metadata.packages_distributions()
tops = {package.split(".")[0] for package in packages}
own = {dist for top in tops for dist in owners.get(top, [])}
found, note = [], None
if not own:
    # (a package on PYTHONPATH, say): nothing tells its modules from others'
    note = "no installed distribution holds " + ", ".join(sorted(tops)) + ": every new op counts as its own"
for name in list(sys.modules) if own else []:
    top = name.split(".")[0]
    if name in before or top in tops or top in sys.stdlib_module_names or top == "torch":
        continue
    dists = set(owners.get(top, []))
    if dists and not dists & own:
        found.append(name)
with open(out, "w", encoding="utf-8") as stream:
    json.dump({"found": found, "note": note}, stream)
sys.stdout.flush()
os._exit(0)
"""


def other_packages_of(packages, timeout_s=60):
    """(modules, note): what OTHER_PACKAGES_PROBE finds for the packages; ([], why) when it cannot tell."""
    with tempfile.TemporaryDirectory(prefix="exercise-ops-probe-") as scratch:
        out = os.path.join(scratch, "other.json")
        why = None
        try:
            probe = subprocess.run([sys.executable, "-c", OTHER_PACKAGES_PROBE, out, *packages],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, timeout=timeout_s, start_new_session=True)
            why = f"the probe for other packages failed (exit {probe.returncode}): {one_line(probe.stderr)}"
        except subprocess.TimeoutExpired:
            why = f"the probe for other packages outlived {timeout_s} s"
        try:
            with open(out, encoding="utf-8") as stream:
                answer = json.load(stream)
            return list(answer["found"]), answer["note"]
        except (OSError, ValueError, KeyError, TypeError):
            return [], why


def discover(packages, progress, also_import=(), other_packages=()):
    """Imports the `other_packages` (best effort), then the packages, then the `also_import` modules
    (best effort: the subpackages that hold the wheel's native libraries, which a package may load
    only when a submodule is used); returns (ops [{op, package, category}], info dict)."""
    t = _torch()
    all_names = t._C._dispatch_get_all_op_names
    before = set(all_names())
    baseline_namespaces = {name.split("::", 1)[0] for name in before}
    for module in other_packages:
        progress.write(event="importing", package=module)
        try:
            importlib.import_module(module)
        except BaseException:  # noqa: BLE001 (theirs to fail: the package's own import says what it needs)
            pass
    others = set(all_names()) - before
    # (torch, always imported, is no package of the wheel's here)
    circular = sorted(p for p in packages if other_packages and p.split(".")[0] != "torch"
                      and p.split(".")[0] in sys.modules)
    if circular:
        # another package imported this one in turn: what was registered then is not only theirs
        others, other_packages = set(), ()
    other_namespaces = sorted({name.split("::", 1)[0] for name in others} - baseline_namespaces)
    before |= others
    ops, import_errors, ignored, skipped_reason = [], [], set(), None
    optional_errors = []
    for package in [*packages, *also_import]:
        optional = package not in packages
        if package == "torch" or package.startswith("torch."):
            skipped_reason = TORCH_SKIP_REASON
            continue
        progress.write(event="importing", package=package)
        try:
            importlib.import_module(package)
        except BaseException as error:  # noqa: BLE001 (SystemExit from a package counts as a failed import)
            (optional_errors if optional else import_errors).append({"package": package, "error": error_text(error)})
            continue
        after = set(all_names())
        for name in sorted(after - before):
            namespace = name.split("::", 1)[0]
            if namespace in baseline_namespaces or namespace in TORCH_LAZY_NAMESPACES:
                ignored.add(namespace)
                continue
            ops.append({"op": name, "package": package, "category": kernel_category(name)})
        before = after
        listed = {entry["op"] for entry in ops}
        for module_name in pybind_functions.extension_modules(package.split(".")[0]):
            for function_name, _, _ in pybind_functions.module_functions(sys.modules[module_name]):
                qualified = f"{module_name}::{function_name}"
                if qualified not in listed:
                    listed.add(qualified)
                    ops.append({"op": qualified, "package": package, "category": PYBIND})
    return ops, {"import_errors": import_errors, "optional_import_errors": optional_errors,
                 "ignored_namespaces": sorted(ignored), "skipped_reason": skipped_reason,
                 "other_packages": list(other_packages), "other_namespaces": other_namespaces,
                 "circular_import": circular}


# ----------------------------------------------------------------------------------------------
# Worker


class Progress:
    """Appends JSON lines to the progress file the supervisor reads."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, **event):
        event["t"] = time.time()
        os.write(self.fd, (json.dumps(event) + "\n").encode())


def read_events(path):
    events = []
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass  # a line cut short by a crash
    except FileNotFoundError:
        pass
    return events


class Outcome:
    def __init__(self):
        self.exercised, self.failed, self.skipped = [], [], []
        self.cuda_error = False

    def as_dict(self):
        return {"exercised": self.exercised, "failed": self.failed, "skipped": self.skipped}


class Worker:
    def __init__(self, options, progress):
        self.options, self.progress = options, progress
        self.saved = None  # outputs of --compare-with
        self.saved_label = "native"
        self.to_save = None
        self.torch_kernel_probe = None  # why torch's own CUDA kernels fail here (CUDA_FORCE_PTX_JIT=1), else None

    def load_saved(self):
        t = _torch()
        if self.options.compare_with:
            data = t.load(self.options.compare_with, weights_only=True)
            self.saved, self.saved_label = data["outputs"], data.get("label", "native")
        if self.options.save:
            partial = self.options.save + ".partial"
            self.to_save = t.load(partial, weights_only=True) if os.path.exists(partial) else {
                "format": "archbuild-exercise-ops-1", "label": self.options.label, "outputs": {}}

    def store(self, key, device, outputs):
        if self.to_save is None:
            return
        entry = self.to_save["outputs"].setdefault(key, {})
        entry[device] = [[label, value] for label, value in outputs]
        partial = self.options.save + ".partial"
        _torch().save(self.to_save, partial + ".tmp")
        os.replace(partial + ".tmp", partial)

    def saved_reference(self, key, device):
        entry = self.saved.get(key)
        if not entry:
            return None, None
        name = device if device in entry else sorted(entry)[0]
        return Labelled((label, value) for label, value in entry[name]), f"{self.saved_label} {name}"

    def kernel_error(self, error):
        detail = f"kernel error: {error_text(error)}"
        if self.torch_kernel_probe and "no kernel image" in str(error):
            detail += f" [torch's own kernels fail on this GPU too: {self.torch_kernel_probe}]"
        return detail

    def exercise(self, op_entry, devices):
        """Runs one op; returns an Outcome. Raises nothing except on a CUDA error (outcome.cuda_error)."""
        name, category = op_entry["op"], op_entry["category"]
        outcome = Outcome()

        def skip(reason):
            outcome.skipped.append({"op": name, "category": category, "reason": one_line(reason, 500)})
            return outcome

        cpu_mode = self.options.devices == "cpu"
        if category == "no-kernel":
            return skip("no-kernel: no CPU, CUDA or device-generic kernel is registered")
        if category == "cpu-only" and not cpu_mode:
            return skip("cpu-only: no CUDA kernel (not exercised on a GPU)")
        if category == "cuda-only" and cpu_mode:
            return skip("cuda-only: not run with --devices cpu")
        if not cpu_mode and not devices:
            return skip("no CUDA device is visible")
        if category == PYBIND:
            return self.exercise_pybind(op_entry, devices)
        try:
            namespace, short, overload = split_op_name(name)
            schema = _torch()._C._get_schema(f"{namespace}::{short}", overload)
            op = resolve_op(name)
        except Exception as error:  # noqa: BLE001
            return skip(f"no callable schema: {error_text(error)}")
        specs = [ArgSpec(argument) for argument in schema.arguments]
        for spec in specs:
            if spec.candidates is None:
                return skip(f"cannot feed argument {spec.name} of type {spec.type_name}")
        if not any(spec.is_tensor for spec in specs):
            return skip("no tensor arguments: nothing device-specific to compare")
        return self.compare(name, category, op, specs, devices, outcome)

    def exercise_pybind(self, op_entry, devices):
        """A pybind11 function: each feedable overload is tried. With a CPU twin in its module
        (forward_cuda / forward_cpu) the twin is the reference; otherwise the function runs on each GPU
        only (twice, agreeing with itself, finite): CPU tensors handed to a CUDA entry point that does
        not check its inputs would break the CUDA context, not test anything."""
        name = op_entry["op"]
        module_name, function_name = name.split("::", 1)
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        names = set(dir(module))
        function = getattr(module, function_name)
        twin = pybind_functions.cpu_twin_name(function_name, names)
        op = paired_with_cpu(function, getattr(module, twin)) if twin else function
        cpu_mode = self.options.devices == "cpu"
        skipped = Outcome()
        for signature in pybind_functions.signatures(function_name, function.__doc__):
            specs = [ArgSpec(argument) for argument in signature.arguments]
            if not any(spec.is_tensor for spec in specs):
                skipped.skipped.append({"op": name, "category": PYBIND,
                                        "reason": f"{signature.describe()}: no tensor arguments"})
                continue
            for category in (["cpu-only"] if cpu_mode else ["cpu+cuda"] if twin else ["cuda-only"]):
                outcome = self.compare(name, category, op, specs, devices, Outcome(), shown=f"{PYBIND} {category}")
                if outcome.exercised or outcome.failed:
                    return outcome
                skipped.skipped.extend(outcome.skipped)
        if not skipped.skipped:
            shown = "; ".join(match.group(0).strip()
                              for match in pybind_functions.signature_lines(function_name, function.__doc__))
            skipped.skipped.append({"op": name, "category": PYBIND,
                                    "reason": f"no signature the exerciser can feed: {shown}"})
        # one line for the function: the last reason says the most (the CUDA-only search)
        skipped.skipped = [skipped.skipped[-1]]
        return skipped

    def compare(self, name, category, op, specs, devices, outcome, shown=None):
        """Searches an input `op` accepts and compares its devices' results (the body of exercise)."""
        cpu_mode = self.options.devices == "cpu"
        shown = shown or category

        def skip(reason):
            outcome.skipped.append({"op": name, "category": shown, "reason": one_line(reason, 500)})
            return outcome

        def fail(device, inputs_text, detail, max_abs_diff=None):
            outcome.failed.append({"op": name, "category": shown, "device": device, "inputs": inputs_text,
                                   "detail": one_line(detail, 500), "max_abs_diff": max_abs_diff})
            return outcome

        reference_device = devices[0] if category == "cuda-only" else "cpu"
        # A cpu+cuda op's input must suit the GPU too: CPU kernels often check less (roi_pool's rois shape).
        probe_device = devices[0] if category == "cpu+cuda" and not cpu_mode else None
        # search: the first generated input the reference device (and the probed GPU) accepts
        inputs, outputs, last_error, gpu_refusal = None, None, "none tried", None
        # a GPU-only op with a fake (meta) kernel: inputs it refuses are found without touching the GPU
        meta_checked = reference_device != "cpu" and "::" in name and has_meta_kernel(name)
        for candidate in input_variants(name, specs):
            if meta_checked:
                refusal = meta_refusal(op, candidate)
                if refusal:
                    last_error = f"{refusal} (its fake kernel)"
                    continue
            self.progress.write(event="phase", op=name, device=reference_device, what="search",
                                inputs=candidate.describe())
            try:
                outputs = run_op(op, candidate, reference_device, [], 0)
            except Exception as error:  # noqa: BLE001
                if reference_device != "cpu" and is_cuda_error(error):
                    outcome.cuda_error = True
                    return fail(reference_device, candidate.describe(), self.kernel_error(error))
                last_error = error_text(error)
                continue
            if probe_device:
                self.progress.write(event="phase", op=name, device=probe_device, what="probe",
                                    inputs=candidate.describe())
                try:
                    run_op(op, candidate, probe_device, [], 0)
                except Exception as error:  # noqa: BLE001
                    if is_cuda_error(error):
                        outcome.cuda_error = True
                        return fail(probe_device, candidate.describe(), self.kernel_error(error))
                    gpu_refusal = gpu_refusal or f"{probe_device}: {error_text(error)} (inputs {candidate.describe()})"
                    continue
            inputs = candidate
            break
        if inputs is None and gpu_refusal:
            return skip(f"the CUDA kernel refused the input the CPU accepted: {gpu_refusal}")
        if inputs is None:
            return skip(f"no generated input was accepted (last error: {one_line(last_error, 200)})")
        described = inputs.describe()
        # what it returns, not the arguments it may write (a pybind11 function's every tensor)
        returned = [value for label, value in outputs if not label.startswith("argument ")]
        opaque = [value for value in returned if isinstance(value, Opaque)]
        if opaque and len(opaque) == len(returned):
            return skip(f"returns only {', '.join(sorted({repr(value) for value in opaque}))}: no value to compare "
                        f"(inputs {described})")
        key = f"{name} | {described}"
        specs_for_poison = output_specs_of(outputs)

        def run_twice(device):
            runs = []
            self.progress.write(event="phase", op=name, device=device, what="run", inputs=described)
            for number in range(2):
                runs.append(run_op(op, inputs, device, specs_for_poison, number))
            return runs

        reference, reference_name, largest = None, None, 0.0
        if self.saved is None and category != "cuda-only":
            try:
                cpu_runs = run_twice("cpu")
            except Exception as error:  # noqa: BLE001
                return skip(f"the CPU refused the accepted input on a repeat run: {error_text(error)}")
            same = compare_outputs(cpu_runs[0], cpu_runs[1], "cpu run 1", "cpu run 2")
            if not same.equal:
                return skip(f"reference not deterministic ({same.detail})")
            reference, reference_name = cpu_runs[0], "cpu"
            if cpu_mode:
                largest = same.max_abs_diff
                if not self.options.compare_with:
                    self.store(key, "cpu", cpu_runs[0])

        targets = (["cpu"] if self.saved is not None else []) if cpu_mode else list(devices)
        ran_on = [] if targets else ["cpu"]
        refusals, guessed = [], []
        for device in targets:
            if self.saved is not None:
                reference, reference_name = self.saved_reference(key, device)
                if reference is None:
                    return skip(f"no saved outputs for these inputs ({described}) in {self.options.compare_with}")
            try:
                runs = run_twice(device)
            except Exception as error:  # noqa: BLE001
                if device != "cpu" and is_cuda_error(error):
                    outcome.cuda_error = True
                    return fail(device, described, self.kernel_error(error))
                refusals.append(f"{device}: {error_text(error)}")
                continue
            own_name = f"{self.options.label} {device}" if self.saved is not None else device
            same = compare_outputs(runs[0], runs[1], f"{own_name} run 1", f"{own_name} run 2")
            if not same.equal:
                if device == "cpu":
                    return skip(f"not deterministic on the CPU ({same.detail})")
                if reference is None and specs and all(UNNAMED.search(spec.name) for spec in specs):
                    # Nothing says what its arguments mean, nor is there a CPU result: a size the
                    # guess got wrong (a head size beyond the row) reads past a tensor, and such
                    # reads differ run to run as uninitialised memory would. Not the wheel's fault.
                    guessed.append(f"two runs on {device} differ for inputs guessed without argument names "
                                   f"({described}): {same.detail}; its kernel test is the proof")
                    continue
                fail(device, described, f"two runs on {device} differ: {same.detail}", same.max_abs_diff)
                continue
            self.store(key, device, runs[0])
            if reference is None:
                # cuda-only without saved outputs: the kernel must at least produce finite values
                problem = first_non_finite(runs[0])
                if problem:
                    fail(device, described, problem)
                    continue
                ran_on.append(device)
                if largest is not None:
                    largest = None if same.max_abs_diff is None else max(largest, same.max_abs_diff)
                continue
            result = compare_outputs(reference, runs[0], reference_name, own_name)
            if not result.equal:
                fail(device, described, result.detail, result.max_abs_diff)
                continue
            ran_on.append(device)
            if largest is not None:
                largest = None if result.max_abs_diff is None else max(largest, result.max_abs_diff)
        if outcome.failed:
            return outcome
        if not ran_on and guessed:
            return skip("; ".join(guessed))
        if not ran_on:
            what = "CUDA kernel" if not cpu_mode else "CPU"
            return skip(f"the {what} refused the input the CPU accepted: {'; '.join(refusals)}"
                        if category != "cuda-only" else f"refused on a repeat run: {'; '.join(refusals)}")
        outcome.exercised.append({"op": name, "category": shown, "inputs": described, "devices": ran_on,
                                  "max_abs_diff": largest})
        return outcome


def probe_torch_kernels(device):
    """None if one of torch's own CUDA kernels runs on `device`, else the error (e.g. under
    CUDA_FORCE_PTX_JIT=1 with a torch that ships no PTX for it: every op using torch kernels fails)."""
    t = _torch()
    try:
        t.zeros(4, device=device).add_(1)
        t.cuda.synchronize(device)
        return None
    except Exception as error:  # noqa: BLE001
        return error_text(error)


def die_with_parent():
    """The kernel kills the worker when the supervisor dies (Linux PR_SET_PDEATHSIG)."""
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the supervisor died before prctl took effect
        os._exit(1)


def worker_main(options):
    die_with_parent()
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing op must not leave a core file of GiBs
    except (ImportError, ValueError, OSError):
        pass
    progress = Progress(options.progress)
    begun = {event["op"] for event in read_events(options.progress) if event.get("event") in ("begin", "done")}
    try:
        _torch()
    except BaseException as error:  # noqa: BLE001
        progress.write(event="fatal", code=EXIT_NO_TORCH, message=f"torch is not importable: {error_text(error)}")
        return EXIT_NO_TORCH
    progress.write(event="torch", version=str(torch.__version__))
    earlier_plan = next((event for event in read_events(options.progress) if event.get("event") == "plan"), None)
    probe_note = None
    if earlier_plan is not None:
        other_packages = earlier_plan.get("other_packages", [])
    else:
        probed = [p for p in [*options.packages, *options.also_import] if p.split(".")[0] != "torch"]
        other_packages, probe_note = other_packages_of(probed) if probed else ([], None)
    ops, info = discover(options.packages, progress, options.also_import, other_packages)
    circular = info.pop("circular_import")
    info["other_packages_note"] = (f"{', '.join(circular)} imported by the other packages in turn: every new op "
                                   f"counts as its own" if circular else probe_note)
    devices = ["cpu"] if options.devices == "cpu" else [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    worker = Worker(options, progress)
    try:
        worker.load_saved()
    except Exception as error:  # noqa: BLE001
        progress.write(event="fatal", code=EXIT_USAGE, message=f"cannot read saved outputs: {error_text(error)}")
        return EXIT_USAGE
    if earlier_plan is None:
        probe = probe_torch_kernels(devices[0]) if options.devices == "cuda" and devices else None
        progress.write(event="plan", ops=ops, devices=devices, saved_label=worker.saved_label,
                       torch_kernel_probe=probe, **info)
        if probe and "no kernel image" not in probe:
            return WORKER_EXIT_CUDA_ERROR  # the probe's error may have left the CUDA context unusable
        worker.torch_kernel_probe = probe
    else:
        worker.torch_kernel_probe = earlier_plan.get("torch_kernel_probe")
    gpu_devices = [] if options.devices == "cpu" else devices
    for entry in ops:
        if entry["op"] in begun:
            continue
        progress.write(event="begin", op=entry["op"])
        try:
            outcome = worker.exercise(entry, gpu_devices)
        except BaseException as error:  # noqa: BLE001 (an op may raise SystemExit and the like)
            outcome = Outcome()
            if is_cuda_error(error) and options.devices != "cpu":
                outcome.cuda_error = True
                outcome.failed.append({"op": entry["op"], "category": entry["category"], "device": "cuda",
                                       "inputs": "", "detail": f"kernel error: {error_text(error)}",
                                       "max_abs_diff": None})
            else:
                outcome.skipped.append({"op": entry["op"], "category": entry["category"],
                                        "reason": f"internal error while exercising: {error_text(error)}"})
        progress.write(event="done", op=entry["op"], **outcome.as_dict())
        if outcome.cuda_error:
            return WORKER_EXIT_CUDA_ERROR
    progress.write(event="finished")
    return 0


# ----------------------------------------------------------------------------------------------
# Supervisor


class RunState:
    """What the progress file says so far."""

    def __init__(self, path):
        self.path = path
        self.offset, self.buffer = 0, b""
        self.plan, self.fatal, self.finished, self.torch_version = None, None, False, None
        self.done = {}  # op -> done event
        self.order = []  # op names in completion order
        self.in_flight, self.in_flight_since, self.phase = None, None, None
        self.importing = None

    def update(self):
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self.offset)
                data = stream.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            try:
                self.apply(json.loads(line))
            except ValueError:
                pass

    def apply(self, event):
        kind = event.get("event")
        if kind == "plan" and self.plan is None:
            self.plan = event
        elif kind == "fatal":
            self.fatal = event
        elif kind == "torch":
            self.torch_version = event.get("version")
        elif kind == "importing":
            self.importing = event.get("package")
        elif kind == "begin":
            self.in_flight, self.in_flight_since, self.phase = event["op"], time.time(), None
        elif kind == "phase":
            self.phase = event
        elif kind == "done":
            if event["op"] not in self.done:
                self.order.append(event["op"])
            self.done[event["op"]] = event
            if self.in_flight == event["op"]:
                self.in_flight, self.phase = None, None
        elif kind == "finished":
            self.finished = True

    def record(self, progress_writer, op, **lists):
        """Appends a done event written by the supervisor (the worker is gone)."""
        event = {"event": "done", "op": op, "exercised": [], "failed": [], "skipped": []}
        event.update(lists)
        progress_writer.write(**event)
        self.update()


def describe_exit(returncode):
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def log_tail(path, lines=3):
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()[-4000:]
    except OSError:
        return ""
    return one_line(" | ".join(line for line in text.strip().splitlines()[-lines:]), 400)


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


class Supervisor:
    def __init__(self, options):
        self.options = options
        self.started = time.monotonic()
        self.deadline = self.started + options.budget_s
        self.workdir = tempfile.mkdtemp(prefix="exercise-ops-")
        self.progress_path = os.path.join(self.workdir, "progress.jsonl")
        self.log_path = os.path.join(self.workdir, "worker.log")
        self.state = RunState(self.progress_path)
        self.writer = Progress(self.progress_path)
        self.restarts = 0
        self.budget_exhausted = False
        self.stop_reason = None  # why ops were not reached, when the loop ended early
        self.worker = None  # the running worker, killed if the supervisor is stopped

    def worker_command(self):
        command = [sys.executable, os.path.abspath(__file__), "--worker", "--progress", self.progress_path,
                   *self.options.packages, "--out", self.options.out, "--devices", self.options.devices,
                   "--label", self.options.label]
        for module in self.options.also_import:
            command += ["--also-import", module]
        if self.options.save:
            command += ["--save", self.options.save]
        if self.options.compare_with:
            command += ["--compare-with", self.options.compare_with]
        return command

    def watch(self, process):
        """Waits for the worker; kills it at the budget or at the per-op limit. Returns why it ended."""
        while True:
            try:
                process.wait(timeout=0.2)
                return "exited"
            except subprocess.TimeoutExpired:
                pass
            self.state.update()
            now = time.monotonic()
            if now >= self.deadline:
                kill_group(process)
                return "budget"
            if (self.state.in_flight and self.options.op_timeout_s > 0
                    and time.time() - self.state.in_flight_since > self.options.op_timeout_s):
                kill_group(process)
                return "op-timeout"

    def crash_record(self, op, why, host_signal=False):
        """Done event for the op in flight when the worker went away. A pybind11 function's inputs are
        guessed from its docstring: one that kills the process on the host side (SIGSEGV, SIGFPE) with
        them does not check its arguments, which says nothing of the build; a CUDA error still fails."""
        phase = self.state.phase or {}
        device = phase.get("device", "cpu")
        inputs = phase.get("inputs", "")
        category = self.category(op)
        where = f" on {device}" if device else ""
        tried = f" (inputs {inputs})" if inputs else ""
        if host_signal and category.startswith("pybind"):
            self.state.record(self.writer, op, skipped=[{
                "op": op, "category": category,
                "reason": f"{why}{where} with guessed inputs{tried}: the function does not check its arguments "
                          f"(a host-side crash, no CUDA error); a recipe's kernel test drives it with valid ones"}])
        elif device.startswith("cuda"):
            # the GPU side broke: a defect of the build, not of the generated inputs
            self.state.record(self.writer, op, failed=[{
                "op": op, "category": category, "device": device, "inputs": inputs,
                "detail": f"{why}{where}", "max_abs_diff": None}])
        else:
            self.state.record(self.writer, op, skipped=[{"op": op, "category": category,
                                                         "reason": f"{why}{where}{tried}"}])

    def run(self):
        while not self.state.finished:
            if time.monotonic() >= self.deadline:
                self.budget_exhausted = True
                break
            done_before = len(self.state.done)
            with open(self.log_path, "ab") as log:
                # a process group of its own (killed as a whole), but the same session as the supervisor,
                # so that whoever runs this script still sees and can stop everything it started
                group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
                process = subprocess.Popen(self.worker_command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           **group)
            self.worker = process
            ended = self.watch(process)
            self.state.update()
            if self.state.fatal or self.state.finished:
                break
            in_flight = self.state.in_flight
            if ended == "budget":
                self.budget_exhausted = True
                if in_flight:
                    self.state.record(self.writer, in_flight, skipped=[{
                        "op": in_flight, "category": self.category(in_flight), "reason": "stopped at the time budget"}])
                break
            if self.state.plan is None:
                # died while importing torch or a package
                why = f"{describe_exit(process.returncode)}: {log_tail(self.log_path)}"
                if self.state.torch_version is None:
                    # a crash is not "no torch" (exit 3 means torch is absent): the run failed
                    self.state.fatal = {"code": EXIT_MISMATCH,
                                        "message": f"importing torch crashed the worker: {why}"}
                else:
                    self.state.fatal = {"code": EXIT_USAGE,
                                        "message": f"importing {self.state.importing} crashed the worker: {why}"}
                break
            if ended == "op-timeout" and in_flight:
                self.crash_record(in_flight, f"ran longer than the per-op limit of {self.options.op_timeout_s:g} s")
            elif in_flight:
                self.crash_record(in_flight, f"crashed the worker: {describe_exit(process.returncode)}",
                                  host_signal=process.returncode < 0)
            elif process.returncode != WORKER_EXIT_CUDA_ERROR and len(self.state.done) == done_before:
                self.stop_reason = (f"the worker failed without progress ({describe_exit(process.returncode)}: "
                                    f"{log_tail(self.log_path)})")
                break
            self.restarts += 1
            if self.restarts > self.options.max_restarts:
                self.stop_reason = f"more than {self.options.max_restarts} worker restarts"
                break

    def category(self, op):
        if self.state.plan:
            for entry in self.state.plan["ops"]:
                if entry["op"] == op:
                    return entry["category"]
        return ""

    def result(self):
        options, state = self.options, self.state
        plan = state.plan or {}
        ops = plan.get("ops", [])
        exercised, failed, skipped = [], [], []
        for entry in ops:
            event = state.done.get(entry["op"])
            if event is None:
                reason = ("not reached: time budget" if self.budget_exhausted else
                          f"not reached: {self.stop_reason}" if self.stop_reason else "not reached")
                skipped.append({"op": entry["op"], "category": entry["category"], "reason": reason})
                continue
            exercised += event.get("exercised", [])
            failed += event.get("failed", [])
            skipped += event.get("skipped", [])
        if options.devices == "cpu":
            devices = ["cpu"]
        else:
            devices = plan.get("devices", [])
        reference = f"saved {plan.get('saved_label', 'native')} outputs" if options.compare_with else "cpu"
        namespaces = sorted({entry["op"].split("::", 1)[0] for entry in ops})
        import_errors = plan.get("import_errors", [])
        result = {
            "packages": options.packages, "label": options.label, "devices": devices, "reference": reference,
            "namespaces": namespaces, "ops_found": len(ops), "exercised": exercised, "failed": failed,
            "skipped": skipped, "seconds": round(time.monotonic() - self.started, 2),
            "budget_s": int(options.budget_s) if options.budget_s.is_integer() else options.budget_s,
            "budget_exhausted": self.budget_exhausted, "worker_restarts": self.restarts,
            "skipped_reason": plan.get("skipped_reason",
                                       TORCH_SKIP_REASON if "torch" in options.packages else None),
            "import_errors": import_errors, "optional_import_errors": plan.get("optional_import_errors", []),
            "ignored_namespaces": plan.get("ignored_namespaces", []),
            "other_packages": plan.get("other_packages", []),
            "other_namespaces": plan.get("other_namespaces", []),
            "other_packages_note": plan.get("other_packages_note"),
            "torch_kernel_probe": plan.get("torch_kernel_probe"),
        }
        code = EXIT_OK
        if state.fatal:
            code = state.fatal.get("code", EXIT_MISMATCH)
            result["summary"] = one_line(state.fatal.get("message", "the worker failed"), 500)
        elif state.plan is None:
            code = EXIT_MISMATCH
            result["summary"] = ("time budget exhausted before the ops were discovered" if self.budget_exhausted
                                 else f"the worker failed before discovering the ops: {log_tail(self.log_path)}")
        else:
            code, result["summary"] = self.summary(result, import_errors)
        return code, result

    def summary(self, result, import_errors):
        options = self.options
        devices = result["devices"]
        gpus = f"{len(devices)} GPU" + ("s" if len(devices) != 1 else "")
        reference = result["reference"] if options.compare_with else "CPU"
        if options.devices == "cpu":
            versus = f"{reference} vs the CPU" if options.compare_with else "CPU only, no GPU use"
        else:
            versus = f"{reference} vs {gpus}"
        what = ", ".join(result["namespaces"]) or ", ".join(p for p in options.packages if p != "torch") or "torch"
        found = result["ops_found"]
        tail = []
        if result["skipped"]:
            tail.append(f"{len(result['skipped'])} skipped")
        if self.budget_exhausted:
            tail.append(f"time budget of {options.budget_s:g} s exhausted")
        if self.stop_reason:
            tail.append(f"stopped: {self.stop_reason}")
        if result.get("torch_kernel_probe"):
            tail.append(f"torch's own CUDA kernels fail on this GPU too ({result['torch_kernel_probe'][:120]})")
        tail_text = "; " + "; ".join(tail) if tail else ""
        code = EXIT_OK
        if result["failed"]:
            first = result["failed"][0]
            failed_ops = len({entry["op"] for entry in result["failed"]})
            line = (f"MISMATCH: {first['op']} on {first['device']} ({first['inputs'] or 'no inputs'}): "
                    f"{first['detail']}; {failed_ops} of {found} ops of {what} failed ({versus}), "
                    f"{len(result['exercised'])} within tolerance{tail_text}")
            code = EXIT_MISMATCH
        elif options.devices != "cpu" and not devices and found:
            line = f"NO GPU: torch sees no CUDA device; {found} ops of {what} not exercised"
            code = EXIT_MISMATCH
        elif not found:
            line = (f"{what}: {result['skipped_reason']}" if result["skipped_reason"] and what == "torch"
                    else f"found no ops registered by {what}")
        else:
            line = (f"exercised {len(result['exercised'])} of {found} ops of {what} ({versus}): "
                    f"all within tolerance{tail_text}")
        if import_errors:
            first = import_errors[0]
            failure = f"IMPORT FAILED: {first['package']}: {first['error']}"
            line = f"{line}; {failure}" if code == EXIT_MISMATCH and result["failed"] else f"{failure}; {line}"
            code = EXIT_USAGE
        return code, one_line(line, 1000)

    def cleanup(self):
        for name in os.listdir(self.workdir):
            try:
                os.unlink(os.path.join(self.workdir, name))
            except OSError:
                pass
        try:
            os.rmdir(self.workdir)
        except OSError:
            pass


def write_result(path, result):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(result, stream, indent=1, allow_nan=False, default=str)
        stream.write("\n")
    os.replace(temporary, path)


def finalize_saved_outputs(options):
    if not options.save:
        return
    partial = options.save + ".partial"
    if os.path.exists(partial):
        os.replace(partial, options.save)


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_arguments(argv):
    parser = Parser(prog="exercise_ops.py", description=__doc__.split("\n", 1)[0])
    parser.add_argument("packages", nargs="+", metavar="PACKAGE")
    parser.add_argument("--out", required=True, metavar="RESULT.json")
    parser.add_argument("--budget-s", type=float, default=120.0)
    parser.add_argument("--devices", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--save", metavar="OUTPUTS.pt")
    parser.add_argument("--compare-with", metavar="OUTPUTS.pt")
    parser.add_argument("--label", default="native")
    parser.add_argument("--also-import", action="append", default=[], metavar="MODULE",
                        help="import MODULE too, after the packages, and ignore it if it fails (repeatable)")
    parser.add_argument("--op-timeout-s", type=float, default=60.0,
                        help="kill the worker when one op runs longer (0: only the budget applies)")
    parser.add_argument("--max-restarts", type=int, default=DEFAULT_MAX_RESTARTS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--progress", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.budget_s <= 0:
        raise UsageError("--budget-s must be positive")
    if options.worker and not options.progress:
        raise UsageError("--worker needs --progress")
    if options.compare_with and not os.path.isfile(options.compare_with):
        raise UsageError(f"--compare-with {options.compare_with}: no such file")
    return options


def out_path_from(argv):
    for index, argument in enumerate(argv):
        if argument == "--out" and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith("--out="):
            return argument.split("=", 1)[1]
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        options = parse_arguments(argv)
    except UsageError as error:
        print(f"exercise_ops.py: usage error: {error}", file=sys.stderr)
        out = out_path_from(argv)
        if out and "--worker" not in argv:
            try:
                write_result(out, {"packages": [], "label": "", "devices": [], "reference": "", "namespaces": [],
                                   "ops_found": 0, "exercised": [], "failed": [], "skipped": [], "seconds": 0,
                                   "budget_s": 0, "budget_exhausted": False, "worker_restarts": 0,
                                   "skipped_reason": None, "import_errors": [], "ignored_namespaces": [],
                                   "summary": f"usage error: {error}"})
            except OSError:
                pass
        return EXIT_USAGE
    if options.worker:
        # no interpreter teardown: after a CUDA error it can hang in the driver; progress is written already
        code = worker_main(options)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    supervisor = Supervisor(options)
    if options.save and os.path.exists(options.save + ".partial"):
        os.unlink(options.save + ".partial")

    def stop(signal_number, _frame):
        raise SystemExit(128 + signal_number)

    for signal_number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signal_number, stop)
    try:
        supervisor.run()
        code, result = supervisor.result()
        if code in (EXIT_OK, EXIT_MISMATCH):
            finalize_saved_outputs(options)
    finally:
        # stopped from outside (SIGTERM, Ctrl-C) or done: no worker may outlive the supervisor
        if supervisor.worker is not None and supervisor.worker.poll() is None:
            kill_group(supervisor.worker)
        supervisor.cleanup()
    write_result(options.out, result)
    for entry in result["failed"]:
        print(f"FAILED {entry['op']} on {entry['device']} ({entry['inputs']}): {entry['detail']}")
    if code in (EXIT_USAGE, EXIT_NO_TORCH):
        print(result["summary"], file=sys.stderr)
    print(result["summary"])
    return code


if __name__ == "__main__":
    sys.exit(main())
