"""The clean room: what a node of the fleet has, and the wheel tried there.

  python clean_room.py layout [--system SONAME]... [--dependency SONAME=PATH]... [--gpu]
      Run outside, with the venv's interpreter (the wheel installed in it) and
      auditwheel on PYTHONPATH. Prints the bind mounts of a minimal root as
      JSON: {"python": VENV_PYTHON, "lib_dir": DIR, "binds": [[SOURCE, DEST]],
      "devices": [PATH], "missing_system": [SONAME]}. The root holds
        - the interpreter: its executable (each link of the way to it), its
          standard library and every directory on its sys.path (the venv,
          torch's site-packages and the dependency wheels beside it), and the
          shared libraries the interpreter and its lib-dynload modules load;
        - what torch's own libraries load from outside torch (on a node, its
          nvidia-* dependency wheels);
        - the manylinux policy's system libraries (--system), found here;
        - the libraries the audit left to torch, CUDA and the driver
          (--dependency), each under its soname;
        - with --gpu, the driver's libraries and /dev/nvidia*.
      Every library goes into one directory (lib_dir) under its soname, which
      the run inside names in LD_LIBRARY_PATH: nothing of the builder's
      /usr/lib, /usr/local or /opt is there unless listed above.

  python clean_room.py probe DIST --result RESULT [--import MODULE]...
      Run inside. Imports torch where it is installed (its libraries then
      satisfy the wheel's needs, as on a node), loads every shared object of
      the installed distribution DIST built for this CPU and imports each
      MODULE. Writes to RESULT (its stdout goes to stderr, so nothing the
      wheel prints can pass for the answer)
      {"torch": VERSION|null, "torch_error": TEXT|null, "loaded": [FILE],
       "failed": [[FILE, ERROR]], "imported": [MODULE],
       "import_failed": [[MODULE, ERROR]]}.
"""
import argparse
import ctypes
import glob
import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
import sysconfig

LIB_DIR = "/run/archbuild-node/lib"


def link_chain(path):
    """Each path on the way from `path` through its symbolic links to the file."""
    chain, seen = [], set()
    while path not in seen:
        seen.add(path)
        chain.append(path)
        if not os.path.islink(path):
            break
        path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    return chain


