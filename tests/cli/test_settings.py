"""One settings resolver for every command: the config file's and the
environment's values reach `source` as they reach `build` and `config`
(defaults < config file < ARCHBUILD_* environment < flags)."""
import json
import unittest

from gitrepos import Forest
from harness import run, scratch_dir


class SettingsReachEveryCommand(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.forest = Forest(self.dir / "repos")
        self.config = self.dir / "config.toml"
        # the environment of the test run must not decide for the config file
        self.env = {"ARCHBUILD_CONFIG": str(self.config), "ARCHBUILD_CACHE_DIR": None, "ARCHBUILD_OFFLINE": None,
                    "XDG_CACHE_HOME": str(self.dir / "xdg")}

    def test_source_uses_the_config_files_cache_dir(self):
        configured = self.dir / "configured-cache"
        self.config.write_text(f'cache_dir = "{configured}"\n')
        shown = json.loads(run("config", "--json", env=self.env).stdout)
        self.assertIn(str(configured), json.dumps(shown))
        result = run("source", self.forest.url, "--ref", "v1.0", "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        tree = json.loads(result.stdout)["dir"]
        self.assertTrue(tree.startswith(str(configured / "worktrees")), tree)
        self.assertTrue(any((configured / "mirrors").iterdir()))
        self.assertFalse((self.dir / "xdg").exists())  # the default was not used
        # a flag still wins over the file
        flagged = self.dir / "flag-cache"
        result = run("source", self.forest.url, "--ref", "v1.0", "--json", "--cache-dir", str(flagged), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(json.loads(result.stdout)["dir"].startswith(str(flagged)))

    def test_source_honours_archbuild_offline(self):
        self.config.write_text(f'cache_dir = "{self.dir / "cache"}"\n')
        offline = dict(self.env, ARCHBUILD_OFFLINE="1")
        result = run("source", self.forest.url, "--ref", "v1.0", "--json", env=offline)
        self.assertEqual(result.returncode, 3, result.stderr)  # nothing in the mirror, and no fetch allowed
        self.assertIn("offline", result.stderr)
        self.assertFalse((self.dir / "cache" / "worktrees").exists())
        # the same from the config file
        self.config.write_text(f'cache_dir = "{self.dir / "cache"}"\noffline = true\n')
        result = run("source", self.forest.url, "--ref", "v1.0", "--json", env=self.env)
        self.assertEqual(result.returncode, 3, result.stderr)
        # online, it fetches; offline afterwards, the mirror serves it
        self.config.write_text(f'cache_dir = "{self.dir / "cache"}"\n')
        self.assertEqual(run("source", self.forest.url, "--ref", "v1.0", env=self.env).returncode, 0)
        result = run("source", self.forest.url, "--ref", "v1.0", "--json", "--dest", str(self.dir / "again"), env=offline)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(json.loads(result.stdout)["fetched"])


if __name__ == "__main__":
    unittest.main()
