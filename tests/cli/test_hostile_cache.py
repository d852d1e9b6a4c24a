"""archbuild writes only into directories it owns, deletes only what it wrote
there and follows no symbolic link out of them: `cache index --index DIR`,
`cache push DEST` and `validate --work-dir DIR` on directories that hold other
people's files or links into them. Every test also checks that a sentinel
directory outside archbuild's own is byte for byte what it was."""
import json
import os
import pathlib
import shutil
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, run, scratch_dir
from test_index import make_wheel

FAKE_GPU = {"ARCHBUILD_FAKE_GPUS": "H200:9.0:141000"}  # device validation runs (and fails: no driver)
NO_GPU = {"ARCHBUILD_FAKE_GPUS": None}


def snapshot(root):
    """Every path under root: kind, mode and bytes (files) or target (links)."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = ("link", os.readlink(path))
        elif path.is_dir():
            found[key] = ("dir", path.stat().st_mode)
        else:
            found[key] = ("file", path.stat().st_mode, path.read_bytes())
    return found


def make_user_dir(path):
    """Someone else's files, shaped like what archbuild writes, to tempt it."""
    (path / "sub" / "deeper").mkdir(parents=True)
    (path / "precious.txt").write_text("do not touch\n")
    (path / "index.html").write_text("<html>my site</html>\n")
    (path / "sub" / "deeper" / "notes.md").write_text("notes\n")
    (path / "old-1.0-py3-none-any.whl").write_bytes(b"not archbuild's wheel")
    (path / "venv").mkdir()
    (path / "venv" / "keep").write_text("mine\n")
    (path / "pip-install.log").write_text("mine\n")
    return path


