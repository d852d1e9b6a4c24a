"""`archbuild source|plan|build pypi:NAME==VERSION`: sdists from a real local
package index (http.server on loopback, PEP 503 pages with sha256 fragments,
reached through PIP_INDEX_URL as pip would), cached with their sha256 and
checked again on reuse, read without ever being unpacked onto disk (hostile
members refused with a sentinel directory untouched), built like a git
source; recipes whose repository is pypi:NAME; and one real sdist from PyPI."""
import fcntl
import functools
import hashlib
import http.server
import io
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tarfile
import threading
import time
import unittest
import urllib.request

from gitrepos import git
from harness import BIN, SOURCE_DIR, SYSTEM_NVCC, run, scratch_dir, session_processes, stop_session, torch_build_python
from waiting import READY_BUDGET, scaled, wait_gone


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class LocalIndex:
    """A PEP 503 simple index over HTTP on 127.0.0.1 holding the sdists added to it."""

    def __init__(self, root, handler_class=QuietHandler):
        self.root = pathlib.Path(root)
        (self.root / "files").mkdir(parents=True)
        self.projects = {}
        handler = functools.partial(handler_class, directory=str(self.root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/simple/"

    def add(self, project, sdist, listed_sha256=None):
        shutil.copy(sdist, self.root / "files" / sdist.name)
        sha256 = listed_sha256 or hashlib.sha256(sdist.read_bytes()).hexdigest()
        self.projects.setdefault(project, []).append((sdist.name, sha256))
        page = self.root / "simple" / project
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="../../files/{name}#sha256={digest}">{name}</a>\n'
                        for name, digest in self.projects[project])
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def member(name, data=b"", kind=tarfile.REGTYPE, link="", mode=0o644):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = mode
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def make_sdist(where, project, version, files, extra=()):
    """PROJECT-VERSION.tar.gz as setuptools writes one: a top directory, PKG-INFO, the files."""
    top = f"{project.replace('-', '_')}-{version}"
    path = pathlib.Path(where) / f"{top}.tar.gz"
    members = [member(f"{top}/", kind=tarfile.DIRTYPE, mode=0o755),
               member(f"{top}/PKG-INFO", f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n".encode())]
    members += [member(f"{top}/{name}", text.encode()) for name, text in files.items()]
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in list(members) + [m(top) for m in extra]:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


DEMO_FILES = {"setup.py": "from setuptools import setup\nsetup(name='demo-pkg', version='1.0')\n",
              "demo_pkg/__init__.py": "VALUE = 1\n"}


def sha256_of(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


class PypiSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.index = LocalIndex(cls.root / "index")
        cls.addClassCleanup(cls.index.close)
        cls.demo = make_sdist(cls.root, "demo-pkg", "1.0", DEMO_FILES)
        cls.index.add("demo-pkg", cls.demo)
        # pip's own settings from the environment only: no config file, no find-links of this machine
        cls.env = {"PIP_INDEX_URL": cls.index.url, "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": None,
                   "PIP_EXTRA_INDEX_URL": None, "PIP_NO_INDEX": None, "ARCHBUILD_OFFLINE": None,
                   "ARCHBUILD_RECIPE_PATH": None}

    def setUp(self):
        self.dir = scratch_dir(self)
        self.cache = self.dir / "cache"

    def source(self, what, *args, env=None, cache=None):
        result = run("source", what, "--cache-dir", str(cache or self.cache), "--json", *args,
                     env=dict(self.env, **(env or {})))
        return result, (json.loads(result.stdout) if result.returncode == 0 else None)

    def test_source_downloads_checks_and_reuses_the_sdist(self):
        dest = self.dir / "tree"
        result, report = self.source("pypi:Demo_Pkg==1.0", "--dest", str(dest))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((report["url"], report["ref"], report["ref_kind"]), ("pypi:demo-pkg", "1.0", "tag"))
        sdist = report["sdist"]
        self.assertEqual(sdist["sha256"], sha256_of(self.demo))
        self.assertTrue(sdist["index_hash"])
        self.assertEqual((sdist["file"], sdist["index"]), ("demo_pkg-1.0.tar.gz", self.index.url))
        self.assertIn("downloaded demo_pkg-1.0.tar.gz", result.stderr)
        # the sdist's files at the top of a git work tree whose HEAD is the reported commit
        self.assertEqual((dest / "demo_pkg" / "__init__.py").read_text(), "VALUE = 1\n")
        self.assertFalse((dest / "demo_pkg-1.0").exists())
        self.assertEqual(git(dest, "rev-parse", "HEAD"), report["commit"])
        self.assertEqual(git(dest, "status", "--porcelain"), "")
        manifest = json.loads((dest / ".git" / "archbuild-source.json").read_text())
        self.assertEqual(manifest["sdist"]["sha256"], sdist["sha256"])
        # the same sdist is the same commit in another cache (a fixed author and time)
        other, again = self.source("pypi:demo-pkg==1.0", cache=self.dir / "other-cache")
        self.assertEqual(other.returncode, 0, other.stderr)
        self.assertEqual(again["commit"], report["commit"])

        # offline, with no index reachable at all: the cached sdist, its sha256 checked
        offline = {"ARCHBUILD_OFFLINE": "1", "PIP_INDEX_URL": "http://127.0.0.1:1/simple/"}
        result, reused = self.source("pypi:demo-pkg==1.0", "--dest", str(self.dir / "offline"), env=offline)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(reused["commit"], report["commit"])
        self.assertNotIn("downloaded", result.stderr)

        # a cached file that changed is not built: offline that is an error, online it is fetched again
        cached = self.cache / "sdists" / "demo-pkg" / "demo_pkg-1.0.tar.gz"
        cached.write_bytes(cached.read_bytes() + b"tampered")
        result, _ = self.source("pypi:demo-pkg==1.0", "--dest", str(self.dir / "t2"), env=offline)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("no longer has the sha256 recorded", result.stderr)
        self.assertFalse((self.dir / "t2").exists())
        result, refetched = self.source("pypi:demo-pkg==1.0", "--dest", str(self.dir / "t3"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("downloaded again", result.stderr)
        self.assertEqual(sha256_of(cached), sha256_of(self.demo))
        self.assertEqual(refetched["commit"], report["commit"])

    def test_missing_versions_bad_specs_and_unreachable_indexes(self):
        cases = [
            ("pypi:demo-pkg==9.9", [], 2, "versions with an sdist there: 1.0"),
            ("pypi:no-such-project==1.0", [], 2, "no sdist of no-such-project"),
            # a catalogued project that is built from git: the error says how
            ("pypi:fused-ssim", [], 2, "archbuild's recipe fused-ssim builds it from "
             "https://github.com/rahul-goel/fused-ssim.git: archbuild build fused-ssim"),
            ("pypi:demo-pkg>=1.0", [], 2, "only an exact version"),
            ("pypi:", [], 2, "no project name"),
            ("pypi:demo-pkg==1.0", ["--ref", "2.0"], 2, "--ref does not go with pypi:demo-pkg==1.0"),
        ]
        for what, args, code, message in cases:
            result, _ = self.source(what, *args)
            self.assertEqual(result.returncode, code, (what, result.stderr))
            self.assertIn(message, result.stderr, what)
        result, _ = self.source("pypi:demo-pkg==1.0", env={"ARCHBUILD_OFFLINE": "1"})
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("offline (env ARCHBUILD_OFFLINE), and the cache holds no sdist of it", result.stderr)
        result, _ = self.source("pypi:demo-pkg==1.0", env={"PIP_INDEX_URL": "http://127.0.0.1:1/simple/"})
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("cannot read the package index", result.stderr)
        # pypi:NAME --ref VERSION names the same sdist
        result, report = self.source("pypi:demo-pkg", "--ref", "1.0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["sdist"]["version"], "1.0")
        self.assertFalse(list((self.cache / "worktrees").glob("*-9.9")))

    def test_vcs_leftovers_are_left_out_with_a_note(self):
        # A vendored submodule's 69-byte .git file, and a whole .hg/ of the checkout the sdist came from.
        extra = [lambda top: member(f"{top}/third_party/glm/.git", b"gitdir: ../../.git/modules/third_party/glm\n"),
                 lambda top: member(f"{top}/third_party/glm/glm.hpp", b"// glm\n"),
                 lambda top: member(f"{top}/.hg/store/00changelog.i", b"hg")]
        sdist = make_sdist(self.dir, "vcs-pkg", "1.0", DEMO_FILES, extra)
        self.index.add("vcs-pkg", sdist)
        result, report = self.source("pypi:vcs-pkg==1.0", "--dest", str(self.dir / "tree"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("left out of vcs_pkg-1.0.tar.gz the VCS metadata", result.stderr)
        self.assertIn("vcs_pkg-1.0/third_party/glm/.git", result.stderr)
        self.assertIn("vcs_pkg-1.0/.hg", result.stderr)
        tree = self.dir / "tree"
        self.assertTrue((tree / "third_party/glm/glm.hpp").exists())
        self.assertFalse((tree / "third_party/glm/.git").exists())
        self.assertFalse((tree / ".hg").exists())
        # the note comes back on reuse too (the commit records what it left out)
        again, _ = self.source("pypi:vcs-pkg==1.0")
        self.assertIn("left out of vcs_pkg-1.0.tar.gz", again.stderr)

    def test_newest_release_local_archives_and_a_mirrored_index(self):
        for version in ("1.1", "2.0rc1"):
            files = dict(DEMO_FILES, **{"setup.py": f"from setuptools import setup\nsetup(name='new-pkg', version='{version}')\n"})
            self.index.add("new-pkg", make_sdist(self.dir, "new-pkg", version, files))
        self.index.add("new-pkg", make_sdist(self.dir, "new-pkg", "1.0", DEMO_FILES))
        result, report = self.source("pypi:new-pkg")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["sdist"]["version"], "1.1")  # the newest final release, as pip picks it
        self.assertIn("the newest release with an sdist on", result.stderr)
        result, _ = self.source("pypi:new-pkg", env={"ARCHBUILD_OFFLINE": "1"})
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("names no version", result.stderr)
        self.assertIn("the cache holds 1.1", result.stderr)

        # a local sdist file is built like a downloaded one: its sha256 recorded, its name and version from its file name
        local = make_sdist(self.dir, "local-pkg", "3.1", DEMO_FILES,
                           [lambda top: member(f"{top}/vendor/.git", b"gitdir: x\n")])
        result, report = self.source(str(local), "--dest", str(self.dir / "local"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((report["ref"], report["sdist"]["project"], report["sdist"]["sha256"]),
                         ("3.1", "local-pkg", sha256_of(local)))
        self.assertIn("building the sdist", result.stderr)
        self.assertIn("left out of local_pkg-3.1.tar.gz the VCS metadata local_pkg-3.1/vendor/.git", result.stderr)
        result, _ = self.source(str(local), "--ref", "9.9")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--ref does not go with the sdist", result.stderr)
        odd = self.dir / "noversion.tar.gz"
        odd.write_bytes(local.read_bytes())
        result, _ = self.source(str(odd))
        self.assertEqual(result.returncode, 2)
        self.assertIn("does not say its name and version", result.stderr)

        # the index only a mirror reaches: the configured host does not resolve, every URL is rewritten
        unresolvable = "https://pypi.archbuild.invalid/simple/"
        result, report = self.source("pypi:demo-pkg==1.0", "--mirror", f"{unresolvable}={self.index.url}",
                                     cache=self.dir / "mirrored", env={"PIP_INDEX_URL": unresolvable})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["sdist"]["sha256"], sha256_of(self.demo))
        result, _ = self.source("pypi:demo-pkg==1.0", cache=self.dir / "unmirrored", env={"PIP_INDEX_URL": unresolvable})
        self.assertEqual(result.returncode, 3, result.stderr)

    def test_sdists_are_taken_byte_for_byte(self):
        # a .gitattributes of the sdist rewrites nothing (no CRLF, no $Id$ expansion)
        files = dict(DEMO_FILES, **{".gitattributes": "*.py text eol=crlf\n*.c ident\n", "native.c": "/* $Id$ */\n"})
        exact = make_sdist(self.dir, "exact-pkg", "1.0", files)
        result, report = self.source(str(exact), "--dest", str(self.dir / "exact"))
        self.assertEqual(result.returncode, 0, result.stderr)
        tree = pathlib.Path(report["dir"])
        self.assertEqual((tree / "setup.py").read_bytes(), DEMO_FILES["setup.py"].encode())
        self.assertEqual((tree / "native.c").read_bytes(), b"/* $Id$ */\n")
        # a flat sdist whose only top-level entry is its package keeps that directory
        flat = self.dir / "flatpkg-1.0.tar.gz"
        with tarfile.open(flat, "w:gz") as tar:
            for info, data in (member("flatpkg/", kind=tarfile.DIRTYPE, mode=0o755),
                               member("flatpkg/__init__.py", b"X = 1\n")):
                tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
        result, report = self.source(str(flat), "--dest", str(self.dir / "flat"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((pathlib.Path(report["dir"]) / "flatpkg" / "__init__.py").read_text(), "X = 1\n")
        # .git as Windows and NTFS short names spell it: refused by archbuild, exit 2, naming the member
        for number, name in enumerate(("GIT~1/config", ".git./config", ".git /hooks/x")):
            with self.subTest(name):
                where = self.dir / f"hostile-{number}"
                where.mkdir()
                hostile = make_sdist(where, "odd-pkg", "1.0", DEMO_FILES,
                                     [lambda top, name=name: member(f"{top}/{name}", b"x\n")])
                result, _ = self.source(str(hostile))
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("goes into .git", result.stderr)
                self.assertIn(name, result.stderr)

    def test_a_hash_mismatch_keeps_nothing(self):
        sdist = make_sdist(self.dir, "mismatch-pkg", "1.0", DEMO_FILES)
        self.index.add("mismatch-pkg", sdist, listed_sha256="0" * 64)
        result, _ = self.source("pypi:mismatch-pkg==1.0")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("hash mismatch", result.stderr)
        self.assertIn("0" * 64, result.stderr)
        self.assertEqual([p.name for p in (self.cache / "sdists" / "mismatch-pkg").iterdir()], ["1.0.lock"])
        self.assertFalse(list(self.cache.glob("mirrors/mismatch-pkg-*.git")))
        self.assertFalse((self.cache / "worktrees").exists())

    def test_hostile_sdists_are_refused_before_anything_is_written(self):
        sentinel = self.dir / "sentinel"
        sentinel.mkdir()
        (sentinel / "secret").write_text("keep\n")
        climb = "../" * 12 + str(sentinel).lstrip("/")
        cases = {
            "dotdot": ([lambda top: member(f"{top}/{climb}/pwned", b"x")], "climbs out with '..'"),
            "absolute": ([lambda top: member(f"{sentinel}/pwned", b"x")], "is an absolute path"),
            "symlink-abs": ([lambda top: member(f"{top}/link", kind=tarfile.SYMTYPE, link=str(sentinel)),
                             lambda top: member(f"{top}/link/pwned", b"x")], "target '" + str(sentinel) + "' is absolute"),
            "symlink-up": ([lambda top: member(f"{top}/link", kind=tarfile.SYMTYPE, link=climb)],
                           "climbs out of the tree"),
            "through-link": ([lambda top: member(f"{top}/inside", kind=tarfile.SYMTYPE, link="demo_pkg"),
                              lambda top: member(f"{top}/inside/pwned", b"x")], "lies inside 'inside', which is a symlink"),
            "hardlink": ([lambda top: member(f"{top}/hard", kind=tarfile.LNKTYPE, link=str(sentinel / "secret"))],
                         "not an earlier file of the archive"),
            "device": ([lambda top: member(f"{top}/dev", kind=tarfile.CHRTYPE)], "is a character device"),
            "fifo": ([lambda top: member(f"{top}/pipe", kind=tarfile.FIFOTYPE)], "is a fifo"),
            "git-dir-climbing": ([lambda top: member(f"{top}/../.git/hooks/post-checkout", b"#!/bin/sh\n")],
                                 "climbs out with '..'"),
        }
        before = sorted(str(p) for p in sentinel.rglob("*"))
        for label, (extra, message) in cases.items():
            project = f"hostile-{label}"
            sdist = make_sdist(self.dir, project, "1.0", DEMO_FILES, extra)
            self.index.add(project, sdist)
            result, _ = self.source(f"pypi:{project}==1.0")
            self.assertEqual(result.returncode, 2, (label, result.stderr))
            self.assertIn(f"sdist {sdist.name}: member '", result.stderr, label)
            self.assertIn(message, result.stderr, label)
            # nothing kept: no sdist, no record, no mirror, no work tree
            self.assertEqual([p.name for p in (self.cache / "sdists" / project).iterdir()], ["1.0.lock"], label)
            self.assertFalse(list(self.cache.glob(f"mirrors/{project}-*.git")), label)
            self.assertFalse(list(self.cache.glob(f"worktrees/{project}-*")), label)
        self.assertEqual(sorted(str(p) for p in sentinel.rglob("*")), before)
        self.assertEqual((sentinel / "secret").read_text(), "keep\n")
        self.assertFalse([p for p in self.dir.rglob("pwned")])

    def test_a_recipe_whose_repository_is_pypi_and_plan_and_matrix(self):
        site = self.dir / "site"
        site.mkdir()
        (site / "demo-sdist.toml").write_text('''name = "demo-sdist"
description = "demo-pkg from its sdist"
repository = "pypi:Demo_Pkg"
default_ref = "1.0"
arch_dialect = "extension"

[[build]]
versions = "*"
system = "setup.py"
command = ["{python}", "setup.py", "bdist_wheel", "--dist-dir", "{wheel_dir}"]
''')
        env = {"ARCHBUILD_RECIPE_PATH": str(site)}
        result, report = self.source("demo-sdist", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((report["ref"], report["sdist"]["project"]), ("1.0", "demo-pkg"))
        self.assertTrue(report["dir"].endswith("/worktrees/demo-sdist-1.0"), report["dir"])
        # the spec finds the recipe by its repository, and says so
        result, report = self.source("pypi:demo_pkg==1.0", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("using recipe demo-sdist for pypi:demo_pkg==1.0", result.stderr)
        # a matrix entry
        matrix = self.dir / "matrix.toml"
        matrix.write_text('recipes = ["pypi:demo-pkg==1.0"]\narch_sets = ["9.0"]\n')
        listed = run("matrix", str(matrix), "--dry-run", "--json", env=self.env)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertEqual([c["name"] for c in json.loads(listed.stdout)["cells"]], ["pypi:demo-pkg==1.0 9.0"])
        matrix.write_text('recipes = ["pypi:demo-pkg"]\narch_sets = ["9.0"]\n')
        bad = run("matrix", str(matrix), "--dry-run", env=self.env)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("names no version", bad.stderr)
        if not SYSTEM_NVCC.exists():
            return  # plan needs a CUDA toolkit
        # plan: the recipe, the version as the ref
        plan = run("plan", "pypi:demo-pkg==1.0", "--arch", "9.0", "--cache-dir", str(self.cache), "--json",
                   env=dict(self.env, **env))
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertEqual({k: json.loads(plan.stdout)[k] for k in ("recipe", "ref", "package")},
                         {"recipe": "demo-sdist", "ref": "1.0", "package": "demo-sdist"})
        generic = run("plan", "pypi:demo-pkg==1.0", "--arch", "9.0", "--cache-dir", str(self.cache), "--json",
                      env=self.env)
        self.assertEqual(generic.returncode, 0, generic.stderr)
        self.assertEqual(json.loads(generic.stdout)["recipe"], "cpp-extension")


class HeldHandler(QuietHandler):
    """Sends the first 256 KiB of a file the index's `held` names, then waits for its `release`."""

    def copyfile(self, source, outputfile):
        try:
            if any(self.path.endswith("/" + name) for name in self.server.held):
                outputfile.write(source.read(256 << 10))
                outputfile.flush()
                self.server.release.wait(120)
            shutil.copyfileobj(source, outputfile)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was stopped


def start_time(pid):
    text = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()[19]


class InterruptedDownloads(unittest.TestCase):
    """A download cut short (SIGINT, SIGTERM, SIGKILL) leaves nothing behind for good: the fetcher removes
    its partial file, and a later run removes what a killed one left, never another run's download."""

    def setUp(self):
        self.dir = scratch_dir(self)
        self.cache = self.dir / "cache"
        self.index = LocalIndex(self.dir / "index", HeldHandler)
        self.release = self.index.server.release = threading.Event()
        self.index.server.held = {"slow_pkg-1.0.tar.gz"}
        self.addCleanup(self.index.close)
        self.addCleanup(self.release.set)  # before close: a held response ends first
        noise = [lambda top: member(f"{top}/data.bin", os.urandom(1 << 20))]  # 1 MiB that gzip cannot shrink
        for version in ("1.0", "2.0"):
            self.index.add("slow-pkg", make_sdist(self.dir, "slow-pkg", version, DEMO_FILES, noise))
        self.env = dict(os.environ, NO_COLOR="1", PIP_INDEX_URL=self.index.url, PIP_CONFIG_FILE=os.devnull)
        for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "ARCHBUILD_OFFLINE",
                     "ARCHBUILD_RECIPE_PATH"):
            self.env.pop(name, None)
        self.sdists = self.cache / "sdists" / "slow-pkg"

    def start(self, version):
        self.before = set(self.sdists.glob(".download-*"))
        process = subprocess.Popen([BIN, "source", f"pypi:slow-pkg=={version}", "--cache-dir", str(self.cache)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
                                   start_new_session=True)
        self.addCleanup(lambda: (stop_session(process), process.communicate()))
        return process

    def wait_for_partial(self, process):
        """The .download-* dir of the download now held, once its partial file has bytes."""
        deadline = time.monotonic() + scaled(READY_BUDGET)
        while time.monotonic() < deadline:
            for partial in self.sdists.glob(".download-*/*slow_pkg-1.0.tar.gz"):  # .partial-PID-FILE
                if partial.parent not in self.before and partial.stat().st_size > 0:
                    return partial.parent
            self.assertIsNone(process.poll(), process.stderr.read() if process.poll() is not None else "")
            time.sleep(0.05)
        self.fail("the download never started")

    def wait_for_session_end(self, process):
        self.assertEqual(wait_gone(lambda: session_processes(process.pid), "the fetcher"), [])

    def test_sigint_or_sigterm_mid_download_leaves_nothing(self):
        for signo in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(signal=signo.name):
                self.release.clear()
                process = self.start("1.0")
                self.wait_for_partial(process)
                process.send_signal(signo)  # to archbuild alone, as a terminal's ^C reaches it
                _, err = process.communicate(timeout=60)
                self.assertEqual(process.returncode, 130, err)
                self.wait_for_session_end(process)
                self.assertEqual(sorted(p.name for p in self.sdists.iterdir()), ["1.0.lock"])
        self.release.set()
        result = run("source", "pypi:slow-pkg==1.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(list(self.sdists.glob(".download-*")))

    def test_a_rerun_removes_only_downloads_whose_writers_are_gone(self):
        # archbuild and its fetcher killed outright: their download stays until a later run
        process = self.start("1.0")
        killed = self.wait_for_partial(process)
        stop_session(process)
        self.assertTrue(list(killed.glob("*slow_pkg-1.0.tar.gz")))
        self.release.set()

        def leftover(name, record=None, age=0):
            path = self.sdists / name
            path.mkdir()
            (path / "slow_pkg-9.9.tar.gz").write_bytes(b"x" * 1000)
            if record is not None:
                (path / ".fetcher").write_text(json.dumps(record))
            stamp = time.time() - age
            os.utime(path, (stamp, stamp))
            return path

        me = os.getpid()
        live = leftover(".download-live01", {"pid": 1, "parent": me, "parent_start": start_time(me)})
        reused = leftover(".download-reuse1", {"pid": 1, "parent": me, "parent_start": "1"})  # pid reused since
        old = leftover(".download-old001", age=3 * 3600)  # no record (an older archbuild's), untouched for 3 h
        fresh = leftover(".download-new001")  # no record yet: archbuild made it a moment ago
        remote = leftover(".download-other1", {"pid": 1, "host": "another-builder.invalid", "parent": 999999999,
                                               "parent_start": "1"})  # a shared cache: its pid means nothing here
        remote_old = leftover(".download-other2", {"pid": 1, "host": "another-builder.invalid", "parent": 999999999},
                              age=3 * 3600)
        held = leftover(".download-held01", {"pid": 1, "parent": 999999999, "parent_start": "1"})
        lock = os.open(held, os.O_RDONLY | os.O_DIRECTORY)  # its fetcher still runs
        self.addCleanup(os.close, lock)
        fcntl.flock(lock, fcntl.LOCK_EX)
        symlink = self.sdists / ".download-link01"
        symlink.symlink_to(self.dir / "index")  # never followed

        result = run("source", "pypi:slow-pkg==2.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        for gone in (killed, reused, old, remote_old):
            self.assertFalse(gone.exists(), gone)
            self.assertIn(f"removed {gone}, a download left over", result.stderr)
        for kept in (live, fresh, held, remote):
            self.assertTrue((kept / "slow_pkg-9.9.tar.gz").exists(), kept)
        self.assertTrue(symlink.is_symlink())
        self.assertTrue((self.dir / "index" / "files").is_dir())

    def test_cache_gc_removes_downloads_whose_writers_are_gone(self):
        process = self.start("1.0")
        killed = self.wait_for_partial(process)
        stop_session(process)  # archbuild and its fetcher killed outright
        self.release.set()
        live = self.sdists / ".download-live02"
        live.mkdir()
        (live / ".fetcher").write_text(json.dumps({"pid": 1, "parent": os.getpid(),
                                                   "parent_start": start_time(os.getpid())}))
        dry = run("cache", "gc", "--dry-run", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertIn(f"would remove interrupted sdist download {killed}", dry.stdout)
        self.assertTrue(killed.exists())
        gc = run("cache", "gc", "--json", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertEqual(json.loads(gc.stdout)["stale_downloads_removed"], [str(killed)])
        self.assertFalse(killed.exists())
        self.assertTrue(live.exists())  # its archbuild (this test) still runs

    def test_a_running_download_of_another_version_is_left_alone(self):
        process = self.start("1.0")
        running = self.wait_for_partial(process)
        result = run("source", "pypi:slow-pkg==2.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("a download left over", result.stderr)
        self.assertTrue(list(running.glob("*slow_pkg-1.0.tar.gz")))
        self.release.set()
        _, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 0, err)
        self.assertFalse(list(self.sdists.glob(".download-*")))
        self.assertTrue((self.sdists / "slow_pkg-1.0.tar.gz").is_file())


def demo_extension_sdist(where):
    """examples/torch-extension (a real cpp_extension project with one CUDA kernel) as its sdist."""
    example = SOURCE_DIR / "examples" / "torch-extension"
    files = {str(p.relative_to(example)): p.read_text() for p in sorted(example.rglob("*"))
             if p.is_file() and "build" not in p.parts and "__pycache__" not in p.parts and ".egg-info" not in str(p)}
    return make_sdist(where, "archbuild-demo-ext", "0.1.0", files)


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class PypiBuild(unittest.TestCase):
    def test_build_an_extension_from_its_sdist(self):
        root = scratch_dir(self)
        index = LocalIndex(root / "index")
        self.addCleanup(index.close)
        sdist = demo_extension_sdist(root)
        index.add("archbuild-demo-ext", sdist)
        env = {"PIP_INDEX_URL": index.url, "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": None,
               "ARCHBUILD_FAKE_GPUS": None, "ARCHBUILD_OFFLINE": None, "ARCHBUILD_RECIPE_PATH": None}
        argv = ["build", "pypi:archbuild-demo-ext==0.1.0", "--arch", "9.0", "--use-installed-torch",
                "--python", str(torch_build_python()), "--cache-dir", str(root / "cache"), "--json"]
        result = run(*argv, env=env, timeout=1500)
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        report = json.loads(result.stdout)
        digest = sha256_of(sdist)
        self.assertEqual(report["source"]["sdist"]["sha256"], digest)
        self.assertEqual(report["plan"]["key_inputs"]["source.sdist.sha256"], digest)
        self.assertEqual(report["plan"]["recipe"], "cpp-extension")
        (wheel,) = report["wheels"]
        self.assertRegex(wheel["file"], r"^archbuild_demo_ext-0\.1\.0\+cu130\.sm90-cp3\d+-cp3\d+-linux_x86_64\.whl$")
        again = run(*argv, env=dict(env, ARCHBUILD_OFFLINE="1"), timeout=600)
        self.assertEqual(again.returncode, 0, again.stderr[-2000:])
        self.assertTrue(json.loads(again.stdout)["cache_hit"])
        print(f"\n  sdist build {report['build']['seconds']:.1f} s")


def pypi_reachable():
    try:
        urllib.request.urlopen("https://pypi.org/simple/torch-scatter/", timeout=10).close()
        return True
    except OSError:
        return False


class RealPypi(unittest.TestCase):
    def test_a_real_cuda_extension_sdist_from_pypi(self):
        if not pypi_reachable():
            self.skipTest("PyPI is not reachable from this machine")
        cache = scratch_dir(self) / "cache"
        env = {"PIP_INDEX_URL": None, "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": None, "ARCHBUILD_OFFLINE": None}
        result = run("source", "pypi:torch-scatter==2.1.2", "--cache-dir", str(cache), "--json", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        # the sha256 PyPI lists for torch_scatter-2.1.2.tar.gz, checked against the download
        self.assertEqual(report["sdist"]["sha256"], "69b3aa435f2424ac6a1bfb6ff702da6eb73b33ca0db38fb26989c74159258e47")
        self.assertTrue(report["sdist"]["index_hash"])
        tree = pathlib.Path(report["dir"])
        self.assertTrue((tree / "setup.py").is_file())
        self.assertTrue(list((tree / "csrc").rglob("*.cu")))


if __name__ == "__main__":
    unittest.main()
