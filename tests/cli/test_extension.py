"""An extension built against torch: examples/torch-extension (a real
torch.utils.cpp_extension project) built by the generic recipe against the
real torch 2.11.0+cu130 from PyPI, compile-only here; the wheel holds exactly
the asked archs, the report says the device check was skipped, and the
second invocation is a cache hit."""
import json
import os
import pathlib
import signal
import subprocess
import time
import unittest
import zipfile

from extension_project import (make_downloading_repo, make_dual_library_repo, make_extension_repo,
                               make_gpu_asking_repo, make_multi_extension_repo, make_nvcc_setuptools_repo)
from harness import SOURCE_DIR, SYSTEM_NVCC, run, scratch_dir, torch_build_python, torch_wheel


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class ExtensionCase(unittest.TestCase):
    """The fixture the classes below share; each class is its own ctest test
    (tests/CMakeLists.txt), so that ctest's slots run them side by side."""

    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.repo = make_extension_repo(cls.root)
        cls.python = str(torch_build_python())
        cls.cache = cls.root / "cache"
        cls.env = {"ARCHBUILD_FAKE_GPUS": None}

    def build(self, *args, env=None):
        return run("build", str(self.repo), "--cache-dir", str(self.cache), "--python", self.python, "--json", *args,
                   env=dict(self.env, **(env or {})), timeout=1500)

    def library_archs(self, wheel):
        with zipfile.ZipFile(wheel) as archive:
            (member,) = [n for n in archive.namelist() if n.endswith(".so")]
        (entry,) = json.loads(run("inspect", "--json", str(wheel)).stdout)["files"]
        return member, entry["sass"], entry["ptx"]


class Extension(ExtensionCase):
    def test_against_the_installed_torch(self):
        # The suite's one cold build of a torch extension: no compile cache
        # shared with other tests (tests/cli/harness.py), so ccache's local
        # store starts empty and the warm rebuild below proves it filled it.
        cold = {"ARCHBUILD_COMPILER_CACHE_REMOTE": None}
        result = self.build("--arch", "8.0;9.0+PTX", "--use-installed-torch", env=cold)
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        report = json.loads(result.stdout)
        self.assertEqual(report["plan"]["env"]["TORCH_CUDA_ARCH_LIST"], "8.0;9.0+PTX")
        # cpp_extension calls $CUDA_HOME/bin/nvcc: archbuild's toolkit whose nvcc runs ccache
        self.assertIn("/launcher-cuda/ccache-", report["plan"]["env"]["CUDA_HOME"])
        self.assertTrue(report["plan"]["key_inputs"]["dep.torch"].startswith("torch 2.11.0+cu130 (CUDA 13.0) installed in"))
        (wheel,) = report["wheels"]
        self.assertRegex(wheel["file"], r"^archbuild_demo_ext-0\.1\.0\+cu130\.sm80\.sm90ptx-cp3\d+-cp3\d+-linux_x86_64\.whl$")
        member, sass, ptx = self.library_archs(wheel["path"])
        self.assertTrue(member.startswith("archbuild_demo_ext/_C."), member)
        self.assertEqual(sorted(sass), ["sm_80", "sm_90"])
        self.assertEqual(sorted(ptx), ["compute_90"])
        self.assertIn("device check skipped, no GPU", report["validation_scope"])
        self.assertTrue(report["published"])
        start = time.monotonic()
        again = self.build("--arch", "8.0;9.0+PTX", "--use-installed-torch", env=cold)
        elapsed = time.monotonic() - start
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(json.loads(again.stdout)["cache_hit"])
        # the same commit in a fresh work tree: every compile unit comes from ccache
        import shutil
        import subprocess
        shutil.rmtree(self.cache / "worktrees" / "torch-extension-main")
        warm = self.build("--arch", "8.0;9.0+PTX", "--use-installed-torch", "--rebuild", env=cold)
        self.assertEqual(warm.returncode, 0, warm.stderr[-3000:])
        stats = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                               env={"CCACHE_DIR": str(self.cache / "ccache"), "PATH": "/usr/bin:/bin"}).stdout
        counters = dict(line.split("\t", 1) for line in stats.splitlines() if "\t" in line)
        self.assertGreaterEqual(int(counters["direct_cache_hit"]), 2, stats)
        # the same bytes as the first build: setuptools stamps the wheel's members with
        # SOURCE_DATE_EPOCH, the commit's time, instead of the clock
        self.assertEqual(json.loads(warm.stdout)["wheels"][0]["sha256"], wheel["sha256"])
        # For every node: a wheel needing only torch, CUDA and the system bundles nothing, is tagged
        # manylinux and loads in the clean room, torch imported there from its own site-packages
        portable = self.build("--arch", "8.0;9.0+PTX", "--use-installed-torch", "--portable", env=cold)
        self.assertEqual(portable.returncode, 0, portable.stderr[-3000:])
        report = json.loads(portable.stdout)
        (repair,) = report["repair"]
        self.assertEqual(repair["bundled"], [], repair)
        self.assertTrue({"libc10.so", "libtorch_cpu.so", "libcudart.so.13"} <= set(repair["excluded"]), repair)
        (wheel,) = report["wheels"]
        self.assertRegex(wheel["file"], r"^archbuild_demo_ext-0\.1\.0\+cu130\.sm80\.sm90ptx-cp3\d+-cp3\d+-manylinux_2_\d+_x86_64\.whl$")
        room = report["validation"][0]["clean_room"]
        self.assertTrue(room["ok"], room)
        self.assertTrue(room["torch"].startswith("2.11.0"), room)
        self.assertIn("archbuild_demo_ext", room["imported"])
        print(f"\n  extension build {report['build']['seconds']:.1f} s, cache hit {elapsed:.2f} s, "
              f"warm rebuild {json.loads(warm.stdout)['build']['seconds']:.1f} s")


