"""Builders sharing compile results: the fixture built twice, from two caches
(two work trees, two local ccache dirs), with `--compiler-cache-remote
redis://...` pointing both at a real redis-server the test starts on
loopback; the second build's compile units come from Redis."""
import os
import shutil
import socket
import subprocess
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, run, scratch_dir
from waiting import free_port, wait_until

REDIS = shutil.which("redis-server")
CCACHE = shutil.which("ccache")


def redis_answers(port):
    """Whether the server on `port` answers PING with PONG (listening alone is not ready: it may still be loading)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"PING\r\n")
        return connection.recv(64).startswith(b"+PONG")


@unittest.skipUnless(SYSTEM_NVCC.exists() and REDIS and CCACHE, "needs nvcc, redis-server and ccache (scripts/install-deps.sh)")
class RemoteCompilerCache(unittest.TestCase):
    def test_second_builder_is_served_from_redis(self):
        root = scratch_dir(self)
        data = data_dir_with_recipe(root, make_cuda_project(root))
        port = free_port()
        log = root / "redis.log"
        server = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                   "--dir", str(root), "--logfile", str(log)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(server.wait)
        self.addCleanup(server.terminate)
        wait_until(lambda: redis_answers(port), f"redis-server to answer PING on port {port}", log=log, process=server)
        env = {"ARCHBUILD_DATA_DIR": str(data), "ARCHBUILD_FAKE_GPUS": None}
        remote = f"redis://127.0.0.1:{port}"
        stats = {}
        for builder in ("a", "b"):
            cache = root / f"builder-{builder}"
            result = run("build", "fixture", "--arch", "8.0", "--cache-dir", str(cache), "--compiler-launcher", "ccache",
                         "--compiler-cache-remote", remote, "--json", env=env)
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            printed = subprocess.run([CCACHE, "--print-stats"], capture_output=True, text=True,
                                     env=dict(os.environ, CCACHE_DIR=str(cache / "ccache"))).stdout
            stats[builder] = {k: int(v) for k, v in (l.split("\t", 1) for l in printed.splitlines() if "\t" in l)
                              if v.strip().isdigit()}
        remote_hits = stats["b"].get("remote_storage_hit", 0)
        looked_up = remote_hits + stats["b"].get("remote_storage_miss", 0)
        print(f"\n  builder b: {remote_hits}/{looked_up} compilations from Redis "
              f"(the fixture's 4 .cu files and CMake's compiler checks), misses {stats['b'].get('cache_miss', 0)}")
        self.assertEqual(stats["a"].get("remote_storage_hit", 0), 0)
        self.assertGreaterEqual(remote_hits, 4)  # every .cu file of the fixture
        self.assertGreaterEqual(remote_hits / looked_up, 0.9, stats["b"])


if __name__ == "__main__":
    unittest.main()
