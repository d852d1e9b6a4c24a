#!/usr/bin/env python3
"""Builds one wheel with the project's PEP 517 backend, in this interpreter
and without build isolation: what `pip wheel --no-build-isolation --no-deps`
does, minus pip's separate metadata step. For a torch.utils.cpp_extension
project each step's setup.py imports torch (4.5 s on the H200 machine), so
this saves one import per build.

Its setuptools compiles run in parallel (parallel_build_ext.py, beside it).

Usage: pep517_wheel.py SOURCE_DIR WHEEL_DIR
"""
import importlib
import importlib.util
import os
import pathlib
import sys

LEGACY = "setuptools.build_meta:__legacy__"  # pip's default without [build-system]


def read_toml(path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            from pip._vendor import tomli as tomllib
        except ImportError:
            import tomli as tomllib
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def install_parallel_compiles():
    spec = importlib.util.spec_from_file_location(
        "archbuild_parallel_build_ext", pathlib.Path(__file__).with_name("parallel_build_ext.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.install()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    source, wheel_dir = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    if not source.is_dir():
        sys.exit(f"pep517_wheel: no such source dir: {source}")
    system = {}
    if (source / "pyproject.toml").exists():
        system = read_toml(source / "pyproject.toml").get("build-system", {})
    spec = system.get("build-backend", LEGACY)
    for entry in reversed(system.get("backend-path", [])):  # in-tree backends
        sys.path.insert(0, str(source / entry))
    os.chdir(source)
    module, _, attribute = spec.partition(":")
    try:
        backend = importlib.import_module(module)
    except ImportError as error:
        sys.exit(f"pep517_wheel: cannot import the build backend '{spec}' of {source}: {error}")
    for part in filter(None, attribute.split(".")):
        backend = getattr(backend, part)
    wheel_dir.mkdir(parents=True, exist_ok=True)
    parallel = install_parallel_compiles()
    print(f"pep517_wheel: {spec}.build_wheel({wheel_dir})"
          + (f", setuptools compiles in parallel (MAX_JOBS={os.environ['MAX_JOBS']})" if parallel else ""), flush=True)
    name = backend.build_wheel(str(wheel_dir))
    print(f"pep517_wheel: built {wheel_dir / name}", flush=True)


if __name__ == "__main__":
    main()
