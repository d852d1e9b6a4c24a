"""Publishing where teams keep wheels: `archbuild cache push s3://BUCKET/PREFIX`
against a real S3-compatible server (SeaweedFS from PyPI) on loopback, read
by real pip and uv through nginx configured as docs/PUBLISHING.md shows;
`cache verify` and `cache gc` against the bucket; pushes killed at random
moments, a server down, answering 5xx, or stalled; and `cache push
--repository-url` into real pypiserver and devpi-server."""
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from fixture_project import data_dir_with_recipe, make_cuda_project, two_builders_caches
from harness import BIN, SYSTEM_NVCC, pip_target, run, scratch_dir
from remote_servers import (Devpi, FlakyProxy, Nginx, ObjectStorage, PypiServer, ScriptedServer, SilentServer,
                            s3_env)
from waiting import scaled, wait_until

UV_VERSION = "0.13.9"


def page_links(html):
    return re.findall(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', html)


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
@unittest.skipUnless(shutil.which("nginx") and shutil.which("curl"), "needs nginx and curl (scripts/install-deps.sh)")
class RemoteCache(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.data, cls.env, cls.caches = two_builders_caches(cls.root)
        cls.storage = ObjectStorage(cls.root)
        cls.s3 = dict(cls.env, **s3_env(cls.storage.endpoint))

    @classmethod
    def tearDownClass(cls):
        cls.storage.stop()

    def push(self, cache, location, *extra, env=None, timeout=600):
        return run("cache", "push", location, "--cache-dir", str(self.caches[cache]), "--json", *extra,
                   env=dict(self.s3, **(env or {})), timeout=timeout)

    def verify(self, location, env=None):
        result = run("cache", "verify", location, "--cache-dir", str(self.root / "verify-cache"), "--json",
                     env=dict(self.s3, **(env or {})))
        return result.returncode, json.loads(result.stdout) if result.stdout.strip() else result.stderr

    def check_listed_objects_exist(self, prefix):
        """What a reader may see at any moment: each link names an object that is there, with that sha256."""
        for key in self.storage.keys(prefix):
            if not key.endswith("/index.html") or key.count("/") < 3:
                continue
            page_dir = key.rsplit("/", 1)[0]
            for href, digest in page_links(self.storage.read(key).decode()):
                target = os.path.normpath(f"{page_dir}/{urllib.request.url2pathname(href)}")
                body = self.storage.read(target)
                self.assertIsNotNone(body, f"{key} links {target}, which is not there")
                self.assertEqual(hashlib.sha256(body).hexdigest(), digest, target)

    def test_concurrent_pushes_verify_and_pip_uv_through_nginx(self):
        location = "s3://wheels/team"
        order = ["a", "b", "a", "b"]
        with ThreadPoolExecutor(len(order)) as pool:
            results = list(pool.map(lambda name: self.push(name, location), order))
        for result in results:
            self.assertEqual(result.returncode, 0, result.stderr)
        reports = [json.loads(r.stdout) for r in results]
        pushed = [key for report in reports for key in report["pushed"]]
        # 8.0, 8.6 and one 9.0 (both caches built the same key): nothing twice, nothing lost.
        self.assertEqual(len(pushed), 3)
        self.assertEqual(len(set(pushed)), 3)
        code, report = self.verify(location)
        self.assertEqual(code, 0, report)
        self.assertEqual((report["entries"], report["problems"], report["unfinished"]), (3, [], []))
        page = self.storage.read("team/simple/fixture/index.html").decode()
        names = sorted(href.split("/")[-1] for href, _ in page_links(page))
        labelled = [n for n in names if "%2B" in n]
        self.assertEqual(labelled, sorted(f"fixture-1.0%2Bcu130.sm{a}-py3-none-linux_x86_64.whl"
                                          for a in ("80", "86", "90")))
        self.assertIn("fixture-1.0-variants.json", names)
        self.check_listed_objects_exist("team")
        variants = json.loads(self.storage.read("team/simple/fixture/fixture-1.0-variants.json"))
        self.assertEqual(len(variants["variants"]), 3)  # one label per arch set
        # A rerun finds everything there.
        again = json.loads(self.push("a", location).stdout)
        self.assertEqual((again["pushed"], len(again["already_there"])), ([], 2))

        # index-config prints the URL lines for the server in front.
        nginx = Nginx(self.root, self.storage, "team")
        self.addCleanup(nginx.stop)
        config = run("cache", "index-config", location, "--public-url", nginx.url, env=self.s3)
        self.assertEqual(config.returncode, 0, config.stderr)
        self.assertIn(f"extra-index-url = {nginx.url}", config.stdout)
        self.assertIn(f'url = "{nginx.url}"', config.stdout)
        venv = self.root / "venv-pip"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                                  "--disable-pip-version-check", "--index-url", nginx.url,
                                  "fixture==1.0+cu130.sm86"], capture_output=True, text=True)
        self.assertEqual(install.returncode, 0, install.stderr)
        library = next(venv.glob("lib/python*/site-packages/fixture/libfixture.so"))
        (entry,) = json.loads(run("inspect", "--json", str(library)).stdout)["files"]
        self.assertEqual(sorted(entry["sass"]), ["sm_86"])

        uv = pip_target(f"tools/uv-{UV_VERSION}", [f"uv=={UV_VERSION}"]) / "bin" / "uv"
        uv_venv = self.root / "venv-uv"
        subprocess.run([str(uv), "venv", "--quiet", "--python", sys.executable, str(uv_venv)], check=True,
                       env=dict(os.environ, UV_CACHE_DIR=str(self.root / "uv-cache")))
        install = subprocess.run([str(uv), "pip", "install", "--quiet", "--no-deps", "--python",
                                  str(uv_venv / "bin" / "python"), "--index-url", nginx.url,
                                  "fixture==1.0+cu130.sm90"], capture_output=True, text=True,
                                 env=dict(os.environ, UV_CACHE_DIR=str(self.root / "uv-cache")))
        self.assertEqual(install.returncode, 0, install.stderr)
        library = next(uv_venv.glob("lib/python*/site-packages/fixture/libfixture.so"))
        (entry,) = json.loads(run("inspect", "--json", str(library)).stdout)["files"]
        self.assertEqual(sorted(entry["sass"]), ["sm_90"])

    def test_verify_finds_a_changed_object_and_gc_collects(self):
        location = "s3://wheels/gc"
        cache = self.root / "cache-gc"
        for extra in ([], ["--env", "FIXTURE_MARK=1"]):
            result = run("build", "fixture", "--arch", "8.0", "--cache-dir", str(cache), *extra, env=self.env)
            self.assertEqual(result.returncode, 0, result.stderr)
        self.caches["gc"] = cache
        self.assertEqual(self.push("gc", location).returncode, 0)
        code, report = self.verify(location)
        self.assertEqual((code, report["entries"]), (0, 2), report)
        entries = sorted({key.split("/")[2] for key in self.storage.keys("gc/store")})
        self.assertEqual(len(entries), 2)

        # One file name, two entries: the page links the newer one (pushed last), as a local index does.
        newest = json.loads(run("cache", "ls", "--cache-dir", str(cache), "--json", env=self.env).stdout)["entries"][0]["key"]
        self.assertIn(f"store/{newest}/wheels/", self.storage.read("gc/simple/fixture/index.html").decode())
        dry = run("cache", "gc", location, "--keep", "1", "--dry-run", "--json", env=self.s3)
        self.assertEqual(dry.returncode, 0, dry.stderr)
        (doomed,) = json.loads(dry.stdout)["removed"]
        self.assertEqual(len(self.storage.keys(f"gc/store/{doomed['key']}")), 7)  # dry run: nothing gone
        collected = run("cache", "gc", location, "--keep", "1", "--json", env=self.s3)
        self.assertEqual(collected.returncode, 0, collected.stderr)
        self.assertEqual([step["key"] for step in json.loads(collected.stdout)["removed"]], [doomed["key"]])
        self.assertEqual(self.storage.keys(f"gc/store/{doomed['key']}"), [])
        page = self.storage.read("gc/simple/fixture/index.html").decode()
        self.assertNotIn(doomed["key"], page)
        self.check_listed_objects_exist("gc")
        code, report = self.verify(location)
        self.assertEqual((code, report["entries"], report["problems"]), (0, 1, []), report)

        # A wheel changed in the bucket: verify names it.
        (kept,) = [e for e in entries if e != doomed["key"]]
        (wheel,) = [k for k in self.storage.keys(f"gc/store/{kept}") if "/wheels/" in k]
        self.assertEqual(self.storage.request("PUT", "/wheels/" + urllib.parse.quote(wheel), data=b"not the wheel")[0], 200)
        code, report = self.verify(location)
        self.assertEqual(code, 1, report)
        self.assertTrue(any(kept in problem and "sha256" in problem for problem in report["problems"]), report)

    def test_verify_finds_a_forged_wheel_and_a_forged_variants_document(self):
        location = "s3://wheels/forge"
        self.assertEqual(self.push("a", location).returncode, 0)
        code, report = self.verify(location)
        self.assertEqual((code, report["problems"]), (0, []), report)
        page_key = "forge/simple/fixture/index.html"
        page = self.storage.read(page_key).decode()
        # a wheel no entry publishes, beside the page, linked with its true digest
        forged = b"PK\x03\x04 a wheel nobody built"
        name = "fixture-9.9-py3-none-linux_x86_64.whl"
        self.assertEqual(self.storage.request("PUT", "/wheels/forge/simple/fixture/" + name, data=forged)[0], 200)
        link = f'<a href="{name}#sha256={hashlib.sha256(forged).hexdigest()}">{name}</a><br>\n'
        # a variants document claiming a variant (another arch) no entry's variant.json says
        (document_href, _), = [(h, d) for h, d in page_links(page) if h.endswith("-variants.json")]
        document_key = "forge/simple/fixture/" + urllib.parse.unquote(document_href)
        document = json.loads(self.storage.read(document_key))
        label, properties = next(iter(document["variants"].items()))
        document["variants"]["f0e0d0c0"] = json.loads(json.dumps(properties).replace("80_real", "120_real")
                                                      .replace("90_real", "120_real"))
        text = json.dumps(document).encode()
        self.assertEqual(self.storage.request("PUT", "/wheels/" + document_key, data=text)[0], 200)
        page = re.sub(re.escape(document_href) + r"#sha256=[0-9a-f]{64}",
                      document_href + "#sha256=" + hashlib.sha256(text).hexdigest(), page)
        page = page.replace("</body>", link + "</body>")
        self.assertEqual(self.storage.request("PUT", "/wheels/" + page_key, data=page.encode())[0], 200)
        code, report = self.verify(location)
        self.assertEqual(code, 1, report)
        problems = "\n".join(report["problems"])
        self.assertIn(f"{name}, a wheel which no store entry publishes", problems)
        self.assertIn("claims the variant f0e0d0c0", problems)

    def test_a_variants_document_newer_than_its_link_waits_for_the_next_push(self):
        # What a push killed between the variants document and its page
        # leaves: the document (claiming only vouched variants) under a link
        # with its former digest. Not a forgery: verify says so and passes;
        # the next push relinks it.
        location = "s3://wheels/stale"
        self.assertEqual(self.push("a", location).returncode, 0)
        page = self.storage.read("stale/simple/fixture/index.html").decode()
        (document_href, _), = [(h, d) for h, d in page_links(page) if h.endswith("-variants.json")]
        document_key = "stale/simple/fixture/" + urllib.parse.unquote(document_href)
        document = json.loads(self.storage.read(document_key))
        text = json.dumps(document, separators=(",", ":")).encode()  # the same claims, other bytes
        self.assertEqual(self.storage.request("PUT", "/wheels/" + document_key, data=text)[0], 200)
        code, report = self.verify(location)
        self.assertEqual((code, report["problems"], report["stale_links"]), (0, [], [document_key.split("/", 1)[1]]),
                         report)
        self.assertEqual(self.push("a", location).returncode, 0)
        code, report = self.verify(location)
        self.assertEqual((code, report["problems"], report["stale_links"]), (0, [], []), report)

    def test_a_lock_the_server_refuses_yet_does_not_have_ends_the_push(self):
        # An object under locks/KEY/ makes SeaweedFS refuse the lock's PUT
        # (412) and answer its GET with 404: the push gives up, saying so,
        # after a bounded number of tries with pauses.
        entries = json.loads(run("cache", "ls", "--json", "--cache-dir", str(self.caches["a"]), env=self.env).stdout)
        marker = b"archbuild shared cache 1\n(archbuild cache push writes store/, simple/ and locks/ here)\n"
        self.assertEqual(self.storage.request("PUT", "/wheels/lockloop/.archbuild-cache", data=marker)[0], 200)
        for entry in entries["entries"]:
            self.assertEqual(self.storage.request("PUT", f"/wheels/lockloop/locks/{entry['key']}/x", data=b"x")[0],
                             200)
        started = time.monotonic()
        result = self.push("a", "s3://wheels/lockloop")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("refused to create it 8 times as already there, yet has no object of that name",
                      result.stderr)
        self.assertLess(time.monotonic() - started, scaled(120))

    def test_killed_pushes_never_list_what_is_not_there_and_a_rerun_completes(self):
        rounds = random.Random(int(os.environ.get("ARCHBUILD_TEST_SEED", "7")))
        for round_number in range(3):
            prefix = f"killed{round_number}"
            process = subprocess.Popen([BIN, "cache", "push", f"s3://wheels/{prefix}", "--cache-dir",
                                        str(self.caches["a"])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=self.process_env(ARCHBUILD_PUSH_PAUSE_MS="150"))
            # Killed at a random moment once the push has written to the bucket
            # (a busy machine may take longer than any fixed delay to get there).
            wait_until(lambda: process.poll() is not None or self.storage.keys(prefix),
                       f"the push to s3://wheels/{prefix} to write its first object")
            time.sleep(rounds.uniform(0, 1.7))
            process.send_signal(signal.SIGKILL)
            process.wait()
            if self.storage.keys(prefix):
                self.check_listed_objects_exist(prefix)
                code, report = self.verify(f"s3://wheels/{prefix}")
                self.assertEqual((code, report["problems"]), (0, []), report)
            rerun = self.push("a", f"s3://wheels/{prefix}")
            self.assertEqual(rerun.returncode, 0, rerun.stderr)
            code, report = self.verify(f"s3://wheels/{prefix}")
            self.assertEqual((code, report["entries"], report["problems"], report["unfinished"],
                              report["stale_links"]), (0, 2, [], [], []), report)
            self.check_listed_objects_exist(prefix)

    def process_env(self, **extra):
        env = dict(os.environ)
        for key, value in dict(self.s3, **extra).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def test_flaky_server_is_retried(self):
        proxy = FlakyProxy(self.storage.port)
        self.addCleanup(proxy.stop)
        env = s3_env(proxy.endpoint)
        result = self.push("b", "s3://wheels/flaky", "-v", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("HTTP 500", result.stderr)  # -v says what was retried
        self.assertEqual(len(json.loads(result.stdout)["pushed"]), 2)
        code, report = self.verify("s3://wheels/flaky")
        self.assertEqual((code, report["entries"], report["problems"]), (0, 2, []), report)

    def test_server_down_5xx_stalled_and_refused(self):
        down = self.push("a", "s3://wheels/down", "--retries", "2", env=s3_env("http://127.0.0.1:9"))
        self.assertEqual(down.returncode, 3, down.stderr)
        self.assertIn("http://127.0.0.1:9/wheels/down/.archbuild-cache", down.stderr)
        self.assertIn("2 attempts", down.stderr)

        silent = SilentServer()
        self.addCleanup(silent.stop)
        started = time.monotonic()
        stalled = self.push("a", "s3://wheels/stalled", "--timeout", "2", "--retries", "1",
                            env=s3_env(silent.endpoint))
        self.assertEqual(stalled.returncode, 3, stalled.stderr)
        self.assertIn("Timeout", stalled.stderr)
        # Bounded by --timeout and --retries, not by the test's patience (each attempt 2 s; 60 s for a busy machine).
        self.assertLess(time.monotonic() - started, scaled(60), stalled.stderr)

        proxy_failing = SilentServer()  # replaced below by a server that always answers 503
        proxy_failing.stop()
        import http.server as hs
        import threading

        class Busy(hs.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_HEAD = do_GET

            def log_message(self, *args):
                pass

        busy = hs.ThreadingHTTPServer(("127.0.0.1", 0), Busy)
        threading.Thread(target=busy.serve_forever, daemon=True).start()
        self.addCleanup(busy.shutdown)
        answered = self.push("a", "s3://wheels/busy", "--retries", "2",
                             env=s3_env(f"http://127.0.0.1:{busy.server_address[1]}"))
        self.assertEqual(answered.returncode, 3, answered.stderr)
        self.assertIn("HTTP 503", answered.stderr)

        refused = self.push("a", "s3://wheels/refused", env=s3_env(self.storage.endpoint, secret="wrong"))
        self.assertEqual(refused.returncode, 3, refused.stderr)
        self.assertIn("SignatureDoesNotMatch", refused.stderr)
        self.assertIn("access key from environment", refused.stderr)
        self.assertEqual(self.storage.keys("refused"), [])

    def test_bad_locations(self):
        self.storage.request("PUT", "/wheels/foreign/README", data=b"someone else's")
        foreign = self.push("a", "s3://wheels/foreign")
        self.assertEqual(foreign.returncode, 2, foreign.stderr)
        self.assertIn("s3://wheels/foreign/README", foreign.stderr)
        self.assertEqual(self.storage.keys("foreign"), ["foreign/README"])
        for location, expected in (("s3://Bad_Bucket/x", "bucket name"), ("s3://wheels/a/../b", "'..'"),
                                   ("s3://wheels//x", "empty")):
            result = self.push("a", location)
            self.assertEqual(result.returncode, 2, (location, result.stderr))
            self.assertIn(expected, result.stderr)
        missing = self.push("a", "s3://no-such-bucket/x")
        self.assertEqual(missing.returncode, 2, missing.stderr)
        self.assertIn("does not exist", missing.stderr)
        no_credentials = self.push("a", "s3://wheels/x", env={"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None})
        self.assertEqual(no_credentials.returncode, 2, no_credentials.stderr)
        self.assertIn("no S3 credentials", no_credentials.stderr)
        for flags, expected in ((["--with-variants"], "--with-variants"),):
            result = self.push("a", "s3://wheels/x", *flags)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(expected, result.stderr)
        directory = run("cache", "push", str(self.root / "shared-dir"), "--public-url", "http://x/simple",
                        "--cache-dir", str(self.caches["a"]), env=self.env)
        self.assertEqual(directory.returncode, 2, directory.stderr)
        self.assertIn("--public-url is for s3://", directory.stderr)
        self.assertFalse((self.root / "shared-dir").exists())
        # Flags that would do nothing are refused, before anything is read or sent.
        for args, expected in (
                (["verify", "s3://wheels/x", "--require-signature"], "--require-signature needs --trusted-key"),
                (["push", "--repository-url", "http://127.0.0.1:9/", "--public-url", "http://x/simple"],
                 "--public-url is for s3://"),
                (["index-config", "--public-url", "http://x/simple"], "--public-url is for s3://")):
            result = run("cache", *args, "--cache-dir", str(self.caches["a"]), env=self.env)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(expected, result.stderr)
        bad_endpoint = self.push("a", "s3://wheels/x", env={"AWS_ENDPOINT_URL": "ftp://host"})
        self.assertEqual(bad_endpoint.returncode, 2, bad_endpoint.stderr)
        self.assertIn("AWS_ENDPOINT_URL", bad_endpoint.stderr)


class HostileS3(unittest.TestCase):
    """What no real S3 server can be made to do: a listing that never ends,
    error text that would drive the terminal."""

    def setUp(self):
        self.dir = scratch_dir(self)

    def run_against(self, answer, *args):
        server = ScriptedServer(answer)
        self.addCleanup(server.stop)
        result = run(*args, "--cache-dir", str(self.dir / "cache"), env=s3_env(server.endpoint), timeout=scaled(300))
        return result, server.requests

    def test_a_listing_that_never_ends_is_refused(self):
        def answer(method, path, body):
            if ".archbuild-cache" in path:
                return 200, b"archbuild shared cache 1\n"
            if "list-type=2" in path:
                return 200, (b"<ListBucketResult><IsTruncated>true</IsTruncated>"
                             b"<NextContinuationToken>again</NextContinuationToken>"
                             b"<Contents><Key>c/store/x/key.txt</Key><Size>1</Size></Contents></ListBucketResult>")
            return 404, b""
        for command in (("cache", "verify", "s3://bucket/c"), ("cache", "gc", "s3://bucket/c", "--keep", "1")):
            with self.subTest(command=command[1]):
                result, requests = self.run_against(answer, *command)
                self.assertEqual(result.returncode, 3, result.stderr)
                self.assertIn("does not end", result.stderr)
                self.assertIn("repeats a continuation token", result.stderr)
                self.assertLess(len(requests), 10)

    def test_a_servers_words_cannot_drive_the_terminal_or_forge_a_line(self):
        hostile = (b"<Error><Code>AccessDenied\x1b]0;owned\x07</Code><Message>\x1b[2J\r\n"
                   b"archbuild: pushed 3 entries, all fine</Message></Error>")
        result, _ = self.run_against(lambda method, path, body: (403, hostile), "cache", "verify", "s3://bucket/c")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("AccessDenied", result.stderr)
        self.assertNotIn("\x1b", result.stderr + result.stdout)
        self.assertNotIn("\r", result.stderr)
        for line in result.stderr.splitlines():
            self.assertFalse(line.startswith("archbuild: pushed"), line)


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class PackageServers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.data = data_dir_with_recipe(cls.root, make_cuda_project(cls.root))
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None,
                   "TWINE_USERNAME": None, "TWINE_PASSWORD": None, "TWINE_REPOSITORY_URL": None}
        cls.cache = cls.root / "cache"
        for arch in ("8.0", "9.0"):
            result = run("build", "fixture", "--arch", arch, "--cache-dir", str(cls.cache), env=cls.env)
            assert result.returncode == 0, result.stderr

    def upload(self, *args, env=None):
        return run("cache", "push", "--cache-dir", str(self.cache), "--json", *args, env=dict(self.env, **(env or {})))

    def pip_install(self, index, requirement):
        venv = self.root / f"venv-{hashlib.sha256((index + requirement).encode()).hexdigest()[:8]}"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                                  "--disable-pip-version-check", "--index-url", index, requirement],
                                 capture_output=True, text=True)
        self.assertEqual(install.returncode, 0, install.stderr)
        library = next(venv.glob("lib/python*/site-packages/fixture/libfixture.so"))
        return sorted(json.loads(run("inspect", "--json", str(library)).stdout)["files"][0]["sass"])

    def test_an_answer_over_the_cap_ends_neither_that_file_nor_the_push(self):
        # 65 MiB of answer to each upload: the file went up; the next one is sent too
        large = b"<html><title>ok</title>" + b"x" * (65 << 20)
        server = ScriptedServer(lambda method, path, body: (200, large if method == "POST" else b""))
        self.addCleanup(server.stop)
        result = self.upload("--repository-url", server.endpoint + "/", env={"TWINE_USERNAME": "u",
                                                                              "TWINE_PASSWORD": "p"})
        self.assertEqual(result.returncode, 0, result.stderr)
        files = json.loads(result.stdout)["files"]
        self.assertGreaterEqual(len(files), 2)
        self.assertEqual({f["outcome"] for f in files}, {"uploaded"})
        self.assertEqual(len([r for r in server.requests if r[0] == "POST"]), len(files))

    def test_pypiserver(self):
        server = PypiServer(self.root, "alice", "pw-alice")
        self.addCleanup(server.stop)
        creds = {"TWINE_USERNAME": "alice", "TWINE_PASSWORD": "pw-alice"}
        first = self.upload("--repository-url", server.url, "--with-variants", env=creds)
        self.assertEqual(first.returncode, 0, first.stderr)
        outcomes = {f["file"]: f["outcome"] for f in json.loads(first.stdout)["files"]}
        self.assertEqual(len(outcomes), 4)  # two labelled wheels, two variant wheels
        self.assertEqual(set(outcomes.values()), {"uploaded"})
        # pypiserver keeps every file name as given: labels and variant labels alike.
        self.assertEqual(sorted(p.name for p in (server.root / "packages").iterdir()), sorted(outcomes))
        self.assertEqual(self.pip_install(server.url + "simple/", "fixture==1.0+cu130.sm80"), ["sm_80"])

        again = self.upload("--repository-url", server.url, env=creds)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual({f["outcome"] for f in json.loads(again.stdout)["files"]}, {"already_there"})
        # TWINE_REPOSITORY_URL stands for --repository-url, as for twine.
        by_variable = self.upload(env=dict(creds, TWINE_REPOSITORY_URL=server.url))
        self.assertEqual(by_variable.returncode, 0, by_variable.stderr)
        self.assertEqual(json.loads(by_variable.stdout)["repository_url"], server.url)

        wrong = self.upload("--repository-url", server.url, env={"TWINE_USERNAME": "alice", "TWINE_PASSWORD": "no"})
        self.assertEqual(wrong.returncode, 3, wrong.stderr)
        self.assertIn("credentials from TWINE_USERNAME", wrong.stderr)
        anonymous = self.upload("--repository-url", server.url)
        self.assertEqual(anonymous.returncode, 3, anonymous.stderr)
        self.assertIn("no credentials given", anonymous.stderr)

        # The same through a ~/.pypirc section, as twine -r reads it.
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        (home / ".pypirc").write_text(f"[distutils]\nindex-servers =\n    local\n\n[local]\nrepository: {server.url}\n"
                                      "username: alice\npassword: pw-alice\n")
        by_name = self.upload("--repository", "local", env={"HOME": str(home)})
        self.assertEqual(by_name.returncode, 0, by_name.stderr)
        by_url = self.upload("--repository-url", server.url, env={"HOME": str(home)})
        self.assertEqual(by_url.returncode, 0, by_url.stderr)
        missing = self.upload("--repository", "nowhere", env={"HOME": str(home)})
        self.assertEqual(missing.returncode, 2, missing.stderr)
        self.assertIn("[nowhere]", missing.stderr)

    def test_devpi(self):
        server = Devpi(self.root, "bob", "pw-bob")
        self.addCleanup(server.stop)
        creds = {"TWINE_USERNAME": "bob", "TWINE_PASSWORD": "pw-bob"}
        first = self.upload("--repository-url", server.url, "--with-variants", env=creds)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual({f["outcome"] for f in json.loads(first.stdout)["files"]}, {"uploaded"})
        page = urllib.request.urlopen(server.simple + "fixture/", timeout=30).read().decode()
        self.assertIn("fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl", page)
        self.assertEqual(self.pip_install(server.simple, "fixture==1.0+cu130.sm90"), ["sm_90"])

        # An index that does not exist, and a mirror index: every file refused, named, exit 1.
        nowhere = self.upload("--repository-url", server.url.replace("/dev/", "/nope/"), env=creds)
        self.assertEqual(nowhere.returncode, 1, nowhere.stderr)
        files = json.loads(nowhere.stdout)["files"]
        self.assertEqual({f["outcome"] for f in files}, {"refused"})
        self.assertTrue(all("404" in f["server_said"] for f in files), files)


if __name__ == "__main__":
    unittest.main()
