"""archbuild writes only into directories it owns, deletes only what it wrote
there and follows no symbolic link out of them: `cache index --index DIR`,
`cache push DEST` and `validate --work-dir DIR` on directories that hold other
people's files or links into them. Shared caches as CI uses them: `cache push`
racing `cache gc` (and two gc at once) in real processes, a full disk at
publish and at push (a real small tmpfs, as root), a DEST wheel replaced with
garbage, FIFOs and links where archbuild reads or locks, and paths it cannot
use. Every test also checks that a sentinel directory outside archbuild's own
is byte for byte what it was."""
import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import time
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from gitrepos import make_repo
from harness import BIN, SYSTEM_NVCC, run, scratch_dir
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


def mount_small_tmpfs(test, path, size):
    """A real full disk: a tmpfs of `size` bytes mounted at path, unmounted
    after the test. Mounting needs root; elsewhere the test is skipped, saying why."""
    if os.geteuid() != 0:
        test.skipTest("a real full disk needs a small tmpfs, and mounting one needs root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        test.skipTest(f"cannot mount a tmpfs at {path}: {mounted.stderr.strip()}")
    test.addCleanup(subprocess.run, ["umount", "-l", str(path)], check=False)
    return path


def add_synthetic_entries(cache, template, count, tag):
    """`count` more published entries made from the real entry `template`:
    its wheels (hard links) and manifest under key texts one line apart
    (other hashes), published a second apart and before the template, which
    stays the newest. Returns their hashes, newest first."""
    store = cache / "store"
    source = store / template
    text = (source / "key.txt").read_text()
    newest = (source / "manifest.json").stat().st_mtime - 10
    made = []
    for i in range(count):
        key_text = text + f"synthetic.copy {tag}-{i}\n"
        entry = store / hashlib.sha256(key_text.encode()).hexdigest()
        (entry / "wheels").mkdir(parents=True)
        (entry / "key.txt").write_text(key_text)
        shutil.copy(source / "manifest.json", entry / "manifest.json")
        for wheel in (source / "wheels").iterdir():
            os.link(wheel, entry / "wheels" / wheel.name)
        published = newest - i
        os.utime(entry / "manifest.json", (published, published))
        made.append(entry.name)
    return made


def unfinished(store):
    return sorted(p.name for p in store.iterdir() if p.name.startswith(".tmp-"))


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
        (cls.wheel,) = (cls.cache / "wheels").glob("*+*.whl")  # the labelled wheel (not its variant)
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

    def spawn(self, *args):
        """archbuild as a process of its own, running while the test goes on."""
        env = dict(os.environ, NO_COLOR="1", ARCHBUILD_DATA_DIR=str(self.data))
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        return subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def store_copy(self, synthetic, tag):
        """A cache of this test's own: the class's entry (hard links) and
        `synthetic` more made from it, with its index written."""
        cache = self.dir / f"cache-{tag}"
        shutil.copytree(self.cache / "store" / self.key, cache / "store" / self.key, copy_function=os.link)
        made = add_synthetic_entries(cache, self.key, synthetic, tag)
        result = run("cache", "gc", "--keep", "1000000", "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        return cache, made

    def verified(self, cache):
        result = run("cache", "verify", "--cache-dir", str(cache), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["unfinished_publishes"], [])
        return report

    def test_push_skips_what_a_gc_of_the_source_removes_meanwhile(self):
        cache, synthetic = self.store_copy(11, "skip")
        dest = self.dir / "shared"
        (dest / "store").mkdir(parents=True)
        (dest / ".archbuild-cache").write_text("archbuild shared cache 1\n")
        with open(dest / "store" / f"{self.key}.lock", "w") as held:
            # The push copies the newest entry aside, then waits here for DEST's key lock.
            fcntl.flock(held, fcntl.LOCK_EX)
            push = self.spawn("cache", "push", str(dest), "--cache-dir", str(cache))
            deadline = time.monotonic() + 300
            while not unfinished(dest / "store") and push.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue(unfinished(dest / "store"), "the push never wrote its first copy aside")
            gc = run("cache", "gc", "--keep", "1", "--cache-dir", str(cache), env=self.env)
            self.assertEqual(gc.returncode, 0, gc.stderr)
            self.assertEqual(gc.stdout.count("removed "), len(synthetic))
        out, err = push.communicate(timeout=300)
        self.assertEqual(push.returncode, 0, out + err)
        self.assertIn(f"pushed  {self.key[:12]}", out)
        for key in synthetic:
            self.assertIn(f"skipped {key[:12]}: removed from {cache / 'store'} while pushing (cache gc)", out)
        self.assertIn(f"{len(synthetic)} gone from the source", out)
        self.assertEqual(self.verified(dest)["entries"], 1)
        self.assertEqual(self.verified(cache)["entries"], 1)

    def test_push_and_two_gc_at_once_in_a_loop_leave_both_sides_consistent(self):
        dest = self.dir / "shared"
        in_dest = {self.key}
        for round in range(4):
            with self.subTest(round=round):
                cache, synthetic = self.store_copy(15, f"round{round}")
                processes = [self.spawn("cache", "push", str(dest), "--cache-dir", str(cache), "--json"),
                             self.spawn("cache", "gc", "--keep", "3", "--cache-dir", str(cache)),
                             self.spawn("cache", "gc", "--keep", "2", "--cache-dir", str(cache))]
                results = [(*process.communicate(timeout=600), process.returncode) for process in processes]
                for out, err, code in results:
                    self.assertEqual(code, 0, out + err)
                    self.assertNotIn("internal error", err)
                push = json.loads(results[0][0])
                in_dest.update(push["pushed"])
                accounted = push["pushed"] + push["already_there"] + push["gone_from_source"]
                self.assertEqual(len(accounted), len(set(accounted)))
                self.assertEqual(self.verified(cache)["entries"], 2)  # --keep 2 wins, whoever went first
                left = {entry["key"] for entry in json.loads(
                    run("cache", "ls", "--json", "--cache-dir", str(cache), env=self.env).stdout)["entries"]}
                # what the push did not list, or found gone, a gc had removed
                self.assertTrue(left <= set(accounted) - set(push["gone_from_source"]), (left, push))
                self.assertEqual(self.verified(dest)["entries"], len(in_dest))
                self.assertEqual(sorted(p.name for p in (dest / "store").iterdir() if p.is_dir()), sorted(in_dest))

    def test_a_full_disk_at_publish_says_so_cleans_up_and_keeps_the_report(self):
        store = mount_small_tmpfs(self, self.cache / "store", 128 * 1024)  # hides the class's store until unmounted
        out = self.dir / "out"
        result = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), "--out", str(out),
                     env=self.env)
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertIn(f"archbuild: error: no space left on {store} (", result.stderr)
        self.assertNotIn("internal error", result.stderr)
        self.assertEqual([p.name for p in store.iterdir() if not p.name.endswith(".lock")], [])
        report = json.loads((out / "report.json").read_text())
        self.assertFalse(report["published"])
        self.assertEqual([wheel["file"] for wheel in report["wheels"]], [self.wheel.name])

    def test_a_full_dest_leaves_its_index_matching_what_it_holds(self):
        cache, (older,) = self.store_copy(1, "full")
        size = self.wheel.stat().st_size
        # room for one entry: its wheel and the variant wheel of it
        dest = mount_small_tmpfs(self, self.dir / "full-dest", 2 * size + size // 2 + 64 * 1024)
        result = run("cache", "push", str(dest), "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertIn(f"archbuild: error: no space left on {dest / 'store'} (", result.stderr)
        self.assertEqual(unfinished(dest / "store"), [])
        self.assertEqual([p.name for p in (dest / "store").iterdir() if p.is_dir()], [self.key])
        self.assertEqual(self.verified(dest)["entries"], 1)
        self.assertIn(self.wheel.name, (dest / "simple" / "fixture" / "index.html").read_text())

    def test_a_dest_wheel_replaced_with_garbage_is_copied_again(self):
        dest = self.pushed_dest()
        stored = dest / "store" / self.key / "wheels" / self.wheel.name
        stored.write_bytes(b"garbage")  # in place: DEST's wheels/ link shares the inode
        self.assertEqual(run("cache", "verify", "--cache-dir", str(dest), env=self.env).returncode, 1)
        result = run("cache", "push", str(dest), "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"repaired {self.key}: {self.wheel.name}: sha256 differs from the manifest's", result.stdout)
        self.assertIn("1 repaired", result.stdout)
        self.assertEqual(stored.read_bytes(), self.wheel.read_bytes())
        self.assertEqual((dest / "wheels" / self.wheel.name).read_bytes(), self.wheel.read_bytes())
        self.verified(dest)
        result = run("cache", "push", str(dest), "--cache-dir", str(self.cache), "--json", env=self.env)
        self.assertEqual(json.loads(result.stdout)["already_there"], [self.key])

    def test_a_link_or_fifo_where_archbuild_locks_or_reads_is_refused(self):
        cache, _ = self.store_copy(0, "hostile")
        lock = cache / "store" / f"{self.key}.lock"
        lock.unlink(missing_ok=True)
        lock.symlink_to(self.sentinel / "created-through-a-link.lock")
        result = run("cache", "push", str(self.dir / "shared"), "--cache-dir", str(cache), env=self.env, timeout=60)
        self.refused(result, f"lock file {lock} is a symbolic link")
        lock.unlink()
        os.mkfifo(lock)
        result = run("cache", "push", str(self.dir / "shared"), "--cache-dir", str(cache), env=self.env, timeout=60)
        self.refused(result, f"lock file {lock} is not a regular file (a FIFO)")
        lock.unlink()
        key_text = cache / "store" / self.key / "key.txt"
        key_text.unlink()
        os.mkfifo(key_text)  # an open for reading would block forever
        for command in ("ls", "verify", "gc"):
            with self.subTest(command=command):
                result = run("cache", command, "--cache-dir", str(cache), env=self.env, timeout=60)
                self.refused(result, f"{key_text} is a FIFO, not a regular file")

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


class HostilePaths(Sentinel):
    """Paths archbuild cannot use are bad input naming them, never an internal error."""

    def test_a_component_longer_than_name_max_is_refused_naming_the_path(self):
        long = self.dir / ("x" * 300)
        cache = str(self.dir / "cache")
        repo = make_repo(self.dir / "proj", {"README": "proj\n"})
        for argv in (("cache", "ls", "--cache-dir", str(long)),
                     ("cache", "verify", "--cache-dir", str(long)),
                     ("cache", "gc", "--cache-dir", str(long)),
                     ("cache", "push", str(long / "dest"), "--cache-dir", cache),
                     ("build", "fixture", "--arch", "9.0", "--out", str(long), "--cache-dir", cache),
                     ("source", str(repo), "--ref", "main", "--dest", str(long), "--cache-dir", cache)):
            with self.subTest(argv=argv[:2]):
                result = run(*argv)
                self.refused(result, long, "is 300 bytes, more than the 255 a file name may have (NAME_MAX)")
                self.assertNotIn("internal error", result.stderr)

    def test_a_nul_in_the_config_cache_dir_is_refused_with_the_value_escaped(self):
        config = self.dir / "config.toml"
        config.write_text('cache_dir = "\\u0000"\n')
        result = run("cache", "ls", env={"ARCHBUILD_CONFIG": str(config), "ARCHBUILD_CACHE_DIR": None})
        self.refused(result, f'cache_dir (from config file {config}:1) = "\\u0000" holds a NUL character')
        self.assertNotIn("internal error", result.stderr)

    def test_source_dest_naming_an_empty_file_is_refused_untouched(self):
        repo = make_repo(self.dir / "proj", {"README": "proj\n"})
        target = self.dir / "empty"
        target.touch()
        result = run("source", str(repo), "--ref", "main", "--dest", str(target),
                     "--cache-dir", str(self.dir / "cache"))
        self.refused(result, f"--dest {target} exists and is not a directory")
        self.assertTrue(target.is_file())
        self.assertEqual(target.read_bytes(), b"")


if __name__ == "__main__":
    unittest.main()
