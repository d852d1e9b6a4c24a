"""Waiting in the CLI tests, one owner for it: loopback ports no other test
process running at once is handed (ctest -j runs modules side by side, each
a Python process of its own), a server's readiness polled with a generous
budget, and "that process is gone" polled with a bounded one.

Budgets are multiplied by ARCHBUILD_TEST_TIMEOUT_SCALE (a float, default 1)
for slow or busy machines. A budget is a limit, not a measure: a check that
holds returns at once, however large the budget."""
import atexit
import fcntl
import os
import pathlib
import random
import signal
import socket
import sys
import time

SCALE = float(os.environ.get("ARCHBUILD_TEST_TIMEOUT_SCALE") or 1)
READY_BUDGET = 300  # seconds for a server to come up: a loaded 2-core machine, a cold start
GONE_BUDGET = 60  # seconds for the exit of a process already told to stop to become visible

# Claims shared by every test process on this machine (not per TMPDIR): one
# file per claimed name, made with O_EXCL, holding the claimer's pid and start time.
CLAIMS = pathlib.Path("/tmp/archbuild-test-claims")
_claimed = []
_random = random.Random()  # seeded from os.urandom: no test's random.seed() makes two processes agree


def scaled(seconds):
    """`seconds` times ARCHBUILD_TEST_TIMEOUT_SCALE."""
    return seconds * SCALE


class WaitFailed(AssertionError):
    """What was waited for did not happen within its budget."""


