"""archbuild's diagnostic log on stderr: -v/-vv/-vvv, --log-level and
ARCHBUILD_LOG, before or after the command word; nothing new without them."""
import re
import unittest

from harness import SYSTEM_NVCC, run, scratch_dir

LOG_LINE = re.compile(r"^archbuild: (verbose|debug|trace): ", re.MULTILINE)


class LogLevels(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.config = self.dir / "config.toml"
        self.config.write_text("jobs = 3\n")
        self.cache = self.dir / "cache"
        # the environment of the test run must not decide the level or the origins
        self.env = {"ARCHBUILD_CONFIG": str(self.config), "ARCHBUILD_CACHE_DIR": str(self.cache),
                    "ARCHBUILD_LOG": None, "ARCHBUILD_JOBS": None, "ARCHBUILD_OFFLINE": None,
                    "ARCHBUILD_COMPILER_CACHE_REMOTE": None}

    def assert_shows_origins(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"archbuild: verbose: config file: {self.config}\n", result.stderr)
        self.assertIn(f"archbuild: verbose: setting jobs = 3 (config file {self.config}:1)\n", result.stderr)
        self.assertIn(f"archbuild: verbose: setting cache_dir = {self.cache} (env ARCHBUILD_CACHE_DIR)\n",
                      result.stderr)
        self.assertIn("archbuild: verbose: setting offline = false (default)\n", result.stderr)
        # once per command, though the settings are loaded more than once
        self.assertEqual(result.stderr.count("setting jobs = 3"), 1, result.stderr)

    def test_without_a_level_stderr_has_no_log_lines(self):
        result = run("config", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        self.assertIsNone(LOG_LINE.search(result.stderr))

    def test_v_before_the_command_shows_each_settings_origin(self):
        result = run("-v", "config", env=self.env)
        self.assert_shows_origins(result)
        # the log is stderr's: stdout is what it always was
        self.assertEqual(result.stdout, run("config", env=self.env).stdout)

    def test_log_level_after_the_command_word(self):
        self.assert_shows_origins(run("config", "--log-level", "debug", env=self.env))
        self.assert_shows_origins(run("config", "--log-level=verbose", env=self.env))
        self.assert_shows_origins(run("config", "-v", env=self.env))
        self.assert_shows_origins(run("--log-level", "VERBOSE", "config", env=self.env))

    def test_archbuild_log_environment_and_a_flag_wins_over_it(self):
        self.assert_shows_origins(run("config", env=dict(self.env, ARCHBUILD_LOG="verbose")))
        quiet = run("config", "--log-level", "warning", env=dict(self.env, ARCHBUILD_LOG="debug"))
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertIsNone(LOG_LINE.search(quiet.stderr), quiet.stderr)

    def test_an_unknown_level_is_exit_2_naming_it_and_the_levels(self):
        for args, env, source in [(["--log-level", "nope", "config"], {}, "--log-level"),
                                  (["config", "--log-level", "nope"], {}, "--log-level"),
                                  (["config"], {"ARCHBUILD_LOG": "nope"}, "ARCHBUILD_LOG")]:
            result = run(*args, env=dict(self.env, **env))
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn("'nope'", result.stderr)
            self.assertIn(source, result.stderr)
            self.assertIn("error, warning, verbose, debug, trace", result.stderr)
            self.assertEqual(result.stdout, "")  # refused before the command ran

    def test_secrets_in_setting_values_are_redacted(self):
        env = dict(self.env, ARCHBUILD_COMPILER_CACHE_REMOTE="redis://:hunter2@cache.example:6379")
        result = run("-v", "config", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("setting compiler_cache_remote = redis://***@cache.example:6379", result.stderr)
        self.assertNotIn("hunter2", result.stderr)


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs the CUDA 13.0 toolkit at /usr/local/cuda")
class SubprocessLog(unittest.TestCase):
    def test_v_shows_each_subprocess_and_how_it_ended(self):
        result = run("-v", "check", "--arch", "9.0", env={"ARCHBUILD_LOG": None})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        started = re.search(r"^archbuild: verbose: run \[(\d+)\]: (\S*/nvcc) --version$", result.stderr, re.MULTILINE)
        self.assertIsNotNone(started, result.stderr)
        pid, nvcc = started.groups()
        self.assertTrue(nvcc.startswith("/"), nvcc)  # the program as found on PATH, not as asked for
        self.assertRegex(result.stderr, rf"(?m)^archbuild: verbose: done \[{pid}\]: exit 0 after \d+\.\d\d s: nvcc$")
        # nothing of the log reaches stdout
        self.assertNotIn("archbuild: verbose:", result.stdout)

    def test_the_same_after_the_command_word(self):
        result = run("check", "--arch", "9.0", "-vv", env={"ARCHBUILD_LOG": None})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stderr, r"(?m)^archbuild: verbose: run \[\d+\]: \S*/nvcc --version$")


if __name__ == "__main__":
    unittest.main()
