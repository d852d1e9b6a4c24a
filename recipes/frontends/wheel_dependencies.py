"""The runtime dependencies an installed wheel declares (its Requires-Dist,
markers evaluated for this interpreter, extras not asked) that this
interpreter has no distribution of at all: what `pip install WHEEL` on a
node would fetch besides the wheel.

  python wheel_dependencies.py DISTRIBUTION

Run with the interpreter of the venv the wheel was installed into (no
dependencies). A requirement met by another version than it asks is left
alone (the validating interpreter's torch is the one to test against), and
named under "other_versions". A direct reference (`name @ URL`) is never
given to pip (it would fetch the URL whatever the index settings) and its
URL never printed (it may hold a token): only its name, under
"direct_references". Prints one JSON object:
  {"missing": [REQUIREMENT], "other_versions": [REQUIREMENT], "direct_references": [NAME]}
Exit 2 with a message when DISTRIBUTION is not installed."""
import importlib.metadata
import json
import sys

try:
    from packaging.requirements import InvalidRequirement, Requirement
except ImportError:  # pip's own copy: a venv without packaging still has pip
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: wheel_dependencies.py DISTRIBUTION")
    try:
        declared = importlib.metadata.requires(sys.argv[1]) or []
    except importlib.metadata.PackageNotFoundError:
        print(f"wheel_dependencies.py: {sys.argv[1]} is not installed for {sys.executable}", file=sys.stderr)
        sys.exit(2)
    missing, other_versions, direct_references = [], [], []
    for text in declared:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue  # pip would refuse the wheel itself; not this script's to judge
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        requirement.marker = None  # met here: what pip is given is the rest
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            if requirement.url:
                direct_references.append(requirement.name)
            else:
                missing.append(str(requirement))
            continue
        if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
            other_versions.append(f"{requirement} ({version} installed)")
    print(json.dumps({"missing": missing, "other_versions": other_versions, "direct_references": direct_references}))


if __name__ == "__main__":
    main()
