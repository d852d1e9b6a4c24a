"""`archbuild plan` and `archbuild build` on the PyTorch-like fixture project:
environment, progress, log, first error, trace, OOM retry, CMAKE_FRESH,
MAX_JOBS, and interrupts that leave no process behind."""
import hashlib
import json
import os
import pathlib
import signal
import subprocess
import time
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from gitrepos import git
from harness import BIN, SYSTEM_NVCC, processes_mentioning, run, scratch_dir
from waiting import READY_BUDGET, catches_interrupts, scaled, wait_gone, wait_until


class BuildFixture:
    """The fixture project, its recipe and a cache of its own, per test."""

    def setUp(self):
        self.dir = scratch_dir(self)
        self.project = make_cuda_project(self.dir)
        self.data = data_dir_with_recipe(self.dir, self.project)
        self.cache = self.dir / "cache"
        self.env = {"ARCHBUILD_DATA_DIR": str(self.data), "ARCHBUILD_FAKE_GPUS": None}
        self.tree = self.cache / "worktrees" / "fixture-v1.0"

    def build(self, *args, env=None, out="out"):
        full_env = dict(self.env, **(env or {}))
        return run("build", "fixture", "--cache-dir", str(self.cache), "--out", str(self.dir / out), *args, env=full_env)

    def report(self, out="out"):
        return json.loads((self.dir / out / "report.json").read_text())

    def wheel_archs(self, out="out"):
        wheel = next((self.dir / out / "wheels").glob("*.whl"))
        result = run("inspect", "--json", str(wheel))
        (entry,) = json.loads(result.stdout)["files"]
        return entry["sass"], entry["ptx"]

    def wheel_digests(self, out="out"):
        return {wheel.name: hashlib.sha256(wheel.read_bytes()).hexdigest()
                for wheel in (self.dir / out / "wheels").glob("*.whl")}

    def plan_json(self, *args):
        result = run("plan", "fixture", "--cache-dir", str(self.cache), "--json", *args, env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Build(BuildFixture, unittest.TestCase):
    """What a build is, end to end: the plan it runs, its log, trace and wheel, the
    cache, the offline step and its supervisor, interrupts. The aarch64 stage runs
    these under qemu-user too."""

    def test_plan_writes_nothing_and_is_what_the_build_runs(self):
        result = run("plan", "fixture", "--arch", "8.0;9.0+PTX", "--jobs", "2", "--cache-dir", str(self.cache),
                     "--out", str(self.dir / "out"), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        planned = json.loads(result.stdout)
        # planning checks nothing out, makes no launcher shims, writes no file
        self.assertFalse(self.cache.exists(), sorted(str(p) for p in self.cache.rglob("*")))
        self.assertIn("_launch", planned["env"]["CMAKE_CUDA_COMPILER_LAUNCHER"])  # the step launcher is in the plan
        result = self.build("--arch", "8.0;9.0+PTX", "--jobs", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        built = self.report()["plan"]
        # the same but SOURCE_DATE_EPOCH, the commit's time, known once the source is checked out
        self.assertNotIn("SOURCE_DATE_EPOCH", planned["env"])
        self.assertEqual(planned["env"], {k: v for k, v in built["env"].items() if k != "SOURCE_DATE_EPOCH"})
        self.assertIn("SOURCE_DATE_EPOCH", built["env"])
        self.assertEqual(planned["argv"], built["argv"])
        # and the build's own process saw exactly those values
        # a project that honours the list: every nvcc call checked, none changed
        enforcement = self.report()["build"]["arch_enforcement"]
        self.assertEqual((enforcement["nvcc_calls"], enforcement["rewritten"]), (4, 0), enforcement)
        seen = dict(line.split("-- fixture env ", 1)[1].split("=", 1)
                    for line in (self.dir / "out" / "build.log").read_text().splitlines() if "-- fixture env " in line)
        self.assertEqual(len(seen), 10)
        for name, value in seen.items():
            self.assertEqual(value, built["env"].get(name, ""), name)
        # the step sees no GPU: its output follows the arch list, not the builder's GPUs
        self.assertEqual(seen["CUDA_VISIBLE_DEVICES"], "")
        self.assertIn("CUDA_VISIBLE_DEVICES", built["env"])

    def test_nothing_the_build_step_starts_outlives_it(self):
        import socket
        import threading
        tag = f"archbuild-daemon-{os.getpid()}-{id(self)}"
        # a host socket outside archbuild's dirs, reached through a hard link
        # deeper than any walk for socket files goes
        relay_path = self.dir / "relay.sock"
        relay = socket.socket(socket.AF_UNIX)
        relay.bind(str(relay_path))
        deep = self.dir.joinpath(*[f"d{i}" for i in range(9)])
        deep.mkdir(parents=True)
        os.link(relay_path, deep / "linked.sock")
        relay.listen()
        accepted = []
        relay.settimeout(0.2)
        done = threading.Event()

        def serve():
            while not done.is_set():
                try:
                    accepted.append(relay.accept()[0])
                except OSError:
                    pass
        threading.Thread(target=serve, daemon=True).start()
        try:
            plan = run("plan", "fixture", "--cache-dir", str(self.cache), "--arch", "9.0", env=self.env).stdout
            result = self.build("--arch", "9.0", env={"FIXTURE_DAEMON_TAG": tag,
                                                      "FIXTURE_CONNECT_SOCKET": str(deep / "linked.sock")})
        finally:
            done.set()
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        log = (self.dir / "out" / "build.log").read_text()
        # the daemon left the process group, not the supervisor: stopped and reaped before archbuild exits
        # (a bounded wait: a busy machine shows a reaped process's exit in /proc a moment later)
        self.assertEqual(wait_gone(lambda: processes_mentioning(tag), "the build step's daemon"), [])
        self.assertRegex(log, r"archbuild: the build step left 1 process running \(pid \d+ python[^)]*\); stopped with SIGKILL")
        self.assertIn("-- fixture socketpair: x", log)
        if "unix sockets refused" in plan:
            # the step has no unix socket of its own (a seccomp filter): no path reaches the host
            self.assertIn("-- fixture socket: Permission denied", log)
            self.assertEqual(accepted, [])
        elif ("mount namespace" in plan and "Seccomp:" in pathlib.Path("/proc/self/status").read_text()
              and pathlib.Path(BIN).open("rb").read(20)[18:20] == b"\x3e\x00"):  # x86-64, not under qemu-user
            self.fail("the offline step's unix sockets are not refused on this machine, which has seccomp: " + plan)
        else:
            print(f"\n  socket files not covered here: {[l for l in plan.splitlines() if 'network' in l]}")

    def test_build_log_progress_trace_and_wheel(self):
        result = self.build("--arch", "8.0;9.0+PTX")
        self.assertEqual(result.returncode, 0, result.stderr + result.stdout)
        self.assertEqual(self.wheel_archs(), ({"sm_80": 4, "sm_90": 4}, {"compute_90": 4}))
        log = (self.dir / "out" / "build.log").read_text()
        self.assertIn("-- fixture env TORCH_CUDA_ARCH_LIST=8.0;9.0+PTX", log)
        self.assertIn("-- fixture env USE_NINJA=1", log)
        self.assertRegex(log, r"\[\d+/5\] Building CUDA object")
        # CI-style output: plain status lines, no control characters
        self.assertNotIn("\x1b", result.stderr)
        self.assertRegex(result.stderr, r"\[(configure|compile|link)[^\]]*\] \d+:\d\d")
        trace = json.loads((self.dir / "out" / "trace.json").read_text())
        names = {event["name"] for event in trace["traceEvents"]}
        self.assertIn("CMakeFiles/fixture.dir/src/scale.cu.o", names)
        self.assertTrue(all(event["ph"] == "X" and event["dur"] >= 0 for event in trace["traceEvents"]))
        report = self.report()["build"]
        self.assertTrue(report["ok"])
        self.assertEqual(len(report["slowest"]), 5)
        self.assertEqual(report["attempts"], [{"jobs": report["attempts"][0]["jobs"], "outcome": "ok",
                                               "seconds": report["attempts"][0]["seconds"]}])

    def test_cache_hit_publish_and_quarantine(self):
        result = self.build("--arch", "8.0", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        first = json.loads(result.stdout)
        self.assertTrue(first["published"])
        store = pathlib.Path(first["store"])
        self.assertEqual((store / "key.txt").read_text(), (self.dir / "out" / "key.txt").read_text())
        self.assertTrue(list((store / "wheels").glob("*.whl")))
        start = time.monotonic()
        result = self.build("--arch", "8.0", "--json")
        elapsed = time.monotonic() - start
        self.assertEqual(result.returncode, 0, result.stderr)
        second = json.loads(result.stdout)
        self.assertTrue(second["cache_hit"])
        self.assertEqual(second["key"], first["key"])
        self.assertNotIn("Building CUDA object", result.stderr)
        print(f"\n  cache hit in {elapsed:.2f} s")
        # a build that ignores the asked arch (with enforcement off) is caught and kept out of the store
        result = self.build("--arch", "9.0", "--keep-project-archs", env={"FIXTURE_FORCE_ARCH_LIST": "8.0"})
        self.assertEqual(result.returncode, 1)
        self.assertIn("missing fixture/libfixture.so: SASS that runs natively on 9.0", result.stderr)
        self.assertIn("not published", result.stderr)
        quarantined = list((self.cache / "quarantine").glob("*/validation.json"))
        self.assertEqual(len(quarantined), 1)
        self.assertEqual(len(list((self.cache / "store").glob("*/key.txt"))), 1)

    def interrupt(self, signo, marker):
        out = self.dir / f"interrupted-{signo}"
        argv = [BIN, "build", "fixture", "--arch", "8.0;9.0", "--jobs", "2", "--cache-dir", str(self.cache),
                "--out", str(out)]
        env = dict(os.environ, NO_COLOR="1", ARCHBUILD_DATA_DIR=str(self.data))
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        log = out / "build.log"
        deadline = time.monotonic() + scaled(READY_BUDGET)  # configure on a busy machine
        while time.monotonic() < deadline:
            if log.exists() and marker in log.read_text():
                break
            if process.poll() is not None:
                self.fail(f"the build ended before '{marker}': {process.communicate()}")
            time.sleep(0.05)
        else:
            self.fail(f"'{marker}' never appeared in the log")
        process.send_signal(signo)
        _, stderr = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 130, stderr)
        self.assertIn("interrupted", stderr)
        left = wait_gone(lambda: processes_mentioning(str(self.tree)), "the build's processes")
        self.assertEqual(left, [], "processes outlived archbuild")
        self.assertIn("the whole process group was stopped", log.read_text())
        # the build dir is resumable: a rerun finishes
        result = run("build", "fixture", "--arch", "8.0;9.0", "--jobs", "2", "--cache-dir", str(self.cache),
                     "--out", str(out), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("CMAKE_FRESH", result.stderr)  # same inputs: it resumes, it does not reconfigure

    def test_sigterm_before_the_build_exits_130(self):
        process = subprocess.Popen([BIN, "build", "fixture", "--arch", "8.0", "--cache-dir", str(self.cache)],
                                   env=dict(os.environ, ARCHBUILD_DATA_DIR=str(self.data)),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # as soon as archbuild catches it (before, SIGTERM's default action ends it): resolving archs / checking out.
        # The cache dir appears after main() installed the handlers; under qemu-user /proc shows qemu's own
        # handlers from the start, so SigCgt alone is not enough there.
        wait_until(lambda: process.poll() is not None or (self.cache.exists() and catches_interrupts(process.pid)),
                   "archbuild to install its SIGINT/SIGTERM handlers and start checking out")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 130, stderr)

    def test_sigint_during_configure(self):
        self.interrupt(signal.SIGINT, "-- fixture env")

    def test_sigterm_during_compile(self):
        self.interrupt(signal.SIGTERM, "Building CUDA object")



@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class BuildOptions(BuildFixture, unittest.TestCase):
    """The options and the failures around a build: --out, --jobs, the arch list
    rewritten and changed, a broken source, a missing submodule, an OOM kill."""

    def test_out_dir_must_be_archbuilds(self):
        def plan(out):
            return run("plan", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), "--out", str(out),
                       env=self.env)
        # a user's directory (a wheel of theirs in wheels/, a file of theirs): refused, nothing touched
        mine = self.dir / "mine"
        (mine / "wheels").mkdir(parents=True)
        (mine / "wheels" / "important.whl").write_text("keep me")
        (mine / "notes.txt").write_text("mine")
        result = plan(mine)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"refusing the build output dir {mine}", result.stderr)
        self.assertIn("and no .archbuild-build, so archbuild did not make it", result.stderr)
        result = self.build("--arch", "9.0", out="mine")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual((mine / "wheels" / "important.whl").read_text(), "keep me")
        self.assertEqual(sorted(p.name for p in mine.rglob("*")), ["important.whl", "notes.txt", "wheels"])
        self.assertFalse(self.cache.exists())  # refused before anything was written
        # a symbolic link, even to an empty directory
        (self.dir / "empty").mkdir()
        (self.dir / "link").symlink_to(self.dir / "empty")
        result = plan(self.dir / "link")
        self.assertEqual(result.returncode, 2)
        self.assertIn("is a symbolic link", result.stderr)
        # a directory archbuild did not mark is never written into: names anyone
        # might use (wheels/), or even only names archbuild writes (key.txt)
        for name, files in (("generic", ["wheels/theirs.whl"]),
                            ("old", ["wheels/important-1.0-py3-none-any.whl", "key.txt"])):
            with self.subTest(name):
                for file in files:
                    (self.dir / name / file).parent.mkdir(parents=True, exist_ok=True)
                    (self.dir / name / file).write_text("keep me")
                result = plan(self.dir / name)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("archbuild did not make it", result.stderr)
                self.assertEqual([(self.dir / name / file).read_text() for file in files], ["keep me"] * len(files))

    def test_plan_prints_the_environment_and_command(self):
        result = run("plan", "fixture", "--arch", "8.0;9.0+PTX", "--cache-dir", str(self.cache), "--json",
                     "--jobs", "3", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        plan = json.loads(result.stdout)
        env = plan["env"]
        self.assertEqual(env["TORCH_CUDA_ARCH_LIST"], "8.0;9.0+PTX")
        self.assertEqual(env["MAX_JOBS"], "3")
        # the launcher toolkit over /usr/local/cuda, first on PATH too: every nvcc call goes through the step launcher
        self.assertTrue(env["CUDA_HOME"].startswith(str(self.cache / "launcher-cuda")), env["CUDA_HOME"])
        self.assertTrue(env["PATH"].startswith(env["CUDA_HOME"] + "/bin:"), env["PATH"])
        self.assertTrue(env["CUDAHOSTCXX"])
        self.assertEqual(env["USE_NINJA"], "1")
        self.assertTrue(env["TMPDIR"].startswith(str(self.cache)))
        self.assertEqual(plan["argv"][1:], ["setup.py", "bdist_wheel", "--dist-dir", plan["wheel_dir"]])
        self.assertIn("export TORCH_CUDA_ARCH_LIST='8.0;9.0+PTX'", plan["script"])
        self.assertEqual(plan["key_inputs"]["arch_list"], "8.0;9.0+PTX")
        # plain output is a script a user can paste
        result = run("plan", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertIn("\nexport MAX_JOBS=", result.stdout)
        self.assertIn("setup.py bdist_wheel", result.stdout.splitlines()[-1])

    def test_hardcoded_arch_flags_are_rewritten_to_the_asked_list(self):
        # the project passes its own -gencode list, whatever TORCH_CUDA_ARCH_LIST says
        hardcoded = {"FIXTURE_FORCE_ARCH_LIST": "7.5;8.0;8.6;12.0+PTX"}
        plan = run("plan", "fixture", "--arch", "9.0+PTX", "--cache-dir", str(self.cache), env=self.env)
        self.assertIn("# arch enforcement: on: every nvcc call builds exactly sm_90,compute_90", plan.stdout)
        result = self.build("--arch", "9.0+PTX", "--json", env=hardcoded)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        enforcement = report["build"]["arch_enforcement"]
        self.assertEqual((enforcement["nvcc_calls"], enforcement["rewritten"], enforcement["left_as_written"]),
                         (4, 4, 0), enforcement)
        self.assertEqual({(c["before"], c["after"]) for c in enforcement["changes"]},
                         {("sm_75;sm_80;sm_86;sm_120;compute_120", "sm_90;compute_90")})
        self.assertEqual(tuple(sorted(archs) for archs in self.wheel_archs()), (["sm_90"], ["compute_90"]))
        self.assertIn("sm_75;sm_80;sm_86;sm_120;compute_120 -> sm_90;compute_90",
                      (self.dir / "out" / "build.log").read_text())
        self.assertTrue(report["wheels"][0]["file"].startswith("fixture-1.0+cu130.sm90ptx-"))
        # off: the project's flags are kept and the label says what the wheel holds
        result = self.build("--arch", "9.0", "--keep-project-archs", "--json", out="kept",
                            env={"FIXTURE_FORCE_ARCH_LIST": "8.0;9.0"})
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertFalse(report["build"]["arch_enforcement"]["enabled"])
        self.assertEqual(tuple(sorted(archs) for archs in self.wheel_archs("kept")), (["sm_80", "sm_90"], []))
        self.assertTrue(report["wheels"][0]["file"].startswith("fixture-1.0+cu130.sm80.sm90-"), report["wheels"])
        self.assertEqual(report["plan"]["key_inputs"]["arch_enforcement"], "off")
        # units only for an a-variant nobody asked for are left as written: the wheel would hold sm_100a under
        # a 9.0 label, so validation names the extra image and nothing is published
        result = self.build("--arch", "9.0", out="left", env={"FIXTURE_FORCE_ARCH_LIST": "10.0a"})
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("4 left as the project wrote them", result.stderr)
        self.assertIn("extra fixture/libfixture.so: sm_100a, which was not asked", result.stderr)
        self.assertIn("not published", result.stderr)

    def test_changed_arch_list_reconfigures_fresh(self):
        # (and each build's time is recorded: the next plan forecasts from it)
        self.assertFalse(self.plan_json("--arch", "8.0")["forecast"]["from_history"])
        self.assertEqual(self.build("--arch", "8.0").returncode, 0)
        (record,) = [json.loads(line) for line in (self.cache / "history" / "fixture.jsonl").read_text().splitlines()]
        self.assertEqual((record["ref"], record["arch_list"], record["code_images"]), ("v1.0", "8.0", 1))
        self.assertGreater(record["nvcc_seconds"], 0)  # the four .cu.o steps of .ninja_log
        self.assertGreater(record["tree_bytes"], 0)
        forecast = self.plan_json("--arch", "8.0;9.0", "--jobs", "1")["forecast"]
        self.assertTrue(forecast["from_history"], forecast)
        self.assertIn("scaled from fixture v1.0 for 8.0 (1 image, ", forecast["basis"])
        self.assertGreater(forecast["seconds"], record["wall_seconds"])  # twice the images on half the jobs
        # the fixture, like PyTorch, ignores a changed list without a fresh configure
        env = dict(os.environ, TORCH_CUDA_ARCH_LIST="9.0", PATH="/usr/local/cuda/bin:" + os.environ["PATH"])
        subprocess.run(["python3", "setup.py", "bdist_wheel", "--dist-dir", str(self.dir / "manual")], cwd=self.tree,
                       env=env, capture_output=True, check=True)
        self.assertEqual((self.tree / "build" / "arch_list.txt").read_text(), "8.0")
        (self.dir / "out" / "key.txt").rename(self.dir / "key-8.0.txt")
        result = self.build("--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("CMAKE_FRESH=1 (TORCH_CUDA_ARCH_LIST changed: 8.0 -> 9.0)", result.stderr)
        self.assertIn("expected about ", result.stderr)
        self.assertGreater(self.report()["build"]["predicted_seconds"], 0)
        # the cache key says why the two builds differ
        why = run("cache", "why", str(self.dir / "key-8.0.txt"), str(self.dir / "out"))
        self.assertEqual(why.returncode, 1)
        self.assertIn("arch_list\n  - 8.0\n  + 9.0", why.stdout)
        self.assertEqual(run("cache", "why", str(self.dir / "out"), str(self.dir / "out")).returncode, 0)
        self.assertEqual(self.wheel_archs(), ({"sm_90": 4}, {}))
        # same inputs again, built anyway (--rebuild skips the cache hit): no fresh configure
        built_before = self.wheel_digests()
        result = self.build("--arch", "9.0", "--rebuild")
        self.assertNotIn("CMAKE_FRESH", result.stderr)
        self.assertEqual(self.report()["plan"]["cmake_fresh"], False)
        # and the same bytes: zip members stamped with the commit's time, not the clock
        self.assertEqual(self.wheel_digests(), built_before)
        commit_time = subprocess.run(["git", "-C", str(self.project), "log", "-1", "--format=%ct", "v1.0"],
                                     capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(self.report()["plan"]["env"]["SOURCE_DATE_EPOCH"], commit_time)
        # the entry the rebuild replaced, set aside until the index refresh, is gone after it
        self.assertEqual([p.name for p in (self.cache / "store").iterdir() if p.name.startswith(".tmp-")], [])

    def test_max_jobs_is_honoured(self):
        result = self.build("--arch", "8.0", "--jobs", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("-- fixture env MAX_JOBS=1", (self.dir / "out" / "build.log").read_text())
        events = json.loads((self.dir / "out" / "trace.json").read_text())["traceEvents"]
        self.assertEqual({event["tid"] for event in events}, {0})  # one lane: nothing overlapped

    def test_nvcc_threads_when_files_are_fewer_than_jobs(self):
        result = run("plan", "fixture", "--arch", "8.0;8.6;9.0", "--jobs", "16", "--cache-dir", str(self.cache),
                     "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.build("--arch", "8.0", "--jobs", "16").returncode, 0)  # checks the tree out
        plan = json.loads(run("plan", "fixture", "--arch", "8.0;8.6;9.0", "--jobs", "16", "--cache-dir",
                              str(self.cache), "--json", env=self.env).stdout)
        self.assertEqual(plan["nvcc_threads"], 3)  # 4 .cu files, 16 jobs, 3 archs
        self.assertEqual(plan["env"]["NVCC_APPEND_FLAGS"], "--threads 3")

    def test_first_error_of_a_broken_source(self):
        (self.project / "src" / "add.cu").write_text("__global__ void broken( { this is not CUDA }\n")
        git(self.project, "commit", "-q", "-am", "break add.cu")
        git(self.project, "tag", "broken")
        result = self.build("--arch", "8.0", "--ref", "broken")
        self.assertEqual(result.returncode, 1)
        self.assertIn("failed target: CMakeFiles/fixture.dir/src/add.cu.o", result.stderr)
        self.assertRegex(result.stderr, r"\| .*add\.cu.*error")
        self.assertIn("command: ", result.stderr)
        self.assertIn(str(self.dir / "out" / "build.log"), result.stderr)

    def test_missing_submodule_is_refused_by_the_project(self):
        recipe = self.data / "recipes" / "fixture.toml"
        recipe.write_text(recipe.read_text().replace("submodules = true", "submodules = false"))
        result = self.build("--arch", "8.0")
        self.assertEqual(result.returncode, 1)
        self.assertIn("Did you run 'git submodule update --init --recursive'?", result.stderr)

    def test_oom_kill_is_retried_with_half_the_jobs(self):
        slots = self.dir / "slots"
        slots.mkdir()
        env = {"FIXTURE_OOM_ABOVE_JOBS": "2", "FIXTURE_OOM_DIR": str(slots)}
        result = self.build("--arch", "8.0;9.0", "--jobs", "4", "--compiler-launcher", "none", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = self.report()["build"]
        self.assertGreaterEqual(report["oom_retries"], 1)
        self.assertEqual(report["attempts"][0]["jobs"], 4)
        self.assertEqual(report["attempts"][0]["outcome"], "oom")
        self.assertEqual(report["attempts"][-1], {"jobs": 2, "outcome": "ok", "seconds": report["attempts"][-1]["seconds"]})
        log = (self.dir / "out" / "build.log").read_text()
        self.assertIn("died due to signal 9", log)
        self.assertIn("retrying with 2 jobs", log)
        self.assertIn("OOM retries", result.stderr)


if __name__ == "__main__":
    unittest.main()
