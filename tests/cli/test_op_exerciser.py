"""recipes/tests/exercise_ops.py, the generic op exerciser, run on the CPU (--devices cpu) with the real
torch 2.11 against a small pure-Python package whose ops are registered through torch.library: discovery,
input generation, the determinism check, worker crashes, the time budget, saved-output comparison, and
the comparison function itself."""
import json
import os
import subprocess
import textwrap
import unittest

import harness

EXERCISER = harness.SOURCE_DIR / "recipes" / "tests" / "exercise_ops.py"

# Ops named so that the crashing ones sort before most others: the ops after a crash must still run.
# The CUDA registrations only matter on a GPU (the categories); on the CPU nothing of them runs.
PACKAGE_SOURCE = '''
import os
import signal

import torch

lib = torch.library.Library("abtest", "DEF")


def define(schema, impls):
    lib.define(schema)
    name = schema.split("(", 1)[0]
    for key, function in impls.items():
        lib.impl(name, function, key)


def scale(x, a):
    return x * a


def scatter_sum(src, index, dim):
    # indexes with `index`: out-of-range values would raise
    return torch.zeros_like(src).index_add_(dim, index, src)


def raises(x):
    raise RuntimeError("abtest::always_raises accepts nothing")


def abort(x):
    os.abort()


def segfault(x):
    os.kill(os.getpid(), signal.SIGSEGV)


def garbage(x):
    # returns uninitialised memory: differs between runs once the allocator is poisoned
    return torch.empty(x.shape, dtype=x.dtype)


def planted(x):
    # the defect planted for the saved-output comparison
    return x + (1e-3 if os.environ.get("ABTEST_PLANT") else 0.0)


def boxes(boxes, scores, iou_threshold):
    if boxes.dim() != 2 or boxes.size(1) != 4 or scores.shape != boxes.shape[:1]:
        raise ValueError("boxes must be (N, 4) and scores (N,)")
    return (boxes[:, 2:] - boxes[:, :2]).prod(1) * scores * iou_threshold


def double_in_place(x):
    x.mul_(2)


def gpu_off_by_one(x):
    # correct on the CPU, wrong at one element on a GPU
    result = x + 1
    if result.is_cuda:
        result[3] += 1
    return result


def gpu_device_assert(x):
    # an out-of-range index on a GPU: device-side assert
    if x.is_cuda:
        torch.zeros(2, device=x.device)[torch.tensor([5], device=x.device)]
    return x.clone()


def gpu_uninitialised(x):
    return torch.empty_like(x) if x.is_cuda else x.clone()


CPU_AND_CUDA = lambda function: {"CPU": function, "CUDA": function}  # noqa: E731

define("scale(Tensor x, float a) -> Tensor", CPU_AND_CUDA(scale))
define("scatter_sum(Tensor src, Tensor index, int dim) -> Tensor", CPU_AND_CUDA(scatter_sum))
define("always_raises(Tensor x) -> Tensor", CPU_AND_CUDA(raises))
define("crash_abort(Tensor x) -> Tensor", {"CPU": abort})
define("crash_segv(Tensor x) -> Tensor", {"CPU": segfault})
define("garbage(Tensor x) -> Tensor", {"CPU": garbage})
define("needs_mode(Tensor x, str mode) -> Tensor", {"CPU": lambda x, mode: x})
define("composite(Tensor x) -> Tensor", {"CompositeImplicitAutograd": lambda x: x.sin() + 1})
define("cuda_only(Tensor x) -> Tensor", {"CUDA": lambda x: x * 2})
define("no_kernel(Tensor x) -> Tensor", {})
define("planted(Tensor x) -> Tensor", CPU_AND_CUDA(planted))
define("boxes(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor", CPU_AND_CUDA(boxes))
define("double_in_place(Tensor(a!) x) -> ()", CPU_AND_CUDA(double_in_place))
define("gpu_off_by_one(Tensor x) -> Tensor", CPU_AND_CUDA(gpu_off_by_one))
define("gpu_device_assert(Tensor x) -> Tensor", CPU_AND_CUDA(gpu_device_assert))
define("gpu_uninitialised(Tensor x) -> Tensor", CPU_AND_CUDA(gpu_uninitialised))

# What legacy torch::RegisterOperators / TORCH_LIBRARY's m.def(name, fn) register: a catch-all kernel.
# The handle must stay alive: dropping it unregisters the op.
legacy_library = torch._C._dispatch_library("FRAGMENT", "abtest", "")
legacy_library.def_name_t_t("legacy_identity", "", "catch-all, as legacy RegisterOperators")
'''

