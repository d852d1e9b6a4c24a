"""Secrets never reach a stored or printed byte: a token in --env, a password
in an index URL's userinfo (holding '/', '?' and '#'), a Redis password in
--compiler-cache-remote and a variable the user marks with --secret-env are
planted in a real build; every file of the cache, the build's out dir, the
work tree's configure record, a pushed copy of the cache and every line
archbuild printed (plan, build --json, cache show/why/ls, config, -vvv) is
searched for them. A changed secret still changes the cache key, as a
digest keyed by the cache's own secret; so is the password keyring answers,
and the credentials in a URL an error message quotes."""
import json
import os
import pathlib
import stat
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, run, scratch_dir

TOKEN = "hf_PLANTEDtoken0001"
INDEX_PASSWORD = "PLANTED/pw?2#x"  # '/', '?' and '#' unencoded, as people write them
INDEX_URL = f"https://ci:{INDEX_PASSWORD}@127.0.0.1:9/simple"
REDIS_PASSWORD = "PLANTEDredis0003"
MARKED = "PLANTEDmarked0004"
PLANTED = [TOKEN, "PLANTED/pw", "pw?2#x", REDIS_PASSWORD, MARKED]


def files_under(*roots):
    for root in roots:
        for path in pathlib.Path(root).rglob("*"):
            if path.is_file() and not path.is_symlink():
                yield path


class Leaks:
    """Asserts that no planted value is in texts or files."""

    def assert_no_secret_in(self, where, text):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        for value in PLANTED:
            self.assertNotIn(value, text, f"{where} holds the planted secret {value!r}")

    def assert_no_secret_under(self, *roots):
        searched = 0
        for path in files_under(*roots):
            data = path.read_bytes()
            searched += 1
            for value in PLANTED:
                self.assertNotIn(value.encode(), data, f"{path} holds the planted secret {value!r}")
        return searched


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class SecretsInABuild(unittest.TestCase, Leaks):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.cache = cls.dir / "cache"
        cls.out = cls.dir / "out"
        cls.env = {"ARCHBUILD_DATA_DIR": str(data_dir_with_recipe(cls.dir, make_cuda_project(cls.dir))),
                   "ARCHBUILD_FAKE_GPUS": None}
        cls.printed = []

        def build(token, *extra):
            return run("-vvv", "build", "fixture", "--arch", "9.0", "--cache-dir", str(cls.cache), "--no-validate",
                       "--env", f"HF_TOKEN={token}", "--env", f"PIP_EXTRA_INDEX_URL={INDEX_URL}",
                       "--env", f"MY_SITE_VALUE={MARKED}", "--secret-env", "MY_SITE_VALUE",
                       "--compiler-cache-remote", f"redis://:{REDIS_PASSWORD}@127.0.0.1:1", *extra,
                       env=cls.env, timeout=900)

        cls.first = build(TOKEN, "--out", str(cls.out), "--json")
        assert cls.first.returncode == 0, cls.first.stderr[-3000:]
        # the same build with another token: another key
        cls.second = build(TOKEN + "b")
        assert cls.second.returncode == 0, cls.second.stderr[-3000:]
        cls.report = json.loads(cls.first.stdout)

    def entries(self):
        listed = run("cache", "ls", "--json", "--cache-dir", str(self.cache))
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assert_no_secret_in("cache ls --json", listed.stdout)
        return json.loads(listed.stdout)["entries"]

    def test_1_the_key_holds_digests_that_follow_the_secrets(self):
        key = (self.out / "key.txt").read_text()
        lines = dict(line.split(" ", 1) for line in key.splitlines())
        self.assertRegex(lines["env.HF_TOKEN"], r"^<secret sha256:[0-9a-f]{64}>$")
        self.assertRegex(lines["env.MY_SITE_VALUE"], r"^<secret sha256:[0-9a-f]{64}>$")
        self.assertRegex(lines["env.PIP_EXTRA_INDEX_URL"], r"^https://<secret sha256:[0-9a-f]{64}>@127\.0\.0\.1:9/simple$")
        entries = self.entries()
        self.assertEqual(len(entries), 2, "another token must make another key")
        tokens = {dict(l.split(" ", 1) for l in (pathlib.Path(e["dir"]) / "key.txt").read_text().splitlines())
                  ["env.HF_TOKEN"] for e in entries}
        self.assertEqual(len(tokens), 2)
        # the cache's own secret keys the digests: private, and never in what is published
        secret = self.cache / "secret.key"
        self.assertEqual(stat.S_IMODE(secret.stat().st_mode) & 0o077, 0)
        digest_key = secret.read_text().strip()
        for path in files_under(self.cache / "store", self.cache / "simple", self.cache / "wheels", self.out):
            self.assertNotIn(digest_key.encode(), path.read_bytes(), path)

    def test_2_nothing_stored_or_printed_holds_a_secret(self):
        for result, name in ((self.first, "the first build"), (self.second, "the second build")):
            self.assert_no_secret_in(name + "'s stdout", result.stdout)
            self.assert_no_secret_in(name + "'s -vvv stderr", result.stderr)
        self.assertIn("<secret sha256:", json.dumps(self.report["plan"]["env"]))
        worktree = pathlib.Path(self.report["plan"]["source_dir"])
        configured = worktree / ".git" / "archbuild-configured.json"
        self.assertTrue(configured.is_file())
        searched = self.assert_no_secret_under(self.cache, self.out, worktree / ".git")
        self.assertGreater(searched, 20)

        entries = self.entries()
        for entry in entries:
            for args in (("cache", "show", entry["key"]), ("cache", "show", entry["key"], "--json")):
                shown = run(*args, "--cache-dir", str(self.cache))
                self.assertEqual(shown.returncode, 0, shown.stderr)
                self.assert_no_secret_in(" ".join(args), shown.stdout + shown.stderr)
        why = run("cache", "why", entries[0]["dir"], entries[1]["dir"])
        self.assertEqual(why.returncode, 1, why.stderr)
        self.assert_no_secret_in("cache why", why.stdout + why.stderr)
        self.assertIn("HF_TOKEN", why.stdout + why.stderr)

        for extra in ((), ("--json",)):
            plan = run("plan", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), "--env", f"HF_TOKEN={TOKEN}",
                       "--env", f"PIP_EXTRA_INDEX_URL={INDEX_URL}", "--env", f"MY_SITE_VALUE={MARKED}",
                       "--secret-env", "MY_SITE_VALUE", *extra, env=self.env)
            self.assertEqual(plan.returncode, 0, plan.stderr)
            self.assert_no_secret_in("plan " + " ".join(extra), plan.stdout + plan.stderr)
        # the plan's script takes a secret from the environment instead of printing it
        self.assertIn('export HF_TOKEN="${HF_TOKEN:?', plan.stdout if not extra else json.loads(plan.stdout)["script"])

        config = run("config", env={"ARCHBUILD_COMPILER_CACHE_REMOTE": f"redis://:{REDIS_PASSWORD}@127.0.0.1:1"})
        self.assertEqual(config.returncode, 0, config.stderr)
        self.assert_no_secret_in("config", config.stdout + config.stderr)
        self.assertIn("redis://***@127.0.0.1:1", config.stdout)

    def test_3_a_pushed_copy_holds_no_secret(self):
        shared = self.dir / "shared"
        pushed = run("cache", "push", str(shared), "--cache-dir", str(self.cache))
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        self.assert_no_secret_in("cache push", pushed.stdout + pushed.stderr)
        self.assertGreater(self.assert_no_secret_under(shared), 5)
        self.assertFalse((shared / "secret.key").exists(), "the cache's secret is never pushed")


