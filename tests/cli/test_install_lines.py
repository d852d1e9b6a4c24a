"""The install lines a build prints, run as printed by real pip and real uv
(PyPI's uv package): the pinned wheel comes from archbuild's index, its
dependency from a second index standing in for PyPI, served over HTTP on
loopback; then the same through the pip.conf and uv.toml lines `cache
index-config` prints. The installed files are inspected."""
import functools
import http.server
import json
import os
import shlex
import subprocess
import sys
import threading
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import BIN, SYSTEM_NVCC, pip_target, pure_wheel, run, scratch_dir

UV_VERSION = "0.13.9"


def serve(directory):
    """An HTTP server on loopback for `directory`; returns (server, base URL)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class InstallLines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.uv = pip_target(f"tools/uv-{UV_VERSION}", [f"uv=={UV_VERSION}"]) / "bin" / "uv"
        # the stand-in for PyPI: the dependency, and a public fixture 1.1 an unpinned line would take
        pypi = cls.dir / "pypi"
        pypi.mkdir()
        pure_wheel(pypi, "archbuild-dep-probe", "1.0")
        pure_wheel(pypi, "fixture", "1.1")
        subprocess.run([BIN, "cache", "index", str(pypi)], check=True, capture_output=True)
        cls.server, base = serve(pypi)
        cls.pypi_url = f"{base}/simple"
        project = make_cuda_project(cls.dir)
        cls.cache = cls.dir / "cache"
        env = {"ARCHBUILD_DATA_DIR": str(data_dir_with_recipe(cls.dir, project)), "ARCHBUILD_FAKE_GPUS": None}
        built = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(cls.cache), "--env",
                    "FIXTURE_REQUIRES=archbuild-dep-probe>=1.0", "--json", env=env)
        assert built.returncode == 0, built.stderr
        cls.install = json.loads(built.stdout)["install"]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def client_env(self):
        """No user config of either installer; the default index is the stand-in's."""
        env = dict(os.environ, PIP_INDEX_URL=self.pypi_url, UV_DEFAULT_INDEX=self.pypi_url,
                   PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_CACHE_DIR=str(self.dir / "uv-cache"),
                   PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
        for name in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "UV_INDEX", "UV_INDEX_URL",
                     "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS"):
            env.pop(name, None)
        return env

    def venv(self, name):
        venv = self.dir / name
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        return venv

    def installed(self, venv):
        """Distributions in the venv, and whether the fixture's CUDA library and the dependency's module are there."""
        site = next((venv / "lib").glob("python*/site-packages"))
        listed = subprocess.run([str(venv / "bin" / "python"), "-c",
                                 "import importlib.metadata as m; print(sorted((d.metadata['Name'], d.version) for d "
                                 "in m.distributions() if d.metadata['Name'] in ('fixture', 'archbuild-dep-probe')))"],
                                capture_output=True, text=True, check=True).stdout.strip()
        return listed, (site / "fixture" / "libfixture.so").is_file(), (site / "archbuild_dep_probe").is_dir()

    def expected(self):
        return "[('archbuild-dep-probe', '1.0'), ('fixture', '1.0+cu130.sm90')]", True, True

    def test_the_printed_lines(self):
        url = f"file://{self.cache}/simple"
        self.assertEqual(self.install, [f"pip install fixture==1.0+cu130.sm90 --extra-index-url {url}",
                                        f"uv pip install fixture==1.0+cu130.sm90 --index {url}"])
        pip_venv = self.venv("pip-venv")
        words = shlex.split(self.install[0])
        result = subprocess.run([str(pip_venv / "bin" / "pip"), *words[1:]], env=self.client_env(),
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed(pip_venv), self.expected())
        uv_venv = self.venv("uv-venv")
        words = shlex.split(self.install[1])
        result = subprocess.run([str(self.uv), *words[1:], "--python", str(uv_venv / "bin" / "python")],
                                env=self.client_env(), capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed(uv_venv), self.expected())

    def test_the_configuration_lines(self):
        text = run("cache", "index-config", "--cache-dir", str(self.cache)).stdout
        pip_part, uv_part = text.split("# uv:")
        pip_conf = self.dir / "pip.conf"
        pip_conf.write_text("\n".join(line for line in pip_part.splitlines() if not line.startswith("#")) + "\n")
        uv_toml = self.dir / "uv.toml"
        uv_toml.write_text("\n".join(line for line in uv_part.splitlines()[1:] if not line.startswith("#")) + "\n")
        env = dict(self.client_env(), PIP_CONFIG_FILE=str(pip_conf))
        pip_venv = self.venv("pip-conf-venv")
        result = subprocess.run([str(pip_venv / "bin" / "pip"), "install", "fixture==1.0+cu130.sm90"], env=env,
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed(pip_venv), self.expected())
        uv_venv = self.venv("uv-conf-venv")
        env = self.client_env()
        env.pop("UV_NO_CONFIG")
        result = subprocess.run([str(self.uv), "pip", "install", "--config-file", str(uv_toml),
                                 "--python", str(uv_venv / "bin" / "python"), "fixture==1.0+cu130.sm90"], env=env,
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed(uv_venv), self.expected())
        # uv takes a name from the first index that has it: unpinned, still archbuild's build
        uv_unpinned = self.venv("uv-unpinned-venv")
        result = subprocess.run([str(self.uv), "pip", "install", "--config-file", str(uv_toml),
                                 "--python", str(uv_unpinned / "bin" / "python"), "fixture"], env=env,
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed(uv_unpinned), self.expected())
        # pip merges its indexes: unpinned, it takes the stand-in's newer public fixture
        pip_unpinned = self.venv("pip-unpinned-venv")
        subprocess.run([str(pip_unpinned / "bin" / "pip"), "install", "fixture"], capture_output=True, check=True,
                       env=dict(self.client_env(), PIP_CONFIG_FILE=str(pip_conf)))
        self.assertEqual(self.installed(pip_unpinned)[0], "[('fixture', '1.1')]")


if __name__ == "__main__":
    unittest.main()
