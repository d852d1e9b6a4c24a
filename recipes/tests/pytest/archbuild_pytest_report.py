"""pytest plugin archbuild loads (PYTEST_ADDOPTS=-p archbuild_pytest_report)
when it runs a project's own tests against an installed wheel.

- Appends one JSON line per test result to $ARCHBUILD_TEST_REPORT as it
  happens, so a suite stopped by its time budget still says what ran.
- Makes sure the tests exercise the installed wheel: the source tree is not
  put in front of site-packages, and each package in $ARCHBUILD_TEST_PACKAGES
  must import from outside $ARCHBUILD_TEST_SOURCE_DIR.
"""
import importlib
import json
import os
import sys

_REPORT = os.environ.get("ARCHBUILD_TEST_REPORT")
_SOURCE = os.path.realpath(os.environ.get("ARCHBUILD_TEST_SOURCE_DIR", "") or "/nonexistent")


def _write(record):
    if not _REPORT:
        return
    with open(_REPORT, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def _inside_source(path):
    path = os.path.realpath(path)
    return path == _SOURCE or path.startswith(_SOURCE + os.sep)


def _message(report):
    text = getattr(report, "longreprtext", "") or str(report.longrepr or "")
    lines = [line for line in text.splitlines() if line.strip()]
    # pytest's last "E   " lines carry the exception; keep what fits one screen line
    errors = [line.strip()[1:].strip() for line in lines if line.lstrip().startswith("E ")]
    picked = errors[-3:] if errors else lines[-3:]
    return " | ".join(picked)[:600]


def pytest_configure(config):
    # Python < 3.11 has no PYTHONSAFEPATH: `python -m pytest` put the working
    # directory (the source tree) first on sys.path.
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.realpath(p) != os.path.realpath(cwd)]
    # A torch extension's own module (marlin_cuda) links libc10 and friends,
    # which only `import torch` loads: import it first, as the package does.
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    for name in filter(None, os.environ.get("ARCHBUILD_TEST_PACKAGES", "").split(",")):
        try:
            module = importlib.import_module(name)
        except Exception as error:  # reported as the first result, the suite goes on
            _write({"event": "import", "package": name, "ok": False, "message": f"{type(error).__name__}: {error}"})
            continue
        origin = getattr(module, "__file__", None) or ""
        _write({"event": "import", "package": name, "ok": not _inside_source(origin), "origin": origin})


def pytest_collectreport(report):
    if report.failed:
        _write({"event": "collect", "test": report.nodeid, "outcome": "error", "message": _message(report)})


def pytest_runtest_logreport(report):
    if report.when == "call" or report.failed or (report.skipped and report.when == "setup"):
        outcome = "error" if report.failed and report.when != "call" else report.outcome
        record = {"event": "test", "test": report.nodeid, "outcome": outcome, "phase": report.when}
        if report.failed:
            record["message"] = _message(report)
        _write(record)


def pytest_sessionfinish(session, exitstatus):
    _write({"event": "finish", "exitstatus": int(exitstatus), "collected": session.testscollected})
