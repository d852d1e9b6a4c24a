"""A real torch wheel from PyPI: every CUDA library read straight from the wheel,
compared entry by entry with cuobjdump (from PyPI) on the same libraries."""
import unittest
import zipfile

from harness import (TEST_CACHE, TORCH_VERSION, archbuild_inventory, cuobjdump_inventory, pypi_cuobjdump, run_json,
                     torch_wheel)


class TorchWheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wheel = torch_wheel()
        result, cls.report = run_json("inspect", str(cls.wheel), "--device-cc", "9.0", "--device-cc", "6.1")
        cls.returncode = result.returncode
        cls.files = {f["path"].split("!", 1)[1]: f for f in cls.report["files"]}

    def test_reads_every_cuda_library_from_the_wheel(self):
        self.assertEqual(self.returncode, 1)  # 6.1 has no kernel image
        self.assertEqual(set(self.files),
                         {"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_linalg.so",
                          "torch/lib/libtorch_nvshmem.so"})
        cuda = self.files["torch/lib/libtorch_cuda.so"]
        # docs/CUDA_FACTS.md#torch-baseline, measured with cuobjdump on the GPU machine
        self.assertEqual(cuda["containers"], 444)
        self.assertEqual(cuda["entry_count"], 2789)
        self.assertEqual(cuda["sass"]["sm_90"] + cuda["sass"]["sm_90a"], 448)
        self.assertEqual(cuda["sass"]["sm_100"] + cuda["sass"]["sm_100a"], 503)
        self.assertEqual(cuda["compressed"], {"zstd": 2789})
        self.assertEqual(cuda["verdicts"], {"9.0": "native", "6.1": "no-kernel-image"})

    def test_same_entries_as_cuobjdump(self):
        cuobjdump = pypi_cuobjdump()
        extracted = TEST_CACHE / f"torch-{TORCH_VERSION}-lib"
        with zipfile.ZipFile(self.wheel) as archive:
            for member in self.files:
                target = extracted / member
                if not target.exists():
                    archive.extract(member, extracted)
        for member, entry in self.files.items():
            with self.subTest(member=member):
                for every in (False, True):
                    self.assertEqual(archbuild_inventory(entry, every),
                                     cuobjdump_inventory(cuobjdump, extracted / member, every))


if __name__ == "__main__":
    unittest.main()
