"""`archbuild source` and `archbuild recipes`: libgit2 mirrors, work trees,
nested submodules, URL rewriting, patches, offline reuse, bad input."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time
import unittest

from gitrepos import Forest, add_submodule, commit_files, git, make_repo
from harness import BIN, SOURCE_DIR, run, scratch_dir
from waiting import scaled, wait_until


class Source(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.forest = Forest(self.dir / "repos")
        self.cache = self.dir / "cache"

    def source(self, *args, url=None, dest=None, env=None):
        argv = ["source", url or self.forest.url, "--cache-dir", str(self.cache), "--json", *args]
        if dest:
            argv += ["--dest", str(dest)]
        result = run(*argv, env=env)
        report = json.loads(result.stdout) if result.returncode == 0 else None
        return result, report

    def test_tag_with_three_levels_of_submodules(self):
        dest = self.dir / "tree"
        result, report = self.source("--ref", "v1.0", dest=dest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["commit"], self.forest.v1)
        self.assertEqual(report["ref_kind"], "tag")
        self.assertEqual((dest / "third_party/sub/third_party/mid/deps/leaf/leaf.txt").read_text(), "leaf\n")
        self.assertEqual((dest / "third_party/helper/helper.txt").read_text(), "helper\n")
        subs = {s["path"]: s["commit"] for s in report["submodules"]}
        self.assertEqual(subs, {
            "third_party/helper": git(self.forest.origin / "helper", "rev-parse", "HEAD"),
            "third_party/sub": self.forest.sub_commit,
            "third_party/sub/third_party/mid": self.forest.mid_commit,
            "third_party/sub/third_party/mid/deps/leaf": self.forest.leaf_commit,
        })
        # git itself agrees with the tree archbuild made
        self.assertEqual(git(dest, "rev-parse", "HEAD"), self.forest.v1)
        self.assertEqual(git(dest, "status", "--porcelain"), "")
        manifest = json.loads((dest / ".git" / "archbuild-source.json").read_text())
        self.assertEqual(manifest["commit"], self.forest.v1)

    def test_update_in_place_follows_a_moved_submodule_and_keeps_build_output(self):
        dest = self.dir / "tree"
        self.assertEqual(self.source("--ref", "v1.0", dest=dest)[0].returncode, 0)
        (dest / "build").mkdir()
        (dest / "build" / "out.o").write_text("object")
        result, report = self.source("--ref", "v2.0", dest=dest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(report["reused"])
        self.assertEqual(report["commit"], self.forest.v2)
        self.assertTrue((dest / "external/sub/third_party/mid/deps/leaf/leaf.txt").exists())
        self.assertFalse((dest / "third_party/sub").exists())
        self.assertEqual((dest / "build" / "out.o").read_text(), "object")
        self.assertIn("external/sub", {s["path"] for s in report["submodules"]})

    def test_branch_and_commit_refs(self):
        result, report = self.source("--ref", "feature", dest=self.dir / "b")
        self.assertEqual((result.returncode, report["ref_kind"], report["commit"]), (0, "branch", self.forest.feature))
        result, report = self.source("--ref", self.forest.v1[:10], dest=self.dir / "c")
        self.assertEqual((result.returncode, report["ref_kind"], report["commit"]), (0, "commit", self.forest.v1))

    def test_default_branch_when_no_ref(self):
        result, report = self.source(dest=self.dir / "d")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["ref"], "main")

    def test_unknown_ref_names_it_and_the_closest_tags(self):
        result, _ = self.source("--ref", "v2.1", dest=self.dir / "e")
        self.assertEqual(result.returncode, 2)
        self.assertIn("'v2.1'", result.stderr)
        self.assertIn("closest tags: v2.0, v1.0", result.stderr)
        self.assertFalse((self.dir / "e").exists())  # nothing left half-done

    def test_offline_reuse_and_unreachable_origin(self):
        result, report = self.source("--ref", "v1.0", dest=self.dir / "first")
        self.assertTrue(report["fetched"])
        shutil.move(self.forest.origin, self.dir / "gone")  # the network is down
        result, report = self.source("--ref", "v1.0", "--offline", dest=self.dir / "second")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(report["fetched"])
        self.assertTrue((self.dir / "second/third_party/sub/third_party/mid/deps/leaf/leaf.txt").exists())
        # the mirror has it: no fetch is tried even without --offline
        result, report = self.source("--ref", "v1.0", dest=self.dir / "third")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(report["fetched"])
        # a ref the mirror lacks: --offline says so, online says the fetch failed
        result, _ = self.source("--ref", "feature-2", "--offline", dest=self.dir / "fourth")
        self.assertEqual(result.returncode, 3)
        self.assertIn("--offline", result.stderr)
        start = time.monotonic()
        result, _ = self.source("--ref", "feature-2", dest=self.dir / "fifth")
        self.assertEqual(result.returncode, 3)
        self.assertIn("after 3 attempts", result.stderr)
        # three local fetches and 1.5 s of backoff: bounded (60 s for a busy machine)
        self.assertLess(time.monotonic() - start, scaled(60))

    def test_mirror_rewrites_every_url(self):
        forest = Forest(self.dir / "rewritten", url_base="https://git.example.invalid/org/")
        dest = self.dir / "mirrored"
        rule = f"https://git.example.invalid/org/=file://{forest.origin}/"
        result, report = self.source("--ref", "v1.0", "--mirror", rule, url=forest.url, dest=dest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(report["fetch_url"].startswith("file://"))
        self.assertTrue(all(s["url"].startswith("file://") for s in report["submodules"]), report["submodules"])
        # without --ref the default branch is asked of the mirror too: the original host does not resolve
        result, report = self.source("--mirror", rule, url=forest.url, dest=self.dir / "default-branch")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["ref"], "main")
        self.assertEqual(report["commit"], forest.v2)
        # the same rule from the config file
        config = self.dir / "config.toml"
        config.write_text(f'[mirrors]\n"https://git.example.invalid/org/" = "file://{forest.origin}/"\n')
        result, _ = self.source("--ref", "v2.0", url=forest.url, dest=self.dir / "via-config",
                                env={"ARCHBUILD_CONFIG": str(config)})
        self.assertEqual(result.returncode, 0, result.stderr)
        config.write_text('[mirrors]\n"https://x/" = 3\n')
        result, _ = self.source(url=forest.url, env={"ARCHBUILD_CONFIG": str(config)})
        self.assertEqual(result.returncode, 2)
        self.assertIn("config.toml:2", result.stderr)

    def test_destination_that_is_not_ours_is_refused(self):
        dest = self.dir / "occupied"
        dest.mkdir()
        (dest / "precious.txt").write_text("keep me")
        result, _ = self.source(dest=dest)
        self.assertEqual(result.returncode, 2)
        self.assertEqual((dest / "precious.txt").read_text(), "keep me")

    def test_interrupted_fetch_leaves_the_mirror_usable(self):
        big = make_repo(self.dir / "big", {f"blob{i}.bin": os.urandom(400_000).hex() for i in range(60)})
        argv = [BIN, "source", f"file://{big}", "--ref", "main", "--cache-dir", str(self.cache),
                "--dest", str(self.dir / "big-tree")]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # killed once the fetch is writing its pack (a fixed delay may come before it on a busy machine)
        wait_until(lambda: process.poll() is not None or any(
            pack.stat().st_size > 0 for pack in (self.cache / "mirrors").glob("*.git/objects/pack/*")),
            "the fetch to write its pack")
        process.send_signal(signal.SIGKILL)
        process.wait()
        result = run("source", f"file://{big}", "--ref", "main", "--cache-dir", str(self.cache),
                     "--dest", str(self.dir / "big-tree-2"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue((self.dir / "big-tree-2" / "blob59.bin").exists())


class Patches(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.repo = make_repo(self.dir / "proj", {"src/a.c": "int a(void) {\n  return 1;\n}\n", "README": "proj\n"})
        self.cache = self.dir / "cache"

    def patch_file(self, name, change):
        """A git-format patch made by editing a scratch clone."""
        work = self.dir / f"edit-{name}"
        git(self.dir, "clone", "-q", str(self.repo), str(work))
        change(work)
        git(work, "add", "-A")
        text = git(work, "diff", "--cached") + "\n"
        patch = self.dir / f"{name}.patch"
        patch.write_text(text)
        return patch

    def source(self, dest, *patches, ref="main"):
        argv = ["source", str(self.repo), "--ref", ref, "--cache-dir", str(self.cache), "--dest", str(dest), "--json"]
        for patch in patches:
            argv += ["--patch", str(patch)]
        return run(*argv)

    def test_patches_apply_in_order_and_are_recorded(self):
        first = self.patch_file("first", lambda w: (w / "src/a.c").write_text("int a(void) {\n  return 2;\n}\n"))
        second = self.patch_file("second", lambda w: (w / "src/new.c").write_text("int b;\n"))
        result = self.source(self.dir / "tree", first, second)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("return 2;", (self.dir / "tree/src/a.c").read_text())
        self.assertTrue((self.dir / "tree/src/new.c").exists())
        report = json.loads(result.stdout)
        self.assertEqual([p["origin"] for p in report["patches"]], ["--patch", "--patch"])
        import hashlib
        self.assertEqual(report["patches"][0]["sha256"], hashlib.sha256(first.read_bytes()).hexdigest())
        self.assertEqual(report["patches"][1]["created"], ["src/new.c"])
        # re-applying into the same tree works (the created file is removed first)
        self.assertEqual(self.source(self.dir / "tree", first, second).returncode, 0)

    def test_failing_patch_names_file_and_hunk_and_leaves_nothing(self):
        good = self.patch_file("good", lambda w: (w / "README").write_text("proj patched\n"))
        bad = self.patch_file("bad", lambda w: (w / "src/a.c").write_text("int a(void) {\n  return 3;\n}\n"))
        bad.write_text(bad.read_text().replace("return 1;", "return 42;"))  # context no longer matches
        result = self.source(self.dir / "fresh", good, bad)
        self.assertEqual(result.returncode, 2)
        self.assertIn("bad.patch", result.stderr)
        self.assertIn("hunk #1", result.stderr)
        self.assertIn("src/a.c", result.stderr)
        self.assertFalse((self.dir / "fresh").exists())
        # into an existing tree: nothing is written, not even the good patch
        self.assertEqual(self.source(self.dir / "kept").returncode, 0)
        result = self.source(self.dir / "kept", good, bad)
        self.assertEqual(result.returncode, 2)
        self.assertEqual((self.dir / "kept/README").read_text(), "proj\n")

    def test_patches_that_escape_the_tree_are_rejected(self):
        outside = self.dir / "escape.patch"
        outside.write_text("diff --git a/../evil.txt b/../evil.txt\nnew file mode 100644\n--- /dev/null\n"
                           "+++ b/../evil.txt\n@@ -0,0 +1 @@\n+evil\n")
        result = self.source(self.dir / "t1", outside)
        self.assertEqual(result.returncode, 2)
        self.assertIn("outside the source tree", result.stderr)
        self.assertFalse((self.dir / "evil.txt").exists())
        # through a symlink committed in the repository
        (self.repo / "link").symlink_to(self.dir)
        commit_files(self.repo, {}, "add link")
        git(self.repo, "tag", "with-link")  # a new ref: the mirror's `main` is not re-fetched without --refresh
        through = self.dir / "symlink.patch"
        through.write_text("diff --git a/link/owned.txt b/link/owned.txt\nnew file mode 100644\n--- /dev/null\n"
                           "+++ b/link/owned.txt\n@@ -0,0 +1 @@\n+owned\n")
        result = self.source(self.dir / "t2", through, ref="with-link")
        self.assertEqual(result.returncode, 2)
        self.assertIn("symlink", result.stderr)
        self.assertFalse((self.dir / "owned.txt").exists())
        plain = self.dir / "plain.patch"
        plain.write_text("this is not a patch\n")
        result = self.source(self.dir / "t3", plain)
        self.assertEqual(result.returncode, 2)
        self.assertIn("plain.patch", result.stderr)


class LocalPath(unittest.TestCase):
    """A local clone without --ref builds what it has checked out, as it is on disk."""

    def setUp(self):
        self.dir = scratch_dir(self)
        self.repo = make_repo(self.dir / "clone", {"README": "v1\n", "src/a.c": "int a;\n"})
        git(self.repo, "tag", "v1.0")
        self.v2 = commit_files(self.repo, {"README": "v2\n"}, "v2")
        self.cache = self.dir / "cache"

    def source(self, *args):
        result = run("source", str(self.repo), "--cache-dir", str(self.cache), "--json", *args,
                     env={"GIT_CONFIG_GLOBAL": os.devnull})  # no init.defaultBranch to lean on
        return result, json.loads(result.stdout) if result.returncode == 0 else None

    def test_a_tag_checkout_builds_the_tagged_commit_and_says_so(self):
        git(self.repo, "checkout", "-q", "v1.0")
        result, report = self.source()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["commit"], git(self.repo, "rev-parse", "v1.0"))
        self.assertIn("detached HEAD at", result.stderr)
        self.assertIn("(tag v1.0)", result.stderr)
        self.assertEqual(pathlib.Path(report["dir"], "README").read_text(), "v1\n")

    def test_a_local_commit_on_a_branch_is_built(self):
        git(self.repo, "checkout", "-q", "-b", "feature")
        local = commit_files(self.repo, {"src/a.c": "int a = 2;\n"}, "local work")
        result, report = self.source()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["commit"], local)
        self.assertIn("branch feature", result.stderr)

    def test_the_clones_own_submodule_checkout_serves_offline(self):
        origin = make_repo(self.dir / "origin-sub", {"lib.h": "int x;\n"})
        commit = git(origin, "rev-parse", "HEAD")
        git(self.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", f"file://{origin}",
            "third_party/sub")
        git(self.repo, "commit", "-q", "-m", "add sub")
        # the submodule's origin is gone (a machine without the network): the clone's checkout has the commit
        shutil.rmtree(origin)
        result, report = self.source("--offline", "-v")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([(s["path"], s["commit"]) for s in report["submodules"]], [("third_party/sub", commit)])
        self.assertEqual(pathlib.Path(report["dir"], "third_party/sub/lib.h").read_text(), "int x;\n")
        self.assertIn(f"copied from {self.repo / 'third_party' / 'sub'}: no fetch", result.stderr)
        # a submodule the clone has not checked out still needs its URL: offline, that is said
        shutil.rmtree(self.repo / "third_party" / "sub")
        (self.repo / "third_party" / "sub").mkdir()
        self.cache = self.dir / "other-cache"
        result, _ = self.source("--offline")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn(f"commit {commit} is not in the mirror of file://{origin}", result.stderr)

    def test_a_working_tree_is_built_as_it_is_on_disk(self):
        (self.repo / ".gitignore").write_text("*.o\n")
        (self.repo / "src/a.c").write_text("int a = 3;\n")
        (self.repo / "src/new.c").write_text("int b;\n")  # untracked, not ignored: built, as pip would
        (self.repo / "untracked.o").write_text("build output\n")  # ignored: left out
        result, report = self.source()
        self.assertEqual(result.returncode, 0, result.stderr)
        snapshot = report["snapshot"]
        self.assertEqual((snapshot["kind"], snapshot["base_commit"]), ("working tree", self.v2))
        self.assertEqual(snapshot["edited"], [".gitignore", "src/a.c", "src/new.c"])
        self.assertNotEqual(report["commit"], self.v2)
        self.assertIn("as it is on disk", result.stderr)
        self.assertIn("3 edited paths (.gitignore, src/a.c, src/new.c)", result.stderr)
        tree = pathlib.Path(report["dir"])
        self.assertEqual((tree / "src/a.c").read_text(), "int a = 3;\n")
        self.assertEqual((tree / "src/new.c").read_text(), "int b;\n")
        self.assertFalse((tree / "untracked.o").exists())
        # the same edits are the same snapshot, in the same work tree; the user's repository is untouched
        again = self.source()[1]
        self.assertEqual((again["commit"], again["dir"]), (report["commit"], report["dir"]))
        self.assertEqual(git(self.repo, "rev-parse", "HEAD"), self.v2)
        self.assertIn("src/a.c", git(self.repo, "status", "--porcelain"))
        # another edit is another commit; --ref builds the commit exactly
        (self.repo / "src/a.c").write_text("int a = 4;\n")
        self.assertNotEqual(self.source()[1]["commit"], report["commit"])
        result, exact = self.source("--ref", self.v2)
        self.assertEqual((result.returncode, exact["commit"]), (0, self.v2), result.stderr)
        self.assertNotIn("snapshot", exact)

    def test_a_directory_inside_the_repository_is_its_subdirectory(self):
        commit_files(self.repo, {"lib/setup.py": "from setuptools import setup\nsetup()\n",
                                 "tools/cuda/setup.py": "", "tools/cuda/k.cu": ""}, "projects")
        result, report = self.source_of(self.repo / "lib")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["subdirectory"], "lib")
        self.assertEqual(report["url"], str(self.repo))
        self.assertTrue(pathlib.Path(report["dir"], "lib", "setup.py").exists())
        # --subdirectory says the same from the top; one without a project names those there are
        result, report = self.source("--subdirectory", "lib")
        self.assertEqual((result.returncode, report["subdirectory"]), (0, "lib"), result.stderr)
        result, _ = self.source("--subdirectory", "src")
        self.assertEqual(result.returncode, 2)
        self.assertIn("subdirectory 'src' of", result.stderr)
        self.assertIn("holds neither a setup.py nor a pyproject.toml", result.stderr)
        self.assertIn("--subdirectory tools/cuda (CUDA sources), --subdirectory lib", result.stderr)
        for bad, why in [("../x", "climbs out"), ("/etc", "absolute"), ("nope", "does not exist")]:
            result, _ = self.source("--subdirectory", bad)
            self.assertEqual(result.returncode, 2, (bad, result.stderr))
            self.assertIn(why, result.stderr, bad)

    def test_a_plain_directory_is_snapshotted(self):
        plain = self.dir / "pkg-1.0"
        (plain / "pkg").mkdir(parents=True)
        (plain / "setup.py").write_text("from setuptools import setup\nsetup()\n")
        (plain / "pkg" / "__init__.py").write_text("")
        (plain / "vendor" / "glm").mkdir(parents=True)
        (plain / "vendor" / "glm" / ".git").write_text("gitdir: ../../.git/modules/glm\n")  # a submodule's leftover
        result, report = self.source_of(plain)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["snapshot"]["kind"], "directory")
        self.assertEqual(report["snapshot"]["files"], 2)
        self.assertEqual(report["snapshot"]["dropped"], ["vendor/glm/.git"])
        self.assertIn("building the directory", result.stderr)
        self.assertTrue(pathlib.Path(report["dir"], "pkg", "__init__.py").exists())
        self.assertFalse((plain / ".git").exists())  # the user's directory is only read
        result, _ = self.source_of(plain, "--ref", "v1")
        self.assertEqual(result.returncode, 2)
        self.assertIn("is no git repository", result.stderr)

    def test_two_sources_of_one_name_and_ref_get_their_own_work_trees(self):
        # two forks both called `samename`, each at its own main
        first = make_repo(self.dir / "a" / "samename", {"setup.py": "print('a')\n"})
        second = make_repo(self.dir / "b" / "samename", {"setup.py": "print('b')\n"})
        for repo in (first, second):
            git(repo, "branch", "-M", "main")
        trees = []
        for repo, text in ((first, "print('a')\n"), (second, "print('b')\n"), (first, "print('a')\n")):
            result = run("source", f"file://{repo}", "--ref", "main", "--cache-dir", str(self.cache), "--json")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = json.loads(result.stdout)
            self.assertEqual(pathlib.Path(report["dir"], "setup.py").read_text(), text)
            trees.append(report["dir"])
        self.assertTrue(trees[0].endswith("/worktrees/samename-main"), trees)
        self.assertNotEqual(trees[1], trees[0])
        self.assertRegex(trees[1], r"/worktrees/samename-main-[0-9a-f]{8}$")
        self.assertEqual(trees[2], trees[0])  # the first keeps its tree

    def test_a_symlink_to_a_directory_of_the_tree_stays_a_symlink(self):
        # torchmd-net's `scripts -> torchmdnet/scripts`: the link is kept as a link, its target as files
        plain = self.dir / "linked-1.0"
        (plain / "pkg" / "scripts").mkdir(parents=True)
        (plain / "setup.py").write_text("from setuptools import setup\nsetup()\n")
        (plain / "pkg" / "scripts" / "train.py").write_text("print('train')\n")
        (plain / "scripts").symlink_to("pkg/scripts")
        result, report = self.source_of(str(plain) + "/")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["snapshot"]["files"], 3)
        tree = pathlib.Path(report["dir"])
        self.assertEqual(os.readlink(tree / "scripts"), "pkg/scripts")
        self.assertEqual((tree / "pkg" / "scripts" / "train.py").read_text(), "print('train')\n")

    def test_pip_url_with_ref_and_subdirectory(self):
        commit_files(self.repo, {"python/setup.py": "from setuptools import setup\nsetup()\n"}, "python")
        git(self.repo, "tag", "v3.0")
        result, report = self.source_of(f"git+file://{self.repo}@v3.0#egg=demo&subdirectory=python")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((report["ref"], report["subdirectory"], report["url"]),
                         ("v3.0", "python", f"file://{self.repo}"))
        result, _ = self.source_of(f"git+file://{self.repo}@v3.0", "--ref", "v1.0")
        self.assertEqual(result.returncode, 2)
        self.assertIn("give one", result.stderr)
        result, _ = self.source_of(f"hg+file://{self.repo}")
        self.assertEqual(result.returncode, 2)
        self.assertIn("another version control system", result.stderr)

    def source_of(self, what, *args):
        result = run("source", str(what), "--cache-dir", str(self.cache), "--json", *args,
                     env={"GIT_CONFIG_GLOBAL": os.devnull})
        return result, json.loads(result.stdout) if result.returncode == 0 else None


class Recipes(unittest.TestCase):
    def test_list_and_show(self):
        result = run("recipes")
        self.assertEqual(result.returncode, 0)
        for name in ["torch", "torchvision", "torchaudio", "cpp-extension"]:
            self.assertIn(name, result.stdout)
        result = run("recipes", "torch", "--ref", "v2.6.0", "--json")
        resolved = json.loads(result.stdout)["resolved"]
        self.assertEqual(resolved["system"], "setup.py")
        self.assertIn("bdist_wheel", resolved["command"])
        result = run("recipes", "torch", "--ref", "main", "--json")
        self.assertEqual(json.loads(result.stdout)["resolved"]["system"], "pyproject")
        self.assertEqual(run("recipes", "tensorflow").returncode, 2)
        # what a recipe pairs with, its rows per toolkit, its libraries and its tests are shown
        vision = run("recipes", "torchvision", "--ref", "v0.24.1")
        self.assertIn("pairs with    torch 2.9.1", vision.stdout)
        torch = json.loads(run("recipes", "torch", "--json").stdout)
        machine = json.loads(run("detect", "--json").stdout)["machine"]
        # the recipe as this host builds it: NVPL (BLAS and LAPACK) only on aarch64
        self.assertEqual([library["name"] for library in torch["system_libraries"]],
                         {"x86_64": ["NCCL", "cuDNN"], "aarch64": ["NCCL", "cuDNN", "NVPL"]}[machine])
        self.assertEqual([row.get("machine", "") for row in torch["env"]].count("aarch64"), machine == "aarch64")
        self.assertIn({"versions": "", "cuda": ">=13",
                       "set": {"TORCH_NVCC_FLAGS": "-Xfatbin -compress-all -compress-mode=size"}}, torch["env"])
        self.assertEqual(torch["default_ref"], "v" + torch["releases"][-1])
        scatter = json.loads(run("recipes", "pytorch-scatter", "--json").stdout)
        self.assertEqual(scatter["tests"]["requires"], ["pytest"])
        # names longer than the old column still leave the descriptions aligned
        listing = run("recipes").stdout.splitlines()
        lines = [l[2:] for l in listing if l.startswith("  ") and not l.startswith("   ")]
        self.assertEqual(len({len(l) - len(l[len(l.split(" ")[0]):].lstrip()) for l in lines}), 1, lines)
        # listed under the heading of their kind, the kind's count beside it
        heading = listing.index(next(l for l in listing if l.startswith("Attention and GEMM kernels (attention-gemm, ")))
        self.assertIn("  flash-attn ", "\n".join(listing[heading:heading + 12]))
        # each catalogued recipe says whether a GPU run proved it, from its own file
        def status_of(name):
            start = next(i for i, l in enumerate(listing) if l.startswith(f"  {name} "))
            return listing[start + 2].strip()
        self.assertTrue(status_of("marlin").startswith("verified on H200 (9.0), torch 2.11.0+cu130"),
                        status_of("marlin"))
        self.assertEqual(status_of("flash-attn"), "not verified on a GPU yet")
        marlin = json.loads(run("recipes", "marlin", "--json").stdout)
        self.assertIn("kernel test and its test.py passed", marlin["verified"])
        self.assertIn("status        not verified on a GPU yet", run("recipes", "apex").stdout)

    def malformed(self, text):
        data = scratch_dir(self) / "data"
        shutil.copytree(SOURCE_DIR / "recipes", data / "recipes")
        shutil.copytree(SOURCE_DIR / "patches", data / "patches")
        shutil.copytree(SOURCE_DIR / "toolchains", data / "toolchains")
        (data / "recipes" / "torch.toml").write_text(text)
        return run("recipes", env={"ARCHBUILD_DATA_DIR": str(data)})

    def test_malformed_recipe_names_file_line_and_key(self):
        base = (SOURCE_DIR / "recipes" / "torch.toml").read_text()
        cases = {
            base.replace('arch_dialect = "cmake"', 'arch_dialect = "bazel"'): "arch_dialect",
            base.replace('job_memory_gb = 4.5', 'job_memory_gb = "lots"'): "job_memory_gb",
            base.replace('versions = ">=2.5,<2.14"', 'versions = "2.5-2.14"'): "build.versions",
            base + "\nunknown_key = 1\n": "unknown_key",
            base.replace('"{wheel_dir}"]', '"{wheeldir}"]', 1): "build.command",
            base.replace('name = "torch"', 'name = [1'): "torch.toml:",
        }
        for text, key in cases.items():
            with self.subTest(key=key):
                result = self.malformed(text)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertRegex(result.stderr, r"torch\.toml:\d+")
                self.assertIn(key, result.stderr)


if __name__ == "__main__":
    unittest.main()
