"""`archbuild source` and `build --patch` against hostile input: chained
patches that write through a symlink an earlier patch made, symlinks out of
the tree, untracked symlinks in a reused work tree, and an edited manifest.
Every test also checks that a sentinel directory outside the tree is
byte-for-byte unchanged. And `source pypi:NAME==VERSION` against a hostile
package index or find-links dir: endless files, FIFOs, directories,
malformed PEP 691 pages, huge pages, redirect loops, links to local files."""
import hashlib
import http.server
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import threading
import time
import unittest

from gitrepos import add_submodule, commit_files, git, make_repo
from harness import SOURCE_DIR, SYSTEM_NVCC, run, scratch_dir
from waiting import scaled
from test_pypi_source import DEMO_FILES, make_sdist


def add_file(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def snapshot(root):
    """Every entry below root: type, mode, bytes or link target."""
    state = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = pathlib.Path(directory) / name
            info = path.lstat()
            key = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                state[key] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                state[key] = ("dir", info.st_mode)
            else:
                state[key] = ("file", info.st_mode, path.read_bytes())
    return state


class Hostile(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.sentinel = self.dir / "outside"
        (self.sentinel / "dir").mkdir(parents=True)
        (self.sentinel / "file.txt").write_text("precious\n")
        (self.sentinel / "dir" / "file.txt").write_text("precious too\n")
        (self.sentinel / "dir" / "keep.txt").write_text("keep\n")
        (self.sentinel / "victim" / ".git").mkdir(parents=True)
        (self.sentinel / "victim" / "data.txt").write_text("victim\n")
        self.before = snapshot(self.sentinel)
        self.repo = make_repo(self.dir / "proj", {
            "src/a.c": "int a(void) {\n  return 1;\n}\n", "README": "proj\n", "dir/keep.txt": "keep\n"})
        self.cache = self.dir / "cache"

    def tearDown(self):
        self.assertSentinelUnchanged()

    def assertSentinelUnchanged(self):
        self.assertEqual(snapshot(self.sentinel), self.before, "something outside the tree changed")

    def patch_file(self, name, change, base=None):
        """A real patch: `git diff` of a change made in a scratch clone (of `base`, default the repository)."""
        work = self.dir / f"edit-{name}"
        git(self.dir, "clone", "-q", str(base or self.repo), str(work))
        change(work)
        git(work, "add", "-A")
        patch = self.dir / f"{name}.patch"
        patch.write_text(git(work, "diff", "--cached", "-M") + "\n")
        return patch

    def source(self, dest, *patches, ref="main", repo=None):
        argv = ["source", str(repo or self.repo), "--ref", ref, "--cache-dir", str(self.cache), "--dest", str(dest),
                "--json"]
        for patch in patches:
            argv += ["--patch", str(patch)]
        return run(*argv)

    def symlink_patch(self, name, link, target):
        return self.patch_file(name, lambda w: (w / link).symlink_to(target))


class ChainedPatches(Hostile):
    def lnk_file_patch(self):
        """Adds lnk/file.txt: written against a tree where lnk is a plain directory."""
        return self.patch_file("lnk-file", lambda w: add_file(w / "lnk" / "file.txt", "pwned\n"))

    def test_second_patch_writing_through_the_first_ones_symlink_is_refused(self):
        inside = self.symlink_patch("link-inside", "lnk", "src")
        through = self.lnk_file_patch()
        result = self.source(self.dir / "fresh", inside, through)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("lnk-file.patch writes through a symlink", result.stderr)
        self.assertIn("'lnk/file.txt' passes through 'lnk', a symlink made by patch", result.stderr)
        self.assertIn("link-inside.patch", result.stderr)
        self.assertFalse((self.dir / "fresh").exists())
        # into an existing tree: nothing is written, not even the first patch's symlink
        kept = self.dir / "kept"
        self.assertEqual(self.source(kept).returncode, 0)
        result = self.source(kept, inside, through)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertFalse(os.path.lexists(kept / "lnk"))
        self.assertEqual(sorted(p.name for p in (kept / "src").iterdir()), ["a.c"])
        self.assertEqual(git(kept, "status", "--porcelain"), "")

    def test_the_adversarial_pair_leaves_the_outside_alone(self):
        # lnk -> /outside/dir, then lnk/file.txt: refused at the symlink already
        out = self.symlink_patch("link-out", "lnk", self.sentinel / "dir")
        result = self.source(self.dir / "t", out, self.lnk_file_patch())
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("link-out.patch makes the symlink 'lnk'", result.stderr)
        self.assertIn("is absolute", result.stderr)
        self.assertFalse((self.dir / "t").exists())

    def test_symlinks_out_of_the_tree_are_refused(self):
        cases = {
            "absolute": str(self.sentinel),
            "relative": "../outside",
            "deep": "src/../../outside/dir",
        }
        for name, target in cases.items():
            with self.subTest(name):
                patch = self.symlink_patch(name, "lnk", target)
                result = self.source(self.dir / f"t-{name}", patch)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{name}.patch makes the symlink 'lnk' -> '{target}'", result.stderr)
                self.assertIn("relative symlinks that stay inside the source tree", result.stderr)
                self.assertFalse((self.dir / f"t-{name}").exists())

    def test_retargeting_a_committed_symlink_out_of_the_tree_is_refused(self):
        (self.repo / "alias").symlink_to("src")
        commit_files(self.repo, {}, "add alias")
        git(self.repo, "tag", "with-alias")  # a new ref: the mirror's `main` is not re-fetched without --refresh

        def retarget(work):
            (work / "alias").unlink()
            (work / "alias").symlink_to(self.sentinel)
        patch = self.patch_file("retarget", retarget)
        self.assertIn("index", patch.read_text())
        result = self.source(self.dir / "t", patch, ref="with-alias")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"retarget.patch makes the symlink 'alias' -> '{self.sentinel}'", result.stderr)
        self.assertFalse((self.dir / "t").exists())
        # without the mode on the index line the result is a plain file holding the path, never a symlink
        bare = self.dir / "bare.patch"
        bare.write_text("".join(line for line in patch.read_text().splitlines(True)
                                if not line.startswith("index ")))
        result = self.source(self.dir / "t", bare, ref="with-alias")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.islink(self.dir / "t" / "alias"))
        self.assertEqual((self.dir / "t" / "alias").read_text(), str(self.sentinel))

    def test_committed_symlink_replaced_by_a_directory_is_unlinked_not_followed(self):
        (self.repo / "out").symlink_to(self.sentinel / "dir")  # upstream's own business
        commit_files(self.repo, {}, "add out")
        git(self.repo, "tag", "with-out")
        base = self.dir / "with-out"
        git(self.dir, "clone", "-q", "--branch", "with-out", str(self.repo), str(base))

        def to_directory(work):
            (work / "out").unlink()
            add_file(work / "out" / "file.txt", "mine\n")
        replace = self.patch_file("to-dir", to_directory, base=base)
        # a second patch, written against a tree where out is a directory
        directory = make_repo(self.dir / "other", {"out/file.txt": "mine\n"})
        more = self.patch_file("more", lambda w: add_file(w / "out" / "more.txt", "more\n"), base=directory)
        tree = self.dir / "tree"
        result = self.source(tree, replace, more, ref="with-out")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.islink(tree / "out"))
        self.assertEqual((tree / "out" / "file.txt").read_text(), "mine\n")
        self.assertEqual((tree / "out" / "more.txt").read_text(), "more\n")
        # and again in the same tree: the checkout brings the symlink back, the patches replace it again
        result = self.source(tree, replace, more, ref="with-out")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((tree / "out" / "file.txt").read_text(), "mine\n")
        # without the first patch the second goes through the committed symlink: refused
        result = self.source(self.dir / "t", more, ref="with-out")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("passes through 'out', a symlink in the checked-out tree", result.stderr)

    def test_symlink_inside_the_tree_applies_and_reapplies(self):
        patch = self.symlink_patch("inside", "src/alias.c", "a.c")
        tree = self.dir / "tree"
        result = self.source(tree, patch)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.readlink(tree / "src" / "alias.c"), "a.c")
        self.assertEqual(json.loads(result.stdout)["patches"][0]["created"], ["src/alias.c"])
        result = self.source(tree, patch)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.readlink(tree / "src" / "alias.c"), "a.c")

    def test_directory_replaced_by_a_symlink_then_written_through(self):
        def replace(work):
            for child in (work / "dir").iterdir():
                child.unlink()
            (work / "dir").rmdir()
            (work / "dir").symlink_to("src")
        replaced = self.patch_file("replace-dir", replace)
        # a real patch against the original tree, where dir is a directory
        modify = self.patch_file("modify-keep", lambda w: (w / "dir" / "keep.txt").write_text("changed\n"))
        add = self.patch_file("add-below", lambda w: add_file(w / "dir" / "file.txt", "pwned\n"))
        for second in (modify, add):
            with self.subTest(second.name):
                result = self.source(self.dir / f"t-{second.stem}", replaced, second)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{second.name} writes through a symlink", result.stderr)
                self.assertIn("passes through 'dir', a symlink made by patch", result.stderr)
                self.assertFalse((self.dir / f"t-{second.stem}").exists())
        # the replacement alone is fine: the directory goes, the symlink takes its place
        tree = self.dir / "alone"
        result = self.source(tree, replaced)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.readlink(tree / "dir"), "src")
        # and it re-applies in the same tree (the checkout brings dir/ back first)
        result = self.source(tree, replaced)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.readlink(tree / "dir"), "src")

    def test_rename_and_delete_through_an_earlier_symlink_are_refused(self):
        inside = self.symlink_patch("link-src", "lnk", "src")

        def rename(work):
            (work / "lnk").mkdir()
            git(work, "mv", "README", "lnk/README")
        renamed = self.patch_file("rename", rename)
        self.assertIn("rename to lnk/README", renamed.read_text())
        # a deletion written against a tree holding lnk/a.c as a file
        base = make_repo(self.dir / "other", {"lnk/a.c": "int a;\n"})
        deleted = self.patch_file("delete", lambda w: (w / "lnk" / "a.c").unlink(), base=base)
        for second in (renamed, deleted):
            with self.subTest(second.name):
                result = self.source(self.dir / f"t-{second.stem}", inside, second)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{second.name} writes through a symlink", result.stderr)
                self.assertFalse((self.dir / f"t-{second.stem}").exists())

    def test_one_patch_adding_a_symlink_and_a_file_below_it(self):
        both = self.dir / "both.patch"
        both.write_text(self.symlink_patch("l", "lnk", "src").read_text() + self.lnk_file_patch().read_text())
        result = self.source(self.dir / "t", both)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("'lnk/file.txt' passes through 'lnk', a symlink made by this patch", result.stderr)
        self.assertFalse((self.dir / "t").exists())

    def test_untracked_symlink_in_a_reused_tree_is_not_written_through(self):
        tree = self.dir / "tree"
        self.assertEqual(self.source(tree).returncode, 0)
        (tree / "gen").symlink_to(self.sentinel / "dir")  # left by a build, say
        patch = self.patch_file("gen", lambda w: add_file(w / "gen" / "file.txt", "x\n"))
        result = self.source(tree, patch)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("'gen', an untracked symlink in the work tree", result.stderr)
        # an untracked file where a patch adds one is not overwritten either
        (tree / "gen").unlink()
        (tree / "gen").mkdir()
        (tree / "gen" / "file.txt").write_text("build output\n")
        result = self.source(tree, patch)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("already exists in the work tree and is not tracked", result.stderr)
        self.assertEqual((tree / "gen" / "file.txt").read_text(), "build output\n")

    def test_failing_patch_after_good_ones_leaves_the_tree_as_it_was(self):
        good = self.patch_file("good", lambda w: (w / "README").write_text("patched\n"))
        link = self.symlink_patch("link", "src/alias.c", "a.c")
        bad = self.patch_file("bad", lambda w: (w / "src/a.c").write_text("int a(void) {\n  return 3;\n}\n"))
        bad.write_text(bad.read_text().replace("return 1;", "return 42;"))
        tree = self.dir / "tree"
        self.assertEqual(self.source(tree).returncode, 0)
        result = self.source(tree, good, link, bad)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("bad.patch does not apply, hunk #1", result.stderr)
        self.assertEqual((tree / "README").read_text(), "proj\n")
        self.assertFalse(os.path.lexists(tree / "src" / "alias.c"))


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class BuildPatches(Hostile):
    def test_build_checks_chained_patches_the_same_way(self):
        inside = self.symlink_patch("link-inside", "lnk", "src")

        through = self.patch_file("lnk-file", lambda w: add_file(w / "lnk" / "file.txt", "pwned\n"))
        out = self.dir / "out"
        result = run("build", str(self.repo), "--arch", "9.0", "--cache-dir", str(self.cache), "--out", str(out),
                     "--patch", str(inside), "--patch", str(through), env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("lnk-file.patch writes through a symlink", result.stderr)
        outside = self.symlink_patch("link-out", "lnk", self.sentinel / "dir")
        result = run("build", str(self.repo), "--arch", "9.0", "--cache-dir", str(self.cache), "--out", str(out),
                     "--patch", str(outside), "--patch", str(through), env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("link-out.patch makes the symlink", result.stderr)


class ReusedTree(Hostile):
    """What archbuild reads back from a work tree it made is untrusted."""

    def manifest(self, tree):
        return tree / ".git" / "archbuild-source.json"

    def edit_manifest(self, tree, edit):
        data = json.loads(self.manifest(tree).read_text())
        edit(data)
        self.manifest(tree).write_text(json.dumps(data))

    def made_tree(self):
        tree = self.dir / "tree"
        result = self.source(tree)
        self.assertEqual(result.returncode, 0, result.stderr)
        return tree

    def test_submodule_path_out_of_the_tree_is_refused(self):
        tree = self.made_tree()
        for bad in ["../outside/victim", str(self.sentinel / "victim"), "src/../../outside/victim", ".git"]:
            with self.subTest(bad):
                self.edit_manifest(tree, lambda m: m.update(
                    submodules=[{"path": bad, "url": "file:///nowhere", "commit": "0" * 40}]))
                result = self.source(tree)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(str(self.manifest(tree)), result.stderr)
                self.assertIn(f"submodule path '{bad}'", result.stderr)
                self.assertTrue((tree / ".git" / "HEAD").exists())

    def test_created_path_out_of_the_tree_is_refused(self):
        tree = self.made_tree()
        self.edit_manifest(tree, lambda m: m.update(
            patches=[{"file": "x.patch", "origin": "--patch", "sha256": "0", "created": ["../outside/file.txt"]}]))
        result = self.source(tree)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(str(self.manifest(tree)), result.stderr)
        self.assertIn("'../outside/file.txt' created by patch x.patch climbs out with '..'", result.stderr)

    def test_removals_never_follow_a_symlink_out_of_the_tree(self):
        tree = self.made_tree()
        # paths inside the tree, but reached through an untracked symlink to the outside
        (tree / "third_party").symlink_to(self.sentinel)
        self.edit_manifest(tree, lambda m: m.update(
            submodules=[{"path": "third_party/victim", "url": "file:///nowhere", "commit": "0" * 40}],
            patches=[{"file": "x.patch", "origin": "--patch", "sha256": "0",
                      "created": ["third_party/file.txt", "third_party/dir/keep.txt"]}]))
        result = self.source(tree)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.islink(tree / "third_party"))

    def test_manifest_or_dest_that_is_a_symlink_is_refused(self):
        tree = self.made_tree()
        (self.sentinel / "dir" / "manifest.json").write_text(self.manifest(tree).read_text())
        self.before = snapshot(self.sentinel)
        self.manifest(tree).unlink()
        self.manifest(tree).symlink_to(self.sentinel / "dir" / "manifest.json")
        result = self.source(tree)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is not a work tree archbuild made", result.stderr)
        link = self.dir / "link-to-outside"
        link.symlink_to(self.sentinel / "dir")
        result = self.source(link)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"--dest {link} is a symlink", result.stderr)

    def test_checkout_never_writes_through_an_untracked_symlink(self):
        tree = self.made_tree()
        git(self.repo, "tag", "v1")
        commit_files(self.repo, {"src/a.c": "int a(void) {\n  return 2;\n}\n", "src/b.c": "int b;\n"}, "v2")
        git(self.repo, "tag", "v2")
        # a tracked directory replaced by a symlink to a copy outside
        (self.sentinel / "src").mkdir()
        (self.sentinel / "src" / "a.c").write_text("outside copy\n")
        self.before = snapshot(self.sentinel)
        for child in (tree / "src").iterdir():
            child.unlink()
        (tree / "src").rmdir()
        (tree / "src").symlink_to(self.sentinel / "src")
        result = self.source(tree, ref="v2")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("'src' is a symlink that archbuild did not check out", result.stderr)
        # a file the next commit adds, already there as a symlink
        (tree / "src").unlink()
        self.assertEqual(self.source(tree, ref="v1").returncode, 0)
        (tree / "src" / "b.c").symlink_to(self.sentinel / "file.txt")
        result = self.source(tree, ref="v2")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("'src/b.c' is a symlink", result.stderr)
        (tree / "src" / "b.c").unlink()
        result = self.source(tree, ref="v2")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((tree / "src" / "b.c").read_text(), "int b;\n")

    def test_submodule_directory_that_is_a_symlink_is_refused(self):
        helper = make_repo(self.dir / "helper", {"helper.txt": "helper\n"})
        add_submodule(self.repo, f"file://{helper}", "third_party/helper", "add helper")
        git(self.repo, "tag", "with-sub")
        tree = self.dir / "tree"
        result = self.source(tree, ref="with-sub")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((tree / "third_party/helper/helper.txt").read_text(), "helper\n")
        # the submodule's checkout replaced by a symlink to a directory outside
        shutil.rmtree(tree / "third_party" / "helper")
        (tree / "third_party" / "helper").symlink_to(self.sentinel / "victim")
        result = self.source(tree, ref="with-sub")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("third_party/helper", result.stderr)
        self.assertIn("symlink", result.stderr)


SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
FETCHER = SOURCE_DIR / "recipes" / "frontends" / "sdist_fetch.py"


class Routes(http.server.BaseHTTPRequestHandler):
    """Answers each path from the server's `routes`: path -> function(handler)."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        route = self.server.routes.get(self.path)
        try:
            if route is None:
                self.send_error(404)
            else:
                route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what every endless answer here ends with


def answer(body, content_type="text/html", length=True):
    def respond(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if length:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return respond


def pep691(project, files):
    return answer(json.dumps({"meta": {"api-version": "1.0"}, "name": project, "files": files}).encode(), SIMPLE_JSON)


def endless(head=b"", content_type="application/octet-stream", length=None):
    def respond(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if length is not None:
            handler.send_header("Content-Length", str(length))
        handler.end_headers()
        handler.wfile.write(head)
        block = b"\0" * (1 << 16)
        while True:
            handler.wfile.write(block)
    return respond


def redirect(to):
    def respond(handler):
        handler.send_response(302)
        handler.send_header("Location", to)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    return respond


def tree_bytes(root):
    return sum(p.lstat().st_size for p in pathlib.Path(root).rglob("*") if p.is_file() and not p.is_symlink())


class HostileIndex(unittest.TestCase):
    """What an index or a find-links dir offers is refused in one line (exit 2, bad input; 3 for an index
    that cannot be read), with no traceback, nothing left in the cache and no more than the cap written."""

    def setUp(self):
        self.dir = scratch_dir(self)
        self.cache = self.dir / "cache"
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Routes)
        self.server.routes = {}
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.env = {"PIP_INDEX_URL": f"{self.url}/simple/", "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": None,
                    "PIP_EXTRA_INDEX_URL": None, "PIP_NO_INDEX": None, "ARCHBUILD_OFFLINE": None,
                    "ARCHBUILD_RECIPE_PATH": None}

    def source(self, project, env=None):
        """`archbuild source pypi:PROJECT==1.0`; the CompletedProcess, checked to leave nothing behind."""
        started = time.monotonic()
        result = run("source", f"pypi:{project}==1.0", "--cache-dir", str(self.cache),
                     env=dict(self.env, **(env or {})), timeout=scaled(120))
        # an endless answer is cut off by a cap, not by this test's timeout (60 s for a busy machine)
        self.assertLess(time.monotonic() - started, scaled(60), result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertNotIn('File "', result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("archbuild: error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        sdists = self.cache / "sdists" / project
        if sdists.exists():
            self.assertEqual(sorted(p.name for p in sdists.iterdir()), ["1.0.lock"], result.stderr)
        self.assertLess(tree_bytes(self.cache), 1 << 20)
        return result, errors[0]

    def fetch(self, project, max_bytes, env=None):
        """The fetcher itself, with a small --max-bytes (archbuild's is 2 GiB)."""
        dest = self.dir / f"dest-{project}"
        dest.mkdir()
        full_env = dict(os.environ, **{k: v for k, v in dict(self.env, **(env or {})).items() if v is not None})
        for key, value in dict(self.env, **(env or {})).items():
            if value is None:
                full_env.pop(key, None)
        result = subprocess.run([sys.executable, str(FETCHER), "--name", project, "--version", "1.0", "--dest",
                                 str(dest), "--max-bytes", str(max_bytes)], capture_output=True, text=True,
                                env=full_env, timeout=scaled(120))
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertEqual(os.listdir(dest), [], result.stderr)
        return result

    def test_find_links_entries_that_are_no_regular_file_are_never_read(self):
        links = self.dir / "links"
        links.mkdir()
        (links / "zeroes-1.0.tar.gz").symlink_to("/dev/zero")
        (links / "dirpkg-1.0.tar.gz").mkdir()
        os.mkfifo(links / "fifopkg-1.0.tar.gz")  # opened, it would block for a writer forever
        with open(links / "sparse-1.0.tar.gz", "wb") as sparse:
            sparse.truncate(3 << 30)  # 3 GiB that takes no disk, over the 2 GiB cap
        cases = {
            "zeroes": "(a symlink to /dev/zero, listed by {}) is a character device, not a regular file",
            "dirpkg": "(listed by {}) is a directory, not a regular file",
            "fifopkg": "(listed by {}) is a FIFO (named pipe), not a regular file",
            "sparse": "is 3221225472 bytes, larger than the download cap of 2 GiB (2147483648 bytes)",
        }
        for find_links in (str(links), links.as_uri()):
            for project, message in cases.items():
                with self.subTest(project=project, find_links=find_links):
                    result, error = self.source(project, env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": find_links})
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertIn(str(links / f"{project}-1.0.tar.gz"), error)
                    self.assertIn(message.format(find_links), error)
        # a file: index (a static one on disk) whose page links /dev/zero
        page = self.dir / "simple" / "zeroes"
        page.mkdir(parents=True)
        (page / "index.html").write_text(f'<a href="{(links / "zeroes-1.0.tar.gz").as_uri()}">zeroes-1.0.tar.gz</a>')
        result, error = self.source("zeroes", env={"PIP_INDEX_URL": (self.dir / "simple").as_uri()})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("(a symlink to /dev/zero, listed by file://", error)
        # its page itself a FIFO: not read, not waited for
        (page / "index.html").unlink()
        os.mkfifo(page / "index.html")
        result, error = self.source("zeroes", env={"PIP_INDEX_URL": (self.dir / "simple").as_uri()})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("no sdist of zeroes", error)

    def test_every_source_stops_at_the_cap(self):
        big = self.dir / "links" / "bigfile-1.0.tar.gz"
        big.parent.mkdir()
        big.write_bytes(b"b" * 300000)
        self.server.routes.update({
            "/simple/endless/": answer(b'<a href="/files/endless-1.0.tar.gz">endless-1.0.tar.gz</a>'),
            "/files/endless-1.0.tar.gz": endless(),  # no Content-Length: counted as it comes
            "/simple/declared/": answer(b'<a href="/files/declared-1.0.tar.gz">declared-1.0.tar.gz</a>'),
            "/files/declared-1.0.tar.gz": endless(length=10 << 30),
        })
        cases = [
            ("endless", {}, "endless-1.0.tar.gz from http://127.0.0.1:"),
            ("declared", {}, "declared-1.0.tar.gz from http://127.0.0.1:"),
            ("bigfile", {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(big.parent)}, f"{big} is 300000 bytes, larger"),
        ]
        for project, env, message in cases:
            with self.subTest(project):
                result = self.fetch(project, 100000, env)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(message, result.stderr)
                self.assertIn("the download cap of 97.7 KiB (100000 bytes); nothing was kept", result.stderr)
        # through archbuild: its 2 GiB cap, checked before a byte is read
        result, error = self.source("declared")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is 10737418240 bytes, larger than the download cap of 2 GiB", error)

    def test_malformed_pep691_pages_are_refused_in_one_line(self):
        def entry(**changes):
            item = {"url": "/files/{project}-1.0.tar.gz", "hashes": {"sha256": "0" * 64}}
            item.update(changes)
            return {k: v for k, v in item.items() if v is not None}
        cases = {
            "hashes-list": ([entry(hashes=["sha256", "0" * 64])], "files[0] ({file}) 'hashes' is a list, not an object"),
            "hash-number": ([entry(hashes={"sha256": 12})], "files[0] ({file}) hash 'sha256' is a number, not a string"),
            "hash-not-hex": ([entry(hashes={"sha256": "zz"})], "the sha256 listed for {file} is not 64 hex digits"),
            "yanked-object": ([entry(yanked={"reason": 1})], "'yanked' is an object, not true, false or a reason"),
            "yanked-number": ([entry(yanked=1)], "'yanked' is a number, not true, false or a reason"),
            "no-url": ([entry(url=None)], "files[0] ({file}) 'url' is null, not a URL"),
            "entry-string": (["{file}"], "files[0] is a string, not an object"),
            "files-object": ({"{file}": {}}, "'files' is an object, not a list"),
            "page-list": (None, "the page is a list, not an object"),
        }
        for project, (files, message) in cases.items():
            file = f"{project}-1.0.tar.gz"
            files = json.loads(json.dumps(files).replace("{project}", project).replace("{file}", file))
            if isinstance(files, list):  # each entry named for its project, as a real index lists it
                files = [dict(item, filename=file) if isinstance(item, dict) else item for item in files]
            self.server.routes[f"/simple/{project}/"] = (answer(b"[]", SIMPLE_JSON) if files is None
                                                         else pep691(project, files))
            self.server.routes[f"/files/{file}"] = answer(b"not an sdist", "application/octet-stream")
            with self.subTest(project):
                result, error = self.source(project)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{self.url}/simple/{project}/: ", error)
                self.assertIn(message.format(file=file), error)
        # a well-formed page with the yanked and hashes forms PEP 691 allows still works
        sdist = make_sdist(self.dir, "fine", "1.0", DEMO_FILES)
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        self.server.routes["/simple/fine/"] = pep691("fine", [
            {"filename": sdist.name, "url": f"/files/{sdist.name}", "hashes": {"sha256": digest.upper(), "md5": "x"},
             "yanked": "a reason"}])
        self.server.routes[f"/files/{sdist.name}"] = answer(sdist.read_bytes(), "application/octet-stream")
        result = run("source", "pypi:fine==1.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("is yanked on", result.stderr)
        self.assertIn("(a reason)", result.stderr)

    def test_huge_pages_redirect_loops_and_links_out_of_the_server(self):
        local = make_sdist(self.dir, "local-pkg", "1.0", DEMO_FILES)
        self.server.routes.update({
            "/simple/huge/": endless(b"<html><body>\n", "text/html"),
            "/simple/huge-json/": endless(b'{"files": [', SIMPLE_JSON),
            "/simple/loop/": redirect("/simple/loop/"),
            "/simple/dl-loop/": answer(b'<a href="/files/dl-loop-1.0.tar.gz">dl-loop-1.0.tar.gz</a>'),
            "/files/dl-loop-1.0.tar.gz": redirect("/files/dl-loop-1.0.tar.gz"),
            "/simple/to-ftp/": answer(b'<a href="/files/to-ftp-1.0.tar.gz">to-ftp-1.0.tar.gz</a>'),
            "/files/to-ftp-1.0.tar.gz": redirect("ftp://127.0.0.1:1/to-ftp-1.0.tar.gz"),
            "/simple/to-file/": answer(b'<a href="/files/to-file-1.0.tar.gz">to-file-1.0.tar.gz</a>'),
            "/files/to-file-1.0.tar.gz": redirect(local.as_uri()),
            # a page from a server naming a file of this machine (one that is there)
            "/simple/local-pkg/": answer(f'<a href="{local.as_uri()}">{local.name}</a>'.encode()),
        })
        cases = [
            ("huge", 2, f"{self.url}/simple/huge/: the index page is larger than 64 MiB"),
            ("huge-json", 2, f"{self.url}/simple/huge-json/: the index page is larger than 64 MiB"),
            ("loop", 3, "cannot read the package index: "),
            ("dl-loop", 3, f"cannot download {self.url}/files/dl-loop-1.0.tar.gz: redirect loop"),
            ("to-ftp", 3, "redirected to ftp://127.0.0.1:1/to-ftp-1.0.tar.gz, which is not an http(s) URL"),
            ("to-file", 3, "Redirection to url"),
            ("local-pkg", 2, "no sdist of local-pkg"),
        ]
        for project, code, message in cases:
            with self.subTest(project):
                result, error = self.source(project)
                self.assertEqual(result.returncode, code, result.stderr)
                self.assertIn(message, result.stderr if project == "local-pkg" else error)
                if project == "loop":
                    self.assertIn("redirect loop", error)
                if project == "local-pkg":
                    self.assertIn(f"ignored 1 link(s) on {self.url}/simple/local-pkg/ that are not http(s) URLs",
                                  result.stderr)


if __name__ == "__main__":
    unittest.main()
