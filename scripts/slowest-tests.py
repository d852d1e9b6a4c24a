#!/usr/bin/env python3
"""Prints the slowest tests of one or more ctest JUnit files (ctest
--output-junit) or GoogleTest XML files (--gtest_output=xml): scripts/test.sh
ends each run with them."""
import argparse
import pathlib
import xml.etree.ElementTree as ElementTree


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    cases = []
    for path in args.files:
        stage = "aarch64 " if "aarch64" in str(path) else ""
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            status = case.get("status", "run")
            failed = case.find("failure") is not None
            name = case.get("name", "?")
            suite = case.get("classname")
            if suite and name != suite and not name.startswith(suite + "."):
                name = f"{suite}.{name}"  # GoogleTest names a case within its suite
            cases.append((float(case.get("time", 0)), stage + name,
                          "FAILED" if failed else ("skipped" if status == "notrun" or case.find("skipped") is not None else "")))
    cases.sort(reverse=True)
    total = sum(seconds for seconds, _, _ in cases)
    print(f"\nslowest {min(args.top, len(cases))} of {len(cases)} tests ({total:.0f} s of test time in all):")
    for seconds, name, note in cases[:args.top]:
        print(f"  {seconds:7.1f} s  {name}{'  ' + note if note else ''}")


if __name__ == "__main__":
    main()
