#!/usr/bin/env python3
"""Which environment variables decide whether a setup.py builds its CUDA
extension: read from its syntax tree, never run.

A setup.py often builds its CUDA code only inside a branch:

    if os.getenv("TLA_BUILD_LEGACY_CUDA") == "1":
        if FORCE_CUDA or torch.cuda.is_available():
            ext_modules.append(CUDAExtension(...))

and FORCE_CUDA matters only inside the first. For every CUDA extension it
constructs (CUDAExtension, or an Extension with .cu sources), this walks the
branches that enclose it, outermost first, and the early returns before it
in its function, and names the environment lookups their conditions make
(directly, or through a variable assigned from one), with the value a
comparison asks for.

Usage: extension_gates.py SETUP_PY
Prints one JSON object: {"gates": [{"name": "TLA_BUILD_LEGACY_CUDA", "value": "1",
"unset": false}, ...], "extensions": N, "gpu_query": BOOL}; "unset" marks a
switch the condition needs off (`if not BUILD_NO_CUDA`); gates is empty
when nothing gates them, extensions 0 when no CUDA extension was found
(then nothing can be told); gpu_query says whether a condition asks torch
for a GPU (`torch.cuda.is_available()`), which a build step never sees.
"""
import ast
import json
import sys

CUDA_CONSTRUCTORS = {"CUDAExtension", "CUDAExtensionWithNvcc"}
GPU_QUERIES = {"is_available", "device_count", "get_device_capability", "get_device_properties"}