class SecretsInMessages(unittest.TestCase, Leaks):
    """Credentials that reach archbuild outside a build: a URL's userinfo in
    an error, keyring's answer at -vvv, an --env item it refuses."""

    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)

    def test_a_url_password_holding_slash_query_or_hash_is_not_quoted(self):
        for url in (f"https://ci:{INDEX_PASSWORD}@127.0.0.1:9/", f"https://{TOKEN}@127.0.0.1:9/"):
            pushed = run("cache", "push", "--repository-url", url, "--cache-dir", str(self.dir / "cache"))
            self.assertEqual(pushed.returncode, 2, pushed.stderr)
            self.assertIn("carries credentials", pushed.stderr)
            self.assert_no_secret_in("cache push --repository-url", pushed.stdout + pushed.stderr)
        s3 = run("cache", "push", "s3://bucket/prefix", "--cache-dir", str(self.dir / "cache"),
                 env={"AWS_ENDPOINT_URL": f"http://key:{INDEX_PASSWORD}@127.0.0.1:9", "AWS_ACCESS_KEY_ID": "a",
                      "AWS_SECRET_ACCESS_KEY": REDIS_PASSWORD})
        self.assertEqual(s3.returncode, 2, s3.stderr)
        self.assert_no_secret_in("cache push s3:// with AWS_ENDPOINT_URL userinfo", s3.stdout + s3.stderr)
        cluster = run("-vvv", "config", env={"ARCHBUILD_COMPILE_CLUSTER": f"http://{TOKEN}@127.0.0.1:9/"})
        self.assert_no_secret_in("config with a cluster URL holding a token", cluster.stdout + cluster.stderr)

    def test_keyrings_answer_is_not_traced(self):
        bin_dir = self.dir / "bin"
        bin_dir.mkdir(exist_ok=True)
        keyring = bin_dir / "keyring"
        keyring.write_text(f"#!/bin/sh\necho {MARKED}\n")
        keyring.chmod(0o755)
        pushed = run("-vvv", "cache", "push", "--repository-url", "http://127.0.0.1:9/", "--cache-dir",
                     str(self.dir / "cache"),
                     env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "TWINE_USERNAME": "ci", "TWINE_PASSWORD": None})
        self.assertIn("keyring", pushed.stderr, "keyring was not asked: the test proves nothing")
        self.assert_no_secret_in("-vvv cache push with a password from keyring", pushed.stdout + pushed.stderr)

    def test_a_refused_env_item_does_not_echo_its_value(self):
        refused = run("plan", "fixture", "--env", f"BAD-NAME={TOKEN}")
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn("BAD-NAME", refused.stderr)
        self.assert_no_secret_in("a refused --env", refused.stdout + refused.stderr)


if __name__ == "__main__":
    unittest.main()
