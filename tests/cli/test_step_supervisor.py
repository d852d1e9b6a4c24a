"""`archbuild _contain`, the supervisor every build step runs under: what the
step leaves running (a daemon double-forked into a session of its own) is
stopped when it exits, as root (a PID namespace) and as a user without
namespaces (a child subreaper); the step's exit code or signal is passed on."""
import os
import shutil
import signal
import subprocess
import time
import unittest

from harness import BIN, processes_mentioning, stop_session
from waiting import scaled, wait_gone, wait_until

# A daemon double-forked into a session of its own, its command line naming
# the tag ("$0"); the step goes on once it runs, however busy the machine:
# the pipeline ends when `read` has its line (the daemon then closes the pipe).
DAEMON = '{ setsid sh -c "echo up; exec >&-; sleep 300; :" "$0" & } | read _; '


def as_nobody():
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class StepSupervisor(unittest.TestCase):
    def contain(self, script, prefix=()):
        tag = f"archbuild-contain-{os.getpid()}-{time.monotonic_ns()}"
        # "$0" names the tag: it is in each sh's command line, so the test finds them
        result = subprocess.run([*prefix, str(BIN), "_contain", "--", "/bin/sh", "-c", script, tag],
                                capture_output=True, text=True, timeout=scaled(120), cwd="/")
        return result, tag

    def modes(self):
        yield "as root: PID namespace" if os.geteuid() == 0 else "as this user", ()
        if os.geteuid() == 0 and shutil.which("setpriv"):
            yield "as nobody: subreaper", as_nobody()

    def test_leftovers_are_stopped_and_named(self):
        for mode, prefix in self.modes():
            with self.subTest(mode):
                result, tag = self.contain(DAEMON + "exit 4", prefix)
                self.assertEqual(result.returncode, 4, result.stderr)
                # stopped before _contain exits; a busy machine shows the exit in /proc a moment later
                self.assertEqual(wait_gone(lambda: processes_mentioning(tag), "the daemon"), [])
                self.assertRegex(result.stderr, r"the build step left 1 process running \(pid \d+ sh\); stopped")

    def test_exit_status_is_passed_on(self):
        for mode, prefix in self.modes():
            with self.subTest(mode):
                self.assertEqual(self.contain("exit 0", prefix)[0].returncode, 0)
                self.assertEqual(self.contain("exit 137", prefix)[0].returncode, 137)
                killed, _ = self.contain("kill -KILL $$", prefix)
                self.assertEqual(killed.returncode, -signal.SIGKILL)  # as an OOM kill reads
                self.assertEqual(self.contain("true", prefix)[0].stderr, "")  # nothing left: nothing said

    def test_a_killed_supervisor_takes_the_namespace_with_it(self):
        if os.geteuid() != 0:
            self.skipTest("a PID namespace needs root here (a user gets one inside the offline build's user "
                          "namespace, which this test does not make)")
        tag = f"archbuild-contain-{os.getpid()}-{time.monotonic_ns()}"
        process = subprocess.Popen([str(BIN), "_contain", "--", "/bin/sh", "-c", DAEMON + "sleep 300", tag],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.addCleanup(stop_session, process)
        def all_three():  # supervisor, step, daemon (the step's forked subshells have the step's command line)
            running = processes_mentioning(tag)
            return len(running) >= 3 and any(command.startswith("sh -c echo up") for _, command in running)
        wait_until(all_three, "the supervisor, the step and its daemon to run", process=process)
        process.kill()  # SIGKILL: the supervisor cannot clean up, the kernel does
        process.wait()
        self.assertEqual(wait_gone(lambda: processes_mentioning(tag), "the step and its daemon"), [])

    def test_the_step_dies_with_the_archbuild_that_started_it(self):
        # archbuild SIGKILLed (an OOM kill of archbuild itself, a CI job's
        # hard stop): its supervisor gets SIGKILL from the kernel
        # (PR_SET_PDEATHSIG), and its PID namespace goes with it.
        if os.geteuid() != 0:
            self.skipTest("a PID namespace needs root here")
        tag = f"archbuild-contain-{os.getpid()}-{time.monotonic_ns()}"
        # sh stands for archbuild: the supervisor's parent, killed outright
        parent = subprocess.Popen(["/bin/sh", "-c", f'"{BIN}" _contain -- /bin/sh -c "$1" "$2"; :', "archbuild",
                                   DAEMON + "sleep 300", tag],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.addCleanup(stop_session, parent)
        def all_three():
            running = processes_mentioning(tag)
            return len(running) >= 3 and any(command.startswith("sh -c echo up") for _, command in running)
        wait_until(all_three, "the supervisor, the step and its daemon to run", process=parent)
        parent.kill()  # only the parent: the supervisor is not signalled by anyone
        parent.wait()
        self.assertEqual(wait_gone(lambda: processes_mentioning(tag), "the supervisor, the step and its daemon"), [])

    def test_the_step_sees_its_own_proc_and_cannot_undo_mounts(self):
        if os.geteuid() != 0:
            self.skipTest("as a user the step has no capability to drop")
        result, _ = self.contain('echo "$$ $(readlink /proc/self)"; cat /proc/$$/comm; '
                                 'grep ^CapEff /proc/self/status; umount /proc 2>&1; echo umount=$?')
        lines = result.stdout.splitlines()
        pid, proc_self = lines[0].split()
        self.assertEqual(lines[1], "sh")  # /proc/$$ is the step itself, not a host process of that number
        effective = int(lines[2].split()[1], 16)
        self.assertFalse(effective & (1 << 21), "CAP_SYS_ADMIN kept")
        self.assertFalse(effective & (1 << 19), "CAP_SYS_PTRACE kept")
        for bit, name in ((12, "CAP_NET_ADMIN"), (13, "CAP_NET_RAW"), (16, "CAP_SYS_MODULE"), (27, "CAP_MKNOD"),
                          (17, "CAP_SYS_RAWIO"), (18, "CAP_SYS_CHROOT"), (39, "CAP_BPF")):
            self.assertFalse(effective & (1 << bit), f"{name} kept")
        # what building as root takes stays: its own files, whatever their modes
        self.assertEqual(effective & 0b11, 0b11, "CAP_CHOWN and CAP_DAC_OVERRIDE dropped")
        self.assertNotEqual(lines[-1], "umount=0")

    def test_usage(self):
        result = subprocess.run([str(BIN), "_contain", "sh"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage: archbuild _contain -- PROGRAM", result.stderr)


if __name__ == "__main__":
    unittest.main()