def called_name(call):
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def string_value(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def env_lookup(node):
    """The variable name an os.getenv / os.environ.get / os.environ[...] / "X" in os.environ reads."""
    if isinstance(node, ast.Call):
        name = called_name(node)
        target = node.func.value if isinstance(node.func, ast.Attribute) else None
        if name == "getenv" and node.args:
            return string_value(node.args[0])
        if name == "get" and node.args and isinstance(target, (ast.Attribute, ast.Name)) and \
                getattr(target, "attr", getattr(target, "id", "")) == "environ":
            return string_value(node.args[0])
    if isinstance(node, ast.Subscript) and is_environ(node.value):
        return string_value(node.slice)
    return None


def is_environ(node):
    return isinstance(node, (ast.Attribute, ast.Name)) and getattr(node, "attr", getattr(node, "id", "")) == "environ"


def environ_membership(node):
    """("X", negated) for `"X" in os.environ` / `"X" not in os.environ`, else None."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
            and is_environ(node.comparators[0]) and string_value(node.left):
        return string_value(node.left), isinstance(node.ops[0], ast.NotIn)
    return None


OFF_VALUES = ("", "0", "false", "no", "off", "none")


def off_value(node):
    """Whether a compared constant (or a tuple's first) reads as "off": "", "0", "false", None, 0, False."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        node = node.elts[0]
    if isinstance(node, ast.Constant) and not isinstance(node.value, str) and not node.value:
        return True
    value = string_value(node)
    return value is not None and value.strip().lower() in OFF_VALUES


ROCM_WORDS = ("hip", "rocm")


def rocm_variable(name):
    """An environment variable of the ROCm build (USE_ROCM, ROCM_VERSION, HIP_ARCHITECTURES)."""
    return any(word in name.lower().replace("-", "_").split("_") for word in ROCM_WORDS)


def names_rocm(expression):
    """Whether a condition asks for ROCm (torch.version.hip, ROCM_HOME, IS_HIP_EXTENSION): the branch
    builds the HIP variant, which a CUDA build never takes. Not when ROCm is one alternative of an `or`."""
    if isinstance(expression, ast.BoolOp):
        found = [names_rocm(value) for value in expression.values]
        return all(found) if isinstance(expression.op, ast.Or) else any(found)
    if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.Not):
        return False
    for node in ast.walk(expression):
        word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if word.lower() in ("hip", "rocm_home", "is_hip_extension", "use_rocm", "is_rocm"):
            return True
    return False


class Analysis:
    def __init__(self, tree):
        self.tree = tree
        self.parents = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.derived = {}  # variable -> the expression it was first assigned
        self.assignments = {}  # variable -> every assignment of it, in source order
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.derived.setdefault(target.id, node.value)
                        self.assignments.setdefault(target.id, []).append(node)
        for found in self.assignments.values():
            found.sort(key=lambda node: (node.lineno, node.col_offset))

    def lookups(self, expression, positive=True, seen=None):
        """[(env name, value that turns it on or None, positive)] that `expression` reads; positive is False
        for a lookup the condition needs false (`not BUILD_NO_CUDA`, `X != "1"`)."""
        seen = set() if seen is None else seen
        if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.Not):
            return self.lookups(expression.operand, not positive, seen)
        if isinstance(expression, ast.BoolOp):
            return [found for value in expression.values for found in self.lookups(value, positive, seen)]
        membership = environ_membership(expression)
        if membership:
            return [(membership[0], None, positive != membership[1])]
        if isinstance(expression, ast.Compare) and expression.comparators:
            negated = isinstance(expression.ops[0], (ast.NotEq, ast.NotIn, ast.IsNot))
            # against an "off" value the sense turns: `X != ""` and `X not in ("0", "")` ask for it set,
            # `X == "0"` for it off
            if off_value(expression.comparators[0]):
                negated = not negated
            found = []
            for side in [expression.left] + expression.comparators:
                found += self.lookups(side, positive != negated, seen)
            return found
        name = env_lookup(expression)
        if name:
            return [(name, self.compared_value(expression), positive)]
        if isinstance(expression, ast.Name) and expression.id in self.derived and expression.id not in seen:
            seen.add(expression.id)
            # every value it is given (`BUILD_CUDA = False`, later `BUILD_CUDA = FORCE or ...`); constants
            # set in env branches through flag_switches
            found = []
            for assign in self.assignments[expression.id]:
                if not isinstance(assign.value, ast.Constant):
                    found += self.lookups(assign.value, positive, seen)
            return found + self.flag_switches(expression.id, positive, seen)
        found = []
        for child in ast.iter_child_nodes(expression):  # calls around a lookup: .lower(), int(...)
            found += self.lookups(child, positive, seen)
        return found

    def flag_switches(self, name, positive, seen):
        """A flag set to a constant inside env-gated branches after its first value
        (`WITH_CUDA = torch.cuda.is_available()`, then `if os.getenv("FORCE_CUDA") == "1": WITH_CUDA = True`):
        the first branch that turns it the way the condition needs, and every branch that turns it the other
        way, to stay off. A branch that also turns another flag off (`FORCE_ONLY_CUDA`: WITH_CPU = False)
        is taken only when no other does the job."""
        wanted, avoided = [], []
        for assign in self.assignments.get(name, [])[1:]:
            if not isinstance(assign.value, ast.Constant) or not isinstance(assign.value.value, bool):
                continue
            branch = self.parents.get(assign)
            if not isinstance(branch, ast.If) or assign not in branch.body:
                continue
            if bool(assign.value.value) == positive:
                side_effect = any(isinstance(other, ast.Assign) and isinstance(other.value, ast.Constant)
                                  and other.value.value is False for other in branch.body if other is not assign)
                wanted.append((side_effect, branch.test))
            else:
                avoided += self.lookups(branch.test, False, seen)
        chosen = sorted(wanted, key=lambda item: item[0])[:1]  # stable: the first without side effects
        return [found for _, test in chosen for found in self.lookups(test, True, seen)] + avoided

    def resets(self, node):
        """(condition, False) for each env branch that empties the list `node` was put in
        (`ext = [CUDAExtension(...)]`, later `if os.getenv("SKIP_EXT") == "1": ext = []`)."""
        holder = self.parents.get(node)
        while holder is not None and not isinstance(holder, (ast.Assign, ast.FunctionDef, ast.Module)):
            holder = self.parents.get(holder)
        if not isinstance(holder, ast.Assign) or len(holder.targets) != 1 or \
                not isinstance(holder.targets[0], ast.Name):
            return []
        found = []
        for later in self.assignments.get(holder.targets[0].id, []):
            emptied = isinstance(later.value, (ast.List, ast.Tuple)) and not later.value.elts or \
                isinstance(later.value, ast.Constant) and later.value.value is None
            branch = self.parents.get(later)
            if later.lineno > holder.lineno and emptied and isinstance(branch, ast.If) and later in branch.body:
                found.append((branch.test, False))
        return found

    def asks_for_a_gpu(self, expression, seen=None):
        """Whether a condition asks torch whether there is a GPU (torch.cuda.is_available(),
        device_count(), get_device_capability()), directly or through a variable assigned from one."""
        seen = set() if seen is None else seen
        for node in ast.walk(expression):
            if isinstance(node, ast.Call) and called_name(node) in GPU_QUERIES:
                return True
            if isinstance(node, ast.Name) and node.id in self.assignments and node.id not in seen:
                seen.add(node.id)
                if any(self.asks_for_a_gpu(assign.value, seen) for assign in self.assignments[node.id]):
                    return True
        return False

    def referenced(self, name):
        return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(self.tree))

    def compared_value(self, lookup):
        parent = self.parents.get(lookup)
        while isinstance(parent, (ast.Call, ast.Attribute)):  # .lower(), .strip() around the lookup
            parent = self.parents.get(parent)
        if isinstance(parent, ast.Compare) and parent.comparators:
            other = parent.comparators[0]
            if isinstance(other, (ast.Tuple, ast.List, ast.Set)) and other.elts:
                other = other.elts[0]
            value = string_value(other)
            # The value that turns it on: a compared string, unless it reads as "off"
            # (`!= "0"` asks for anything else; `not in ("1", "true")` before a return asks for "1").
            if value is not None and value.strip().lower() not in OFF_VALUES:
                return value
        return None

    def gates(self, node, depth=0):
        """(condition, positive) pairs that must hold for `node` to run, outermost first; a function's
        gates include those around its calls (two levels deep). None when it never runs (in a top-level
        function nothing calls)."""
        chain = []
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
                in_else = isinstance(parent, (ast.If, ast.While)) and child in parent.orelse or \
                    isinstance(parent, ast.IfExp) and child is parent.orelse
                chain.append((parent.test, not in_else))
            body = getattr(parent, "body", None)
            if isinstance(body, list) and child in body:
                # if not X: return / raise / sys.exit(), the last first (the chain is reversed at the end)
                for earlier in reversed(body[:body.index(child)]):
                    if isinstance(earlier, ast.If) and any(
                            isinstance(s, (ast.Return, ast.Raise)) or
                            (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                             and called_name(s.value) == "exit") for s in earlier.body):
                        chain.append((earlier.test, False))
            if isinstance(parent, ast.FunctionDef) and depth < 2:
                if self.parents.get(parent) is self.tree and not self.referenced(parent.name):
                    return None  # defined, never called nor passed on: what it makes is never built
                callers = [call for call in ast.walk(self.tree)
                           if isinstance(call, ast.Call) and called_name(call) == parent.name]
                outer = []
                for call in callers[:1]:
                    above = self.gates(call, depth + 1)
                    if above is None:
                        return None
                    outer += above
                return outer + list(reversed(chain))
            child, parent = parent, self.parents.get(parent)
        return list(reversed(chain))