SLOW_PACKAGE_SOURCE = '''
import time

import torch

lib = torch.library.Library("abslow", "DEF")
lib.define("a_fast(Tensor x) -> Tensor")
lib.impl("a_fast", lambda x: x + 1, "CPU")
lib.define("b_sleeps(Tensor x) -> Tensor")
lib.impl("b_sleeps", lambda x: time.sleep({sleep_s}) or x, "CPU")
lib.define("c_after(Tensor x) -> Tensor")
lib.impl("c_after", lambda x: x + 2, "CPU")
'''

BUDGET_S = 20  # room for importing torch on a busy machine; the sleeping op sleeps ten times as long


def write_test_packages(directory):
    """abtest (the main fixture) and abslow (the budget fixture) under `directory`; returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "abtest.py").write_text(PACKAGE_SOURCE)
    (directory / "abslow.py").write_text(SLOW_PACKAGE_SOURCE.replace("{sleep_s}", str(BUDGET_S * 10)))
    (directory / "abbroken.py").write_text("raise ImportError('abbroken cannot be imported')\n")
    # PyG's legacy torch::RegisterOperators schemas name no argument (_0, _1, ...): an index and a dim unnamed
    (directory / "abanon.py").write_text(
        "import torch\n"
        "lib = torch.library.Library('abanon', 'DEF')\n"
        "lib.define('scatter_sum(Tensor _0, Tensor _1, int _2) -> Tensor')\n"
        "def scatter_sum(src, index, dim):\n"
        "    if index.dtype != torch.long:\n"
        "        raise RuntimeError('expected scalar type Long')\n"
        "    if not 0 <= dim < src.dim() or index.shape != src.shape:\n"
        "        raise IndexError('Dimension out of range')\n"
        "    if (index.diff(dim=-1) < 0).any():\n"
        "        raise RuntimeError('index must be sorted')  # as segment reductions over a COO index require\n"
        "    out = torch.zeros(src.shape[:dim] + (int(index.max()) + 1,) + src.shape[dim + 1:], dtype=src.dtype)\n"
        "    return out.scatter_add_(dim, index, src)\n"
        "lib.impl('scatter_sum', scatter_sum, 'CPU')\n")
    # torchmd-net's shape: the package itself registers nothing; its ops come with a subpackage
    (directory / "ablazy" / "ops").mkdir(parents=True, exist_ok=True)
    (directory / "ablazy" / "__init__.py").write_text("")
    (directory / "ablazy" / "ops" / "__init__.py").write_text(
        "import torch\n"
        "lib = torch.library.Library('ablazy', 'DEF')\n"
        "lib.define('twice(Tensor x) -> Tensor')\n"
        "lib.impl('twice', lambda x: x * 2, 'CPU')\n")
    # the most common CUDA extension: pybind11 functions, no torch.library op. A compiled module
    # stands in as a module object whose file is a .so, its functions documented as pybind11 does.
    (directory / "abpybind").mkdir(parents=True, exist_ok=True)
    (directory / "abpybind" / "__init__.py").write_text(PYBIND_PACKAGE_SOURCE)
    # DeepSpeed's shape: abuser imports abvision, another installed distribution with ops of its own
    # (as transformers brings torchvision's), and abuser_native, a second top-level module of its own
    # distribution (apex's amp_C beside apex).
    def op_module(name, namespace):
        (directory / f"{name}.py").write_text(
            "import torch\n"
            f"lib = torch.library.Library('{namespace}', 'DEF')\n"
            "lib.define('twice(Tensor x) -> Tensor')\n"
            "lib.impl('twice', lambda x: x * 2, 'CPU')\n")

    def distribution(name, *modules):
        info = directory / f"{name}-1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "top_level.txt").write_text("".join(f"{module}\n" for module in modules))

    op_module("abvision", "abvision")
    op_module("abuser_native", "abuser_native")
    (directory / "abuser.py").write_text("import abvision\nimport abuser_native\n" + (directory / "abuser_native.py")
                                         .read_text().replace("abuser_native", "abuser"))
    distribution("abvision", "abvision")
    distribution("abuser", "abuser", "abuser_native")
    # the same import from a package of no distribution (on PYTHONPATH): nothing tells its modules apart
    (directory / "abloose.py").write_text("import abvision\n")
    # a plugin of another distribution that imports the package back (entry-point discovery, say)
    op_module("abplugin", "abplugin")
    (directory / "abplugin.py").write_text((directory / "abplugin.py").read_text() + "import abcircular\n")
    op_module("abcircular", "abcircular")
    (directory / "abcircular.py").write_text("import abplugin\n" + (directory / "abcircular.py").read_text())
    distribution("abplugin", "abplugin")
    distribution("abcircular", "abcircular")
    # another distribution whose ops come with a submodule the package imports (torchvision.ops's shape)
    (directory / "abvisionpkg").mkdir(exist_ok=True)
    (directory / "abvisionpkg" / "__init__.py").write_text("")
    op_module("abvisionpkg_ops", "abvisionpkg")
    (directory / "abvisionpkg_ops.py").rename(directory / "abvisionpkg" / "ops.py")
    op_module("abdeep", "abdeep")
    (directory / "abdeep.py").write_text("import abvisionpkg.ops\n" + (directory / "abdeep.py").read_text())
    distribution("abvisionpkg", "abvisionpkg")
    distribution("abdeep", "abdeep")
    return directory


PYBIND_PACKAGE_SOURCE = '''
import sys
import types

import torch

_C = types.ModuleType("abpybind._C")
_C.__file__ = __file__.replace("__init__.py", "_C.cpython-311-x86_64-linux-gnu.so")


def documented(doc):
    def attach(function):
        function.__doc__ = doc
        setattr(_C, function.__name__, function)
        return function
    return attach


@documented("scale_add_cuda(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor\\n\\nx * alpha + y")
def scale_add_cuda(x, y, alpha):
    if not x.is_cuda:
        raise TypeError("x must be a CUDA tensor")  # the CPU twin gets the CPU tensors
    return x * alpha + y


@documented("scale_add_cpu(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor")
def scale_add_cpu(x, y, alpha):
    return x * alpha + y


@documented("fill_(arg0: torch.Tensor, arg1: float) -> None")
def fill_(out, value):
    out.fill_(value)


@documented("needs_name(x: torch.Tensor, mode: str) -> torch.Tensor")
def needs_name(x, mode):
    return x


@documented("count(n: int) -> int")
def count(n):
    return n


@documented("overloaded(*args, **kwargs)\\nOverloaded function.\\n\\n"
            "1. overloaded(x: torch.Tensor, mode: str) -> torch.Tensor\\n\\n"
            "2. overloaded(x: torch.Tensor, k: int = 2) -> torch.Tensor\\n")
def overloaded(x, k=2):
    return x * k


class MipWrapper:  # a pybind11 class: no value, each call a new object
    def __init__(self, levels):
        self.levels = levels


@documented("build_mip(arg0: torch.Tensor, arg1: int) -> abpybind._C.MipWrapper")
def build_mip(tex, levels):
    return MipWrapper([tex * 2] * levels)


@documented("select(arg0: torch.Tensor, arg1: bool, arg2: list[int]) -> torch.Tensor")
def select(x, all_, indices):
    if not isinstance(indices, list) or not indices:
        raise TypeError("indices must be a non-empty list")
    return x * len(indices)


sys.modules["abpybind._C"] = _C
'''


def by_op(entries):
    return {entry["op"]: entry for entry in entries}


class OpExerciser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = harness.torch_build_python()
        cls.scratch = harness.scratch_dir(cls)
        cls.packages = write_test_packages(cls.scratch / "packages")
        cls.saved = cls.scratch / "native.pt"
        cls.process, cls.result = cls.exercise("abtest", "--save", str(cls.saved), name="native")

    @classmethod
    def exercise(cls, *args, name, env=None, timeout=300):
        out = cls.scratch / f"{name}.json"
        full_env = dict(os.environ, PYTHONPATH=str(cls.packages), PYTHONDONTWRITEBYTECODE="1")
        full_env.pop("ABTEST_PLANT", None)
        full_env.update(env or {})
        process = subprocess.run([str(cls.python), str(EXERCISER), *args, "--devices", "cpu", "--out", str(out)],
                                 capture_output=True, text=True, env=full_env, timeout=timeout)
        result = json.loads(out.read_text()) if out.exists() else None
        return process, result

    def test_json_has_the_documented_keys(self):
        self.assertEqual(self.process.returncode, 0, self.process.stdout + self.process.stderr)
        for key in ("packages", "label", "devices", "reference", "namespaces", "ops_found", "exercised", "failed",
                    "skipped", "seconds", "budget_s", "budget_exhausted", "worker_restarts", "summary"):
            self.assertIn(key, self.result)
        self.assertEqual(self.result["packages"], ["abtest"])
        self.assertEqual(self.result["label"], "native")
        self.assertEqual(self.result["devices"], ["cpu"])
        self.assertEqual(self.result["reference"], "cpu")
        self.assertEqual(self.result["failed"], [])
        self.assertFalse(self.result["budget_exhausted"])
        self.assertTrue(self.result["summary"].startswith("exercised "), self.result["summary"])
        self.assertEqual(self.process.stdout.strip().splitlines()[-1], self.result["summary"])

    def test_finds_every_op_under_its_namespace(self):
        self.assertEqual(self.result["namespaces"], ["abtest"])
        self.assertEqual(self.result["ops_found"], 17)
        listed = {entry["op"] for entry in self.result["exercised"] + self.result["skipped"]}
        self.assertEqual(len(listed), 17)
        self.assertIn("abtest::legacy_identity", listed)

    def test_feedable_ops_are_exercised_with_their_inputs(self):
        exercised = by_op(self.result["exercised"])
        self.assertEqual(exercised["abtest::scale"]["inputs"], "x: float32[8], a: 0.5")
        self.assertEqual(exercised["abtest::scatter_sum"]["inputs"], "src: float32[8], index: int64[8], dim: 0")
        self.assertEqual(exercised["abtest::boxes"]["inputs"],
                         "boxes: float32[8, 4], scores: float32[8], iou_threshold: 0.5")
        self.assertEqual(exercised["abtest::double_in_place"]["inputs"], "x: float32[8]")
        for name in ("scale", "scatter_sum", "boxes", "composite", "legacy_identity", "planted"):
            entry = exercised[f"abtest::{name}"]
            self.assertEqual(entry["devices"], ["cpu"])
            self.assertEqual(entry["max_abs_diff"], 0.0)
        self.assertEqual(exercised["abtest::scale"]["category"], "cpu+cuda")

    def test_device_generic_kernels_count_for_both_devices(self):
        exercised = by_op(self.result["exercised"])
        # CompositeImplicitAutograd, and the catch-all that legacy registration makes
        self.assertEqual(exercised["abtest::composite"]["category"], "cpu+cuda")
        self.assertEqual(exercised["abtest::legacy_identity"]["category"], "cpu+cuda")
        self.assertEqual(exercised["abtest::legacy_identity"]["inputs"], "_0: float32[8]")

    def test_unfeedable_argument_is_skipped_naming_it(self):
        skipped = by_op(self.result["skipped"])
        self.assertEqual(skipped["abtest::needs_mode"]["reason"], "cannot feed argument mode of type str")

    def test_uninitialised_memory_is_not_deterministic(self):
        reason = by_op(self.result["skipped"])["abtest::garbage"]["reason"]
        self.assertTrue(reason.startswith("reference not deterministic (output 0: "), reason)

    def test_op_raising_on_every_input_is_skipped(self):
        reason = by_op(self.result["skipped"])["abtest::always_raises"]["reason"]
        self.assertTrue(reason.startswith("no generated input was accepted (last error: RuntimeError: "), reason)
        self.assertIn("accepts nothing", reason)

    def test_worker_crashes_are_survived(self):
        skipped = by_op(self.result["skipped"])
        self.assertTrue(skipped["abtest::crash_abort"]["reason"].startswith("crashed the worker: SIGABRT"),
                        skipped["abtest::crash_abort"])
        self.assertTrue(skipped["abtest::crash_segv"]["reason"].startswith("crashed the worker: SIGSEGV"),
                        skipped["abtest::crash_segv"])
        self.assertEqual(self.result["worker_restarts"], 2)
        # ops sorted after the crashing ones still ran
        exercised = by_op(self.result["exercised"])
        for name in ("garbage", "scale", "scatter_sum", "planted"):
            self.assertIn(f"abtest::{name}", {**exercised, **skipped})
        self.assertIn("abtest::scale", exercised)

    def test_other_categories_are_listed(self):
        skipped = by_op(self.result["skipped"])
        self.assertEqual(skipped["abtest::cuda_only"]["category"], "cuda-only")
        self.assertEqual(skipped["abtest::cuda_only"]["reason"], "cuda-only: not run with --devices cpu")
        self.assertEqual(skipped["abtest::no_kernel"]["category"], "no-kernel")
        self.assertTrue(skipped["abtest::no_kernel"]["reason"].startswith("no-kernel"))

    def test_saved_outputs_catch_a_planted_defect(self):
        self.assertTrue(self.saved.exists())
        same, result = self.exercise("abtest", "--compare-with", str(self.saved), "--label", "ptx", name="same")
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        self.assertEqual(result["reference"], "saved native outputs")
        self.assertEqual(result["failed"], [])
        self.assertIn("abtest::planted", by_op(result["exercised"]))

        planted, result = self.exercise("abtest", "--compare-with", str(self.saved), "--label", "ptx",
                                        name="planted", env={"ABTEST_PLANT": "1"})
        self.assertEqual(planted.returncode, 1, planted.stdout + planted.stderr)
        self.assertEqual([entry["op"] for entry in result["failed"]], ["abtest::planted"])
        failure = result["failed"][0]
        self.assertEqual(failure["inputs"], "x: float32[8]")
        self.assertEqual(failure["device"], "cpu")
        # float32 rounding: x + 0.001 differs from x by 0.000999... or 0.001000...
        self.assertRegex(failure["detail"], r"^output 0: largest difference 0\.00(0999|100)\d* at flat index \d+ "
                                            r"\(native cpu [0-9.]+, ptx cpu [0-9.]+\)")
        self.assertAlmostEqual(failure["max_abs_diff"], 1e-3, places=6)
        self.assertTrue(result["summary"].startswith("MISMATCH: abtest::planted"), result["summary"])
        self.assertEqual(planted.stdout.strip().splitlines()[-1], result["summary"])

    def test_time_budget_stops_a_sleeping_op(self):
        process, result = self.exercise("abslow", "--budget-s", str(BUDGET_S), name="budget",
                                        timeout=BUDGET_S * 9)
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertTrue(result["budget_exhausted"])
        self.assertIn("time budget", result["summary"])
        if result["ops_found"]:  # discovery finished inside the budget (it takes seconds)
            skipped = by_op(result["skipped"])
            self.assertEqual(skipped["abslow::b_sleeps"]["reason"], "stopped at the time budget")
            self.assertEqual(skipped["abslow::c_after"]["reason"], "not reached: time budget")
            self.assertIn("abslow::a_fast", by_op(result["exercised"]))

    def test_import_failure_exits_2(self):
        process, result = self.exercise("abbroken", name="broken")
        self.assertEqual(process.returncode, 2)
        self.assertIn("abbroken cannot be imported", process.stderr)
        self.assertEqual(result["import_errors"][0]["package"], "abbroken")
        self.assertTrue(result["summary"].startswith("IMPORT FAILED: abbroken"), result["summary"])

    def test_ops_of_a_subpackage_come_with_also_import(self):
        process, result = self.exercise("ablazy", name="lazy-alone")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertEqual(result["ops_found"], 0)
        process, result = self.exercise("ablazy", "--also-import", "ablazy.ops", "--also-import", "abbroken",
                                        name="lazy-also")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)  # a failed optional import is no failure
        self.assertEqual([entry["op"] for entry in result["exercised"]], ["ablazy::twice"])
        self.assertEqual([entry["package"] for entry in result["optional_import_errors"]], ["abbroken"])
        self.assertEqual(result["import_errors"], [])

    def test_ops_of_another_distribution_it_imports_are_not_the_packages(self):
        process, result = self.exercise("abuser", name="other-packages")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertEqual(result["other_packages"], ["abvision"])
        self.assertEqual(result["other_namespaces"], ["abvision"])
        self.assertIsNone(result["other_packages_note"])
        # its own distribution's second module counts as its own
        self.assertEqual(result["namespaces"], ["abuser", "abuser_native"])
        self.assertEqual(sorted(entry["op"] for entry in result["exercised"]),
                         ["abuser::twice", "abuser_native::twice"])

    def test_without_its_own_distribution_every_new_op_counts(self):
        process, result = self.exercise("abloose", name="loose")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertEqual(result["other_packages"], [])
        self.assertIn("no installed distribution holds abloose", result["other_packages_note"])
        self.assertEqual(result["namespaces"], ["abvision"])

    def test_a_package_the_other_imports_in_turn_keeps_every_new_op(self):
        process, result = self.exercise("abcircular", name="circular")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertIn("abcircular imported by the other packages in turn", result["other_packages_note"])
        self.assertEqual(result["namespaces"], ["abcircular", "abplugin"])

    def test_a_submodule_of_another_distribution_is_imported_first_too(self):
        process, result = self.exercise("abdeep", name="deep")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertEqual(result["other_packages"], ["abvisionpkg", "abvisionpkg.ops"])
        self.assertEqual(result["namespaces"], ["abdeep"])

    def test_unnamed_arguments_are_fed_as_data_indices_and_dims(self):
        process, result = self.exercise("abanon", name="anonymous")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        (entry,) = result["exercised"]
        self.assertEqual(entry["op"], "abanon::scatter_sum")
        self.assertRegex(entry["inputs"], r"^_0: float32\[[0-9, ]+\], _1: int64\[[0-9, ]+\], _2: -?[0-9]$")

    def test_torch_itself_is_skipped(self):
        process, result = self.exercise("torch", name="torch")
        self.assertEqual(process.returncode, 0, process.stdout + process.stderr)
        self.assertEqual(result["skipped_reason"], "torch's own ops are covered by its kernel test")
        self.assertEqual(result["ops_found"], 0)
        self.assertIsNone(result["other_packages_note"])  # torch being imported is no circular import

    def test_usage_error_exits_2(self):
        process, _ = self.exercise("abtest", "--budget-s", "zero", name="usage")
        self.assertEqual(process.returncode, 2)
        self.assertIn("usage error", process.stderr)

    def test_a_fake_kernel_screens_inputs_without_the_device(self):
        code = textwrap.dedent(f'''
            import importlib.util, json
            import torch
            spec = importlib.util.spec_from_file_location("exercise_ops", {str(EXERCISER)!r})
            ops = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(ops)
            lib = torch.library.Library("abmeta", "DEF")
            lib.define("rows(Tensor x) -> Tensor")
            lib.impl("rows", lambda x: x.sum(1), "CPU")
            def fake(x):
                torch._check(x.dim() == 2, lambda: "rows takes a matrix")
                return x.new_empty(x.shape[:1])
            torch.library.register_fake("abmeta::rows", fake, lib=lib)
            lib.define("plain(Tensor x) -> Tensor")
            lib.impl("plain", lambda x: x, "CPU")
            specs = [ops.ArgSpec(a) for a in torch._C._get_schema("abmeta::rows", "").arguments]
            op = ops.resolve_op("abmeta::rows")
            verdicts = {{v.describe(): ops.meta_refusal(op, v) for v in ops.input_variants("abmeta::rows", specs)[:4]}}
            print(json.dumps({{"has": ops.has_meta_kernel("abmeta::rows"), "plain": ops.has_meta_kernel("abmeta::plain"),
                              "verdicts": verdicts}}))
        ''')
        process = subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(process.returncode, 0, process.stderr)
        report = json.loads(process.stdout.strip().splitlines()[-1])
        self.assertTrue(report["has"])
        self.assertFalse(report["plain"])
        self.assertIsNone(report["verdicts"]["x: float32[8, 8]"])
        self.assertIn("rows takes a matrix", report["verdicts"]["x: float32[8]"])

    def test_compare_function(self):
        code = textwrap.dedent(f'''
            import importlib.util, json, math
            import torch
            spec = importlib.util.spec_from_file_location("exercise_ops", {str(EXERCISER)!r})
            ops = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(ops)
            a = torch.tensor([0.25, 0.5, 0.75, 1.0])
            nan = float("nan")
            cases = {{
                "equal": (a, a.clone()),
                "within": (a, a + 5e-6),
                "beyond": (a, a + torch.tensor([0.0, 0.0, 0.0, 1.0])),
                "nan_same": (torch.tensor([1.0, nan]), torch.tensor([1.0, nan])),
                "nan_vs_number": (torch.tensor([1.0, nan]), torch.tensor([1.0, 2.0])),
                "inf_same": (torch.tensor([float("inf"), 1.0]), torch.tensor([float("inf"), 1.0])),
                "shape": (a, a.reshape(2, 2)),
                "dtype": (a, a.double()),
                "int_exact": (torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3])),
                "int_differs": (torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])),
                "half_within": (a.half(), (a + 1e-3).half()),
                "tuple_equal": ((a, torch.tensor([1, 2]), 3, None), (a.clone(), torch.tensor([1, 2]), 3, None)),
                "tuple_second": ((a, torch.tensor([1, 2])), (a.clone(), torch.tensor([1, 5]))),
                "tuple_length": ((a, a), (a,)),
                "scalar_int": (3, 4),
            }}
            report = {{}}
            for name, (expected, actual) in cases.items():
                result = ops.compare_outputs(expected, actual, "cpu", "cuda:0")
                report[name] = [result.equal, result.max_abs_diff, result.detail]
            print(json.dumps(report))
        ''')
        process = subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(process.returncode, 0, process.stderr)
        report = json.loads(process.stdout.strip().splitlines()[-1])
        self.assertEqual(report["equal"], [True, 0.0, ""])
        equal, largest, detail = report["within"]
        self.assertTrue(equal)
        self.assertGreater(largest, 0.0)
        self.assertEqual(report["beyond"][:2], [False, 1.0])
        self.assertTrue(report["beyond"][2].startswith(
            "output 0: largest difference 1 at flat index 3 (cpu 1, cuda:0 2)"), report["beyond"][2])
        self.assertEqual(report["nan_same"][:2], [True, 0.0])
        self.assertEqual(report["nan_vs_number"][:2], [False, None])
        self.assertIn("NaN mismatch at flat index 1 (cpu nan, cuda:0 2)", report["nan_vs_number"][2])
        self.assertTrue(report["inf_same"][0])
        self.assertEqual(report["shape"][:2], [False, None])
        self.assertIn("shape [4] (cpu) vs [2, 2] (cuda:0)", report["shape"][2])
        self.assertEqual(report["dtype"][:2], [False, None])
        self.assertIn("dtype float32 (cpu) vs float64 (cuda:0)", report["dtype"][2])
        self.assertEqual(report["int_exact"], [True, 0.0, ""])
        self.assertEqual(report["int_differs"][:2], [False, 1.0])
        self.assertIn("at flat index 2 (cpu 3, cuda:0 4)", report["int_differs"][2])
        self.assertTrue(report["half_within"][0], report["half_within"])
        self.assertEqual(report["tuple_equal"], [True, 0.0, ""])
        self.assertFalse(report["tuple_second"][0])
        self.assertTrue(report["tuple_second"][2].startswith("output 1: largest difference 3 at flat index 1"),
                        report["tuple_second"][2])
        self.assertEqual(report["tuple_length"][:2], [False, None])
        self.assertEqual(report["scalar_int"][:2], [False, 1.0])


class PybindFunctions(unittest.TestCase):
    """pybind11 extension functions found and fed from their docstrings (recipes/tests/pybind_functions.py)."""

    @classmethod
    def setUpClass(cls):
        cls.python = harness.torch_build_python()
        cls.scratch = harness.scratch_dir(cls)
        cls.packages = write_test_packages(cls.scratch / "packages")
        cls.process, cls.result = cls.exercise("abpybind", name="pybind")

    exercise = classmethod(OpExerciser.exercise.__func__)

    def test_functions_are_found_under_their_module(self):
        self.assertEqual(self.process.returncode, 0, self.process.stdout + self.process.stderr)
        self.assertEqual(self.result["namespaces"], ["abpybind._C"])
        listed = {entry["op"] for entry in self.result["exercised"] + self.result["skipped"]}
        # the CPU twin is the reference of scale_add_cuda, not a function of its own
        self.assertEqual(listed, {f"abpybind._C::{name}"
                                  for name in ("scale_add_cuda", "fill_", "needs_name", "count", "overloaded",
                                               "build_mip", "select")})

    def test_fed_from_the_signature_and_compared_with_the_cpu_twin(self):
        exercised = by_op(self.result["exercised"])
        entry = exercised["abpybind._C::scale_add_cuda"]
        self.assertEqual(entry["inputs"], "x: float32[8], y: float32[8], alpha: 0.5")
        self.assertEqual(entry["category"], "pybind cpu-only")
        self.assertEqual(entry["max_abs_diff"], 0.0)
        # a function filling the tensor it is given: the written argument is what is compared
        self.assertEqual(exercised["abpybind._C::fill_"]["inputs"], "arg0: float32[8], arg1: 0.5")
        # an overload that can be fed is used when another cannot; a default is left to the function
        self.assertEqual(exercised["abpybind._C::overloaded"]["inputs"], "x: float32[8]")
        # a list of ints of no fixed length is fed one element first
        self.assertEqual(exercised["abpybind._C::select"]["inputs"], "arg0: float32[8], arg1: False, arg2: [1]")

    def test_an_object_with_no_value_is_not_compared(self):
        # a new object on every call is not "two runs differ": there is nothing to compare
        self.assertEqual([entry["op"] for entry in self.result["failed"]], [])
        reason = by_op(self.result["skipped"])["abpybind._C::build_mip"]["reason"]
        self.assertTrue(reason.startswith("returns only <abpybind.MipWrapper object>: no value to compare"), reason)

    def test_what_cannot_be_fed_is_skipped_with_the_reason(self):
        skipped = by_op(self.result["skipped"])
        self.assertEqual(skipped["abpybind._C::needs_name"]["reason"],
                         "no signature the exerciser can feed: needs_name(x: torch.Tensor, mode: str) -> torch.Tensor")
        self.assertIn("no tensor arguments", skipped["abpybind._C::count"]["reason"])

    def test_docstring_signatures_are_read_as_schemas(self):
        import sys
        sys.path.insert(0, str(EXERCISER.parent))
        try:
            import pybind_functions as pf
        finally:
            sys.path.pop(0)
        (signature,) = pf.signatures("f", "f(x: torch.Tensor, w: Optional[torch.Tensor] = None, "
                                          "sizes: List[int] = [1, 2], flag: bool = False) -> torch.Tensor\n\ndoc")
        self.assertEqual([(a.name, a.type, a.has_default_value()) for a in signature.arguments],
                         [("x", "Tensor", False), ("w", "Optional[Tensor]", True), ("sizes", "List[int]", True),
                          ("flag", "bool", True)])
        self.assertEqual(pf.schema_type("typing.Sequence[at::Tensor]"), "List[Tensor]")
        self.assertEqual(pf.schema_type("torch.Tensor | None"), "Optional[Tensor]")
        self.assertIsNone(pf.schema_type("str"))
        self.assertIsNone(pf.schema_type("Dict[str, torch.Tensor]"))
        self.assertEqual(pf.signatures("f", "g(x: torch.Tensor) -> None"), [])  # another function's line
        self.assertEqual(pf.signatures("f", "f(*args, **kwargs)\nOverloaded function."), [])
        self.assertEqual(pf.split_top_level("a: List[int] = [1, 2], b: str = 'x,y'"), ["a: List[int] = [1, 2]",
                                                                                     "b: str = 'x,y'"])
        self.assertEqual(pf.cpu_twin_name("roi_align_forward_cuda", {"roi_align_forward_cpu"}),
                         "roi_align_forward_cpu")
        self.assertEqual(pf.cpu_twin_name("gpu_nms", {"cpu_nms"}), "cpu_nms")
        self.assertIsNone(pf.cpu_twin_name("cudaify", {"cpuify"}))  # a word, not the device


if __name__ == "__main__":
    unittest.main()