class Sentinel(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.sentinel = make_user_dir(self.dir / "sentinel")
        self.before = snapshot(self.sentinel)

    def tearDown(self):
        self.assertEqual(snapshot(self.sentinel), self.before, "the sentinel outside archbuild's dirs changed")

    def refused(self, result, *names):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        for name in names:
            self.assertIn(str(name), result.stderr)


class HostileIndex(Sentinel):
    def setUp(self):
        super().setUp()
        self.wheels = self.dir / "wheels"
        self.wheels.mkdir()
        make_wheel(self.wheels, "alpha", "1.0")
        make_wheel(self.wheels, "beta", "2.0")

    def index(self, target=None):
        return run("cache", "index", str(self.wheels), *(["--index", str(target)] if target else []))

    def test_a_directory_archbuild_did_not_make_is_refused_untouched(self):
        site = self.dir / "site"
        (site / "docs").mkdir(parents=True)
        (site / "blog").mkdir()
        (site / "index.html").write_text("<html>home</html>\n")
        (site / "docs" / "index.html").write_text("<html>docs</html>\n")
        (site / "blog" / "index.html").write_text("<html>blog</html>\n")
        before = snapshot(site)
        self.refused(self.index(site), site)
        self.assertEqual(snapshot(site), before)

    def test_its_own_dir_loses_only_the_pages_it_recorded(self):
        target = self.dir / "index"
        result = self.index(target)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((target / ".archbuild-index").read_text(),
                         "archbuild simple index 1\nproject alpha\nproject beta\n")
        # someone adds their own pages, and a file into a project dir archbuild made
        shutil.copytree(self.sentinel, target / "docs")
        (target / "alpha" / "README").write_text("mine\n")
        docs = snapshot(target / "docs")
        for wheel in self.wheels.glob("*.whl"):
            wheel.unlink()
        make_wheel(self.wheels, "gamma", "3.0")
        result = self.index(target)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse((target / "beta").exists())  # its page was archbuild's and nothing else was in it
        self.assertEqual(sorted(p.name for p in (target / "alpha").iterdir()), ["README"])
        self.assertTrue((target / "gamma" / "index.html").exists())
        self.assertEqual(snapshot(target / "docs"), docs)
        self.assertIn('href="gamma/"', (target / "index.html").read_text())
        self.assertNotIn("alpha", (target / "index.html").read_text())
        # alpha stays recorded: its dir, archbuild's, is still there
        self.assertEqual((target / ".archbuild-index").read_text(),
                         "archbuild simple index 1\nproject alpha\nproject gamma\n")

    def test_a_project_dir_it_did_not_write_is_refused(self):
        target = self.dir / "index"
        self.assertEqual(self.index(target).returncode, 0)
        (target / "gamma").mkdir()
        (target / "gamma" / "index.html").write_text("<html>someone's gamma</html>\n")
        make_wheel(self.wheels, "gamma", "3.0")
        before = snapshot(target)
        self.refused(self.index(target), target / "gamma")
        self.assertEqual(snapshot(target), before)

    def test_a_link_in_its_dir_is_refused_never_followed(self):
        target = self.dir / "index"
        self.assertEqual(self.index(target).returncode, 0)
        for name in ("alpha", "stale"):  # a current project's dir, then one with no wheel
            with self.subTest(name=name):
                link = target / name
                if link.is_dir() and not link.is_symlink():
                    shutil.rmtree(link)
                link.symlink_to(self.sentinel)
                self.refused(self.index(target), link)
                link.unlink()

    def test_default_index_under_wheels_must_not_be_a_link(self):
        (self.wheels / "simple").symlink_to(self.sentinel)
        self.refused(self.index(), self.wheels / "simple")

    def test_an_index_named_by_the_user_may_be_a_link_to_its_own_dir(self):
        real = self.dir / "real-index"
        real.mkdir()
        link = self.dir / "index-link"
        link.symlink_to(real)
        result = self.index(link)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue((real / ".archbuild-index").exists())
        self.assertTrue((real / "alpha" / "index.html").exists())

    def test_an_older_archbuilds_index_is_adopted(self):
        target = self.dir / "index"
        self.assertEqual(self.index(target).returncode, 0)
        (target / ".archbuild-index").unlink()  # as archbuild wrote it before the marker existed
        (self.wheels / "beta-2.0-py3-none-any.whl").unlink()
        result = self.index(target)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse((target / "beta").exists())
        self.assertEqual((target / ".archbuild-index").read_text(), "archbuild simple index 1\nproject alpha\n")
        # but a page that is not archbuild's makes the same dir someone else's
        (target / ".archbuild-index").unlink()
        (target / "alpha" / "index.html").write_text("<html>edited by hand</html>\n")
        self.refused(self.index(target), target / "alpha")


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class HostilePushAndValidate(Sentinel):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.data = data_dir_with_recipe(cls.root, make_cuda_project(cls.root))
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None}
        cls.cache = cls.root / "cache"
        result = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(cls.cache), env=cls.env)
        assert result.returncode == 0, result.stderr
        (cls.wheel,) = (cls.cache / "wheels").glob("*.whl")
        (cls.key,) = [p.name for p in (cls.cache / "store").iterdir() if p.is_dir()]

    def push(self, dest):
        return run("cache", "push", str(dest), "--cache-dir", str(self.cache), "--json", env=self.env)

    def pushed_dest(self):
        dest = self.dir / "shared"
        result = self.push(dest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["pushed"], [self.key])
        self.assertTrue((dest / ".archbuild-cache").is_file())
        return dest

    def test_links_inside_dest_are_refused_never_followed(self):
        dest = self.pushed_dest()
        for name in ("wheels", "simple", "simple/fixture", "store", f"store/{self.key}", "index.lock",
                     f"store/{self.key}.lock"):
            with self.subTest(name=name):
                path = dest / name
                aside = dest.parent / "aside"
                path.rename(aside)
                path.symlink_to(self.sentinel)
                self.refused(self.push(dest), path)
                path.unlink()
                aside.rename(path)
        self.assertEqual(run("cache", "verify", "--cache-dir", str(dest), env=self.env).returncode, 0)

    def test_an_unmarked_dest_with_only_links_is_refused(self):
        dest = self.dir / "shared"
        dest.mkdir()
        (dest / "wheels").symlink_to(self.sentinel)
        (dest / "simple").symlink_to(self.sentinel)
        before = snapshot(dest)
        self.refused(self.push(dest), dest, ".archbuild-cache")
        self.assertEqual(snapshot(dest), before)
        (dest / ".archbuild-cache").touch()  # claimed by hand: its links are refused all the same
        self.refused(self.push(dest), dest / "wheels")
        self.assertEqual(sorted(p.name for p in dest.iterdir()), [".archbuild-cache", "simple", "wheels"])

    def test_a_dest_holding_other_things_is_refused_untouched(self):
        dest = make_user_dir(self.dir / "theirs")
        before = snapshot(dest)
        result = self.push(dest)
        self.refused(result, dest, ".archbuild-cache")
        self.assertEqual(snapshot(dest), before)

    def test_its_own_dest_keeps_what_others_put_there(self):
        dest = self.pushed_dest()
        (dest / "README").write_text("shared wheels for the team\n")
        (dest / "wheels" / "precious.txt").write_text("mine\n")
        (dest / "wheels" / "tools").mkdir()
        shutil.copytree(self.sentinel, dest / "simple" / "docs")
        theirs = {name: snapshot(dest / name) if (dest / name).is_dir() else (dest / name).read_bytes()
                  for name in ("README", "wheels/precious.txt", "wheels/tools", "simple/docs")}
        result = self.push(dest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["already_there"], [self.key])
        for name, content in theirs.items():
            self.assertEqual(snapshot(dest / name) if (dest / name).is_dir() else (dest / name).read_bytes(), content)
        self.assertTrue((dest / "wheels" / self.wheel.name).is_file())
        self.assertEqual(run("cache", "verify", "--cache-dir", str(dest), env=self.env).returncode, 0)

    def test_validate_work_dir_gets_a_subdirectory_of_its_own(self):
        work = make_user_dir(self.dir / "work")
        before = snapshot(work)
        own = work / self.wheel.name[:-len(".whl")]
        for attempt in range(2):  # the second run clears only the first one's venv and logs
            result = run("validate", str(self.wheel), "--arch", "9.0", "--work-dir", str(work), env=FAKE_GPU)
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)  # no driver behind the fake GPU
            self.assertIn(str(own / "load-native.log"), result.stdout)
            self.assertEqual({k: v for k, v in snapshot(work).items() if not k.startswith(own.name)}, before)
            self.assertTrue((own / ".archbuild-validate").is_file())
            self.assertTrue((own / "venv").is_dir())
            if attempt == 0:
                (own / "mine.txt").write_text("added by hand\n")
        self.assertEqual((own / "mine.txt").read_text(), "added by hand\n")

    def test_validate_refuses_a_work_subdirectory_that_is_not_its_own(self):
        work = self.dir / "work"
        own = work / self.wheel.name[:-len(".whl")]
        make_user_dir(own)
        before = snapshot(work)
        for env in (FAKE_GPU, NO_GPU):
            self.refused(run("validate", str(self.wheel), "--arch", "9.0", "--work-dir", str(work), env=env), own)
        self.assertEqual(snapshot(work), before)
        shutil.rmtree(own)
        own.symlink_to(self.sentinel)
        self.refused(run("validate", str(self.wheel), "--arch", "9.0", "--work-dir", str(work), env=FAKE_GPU), own)
        own.unlink()
        own.mkdir()  # its marker, as a link to someone's file, does not make it archbuild's
        (own / ".archbuild-validate").symlink_to(self.sentinel / "precious.txt")
        self.refused(run("validate", str(self.wheel), "--arch", "9.0", "--work-dir", str(work), env=FAKE_GPU), own)

    def test_validate_without_work_dir_uses_a_fresh_temporary_dir(self):
        tmp = make_user_dir(self.dir / "tmp")
        before = snapshot(tmp)
        result = run("validate", str(self.wheel), "--arch", "9.0", env=dict(NO_GPU, TMPDIR=str(tmp)))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(snapshot(tmp), before)  # valid: its temporary dir is gone, nothing else
        result = run("validate", str(self.wheel), "--arch", "9.0", env=dict(FAKE_GPU, TMPDIR=str(tmp)))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        (made,) = [p for p in tmp.iterdir() if p.name.startswith("archbuild-validate-")]
        self.assertTrue((made / self.wheel.name[:-len(".whl")] / "load-native.log").is_file())  # kept: it failed
        self.assertEqual({k: v for k, v in snapshot(tmp).items() if not k.startswith(made.name)}, before)


if __name__ == "__main__":
    unittest.main()
