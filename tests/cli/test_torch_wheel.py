"""Real torch wheels from PyPI (x86-64 and aarch64 of one release): every CUDA
library read straight from the wheel, compared entry by entry with cuobjdump
(from PyPI) on the same libraries, and the two platforms' fatbins compared."""
import unittest
import zipfile

from harness import (TEST_CACHE, TORCH_VERSION, archbuild_inventory, cuobjdump_inventory, pypi_cuobjdump, run_json,
                     torch_wheel)


def inspect_wheel(wheel, *device_ccs):
    args = [arg for cc in device_ccs for arg in ("--device-cc", cc)]
    result, report = run_json("inspect", str(wheel), *args)
    return result.returncode, {f["path"].split("!", 1)[1]: f for f in report["files"]}


def assert_same_entries_as_cuobjdump(test, wheel, files, machine):
    cuobjdump = pypi_cuobjdump()
    extracted = TEST_CACHE / f"torch-{TORCH_VERSION}-lib" / machine
    with zipfile.ZipFile(wheel) as archive:
        for member in files:
            if not (extracted / member).exists():
                archive.extract(member, extracted)
    for member, entry in files.items():
        with test.subTest(member=member):
            for every in (False, True):
                test.assertEqual(archbuild_inventory(entry, every),
                                 cuobjdump_inventory(cuobjdump, extracted / member, every))


class TorchWheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wheel = torch_wheel()
        cls.returncode, cls.files = inspect_wheel(cls.wheel, "9.0", "6.1")

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
        self.assertEqual({f["machine"] for f in self.files.values()}, {"x86_64"})

    def test_same_entries_as_cuobjdump(self):
        assert_same_entries_as_cuobjdump(self, self.wheel, self.files, "x86_64")


class AarchTorchWheel(unittest.TestCase):
    """The aarch64 (SBSA) wheel of the same release: the GH200, GB200, GB10
    and Thor machines' torch. Its libraries are aarch64 ELF files; its fatbins
    are the x86-64 wheel's, built for the aarch64 arch list."""

    @classmethod
    def setUpClass(cls):
        cls.wheel = torch_wheel("aarch64")
        cls.returncode, cls.files = inspect_wheel(cls.wheel, "9.0", "11.0", "12.1", "7.5")
        cls.x86_returncode, cls.x86_files = inspect_wheel(torch_wheel(), "11.0")

    def test_reads_the_aarch64_libraries(self):
        self.assertEqual(set(self.files), {"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_nvshmem.so"})
        self.assertEqual({f["machine"] for f in self.files.values()}, {"aarch64"})
        cuda = self.files["torch/lib/libtorch_cuda.so"]
        # Thor (11.0) has its own SASS here; GB10 (12.1) runs the sm_120 code;
        # 7.5 is left out of PyTorch's aarch64 list (no such SBSA parts).
        self.assertEqual(cuda["verdicts"], {"9.0": "native", "11.0": "native", "12.1": "native",
                                            "7.5": "no-kernel-image"})
        self.assertEqual(self.returncode, 1)
        self.assertEqual(cuda["ptx"], {})

    def test_same_fatbins_as_the_x86_64_wheel_for_the_archs_both_carry(self):
        aarch64 = self.files["torch/lib/libtorch_cuda.so"]
        x86_64 = self.x86_files["torch/lib/libtorch_cuda.so"]
        self.assertEqual(aarch64["containers"], x86_64["containers"])
        both = set(aarch64["sass"]) & set(x86_64["sass"])
        self.assertTrue({"sm_80", "sm_90", "sm_100", "sm_120"} <= both, both)
        for arch in sorted(both):
            with self.subTest(arch=arch):
                self.assertEqual(aarch64["sass"][arch], x86_64["sass"][arch])
        # The platforms' lists differ exactly where PyTorch's release build
        # says: 11.0 (Thor) only on aarch64; 7.5, 8.6 (and one 8.9 kernel) only on x86-64.
        self.assertEqual(set(aarch64["sass"]) - both, {"sm_110", "sm_110a"})
        self.assertEqual(set(x86_64["sass"]) - both, {"sm_75", "sm_86", "sm_89"})
        self.assertEqual(x86_64["verdicts"], {"11.0": "no-kernel-image"})
        self.assertEqual(self.x86_returncode, 1)

    def test_same_entries_as_cuobjdump(self):
        assert_same_entries_as_cuobjdump(self, self.wheel, self.files, "aarch64")


if __name__ == "__main__":
    unittest.main()
