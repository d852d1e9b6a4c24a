"""`archbuild cache index`: a PEP 503 index real pip installs from (file://),
with local version labels telling arch sets apart."""
import base64
import hashlib
import subprocess
import sys
import unittest
import zipfile

from harness import run, scratch_dir


def make_wheel(directory, project, version):
    """A pure-Python wheel with a correct RECORD."""
    dist = f"{project}-{version}.dist-info"
    files = {
        f"{project.lower()}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    lines = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    lines.append(f"{dist}/RECORD,,")
    wheel = directory / f"{project}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist}/RECORD", "\n".join(lines) + "\n")
    return wheel


class Index(unittest.TestCase):
    def test_pip_installs_exactly_the_asked_arch_set(self):
        root = scratch_dir(self)
        wheels = root / "wheels"
        wheels.mkdir()
        for version in ("1.0+cu130.sm90", "1.0+cu130.sm80.sm90", "0.9"):
            make_wheel(wheels, "Demo_Pkg", version)
        result = run("cache", "index", str(wheels))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("indexed 3 wheels", result.stdout)
        page = (wheels / "simple" / "demo-pkg" / "index.html").read_text()
        self.assertEqual(page.count("#sha256="), 3)
        self.assertIn('href="demo-pkg/"', (wheels / "simple" / "index.html").read_text())
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--no-deps"]
        subprocess.run(pip + ["--index-url", f"file://{wheels / 'simple'}", "demo-pkg==1.0+cu130.sm90"], check=True)
        version = subprocess.run([str(venv / "bin" / "python"), "-c", "import demo_pkg; print(demo_pkg.VERSION)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(version, "1.0+cu130.sm90")
        subprocess.run(pip + ["--no-index", "--find-links", str(wheels), "--force-reinstall", "demo-pkg==0.9"],
                       check=True)
        version = subprocess.run([str(venv / "bin" / "python"), "-c", "import demo_pkg; print(demo_pkg.VERSION)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(version, "0.9")

    def test_bad_input(self):
        root = scratch_dir(self)
        (root / "not-a-wheel-name.whl").write_text("x")
        self.assertEqual(run("cache", "index", str(root)).returncode, 2)
        self.assertEqual(run("cache", "index", str(root / "missing")).returncode, 2)
        self.assertEqual(run("cache").returncode, 2)


if __name__ == "__main__":
    unittest.main()