def cuda_sources(call, analysis, seen=None):
    """The ".cu" string constants an Extension(...) call's arguments hold, following variables
    (sources = ["a.c"] + (["k.cu"] if WITH_CUDA else []))."""
    seen = set() if seen is None else seen
    found = []
    for node in ast.walk(call):
        value = string_value(node)
        if value and value.endswith(".cu"):
            found.append(node)
        elif isinstance(node, ast.Name) and node.id in analysis.derived and node.id not in seen:
            seen.add(node.id)
            found += cuda_sources(analysis.derived[node.id], analysis, seen)
    return found


def cuda_constructs(node, analysis):
    """The nodes whose running builds CUDA code: a CUDAExtension call, the .cu sources of an
    Extension (each gated where it is written, and where the call is), or a name bound to
    CUDAExtension (`extension = CUDAExtension` in a branch, `extension(...)` later)."""
    if isinstance(node, ast.Assign):
        value = node.value
        bound = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else ""
        return [node] if bound in CUDA_CONSTRUCTORS else []
    if not isinstance(node, ast.Call):
        return []
    name = called_name(node)
    if name in CUDA_CONSTRUCTORS:
        return [node]
    if name in ("Extension", "CppExtension"):  # BuildExtension compiles .cu sources of either with nvcc
        sources = cuda_sources(node, analysis)
        return sources + [node] if sources else []
    return []


def main():
    if len(sys.argv) != 2:
        sys.exit(next(line for line in __doc__.splitlines() if line.startswith("Usage:")))
    try:
        with open(sys.argv[1], "rb") as handle:
            tree = ast.parse(handle.read(4 << 20))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
        print(json.dumps({"gates": [], "extensions": 0, "error": str(error)}))
        return 0
    analysis = Analysis(tree)
    gates, count, gpu_query = [], 0, False
    for node in ast.walk(tree):
        chains = [analysis.gates(construct) for construct in cuda_constructs(node, analysis)]
        chains = [chain + analysis.resets(node) if chain is not None else None for chain in chains]
        # (a HIP variant's branch is none of a CUDA build's business: torch.version.hip, USE_ROCM=1)
        chains = [chain for chain in chains if chain is not None and not any(
            holds and names_rocm(test) for test, holds in chain) and not any(
            positive and rocm_variable(name) for test, holds in chain
            for name, _, positive in analysis.lookups(test, holds))]
        if chains:
            count += 1
        for chain in chains:
            gpu_query = gpu_query or any(analysis.asks_for_a_gpu(test) for test, _ in chain)
            for test, holds in chain:
                for name, value, positive in analysis.lookups(test, holds):
                    known = next((gate for gate in gates if gate["name"] == name), None)
                    if known is None:
                        gates.append({"name": name, "value": value if positive else None, "unset": not positive})
                    elif known["unset"] != (not positive):  # wanted on and off: kept off
                        known.update(value=None, unset=True)
    print(json.dumps({"gates": gates, "extensions": count, "gpu_query": gpu_query}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