class ExtensionTorchWheel(ExtensionCase):
    def test_against_a_torch_wheel(self):
        wheel = torch_wheel()
        result = self.build("--arch", "9.0", "--torch-wheel", str(wheel))
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        report = json.loads(result.stdout)
        self.assertRegex(report["plan"]["key_inputs"]["dep.torch"], rf"^{wheel.name} sha256 [0-9a-f]{{64}}$")
        self.assertTrue(report["plan"]["python"].endswith("build-env/bin/python"))
        _, sass, ptx = self.library_archs(report["wheels"][0]["path"])
        self.assertEqual((sorted(sass), ptx), (["sm_90"], {}))


class ExtensionProjects(ExtensionCase):
    def test_changed_arch_list_does_not_reuse_setuptools_outputs(self):
        # setuptools skips an extension that is newer than its sources: a
        # second arch list in the same work tree must not ship the first's fatbins
        repo = make_nvcc_setuptools_repo(self.root)
        for arch, sass, ptx in (("8.0", ["sm_80"], []), ("9.0+PTX", ["sm_90"], ["compute_90"])):
            result = run("build", str(repo), "--cache-dir", str(self.cache), "--python", self.python, "--json",
                         "--arch", arch, "--use-installed-torch", env=self.env, timeout=900)
            self.assertEqual(result.returncode, 0, result.stderr[-4000:])
            report = json.loads(result.stdout)
            _, got_sass, got_ptx = self.library_archs(report["wheels"][0]["path"])
            self.assertEqual((sorted(got_sass), sorted(got_ptx)), (sass, ptx), arch)
        stale = [pathlib.Path(p).name for p in report["plan"]["stale_outputs"]]
        self.assertEqual(sorted(n.split(".")[0] for n in stale), ["bdist", "lib", "temp"], stale)
        self.assertIn("TORCH_CUDA_ARCH_LIST changed: 8.0 -> 9.0+PTX", report["plan"]["cmake_fresh_reason"])
        self.assertIn("setuptools would reuse it", pathlib.Path(report["plan"]["log"]).read_text())

    def compile_times(self, log):
        """(name, start, end) of each compile the fixture noted."""
        starts, spans = {}, []
        for line in log.read_text().splitlines():
            event, name, at = line.split()
            if event == "start":
                starts[name] = float(at)
            else:
                spans.append((name, starts.pop(name), float(at)))
        return spans

    @staticmethod
    def most_at_once(spans):
        events = sorted([(start, 1) for _, start, _ in spans] + [(end, -1) for _, _, end in spans])
        running = peak = 0
        for _, step in events:
            running += step
            peak = max(peak, running)
        return peak

    def test_ninja_less_setuptools_compiles_run_in_parallel(self):
        # the frontend forks a child per extension module and per compile,
        # at most MAX_JOBS at once; with it off the same wheel is built serially
        repo = make_multi_extension_repo(self.root)
        results = {}
        for label, extra in (("parallel", ["--jobs", "2"]),
                             ("serial", ["--jobs", "2", "--env", "ARCHBUILD_PARALLEL_SETUPTOOLS=0"])):
            times = self.root / f"compile-times-{label}.log"
            env = dict(self.env, FIXTURE_COMPILE_TIMES=str(times))
            result = run("build", str(repo), "--cache-dir", str(self.cache), "--python", self.python, "--json",
                         "--arch", "9.0", "--use-installed-torch", "--rebuild", *extra, env=env, timeout=900)
            self.assertEqual(result.returncode, 0, result.stderr[-4000:])
            report = json.loads(result.stdout)
            spans = self.compile_times(times)
            self.assertEqual(len(spans), 6, spans)  # 3 modules x (.c + .cu)
            with zipfile.ZipFile(report["wheels"][0]["path"]) as archive:
                modules = sorted(n for n in archive.namelist() if n.endswith(".so"))
            inventory = json.loads(run("inspect", "--json", report["wheels"][0]["path"]).stdout)["files"]
            results[label] = (self.most_at_once(spans), modules, sorted((e["path"].split("!")[-1], tuple(e["sass"])) for e in inventory),
                              report)
        parallel, serial = results["parallel"], results["serial"]
        self.assertEqual(parallel[0], 2, "two compiles should overlap, never more than --jobs 2")
        self.assertEqual(serial[0], 1)
        self.assertEqual(parallel[1], serial[1])
        self.assertEqual(len(parallel[1]), 3, parallel[1])
        self.assertEqual(parallel[2], serial[2])  # the same code in the same files
        self.assertTrue(all(sass == ("sm_90",) for _, sass in parallel[2]), parallel[2])
        log = pathlib.Path(parallel[3]["plan"]["log"]).read_text()
        self.assertIn("archbuild: building 3 extension modules, up to 2 at once", log)
        self.assertIn("setuptools compiles in parallel (MAX_JOBS=2)", log)
        self.assertEqual(serial[3]["plan"]["key_inputs"]["env.ARCHBUILD_PARALLEL_SETUPTOOLS"], "0")


