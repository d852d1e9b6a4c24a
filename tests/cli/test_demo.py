"""README's first command, `bash scripts/demo.sh`, on this machine (no GPU):
the whole pipeline on examples/cuda-demo, ending with the wheel in the
cache's index, its inventory and the pip install line."""
import os
import subprocess
import unittest

from harness import SOURCE_DIR, SYSTEM_NVCC, scratch_dir


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Demo(unittest.TestCase):
    def test_demo_builds_validates_and_publishes(self):
        cache = scratch_dir(self) / "cache"
        env = dict(os.environ, ARCHBUILD_CACHE_DIR=str(cache), NO_COLOR="1")
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        env.pop("ARCHBUILD_DATA_DIR", None)
        result = subprocess.run(["bash", str(SOURCE_DIR / "scripts" / "demo.sh")], capture_output=True, text=True,
                                env=env, timeout=900)
        output = result.stdout + result.stderr
        self.assertEqual(result.returncode, 0, output[-3000:])
        self.assertIn("no GPU here: building for --arch 9.0", output)
        self.assertIn(f"pip install cuda_demo==1.0.0+cu130.sm90 --extra-index-url file://{cache}/simple", output)
        self.assertIn("skip device: no GPU", output)
        self.assertIn("SASS  sm_90 x2", output)
        # the inventory is the labelled wheel's, the one pip installs (not the variant wheel)
        inventory = result.stdout.split("== its inventory", 1)[1]
        self.assertRegex(inventory, r"cuda_demo-1\.0\.0\+cu130\.sm90-[^ ]*\.whl")
        self.assertTrue((cache / "simple" / "cuda-demo" / "index.html").exists())
        # a second run is a cache hit
        again = subprocess.run(["bash", str(SOURCE_DIR / "scripts" / "demo.sh")], capture_output=True, text=True,
                               env=env, timeout=900)
        self.assertEqual(again.returncode, 0, again.stderr[-2000:])
        self.assertIn("nothing to build", again.stderr)


if __name__ == "__main__":
    unittest.main()
