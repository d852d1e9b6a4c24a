"""Which of a build's requirements this interpreter already satisfies.

  python build_requirements.py REQUIREMENT...

Prints one JSON object: {"requirements": [{"requirement", "name", "applies",
"installed", "satisfied"}...]}. A requirement whose environment marker does
not apply here is satisfied. A malformed requirement exits 2 naming it.
Reads installed distributions with importlib.metadata; imports nothing of
theirs."""
import importlib.metadata
import json
import sys

try:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # pip vendors it
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.utils import canonicalize_name


def installed_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def main():
    results = []
    for text in sys.argv[1:]:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            print(f"not a requirement (PEP 508): {text!r}: {error}", file=sys.stderr)
            sys.exit(2)
        applies = requirement.marker is None or requirement.marker.evaluate()
        version = installed_version(requirement.name)
        satisfied = not applies or (
            version is not None and requirement.specifier.contains(version, prereleases=True))
        results.append({"requirement": text, "name": canonicalize_name(requirement.name), "applies": applies,
                        "installed": version, "satisfied": satisfied})
    print(json.dumps({"requirements": results}))


if __name__ == "__main__":
    main()