class ExtensionCxxRuntime(ExtensionCase):
    def test_a_compiler_that_links_its_static_cxx_runtime_gets_the_shared_one(self):
        # A compiler as some toolchains ship it: its own lib dir, searched after the
        # caller's -L dirs, holds only libstdc++.a. An extension linked so has a C++
        # runtime of its own beside torch's, and torch's errors crash it or lose their text.
        compiler = self.root / "static-cc"
        (compiler / "lib").mkdir(parents=True)
        archive = subprocess.run(["g++", "-print-file-name=libstdc++.a"], capture_output=True, text=True).stdout.strip()
        (compiler / "lib" / "libstdc++.a").symlink_to(archive)
        (compiler / "g++").write_text(f'#!/bin/sh\nexec /usr/bin/g++ "$@" -L{compiler / "lib"}\n')
        (compiler / "g++").chmod(0o755)
        check = run("check", "--arch", "9.0", env={"CXX": str(compiler / "g++")})
        self.assertIn("links libstdc++ statically; a build links the shared one", check.stdout)
        result = self.build("--arch", "9.0", "--use-installed-torch", env={"CXX": str(compiler / "g++")})
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        report = json.loads(result.stdout)
        self.assertIn("g++ links libstdc++ statically; archbuild links the shared one", report["plan"]["cxx_runtime"])
        self.assertIn("-L" + str(self.cache / "cxx-runtime"), report["plan"]["env"]["LDFLAGS"])
        self.assertIn("shared libstdc++ linked by archbuild", report["plan"]["key_inputs"]["host_compiler"])
        (wheel,) = report["wheels"]
        self.assertEqual(report["validation"][0]["audit"]["own_cxx_runtime"], [])
        target = self.root / "static-cc-installed"
        subprocess.run([self.python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), wheel["path"]],
                       check=True)
        with zipfile.ZipFile(wheel["path"]) as archive_file:
            (member,) = [n for n in archive_file.namelist() if n.endswith(".so")]
        needed = subprocess.run(["readelf", "-d", str(target / member)], capture_output=True, text=True).stdout
        self.assertIn("[libstdc++.so.6]", needed)
        # torch's error reaches Python whole: the extension shares torch's runtime
        call = subprocess.run([self.python, "-c", "import torch, archbuild_demo_ext._C as C\n"
                               "try:\n    C.scale_add(torch.ones(2), 2.0, 1.0)\n"
                               "except RuntimeError as e:\n    print('raised:', str(e).splitlines()[0])"],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(target)})
        self.assertIn("raised: scale_add: x must be a CUDA tensor", call.stdout, call.stderr[-2000:])