def elf_header(path):
    """(e_type, e_machine) of an ELF file, None for anything else."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order = "little" if head[5] == 1 else "big"
    return int.from_bytes(head[16:18], order), int.from_bytes(head[18:20], order)


ET_DYN = 3
RTLD_DI_ORIGIN = 6  # <dlfcn.h>: the directory an opened object was loaded from


def loader_finds(soname):
    """The file the dynamic loader opens for `soname` in this process (its cache, LD_LIBRARY_PATH,
    the container runtime's mounts: wherever torch's dlopen will find it), or None."""
    try:
        handle = ctypes.CDLL(soname)._handle
        libdl = ctypes.CDLL(None)
        origin = ctypes.create_string_buffer(4096)
        if libdl.dlinfo(ctypes.c_void_p(handle), RTLD_DI_ORIGIN, origin) != 0:
            return None
    except (OSError, AttributeError):
        return None
    path = os.path.join(os.fsdecode(origin.value), soname)
    return path if os.path.exists(path) else None


def layout(args):
    from auditwheel.lddtree import find_lib, ldd, load_ld_paths

    # sys.path as the probe will see it: not this script's dir, not the PYTHONPATH auditwheel came on.
    tooling = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    tooling.add(os.path.dirname(os.path.abspath(__file__)))
    node_path = [p for p in sys.path if p and os.path.abspath(p) not in tooling]
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    dirs = [entry for entry in [sys.prefix, base["stdlib"], base["platstdlib"]] + node_path
            if entry and os.path.isdir(entry)]
    # Each where the interpreter looks for it (a path through a symlinked ~/.cache too), from its real
    # place; a directory inside another bound one comes with it.
    dirs = sorted(set(os.path.abspath(d) for d in dirs))
    kept = []
    for directory in dirs:
        if not any(directory == parent or directory.startswith(parent + os.sep) for parent in kept):
            kept.append(directory)
    binds = [[os.path.realpath(d), d] for d in kept]

    def inside_bound(path):
        return any(path == d or path.startswith(d + os.sep) for d in kept)

    # The executable: each link on the way outside the bound dirs, as the file it ends at.
    executable = os.path.abspath(sys.executable)
    real_executable = os.path.realpath(executable)
    for hop in link_chain(executable):
        if not inside_bound(hop):
            binds.append([real_executable, hop])

    libraries = {}  # soname -> real path
    tree = ldd(real_executable)
    interpreter = tree.interpreter
    # The base interpreter's extension modules (a venv's own sysconfig paths name the venv).
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    dynload = {os.path.join(base["platstdlib"], "lib-dynload")} | {p for p in sys.path if p.endswith("lib-dynload")}
    elves = [real_executable] + sorted(p for d in dynload for p in glob.glob(os.path.join(d, "*.so")))
    for elf in elves:
        try:
            found = ldd(elf)
        except Exception:  # noqa: BLE001 - a module auditwheel cannot read is left out
            continue
        # (auditwheel's lddtree leaves an executable's RUNPATH unread: pyenv's python finds libpython there)
        own_paths = [p.replace("$ORIGIN", os.path.dirname(elf)) for p in found.rpath + found.runpath]
        for soname, library in found.libraries.items():
            if library.realpath is not None:
                libraries.setdefault(soname, str(library.realpath))
                continue
            for directory in own_paths:
                candidate = os.path.join(directory, soname)
                if os.path.exists(candidate):
                    libraries.setdefault(soname, os.path.realpath(candidate))
                    break

    # torch's own libraries' needs: what its dependency wheels (nvidia-*) give a node, wherever
    # they come from here (a toolkit's lib dir on a machine that installed torch without them).
    spec = importlib.util.find_spec("torch")
    torch_lib = os.path.join(spec.submodule_search_locations[0], "lib") if spec and \
        spec.submodule_search_locations else None
    if torch_lib and os.path.isdir(torch_lib):
        own = set(os.listdir(torch_lib))
        for path in sorted(glob.glob(os.path.join(torch_lib, "*.so*"))):
            try:
                found = ldd(path)
            except Exception:  # noqa: BLE001
                continue
            for soname, library in found.libraries.items():
                if soname not in own and library.realpath is not None:
                    libraries.setdefault(soname, str(library.realpath))

    missing_system = []
    ld_paths = load_ld_paths(tree.libc)
    search = ld_paths["conf"] + ld_paths["interp"]
    for soname in args.system:
        if soname in libraries:
            continue
        real, _ = find_lib(tree.platform, soname, search)
        if real is None:
            missing_system.append(soname)
        else:
            libraries[soname] = str(real)
    for item in args.dependency:
        soname, _, path = item.partition("=")
        if path and os.path.exists(path):
            libraries[soname] = os.path.realpath(path)

    devices = []
    if args.gpu:
        # The driver torch will load (it opens libcuda.so.1 at run time, linking none of it).
        driver = loader_finds("libcuda.so.1") or libraries.get("libcuda.so.1")
        if driver is None:
            real, _ = find_lib(tree.platform, "libcuda.so.1", search)
            driver = str(real) if real else None
        if driver:
            libraries["libcuda.so.1"] = os.path.realpath(driver)
            # libcuda opens its companions (the PTX JIT, NVVM) by name at run time, from its own dir
            # (where the loader found it, and where the file is).
            for directory in sorted({os.path.dirname(driver), os.path.dirname(os.path.realpath(driver))}):
                for path in glob.glob(os.path.join(directory, "libnvidia-*.so*")) + \
                        glob.glob(os.path.join(directory, "libcuda*.so*")):
                    libraries.setdefault(os.path.basename(path), os.path.realpath(path))
        devices = sorted(glob.glob("/dev/nvidia*"))

    for soname, real in sorted(libraries.items()):
        binds.append([real, os.path.join(LIB_DIR, soname)])
    if interpreter:
        binds.append([os.path.realpath(interpreter), interpreter])
    print(json.dumps({"python": executable, "lib_dir": LIB_DIR, "binds": binds, "devices": devices,
                      "missing_system": missing_system}))


def probe(args):
    # What the wheel's code prints (a library's printf, an atexit handler) goes to stderr: the answer is
    # the result file alone.
    os.dup2(2, 1)
    result = {"torch": None, "torch_error": None, "loaded": [], "failed": [], "imported": [], "import_failed": []}

    def answer():
        with open(args.result, "w") as handle:
            json.dump(result, handle)

    if importlib.util.find_spec("torch") is not None:
        try:
            import torch
            result["torch"] = torch.__version__
        except Exception as error:  # noqa: BLE001 - this machine's torch, not the wheel, fails here
            result["torch_error"] = f"{type(error).__name__}: {error}"
            answer()
            return
    host = elf_header(os.path.realpath(sys.executable))
    distribution = importlib.metadata.distribution(args.dist)
    for file in distribution.files or []:
        path = str(file.locate())
        header = elf_header(path)
        # Shared objects for this machine's CPU: not object files, cubins (ELF for the GPU) or programs.
        if header is None or header[0] != ET_DYN or host is None or header[1] != host[1]:
            continue
        try:
            ctypes.CDLL(path)
            result["loaded"].append(str(file))
        except OSError as error:
            result["failed"].append([str(file), str(error)])
    for module in args.imports:
        try:
            importlib.import_module(module)
            result["imported"].append(module)
        except Exception as error:  # noqa: BLE001
            result["import_failed"].append([module, f"{type(error).__name__}: {error}"])
    answer()


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("layout")
    made.add_argument("--system", action="append", default=[])
    made.add_argument("--dependency", action="append", default=[])
    made.add_argument("--gpu", action="store_true")
    made.set_defaults(run=layout)
    tried = commands.add_parser("probe")
    tried.add_argument("dist")
    tried.add_argument("--import", dest="imports", action="append", default=[])
    tried.add_argument("--result", required=True)
    tried.set_defaults(run=probe)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
