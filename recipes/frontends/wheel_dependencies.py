"""The runtime dependencies an installed wheel declares (its Requires-Dist,
markers evaluated for this interpreter, extras not asked) that this
interpreter has no distribution of at all: what `pip install WHEEL` on a
node would fetch besides the wheel.

  python wheel_dependencies.py DISTRIBUTION [--constraints FILE]

Run with the interpreter of the venv the wheel was installed into (no
dependencies). A requirement met by another version than it asks is left
alone (the validating interpreter's torch is the one to test against), and
named under "other_versions"; --constraints writes `name==version` for every
distribution the interpreter has, for pip's -c, so that installing the
missing ones replaces none of them. A direct reference (`name @ URL`) is
never given to pip (it would fetch the URL whatever the index settings) and
its URL never printed (it may hold a token): only its name, under
"direct_references". A requirement whose marker or specifier cannot be
evaluated is left out, as one that does not parse. Prints one JSON object:
  {"missing": [REQUIREMENT], "other_versions": [REQUIREMENT], "direct_references": [NAME]}
Exit 2 with a message when DISTRIBUTION is not installed."""
import argparse
import importlib.metadata
import json
import sys

try:
    from packaging.requirements import Requirement
    from packaging.version import InvalidVersion, Version
except ImportError:  # pip's own copy: a venv without packaging still has pip
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.version import InvalidVersion, Version


def write_constraints(path):
    pins = {}
    for distribution in importlib.metadata.distributions():
        name, version = distribution.metadata["Name"], distribution.version
        try:
            Version(version)
        except (InvalidVersion, TypeError):
            continue  # pip could not read the pin either
        if name:
            pins.setdefault(name.lower(), f"{name}=={version}")  # the first on sys.path is the one imported
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(pin + "\n" for pin in sorted(pins.values())))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("distribution")
    parser.add_argument("--constraints")
    args = parser.parse_args()
    try:
        declared = importlib.metadata.requires(args.distribution) or []
    except importlib.metadata.PackageNotFoundError:
        print(f"wheel_dependencies.py: {args.distribution} is not installed for {sys.executable}", file=sys.stderr)
        sys.exit(2)
    missing, other_versions, direct_references = [], [], []
    for text in declared:
        try:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
        except Exception:  # noqa: BLE001 - InvalidRequirement, and what a marker's evaluation raises
            continue  # pip would refuse or skip it as well: not this script's to judge
        requirement.marker = None  # met here: what pip is given is the rest
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            if requirement.url:
                direct_references.append(requirement.name)
            else:
                missing.append(str(requirement))
            continue
        try:
            other = requirement.specifier and not requirement.specifier.contains(version, prereleases=True)
        except Exception:  # noqa: BLE001 - an installed version packaging cannot read
            other = False
        if other:
            other_versions.append(f"{requirement} ({version} installed)")
    if args.constraints:
        write_constraints(args.constraints)
    print(json.dumps({"missing": missing, "other_versions": other_versions, "direct_references": direct_references}))


if __name__ == "__main__":
    main()
