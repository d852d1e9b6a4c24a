"""Parallel compiles for setuptools builds, installed by pep517_wheel.py.

setuptools builds extension modules one after another, and without torch's
ninja backend (`use_ninja=False`, or no ninja) it compiles the files of each
one at a time, whatever MAX_JOBS says. setuptools' own `build_ext --parallel`
runs extensions in threads that share one compiler object, which
torch.utils.cpp_extension swaps between gcc and nvcc per file (and its ninja
backend writes one build.ninja per build dir), so threads race. Here every
extension module and every compile runs in a forked child instead: each has
its own copy of that state.

At most MAX_JOBS compiles run at once across all of them: a pipe holds one
token per job (GNU make's jobserver idea); a process takes a token before it
starts a compile and puts it back when the compile has been reaped, so a
compile killed by the OOM killer loses no token. An extension built by torch's
ninja backend gets its own build dir and a share of MAX_JOBS for its ninja.

Off with ARCHBUILD_PARALLEL_SETUPTOOLS=0, and when MAX_JOBS is 1.
"""
import os
import select
import sys
import traceback

_tokens = None  # (read fd, write fd)


def _jobs():
    try:
        return max(1, int(os.environ.get("MAX_JOBS", "1")))
    except ValueError:
        return 1


def _flush():
    sys.stdout.flush()
    sys.stderr.flush()


def _take_token():
    """A compile slot, without blocking: True when taken."""
    try:
        return len(os.read(_tokens[0], 1)) == 1
    except BlockingIOError:  # another process took the last one first
        return False


def _run_forked(items, work, limit, take_tokens):
    """Runs work(item) for each item in forked children, at most `limit` at
    once (and one token each when take_tokens). Returns the failed items.
    It never waits for a token while a child of its own holds one: it reaps
    that child first (which gives the token back), so no process can hold
    the last tokens while waiting for more."""
    running, failed, pending = {}, [], list(items)

    def reap():
        pid, status = os.wait()
        item = running.pop(pid, None)
        if item is None:
            return
        if take_tokens:
            os.write(_tokens[1], b"+")
        if status != 0:
            failed.append(item)  # start no more; let the running ones finish

    while pending and not failed:
        if len(running) >= limit:
            reap()
            continue
        if take_tokens and not _take_token():
            if running:
                reap()
            else:
                select.select([_tokens[0]], [], [])  # nothing of ours runs: wait for anyone's token
            continue
        item = pending.pop(0)
        _flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                work(item)
            except SystemExit as error:
                code = error.code if isinstance(error.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                _flush()
                os._exit(code)
        running[pid] = item
    while running:
        reap()
    return failed


def _parallel_compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                      extra_preargs=None, extra_postargs=None, depends=None):
    # distutils' CCompiler.compile, with its loop over objects run in children.
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    todo = [obj for obj in objects if obj in build]

    def compile_one(obj):
        src, ext = build[obj]
        self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    failed = _run_forked(todo, compile_one, len(todo) or 1, take_tokens=True)
    if failed:
        from setuptools._distutils.errors import CompileError
        raise CompileError(f"{len(failed)} compile(s) failed: {', '.join(failed)}")
    return objects


def _forked_extensions(original_serial):
    def build_extensions_serial(self):
        extensions = list(self.extensions)
        if len(extensions) < 2:
            return original_serial(self)
        jobs = _jobs()
        at_once = min(jobs, len(extensions))
        base_temp = self.build_temp
        print(f"archbuild: building {len(extensions)} extension modules, up to {at_once} at once, "
              f"{jobs} compiles at most", flush=True)

        def build_one(ext):
            # torch's ninja backend writes build.ninja into build_temp: one dir each
            self.build_temp = os.path.join(base_temp, "ext-" + ext.name.replace(os.sep, "_"))
            os.environ["MAX_JOBS"] = str(max(1, jobs // at_once))
            with self._filter_build_errors(ext):
                self.build_extension(ext)

        failed = _run_forked(extensions, build_one, at_once, take_tokens=False)
        if failed:
            from setuptools._distutils.errors import CompileError
            raise CompileError("extension module(s) failed to build: " + ", ".join(e.name for e in failed))

    return build_extensions_serial


def install():
    """Patches setuptools (before the backend runs setup.py); True when on."""
    global _tokens
    jobs = _jobs()
    if jobs < 2 or os.environ.get("ARCHBUILD_PARALLEL_SETUPTOOLS", "1") == "0" or not hasattr(os, "fork"):
        return False
    try:
        from setuptools._distutils import ccompiler
        from setuptools.command import build_ext
    except ImportError:
        return False
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)  # tokens are taken with select + a non-blocking read
    os.write(write_fd, b"+" * jobs)
    _tokens = (read_fd, write_fd)
    ccompiler.CCompiler.compile = _parallel_compile
    cls = build_ext.build_ext
    cls._build_extensions_serial = _forked_extensions(cls._build_extensions_serial)
    return True
