"""recipes/frontends/extension_gates.py: which environment lookups gate a
setup.py's CUDA extension, read from its syntax tree (nothing of it runs).
The setup.py texts follow real projects' patterns: a legacy-CUDA switch
around FORCE_CUDA, a BUILD_NO_CUDA that turns CUDA off around the call of
the function that makes the extensions, an early return."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

from harness import SOURCE_DIR

SCRIPT = SOURCE_DIR / "recipes" / "frontends" / "extension_gates.py"


def gates_of(text):
    with tempfile.TemporaryDirectory() as directory:
        setup_py = pathlib.Path(directory) / "setup.py"
        setup_py.write_text(text)
        result = subprocess.run([sys.executable, str(SCRIPT), str(setup_py)], capture_output=True, text=True,
                                check=True)
        return json.loads(result.stdout)


class ExtensionGates(unittest.TestCase):
    def test_the_outer_switch_comes_first(self):
        answer = gates_of('''import os, torch
from torch.utils.cpp_extension import CUDAExtension
FORCE_CUDA = os.getenv("FORCE_CUDA", "0") == "1"
ext_modules = []
if os.getenv("TLA_BUILD_LEGACY_CUDA", "0") == "1":
    if FORCE_CUDA or torch.cuda.is_available():
        ext_modules.append(CUDAExtension("tla._C", ["csrc/a.cu"]))
''')
        self.assertEqual(answer["extensions"], 1)
        self.assertEqual([(g["name"], g["value"], g["unset"]) for g in answer["gates"]],
                         [("TLA_BUILD_LEGACY_CUDA", "1", False), ("FORCE_CUDA", "1", False)])

    def test_a_switch_that_turns_cuda_off_is_to_stay_unset(self):
        answer = gates_of('''import os
BUILD_NO_CUDA = os.getenv("BUILD_NO_CUDA", "0") == "1"
def get_extensions():
    from torch.utils.cpp_extension import CUDAExtension
    return [CUDAExtension("g._C", ["ext.cpp"])]
setup(ext_modules=get_extensions() if not BUILD_NO_CUDA else [])
''')
        self.assertEqual(answer["gates"], [{"name": "BUILD_NO_CUDA", "value": None, "unset": True}])

    def test_an_early_return_and_plain_extensions_with_cu_sources(self):
        answer = gates_of('''import os
from setuptools import Extension
def exts():
    if os.environ.get("WITH_CUDA", "").lower() not in ("1", "true"):
        return []
    return [Extension("k", sources=["k.cu"])]
setup(ext_modules=exts())
''')
        self.assertEqual(answer["gates"], [{"name": "WITH_CUDA", "value": "1", "unset": False}])

    def test_early_exits_in_the_order_they_are_written(self):
        # torch-linear-assignment 0.1.0: an opt-in switch returns early, then FORCE_CUDA raises
        answer = gates_of('''import os
def get_build_ext_modules():
    if os.environ.get("TLA_BUILD_LEGACY_CUDA") != "1":
        return []
    import torch.utils.cpp_extension as torch_cpp_ext
    can_build_cuda = torch.backends.cuda.is_built() and (
        os.environ.get("FORCE_CUDA") == "1" or torch.cuda.is_available())
    if not can_build_cuda:
        raise RuntimeError("TLA_BUILD_LEGACY_CUDA=1 requires CUDA")
    return [torch_cpp_ext.CUDAExtension("tla._backend", ["src/kernel.cu"])]
setup(ext_modules=get_build_ext_modules())
''')
        self.assertEqual([g["name"] for g in answer["gates"]], ["TLA_BUILD_LEGACY_CUDA", "FORCE_CUDA"])

    def test_a_constructor_bound_to_a_name_in_a_branch(self):
        # chamferdist's and many FAIR projects' form: extension = CppExtension, CUDAExtension when gated
        answer = gates_of('''import os, torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension
def get_extensions():
    sources = ["ext.cpp"]
    extension = CppExtension
    force_cuda = os.getenv("FORCE_CUDA", "0") == "1"
    if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:
        extension = CUDAExtension
        sources += ["knn.cu"]
    return [extension("chamferdist._C", sources)]
setup(ext_modules=get_extensions())
''')
        self.assertEqual(answer["extensions"], 1)
        self.assertEqual(answer["gates"], [{"name": "FORCE_CUDA", "value": "1", "unset": False}])

    def test_a_flag_switched_on_and_off_by_later_branches(self):
        # torch-points-kernels' form: the flag starts as "is there a GPU", env branches change it; the one
        # that also drops the CPU extension is not the one named, the one that turns CUDA off stays unset
        answer = gates_of('''import os, torch
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension, CppExtension
WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
WITH_CPU = True
if os.getenv("FORCE_ONLY_CUDA", "0") == "1":
    WITH_CUDA = True
    WITH_CPU = False
if os.getenv("FORCE_CUDA", "0") == "1":
    WITH_CUDA = True
if os.getenv("FORCE_ONLY_CPU", "0") == "1":
    WITH_CUDA = False
ext_modules = []
if WITH_CUDA:
    ext_modules.append(CUDAExtension("k.points_cuda", ["cuda/a.cu"]))
if WITH_CPU:
    ext_modules.append(CppExtension("k.points_cpu", ["cpu/a.cpp"]))
''')
        self.assertEqual([(g["name"], g["value"], g["unset"]) for g in answer["gates"]],
                         [("FORCE_CUDA", "1", False), ("FORCE_ONLY_CPU", None, True)])

    def test_compared_to_an_off_value_and_a_rocm_branch(self):
        # xformers' form: `X != ""` asks for X set; `X == "0"` before a return for X not "0"; the branch
        # that builds the HIP variant (torch.version.hip) is no CUDA build's business
        answer = gates_of('''import os, torch
from torch.utils.cpp_extension import CUDAExtension, CppExtension
def get_extensions():
    if os.getenv("DEMO_WITH_OPS", "1") == "0":
        return []
    extension = CppExtension
    if torch.cuda.is_available() or os.getenv("DEMO_FORCE", "") != "":
        extension = CUDAExtension
    if torch.version.hip and os.getenv("DEMO_CK", "1") == "1":
        extension = CUDAExtension
    return [extension("demo._C", ["a.cpp"])]
setup(ext_modules=get_extensions())
''')
        self.assertEqual([(g["name"], g["value"], g["unset"]) for g in answer["gates"]],
                         [("DEMO_WITH_OPS", None, False), ("DEMO_FORCE", None, False)])
        self.assertEqual(answer["extensions"], 1)

    def test_forms_real_sdists_use(self):
        # each from a public sdist: fairseq, torch-harmonics, mmdet3d, and a later reset of the list
        cases = {
            "membership": ('''import os
from torch.utils.cpp_extension import CppExtension
ext = []
if "DEMO_WITH_CUDA" in os.environ:
    ext.append(CppExtension("m", ["a.cpp", "k.cu"]))  # BuildExtension compiles .cu with nvcc
''', 1, [("DEMO_WITH_CUDA", None, False)]),
            "a flag given a constant, then an expression": ('''import os, torch
FORCE = os.getenv("FORCE_CUDA_EXTENSION", "0") == "1"
BUILD_CUDA = False
try:
    BUILD_CUDA = FORCE or torch.cuda.is_available()
except ImportError:
    pass
if BUILD_CUDA:
    ext = [CUDAExtension("m", ["k.cu"])]
''', 1, [("FORCE_CUDA_EXTENSION", "1", False)]),
            "a function nothing calls": ('''import os
def make_cuda_ext():
    if os.getenv("FORCE_CUDA", "0") == "1":
        return CUDAExtension("m", ["k.cu"])
setup(ext_modules=[])
''', 0, []),
            "a list emptied later": ('''import os
ext = [CUDAExtension("m", ["k.cu"])]
if os.getenv("SKIP_EXT") == "1":
    ext = []
setup(ext_modules=ext)
''', 1, [("SKIP_EXT", None, True)]),
        }
        for what, (text, extensions, gates) in cases.items():
            answer = gates_of(text)
            self.assertEqual(answer["extensions"], extensions, what)
            self.assertEqual([(g["name"], g["value"], g["unset"]) for g in answer["gates"]], gates, what)

    def test_a_gpu_query_is_said(self):
        # DCNv2's form: CUDA only when torch sees a GPU, no switch; the build step never sees one
        answer = gates_of('''import torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension
extension = CppExtension
HAVE_GPU = torch.cuda.is_available()
if HAVE_GPU and CUDA_HOME is not None:
    extension = CUDAExtension
setup(ext_modules=[extension("dcn._ext", ["a.cpp"])])
''')
        self.assertEqual(answer, {"gates": [], "extensions": 1, "gpu_query": True})
        self.assertFalse(gates_of('''import shutil
from torch.utils.cpp_extension import CUDAExtension
if shutil.which("nvcc"):
    ext = [CUDAExtension("m", ["k.cu"])]
''')["gpu_query"])

    def test_switches_that_turn_cuda_off_in_other_words(self):
        # `int(X) == 0` wants X off, a ROCm branch read from the environment is not the CUDA one, and a
        # variable one extension wants set and another unset stays unset
        answer = gates_of('''import os, torch
from torch.utils.cpp_extension import CUDAExtension
ext = []
if int(os.getenv("DEMO_SKIP_CUDA_BUILD", 0)) == 0 and torch.cuda.is_available():
    ext.append(CUDAExtension("a", ["a.cu"]))
if os.getenv("USE_ROCM") == "1":
    ext.append(CUDAExtension("a_hip", ["a.hip.cu"]))
if os.getenv("DEMO_FAST") == "1":
    ext.append(CUDAExtension("fast", ["f.cu"]))
if os.getenv("DEMO_FAST") != "1":
    ext.append(CUDAExtension("slow", ["s.cu"]))
''')
        self.assertEqual([(g["name"], g["unset"]) for g in answer["gates"]],
                         [("DEMO_SKIP_CUDA_BUILD", True), ("DEMO_FAST", True)])
        self.assertEqual(answer["extensions"], 3)

    def test_nothing_to_tell(self):
        self.assertEqual(gates_of("from setuptools import setup\nsetup(name='pure')\n"),
                         {"gates": [], "extensions": 0, "gpu_query": False})
        self.assertEqual(gates_of("this is not python (")["extensions"], 0)


if __name__ == "__main__":
    unittest.main()
