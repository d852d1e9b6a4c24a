"""The functions pybind11 extension modules export, and their signatures read from the docstrings
pybind11 writes for them.

pybind11 starts every function's __doc__ with its signature, in Python's spelling of the bound C++
types:

    forward(input: torch.Tensor, weight: torch.Tensor, scale: float = 1.0) -> torch.Tensor
    launch(arg0: torch.Tensor, arg1: torch.Tensor, arg2: int) -> None

and an overloaded function with "name(*args, **kwargs)", "Overloaded function.", then one numbered
signature per overload. Each parameter becomes an object shaped like the arguments of a torch schema
(name, type, kwarg_only, alias_info, N, has_default_value()), so the op exerciser feeds it as it feeds
a torch.library op. Every tensor parameter counts as written: extensions often fill an output tensor
they are given and return nothing.

Pure Python (no torch): the docstring parsing is tested without a GPU.
"""
import re
import sys
import types

SIGNATURE = re.compile(r"^\s*(?:\d+\.\s+)?([A-Za-z_]\w*)\((.*)\)\s*(?:->\s*(.+?))?\s*$")
TENSOR_NAMES = {"torch.Tensor", "at::Tensor", "torch::Tensor", "Tensor"}
SCALARS = {"int": "int", "float": "float", "bool": "bool", "SupportsInt": "int", "SupportsFloat": "float"}
OPENERS, CLOSERS = "([{<", ")]}>"
# A CUDA entry point and its CPU twin in one module: forward_cuda / forward_cpu, gpu_x / cpu_x.
DEVICE_WORD = re.compile(r"(?<![a-z])(cuda|gpu)(?![a-z])")
EXTENSION_SUFFIXES = (".so", ".pyd")


class _Written:
    is_write = True


WRITTEN = _Written()


class PybindArgument:
    """One parameter of a pybind11 signature, shaped like a torch schema Argument."""

    def __init__(self, name, schema_type, has_default):
        self.name = name
        self.type = self.real_type = schema_type
        self.kwarg_only = False
        self.N = None
        self.alias_info = WRITTEN if "Tensor" in schema_type else None
        self._has_default = has_default

    def has_default_value(self):
        return self._has_default

    def __repr__(self):
        return f"{self.name}: {self.type}" + (" = ..." if self._has_default else "")


def split_top_level(text, separator=","):
    """Splits at `separator` outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, []
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in OPENERS:
            depth += 1
        elif char in CLOSERS:
            depth = max(depth - 1, 0)
        elif char == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _inside(text, opening, closing):
    """"Optional[X]" -> "X" when text is opening + X + closing, else None."""
    if text.startswith(opening) and text.endswith(closing):
        return text[len(opening):-len(closing)].strip()
    return None


def schema_type(python_type):
    """The schema spelling of a bound type ("Tensor", "Optional[Tensor]", "List[Tensor]", "int",
    "Optional[int]", "float", "bool", "List[int]"), or None for a type the exerciser cannot feed."""
    text = re.sub(r"\b(typing|collections\.abc)\.", "", python_type.strip())
    if text in TENSOR_NAMES:
        return "Tensor"
    if text in SCALARS:
        return SCALARS[text]
    for opening, closing in (("Optional[", "]"), ("c10::optional<", ">"), ("std::optional<", ">")):
        inner = _inside(text, opening, closing)
        if inner is not None:
            fed = schema_type(inner)
            return f"Optional[{fed}]" if fed in ("Tensor", "int", "float", "bool") else None
    if text.endswith("| None") or text.startswith("None |"):
        fed = schema_type(text.replace("| None", "").replace("None |", ""))
        return f"Optional[{fed}]" if fed in ("Tensor", "int", "float", "bool") else None
    for opening, closing in (("List[", "]"), ("list[", "]"), ("Sequence[", "]"), ("std::vector<", ">")):
        inner = _inside(text, opening, closing)
        if inner is not None:
            fed = schema_type(inner)
            return f"List[{fed}]" if fed in ("Tensor", "int") else None
    return None


def parse_parameter(text):
    """"scale: float = 1.0" -> PybindArgument; None when it cannot be fed (a str, *args, a type
    pybind11 could not name)."""
    if text.startswith("*") or ":" not in text:
        return None
    name, _, rest = text.partition(":")
    annotation, equals, _default = rest.partition("=")
    fed = schema_type(annotation)
    if fed is None or not name.strip().isidentifier():
        return None
    return PybindArgument(name.strip(), fed, bool(equals))


class Signature:
    def __init__(self, name, arguments, returns):
        self.name, self.arguments, self.returns = name, arguments, returns

    def describe(self):
        return f"{self.name}({', '.join(map(repr, self.arguments))})"


def signature_lines(name, doc):
    """The docstring's signature lines of `name` (one per overload), as regex matches."""
    matches = [SIGNATURE.match(line) for line in (doc or "").splitlines()]
    return [match for match in matches
            if match and match.group(1) == name and match.group(2).strip() != "*args, **kwargs"]


def signatures(name, doc):
    """The signatures a pybind11 docstring gives for `name` (one per overload), each with every
    parameter feedable; an overload with a parameter that cannot be fed is left out."""
    found = []
    for match in signature_lines(name, doc):
        raw = split_top_level(match.group(2))
        arguments = [parse_parameter(part) for part in raw if part]
        if all(argument is not None for argument in arguments):
            found.append(Signature(name, arguments, (match.group(3) or "").strip()))
    return found


def is_pybind_function(value):
    """A function of an extension module whose docstring starts with a signature (pybind11's are
    builtins; a plain function documented the same way is taken too)."""
    return isinstance(value, (types.BuiltinFunctionType, types.FunctionType)) and (value.__doc__ or "")[:1].isalpha()


def cpu_twin_name(name, names):
    """The CPU function beside a CUDA one ("roi_align_forward_cuda" -> "roi_align_forward_cpu"), if
    the module has it."""
    twin = DEVICE_WORD.sub("cpu", name)
    return twin if twin != name and twin in names else None


def is_cpu_twin(name, names):
    """A CPU function that is the reference of a CUDA twin in the same module (not exercised alone)."""
    return any(cpu_twin_name(other, names) == name for other in names if other != name)


def extension_modules(package):
    """The extension modules (compiled .so) of `package` imported so far, the package itself
    included when it is one."""
    found = []
    for module_name, module in sorted(sys.modules.items()):
        if module_name != package and not module_name.startswith(package + "."):
            continue
        path = getattr(module, "__file__", None) or ""
        if path.endswith(EXTENSION_SUFFIXES):
            found.append(module_name)
    return found


def module_functions(module):
    """(name, function, [Signature]) of each pybind11 function of `module` (its docstring gives its
    signature), sorted by name; the list of signatures the exerciser can feed may be empty."""
    names = {name for name in dir(module) if not name.startswith("__")}
    listed = []
    for name in sorted(names):
        value = getattr(module, name, None)
        if not is_pybind_function(value) or is_cpu_twin(name, names):
            continue
        if signature_lines(name, value.__doc__):
            listed.append((name, value, signatures(name, value.__doc__)))
    return listed