class ExtensionProjectNeeds(ExtensionCase):
    def test_the_build_step_is_offline_and_says_what_the_project_needs(self):
        repo = make_downloading_repo(self.root)
        common = ["build", str(repo), "--cache-dir", str(self.cache), "--python", self.python, "--arch", "9.0",
                  "--use-installed-torch"]
        plan = run("plan", *common[1:], env=self.env)
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertIn("# network: off: the build step runs in a network and mount namespace of its own", plan.stdout)
        offline = run(*common, env=self.env, timeout=600)
        self.assertEqual(offline.returncode, 1, offline.stderr[-3000:])
        self.assertIn("archbuild builds offline by design", offline.stderr)
        self.assertIn("--env DEMO_FORCE_BUILD=TRUE", offline.stderr)
        self.assertFalse(list((self.cache / "store").glob("downloading*")) if (self.cache / "store").exists() else [])
        forced = run(*common, "--json", "--env", "DEMO_FORCE_BUILD=TRUE", env=self.env, timeout=600)
        self.assertEqual(forced.returncode, 0, forced.stderr[-3000:])
        report = json.loads(forced.stdout)
        self.assertEqual(report["plan"]["key_inputs"]["env.DEMO_FORCE_BUILD"], "TRUE")
        self.assertTrue(report["plan"]["network"].startswith("off"), report["plan"]["network"])
        _, sass, _ = self.library_archs(report["wheels"][0]["path"])
        self.assertEqual(sorted(sass), ["sm_90"])

    def test_a_project_that_builds_cuda_only_when_torch_sees_a_gpu(self):
        # no switch to set: the second build's torch answers as one GPU of the asked CC would
        repo = make_gpu_asking_repo(self.root)
        common = ["build", str(repo), "--cache-dir", str(self.cache), "--python", self.python, "--arch", "8.0;9.0",
                  "--use-installed-torch", "--json"]
        refused = run(*common, "--no-cuda-switches", env=self.env, timeout=600)
        self.assertEqual(refused.returncode, 1, refused.stderr[-3000:])
        hint = json.loads(refused.stdout)["validation"][0]["no_cuda_hint"]
        self.assertIn("only when torch sees a GPU (torch.cuda.is_available())", hint)
        self.assertIn("--env ARCHBUILD_STEP_GPU_CC=M.N", hint)
        result = run(*common, env=self.env, timeout=600)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        self.assertEqual(report["cuda_switches_set"], [{"name": "ARCHBUILD_STEP_GPU_CC", "value": "9.0"}])
        self.assertEqual(report["plan"]["key_inputs"]["env.ARCHBUILD_STEP_GPU_CC"], "9.0")
        _, sass, _ = self.library_archs(report["wheels"][0]["path"])
        self.assertEqual(sorted(sass), ["sm_80", "sm_90"])
        log = pathlib.Path(report["build"]["log"]).read_text()
        self.assertIn("torch sees a GPU of capability (9, 0)", log)

    def test_the_gpu_view_installs_once_and_keeps_the_interpreters_sitecustomize(self):
        # reached twice (a second path to it, a reload) it answers as before; the next sitecustomize still runs
        other = self.root / "other-site"
        other.mkdir(exist_ok=True)
        (other / "sitecustomize.py").write_text("import builtins\nbuiltins.OTHER_SITECUSTOMIZE_RAN = True\n")
        view = SOURCE_DIR / "recipes" / "frontends" / "gpu_view"
        twice = self.root / "gpu-view-link"
        if not twice.exists():
            twice.symlink_to(view)
        env = dict(os.environ, ARCHBUILD_STEP_GPU_CC="9.0", CUDA_VISIBLE_DEVICES="",
                   PYTHONPATH=os.pathsep.join([str(view), str(twice), str(other)]))
        probe = ("import builtins, importlib, sitecustomize; importlib.reload(sitecustomize); import torch; "
                 "print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_capability(), "
                 "getattr(builtins, 'OTHER_SITECUSTOMIZE_RAN', False))")
        seen = subprocess.run([self.python, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(seen.stdout.split(), ["True", "1", "(9,", "0)", "True"], seen.stderr[-2000:])
        # without the variable nothing changes
        env.pop("ARCHBUILD_STEP_GPU_CC")
        plain = subprocess.run([self.python, "-c", "import torch; print(torch.cuda.is_available())"],
                               capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(plain.stdout.strip(), "False", plain.stderr[-2000:])

    def test_a_cpu_and_a_cuda_build_of_one_op_library(self):
        # PyG's layout: both libraries register the operator, so a process may
        # load only one (the GPU suite checks that validation imports it that way)
        repo = make_dual_library_repo(self.root)
        result = run("build", str(repo), "--cache-dir", str(self.cache), "--python", self.python, "--json",
                     "--arch", "9.0", "--use-installed-torch", env=self.env, timeout=900)
        self.assertEqual(result.returncode, 0, result.stderr[-4000:])
        wheel = json.loads(result.stdout)["wheels"][0]["path"]
        inventory = json.loads(run("inspect", "--json", wheel).stdout)["files"]
        self.assertEqual([(e["path"].split("!")[-1].split(".")[0], sorted(e["sass"])) for e in inventory],
                         [("dualops/_twice_cuda", ["sm_90"])])
        site = self.root / "dualops-site"
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
            self.assertEqual(sorted(n.split(".")[0] for n in archive.namelist() if n.endswith(".so")),
                             ["dualops/_twice_cpu", "dualops/_twice_cuda"])
        env = dict(os.environ, PYTHONPATH=str(site))
        used = subprocess.run([self.python, "-c", "import dualops, torch; print(dualops._variant, "
                               "dualops.twice(torch.ones(3)).tolist())"], capture_output=True, text=True, env=env)
        self.assertEqual(used.stdout.strip(), "cpu [2.0, 2.0, 2.0]", used.stderr[-2000:])
        both = subprocess.run([self.python, "-c", "import dualops, torch, pathlib; torch.ops.load_library("
                               "next(pathlib.Path(dualops.__file__).parent.glob('_twice_cuda*.so')))"],
                              capture_output=True, text=True, env=env)
        self.assertEqual(both.returncode, -signal.SIGABRT, both.stderr[-2000:])
        self.assertIn("Only a single TORCH_LIBRARY can be used to register the namespace dualops", both.stderr)

    def test_bad_dependency_options(self):
        missing = run("build", str(self.repo), "--arch", "9.0", "--cache-dir", str(self.cache), "--python", self.python,
                      "--torch-wheel", str(self.root / "nope.whl"), env=self.env)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("no such wheel", missing.stderr)
        both = run("build", str(self.repo), "--arch", "9.0", "--torch-wheel", "x.whl", "--use-installed-torch", env=self.env)
        self.assertEqual(both.returncode, 2)
        no_torch = run("build", str(self.repo), "--arch", "9.0", "--cache-dir", str(self.cache), "--use-installed-torch",
                       "--python", "python3", env=self.env)
        self.assertEqual(no_torch.returncode, 3)
        self.assertIn("cannot import torch", no_torch.stderr)


if __name__ == "__main__":
    unittest.main()