def _start_time(pid):
    """The start time of process `pid` (clock ticks since boot), or None when there is none."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else fields[19]


def _me():
    return f"{os.getpid()} {_start_time(os.getpid())}\n"


def _alive(record):
    """Whether the process a claim file names still runs (the same process: pids are reused)."""
    try:
        pid, started = record.split()
    except ValueError:
        return False  # half written by a claimer killed at that moment, or not ours
    return _start_time(int(pid)) == started


def claim(name):
    """Claims `name` for this process, across every test process on the
    machine; False when a live process holds it. A claim of a process that is
    gone is taken over; this process's claims are released when it exits."""
    CLAIMS.mkdir(exist_ok=True)
    try:
        CLAIMS.chmod(0o1777)  # any user's tests share it, as /tmp
    except PermissionError:
        pass  # made by another user, who set the mode
    path = CLAIMS / name
    # Taking over a dead claim is unlink-then-create: serialised, so that two
    # processes both finding it dead cannot both end up holding it.
    lock = os.open(CLAIMS / ".lock", os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:
                try:
                    record = path.read_text()
                except OSError:
                    record = ""
                if _alive(record):
                    return False
                try:
                    path.unlink(missing_ok=True)
                except PermissionError:
                    return False  # another user's, in the sticky dir: left to them
                continue
            with os.fdopen(fd, "w") as file:
                file.write(_me())
            _claimed.append(path)
            return True
        return False
    finally:
        os.close(lock)  # and with it the flock


@atexit.register
def _release():
    for path in _claimed:
        try:
            if path.read_text() == _me():
                path.unlink()
        except OSError:
            pass


def _ephemeral_low():
    """The first port of the kernel's ephemeral range (what bind to port 0 and connect pick from)."""
    try:
        return int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(also_plus=0):
    """A loopback port free now and handed to no other test process on this
    machine while this one runs; with also_plus, port + also_plus is free and
    claimed too (SeaweedFS's gRPC port is its port + 10000).

    Ports come from below the kernel's ephemeral range when there is room
    there: no outgoing connection or bind to port 0 of anyone can take one
    between this probe and the server's own bind."""
    low, high = 15000, _ephemeral_low() - also_plus
    for _ in range(2000):
        if high - low >= 1000:
            port = _random.randrange(low, high)
        else:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            if port + also_plus > 65535:
                continue
        ports = [port, port + also_plus] if also_plus else [port]
        if not all(_bindable(p) for p in ports):
            continue
        if not claim(f"port-{port}"):
            continue
        if also_plus and not claim(f"port-{port + also_plus}"):
            continue  # `port` stays claimed: harmless, released at exit
        return port
    raise RuntimeError("no free loopback port found (see /tmp/archbuild-test-claims)")


def _log_tail(log, lines=60):
    logs = [log] if isinstance(log, (str, os.PathLike)) else list(log or [])
    text = ""
    for path in logs:
        try:
            content = pathlib.Path(path).read_text(errors="replace").splitlines()
        except OSError as error:
            text += f"\n== {path}: cannot be read: {error}"
            continue
        text += f"\n== the last {min(lines, len(content))} lines of {path}:\n" + "\n".join(content[-lines:])
    return text


def wait_until(check, what, budget=None, log=None, process=None):
    """Polls `check()` until it returns a true value, and returns that value.

    `what` names what is awaited ("SeaweedFS's S3 gateway to answer").
    `budget` in seconds defaults to READY_BUDGET; it is scaled. An exception
    from `check` counts as not yet (the server is still starting) and is kept
    for the message. `process`, a Popen: its exit before `check` holds fails
    at once, with its exit code (a list of Popen: any one's exit). `log`: a
    path (or a list of paths) of the server's own log, whose last lines the
    failure shows."""
    limit = scaled(READY_BUDGET if budget is None else budget)
    processes = [] if process is None else list(process) if isinstance(process, (list, tuple)) else [process]
    started = time.monotonic()
    last = None
    pause = 0.05
    while True:
        ended = [p for p in processes if p.poll() is not None]
        try:
            value = check()
        except Exception as error:  # noqa: BLE001 - anything a starting server answers
            value, last = None, error
        if value:
            return value
        elapsed = time.monotonic() - started
        if ended:
            raise WaitFailed(f"gave up waiting for {what}: its process ({_argv(ended[0])}) exited with code "
                             f"{ended[0].returncode} after {elapsed:.1f} s; the last error: {last!r}{_log_tail(log)}")
        if elapsed > limit:
            raise WaitFailed(f"gave up waiting for {what} after {elapsed:.1f} s (budget {limit:.0f} s, "
                             f"ARCHBUILD_TEST_TIMEOUT_SCALE={SCALE:g}); the last error: {last!r}{_log_tail(log)}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.5)


def _argv(process):
    args = process.args if isinstance(process.args, (list, tuple)) else [process.args]
    return " ".join(str(a) for a in args)[:200]


def catches_interrupts(pid):
    """Whether process `pid` has installed handlers for SIGINT and SIGTERM
    (SigCgt in /proc): before, either signal's default action ends any
    program, so a test that means to interrupt archbuild waits for this."""
    try:
        with open(f"/proc/{pid}/status") as file:
            status = file.read()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return all(caught & (1 << (signo - 1)) for signo in (signal.SIGINT, signal.SIGTERM))


def wait_gone(find, what, budget=None):
    """Polls `find()` (a list of what is still there: processes, say) until
    it is empty or the budget (GONE_BUDGET by default, scaled) is spent, and
    returns what is left: the caller asserts that it is empty, and the
    failure shows what stayed. For the exit of a process already told to
    stop (or already reaped), which a loaded machine makes visible in /proc
    a moment later. `what` names what should be gone ("the build's
    processes"); a wait of over a second is noted on stderr."""
    started = time.monotonic()
    deadline = started + scaled(GONE_BUDGET if budget is None else budget)
    pause = 0.02
    while True:
        left = find()
        now = time.monotonic()
        if not left or now > deadline:
            if now - started > 1:
                state = f"{len(left)} still there" if left else "gone"
                print(f"\n  waited {now - started:.1f} s for {what} to be gone: {state}", file=sys.stderr)
            return left
        time.sleep(pause)
        pause = min(pause * 1.5, 0.5)
