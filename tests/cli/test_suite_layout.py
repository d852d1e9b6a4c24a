"""The suite's own layout: every test class of every module runs under
exactly one ctest test (a module, or one of its classes), so splitting a long
module by class never drops or doubles a test."""
import json
import pathlib
import subprocess
import unittest

from harness import BIN, SOURCE_DIR


def ctest_names(build_dir):
    shown = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, capture_output=True, text=True,
                           check=True)
    return [test["name"] for test in json.loads(shown.stdout)["tests"]]


def test_classes(module):
    """Names of the classes in MODULE that hold at least one test."""
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    found = set()

    def walk(item):
        if isinstance(item, unittest.TestSuite):
            for child in item:
                walk(child)
        elif type(item).__module__ == module:
            found.add(type(item).__name__)
    walk(suite)
    return found


class SuiteLayout(unittest.TestCase):
    def test_every_class_runs_once(self):
        build_dir = pathlib.Path(BIN).resolve().parents[1]
        if not (build_dir / "CTestTestfile.cmake").exists():
            self.skipTest(f"{build_dir} is not a ctest build dir")
        entries = [name[len("cli."):] for name in ctest_names(build_dir) if name.startswith("cli.")]
        modules = sorted(path.stem for path in (SOURCE_DIR / "tests" / "cli").glob("test_*.py"))
        for module in modules:
            whole = module in entries
            split = {entry.split(".", 1)[1] for entry in entries if entry.startswith(module + ".")}
            with self.subTest(module=module):
                self.assertTrue(whole or split, f"{module} runs under no ctest test")
                if whole:
                    self.assertEqual(split, set(), f"{module} runs whole and by class")
                else:
                    self.assertEqual(split, test_classes(module), f"{module}: its classes and ctest's entries differ")


if __name__ == "__main__":
    unittest.main()
