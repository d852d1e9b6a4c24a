#!/usr/bin/env python3
"""Finds the sdist of NAME==VERSION on the package index pip is configured
with and downloads it, never running any of the package's code.

`pip download --no-binary :all:` would prepare the package's metadata first,
which runs its build backend (setup.py): code from the sdist, before anything
has checked the archive, and for a CUDA extension one that imports torch.
This reads the same configuration instead (pip's config files and PIP_*
variables, through `python -m pip config list`): index-url, extra-index-url,
find-links, no-index, cert, client-cert, trusted-host, proxy and timeout;
credentials in an index URL and ~/.netrc are used for their host only. Like
pip, an http:// index that is neither on this machine nor a trusted-host is
ignored. Only the Python standard library is used.

With no index-url configured, the index is pip's own default, asked of
the pip this interpreter has. Every URL opened first goes through the
--rewrite FROM=TO rules (archbuild's --mirror and [mirrors]): the longest
matching prefix is replaced, so a host only a mirror reaches is never asked.

Usage: sdist_fetch.py [--rewrite FROM=TO]... --name NAME
                      (--version VERSION --dest DIR [--max-bytes N] | --newest)
Prints one JSON object: file, url, index, index_sha256 (null when the index
gives none), yanked (null, or the reason), version. --newest downloads
nothing and names the newest release with a readable sdist (final releases
before pre-releases, yanked files skipped, as pip chooses).

Exit 2: no such sdist, or bad input from an index: an sdist larger than
--max-bytes, a find-links entry or file: link that is no regular file (a
directory, a FIFO, a device; none is ever opened), an index page over 64 MiB,
a PEP 691 page of the wrong shape or a sha256 that is not 64 hex digits.
Exit 3: no index could be read, or the download failed (a redirect loop
included). Every error is one line on stderr, never a traceback.

Downloads stay inside --dest: the file is written as .partial-PID-FILE and
renamed once complete; it is removed on any error and on SIGINT, SIGTERM or
SIGHUP (after which the fetcher ends by that signal). With a --dest named
.download-* (archbuild's, under <cache>/sdists/NAME), the fetcher locks it
(flock) for its lifetime and records its parent in .fetcher; a later run
removes the sibling .download-* dirs whose writers are gone: unlocked, and
their archbuild no longer running (or, with no record, untouched for 2 hours).
"""
import argparse
import ast
import base64
import fcntl
import html.parser
import http.client
import ipaddress
import json
import netrc
import os
import re
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

NOT_FOUND = 2
BAD_INPUT = 2  # what an index offers is refused: archbuild's exit 2 (bad input), like NOT_FOUND
UNREACHABLE = 3
MAX_PAGE_BYTES = 64 << 20  # an index page (PyPI's largest are a few MiB)
DOWNLOAD_PREFIX = ".download-"  # archbuild's --dest: <cache>/sdists/NAME/.download-XXXXXX
OWNER_FILE = ".fetcher"  # in --dest: who writes it ({"pid", "host", "parent", "parent_start"})
UNKNOWN_WRITER_AGE = 2 * 3600  # a .download-* dir with no record, untouched this long, is stale
PARTIALS = set()  # files this process is writing, removed if it ends early
FORMATS = (".tar.gz", ".tgz", ".zip", ".tar")  # what archbuild reads, best first
OTHER_FORMATS = (".tar.bz2", ".tar.xz", ".tbz", ".txz", ".tar.Z")
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(text):
    for module in ("packaging.version", "pip._vendor.packaging.version"):
        try:
            version = __import__(module, fromlist=["Version"])
            return version.Version(text)
        except ImportError:
            continue
        except Exception:  # InvalidVersion
            return None
    return text.lower().lstrip("v")


def same_version(a, b):
    key_a, key_b = version_key(a), version_key(b)
    return key_a is not None and key_a == key_b


def pip_config():
    """pip's settings by option name, from `pip config list` (files and PIP_* variables)."""
    try:
        listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                                 timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    scopes = {}
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        scope, _, option = key.rpartition(".")
        try:
            scopes.setdefault(scope, {})[option] = str(ast.literal_eval(value))
        except (ValueError, SyntaxError):
            continue
    if not listing:  # no pip in this interpreter: its variables still count
        for variable, value in os.environ.items():
            if variable.startswith("PIP_"):
                scopes.setdefault(":env:", {})[variable[4:].lower().replace("_", "-")] = value
    return scopes


class Config:
    def __init__(self):
        self.scopes = pip_config()

    def get(self, *options):
        for scope in (":env:", "download", "global"):
            for option in options:
                if option in self.scopes.get(scope, {}):
                    return self.scopes[scope][option]
        return None

    def words(self, option):
        return (self.get(option) or "").split()

    def flag(self, option):
        return (self.get(option) or "").strip().lower() in ("1", "true", "yes", "on")


def without_credentials(url):
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def pip_default_index():
    """The index pip uses when none is configured, from pip itself."""
    try:
        from pip._internal.models.index import PyPI
        return PyPI.simple_url
    except Exception:  # no pip, or a pip whose internals moved
        raise Failure(UNREACHABLE, "no index-url is configured and this interpreter has no pip to name its default "
                                   "index: set PIP_INDEX_URL (or index-url in pip.conf)")


class Rewriter:
    """git's url.<base>.insteadOf: the longest matching prefix wins."""

    def __init__(self, rules):
        self.rules = []
        for rule in rules:
            source, sep, target = rule.partition("=")
            if not sep or not source:
                raise Failure(NOT_FOUND, f"--rewrite {rule}: expected FROM=TO")
            self.rules.append((source, target))
        self.rules.sort(key=lambda rule: len(rule[0]), reverse=True)

    def apply(self, url):
        for source, target in self.rules:
            if url.startswith(source):
                return target + url[len(source):]
        return url


class Redirects(urllib.request.HTTPRedirectHandler):
    """urllib's, with a one-line message for a loop and no redirect to anything but http(s) (ftp:, say)."""
    inf_msg = "redirect loop (the same URL again and again, or more than 10 redirects); the last answer was "

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        scheme = urllib.parse.urlsplit(newurl).scheme.lower()
        if scheme not in ("http", "https"):
            raise urllib.error.HTTPError(req.full_url, code, f"redirected to {without_credentials(newurl)}, "
                                         "which is not an http(s) URL", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Client:
    def __init__(self, config, rewriter=None):
        self.rewriter = rewriter or Rewriter([])
        self.timeout = float(config.get("timeout", "default-timeout") or 15)
        self.trusted = set(config.words("trusted-host"))
        self.credentials = {}  # host -> Authorization header, from index URLs
        verified = ssl.create_default_context(cafile=config.get("cert") or None)
        client_cert = config.get("client-cert")
        if client_cert:
            verified.load_cert_chain(client_cert)
        unverified = ssl._create_unverified_context()
        proxy = config.get("proxy")
        proxies = urllib.request.ProxyHandler({"http": proxy, "https": proxy} if proxy else None)
        self.openers = {
            True: urllib.request.build_opener(proxies, Redirects(), urllib.request.HTTPSHandler(context=verified)),
            False: urllib.request.build_opener(proxies, Redirects(), urllib.request.HTTPSHandler(context=unverified)),
        }
        try:
            self.netrc = netrc.netrc()
        except (OSError, netrc.NetrcParseError):
            self.netrc = None

    def is_trusted(self, url):
        parts = urllib.parse.urlsplit(url)
        return parts.hostname in self.trusted or parts.netloc in self.trusted

    def is_secure(self, url):
        """pip's rule: https, this machine, or a trusted-host."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("https", "file") or self.is_trusted(url):
            return True
        host = parts.hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def remember_credentials(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None:
            token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self.credentials[parts.hostname] = "Basic " + base64.b64encode(token.encode()).decode()
        return without_credentials(url)

    def authorization(self, url):
        host = urllib.parse.urlsplit(url).hostname
        if host in self.credentials:
            return self.credentials[host]
        if self.netrc and host:
            entry = self.netrc.authenticators(host)
            if entry:
                token = f"{entry[0]}:{entry[2]}"
                return "Basic " + base64.b64encode(token.encode()).decode()
        return None

    def open(self, url, accept="*/*"):
        url = self.rewriter.apply(url)
        request = urllib.request.Request(url, headers={"User-Agent": "archbuild-sdist-fetch", "Accept": accept})
        authorization = self.authorization(url)
        if authorization:  # never sent on to a host a redirect names
            request.add_unredirected_header("Authorization", authorization)
        opener = self.openers[not self.is_trusted(url)]
        for attempt in range(3):
            try:
                return opener.open(request, timeout=self.timeout)
            except urllib.error.HTTPError as error:
                if error.code < 500 or attempt == 2:
                    raise
            except (urllib.error.URLError, OSError):
                if attempt == 2:
                    raise
            time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")


class Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.base = None
        self.links = []  # (href, attributes)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "base" and attributes.get("href") and self.base is None:
            self.base = attributes["href"]
        elif tag == "a" and attributes.get("href"):
            self.links.append((attributes["href"], attributes))


def file_name(url):
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])


def candidate(filename, url, hashes, yanked, source, page=None):
    sha256 = hashes.get("sha256")
    if sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise Failure(BAD_INPUT, f"{page or without_credentials(source)}: the sha256 listed for {filename} is not "
                                 f"64 hex digits: {sha256[:80]!r}")
    return {"file": filename, "url": url, "sha256": sha256, "yanked": yanked, "index": source}


def json_kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), "a number")


def human_bytes(count):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit} ({count} bytes)"
    return f"{count} bytes"


def json_files(body, final_url, page, source):
    """The files of a PEP 691 page; a page of another shape is refused (BAD_INPUT), never half read."""
    def bad(what):
        raise Failure(BAD_INPUT, f"{page}: not a PEP 691 project page: {what}")

    data = json.loads(body)  # not JSON at all: a ValueError, an index that cannot be read
    if not isinstance(data, dict):
        bad(f"the page is {json_kind(data)}, not an object")
    entries = data.get("files", [])
    if not isinstance(entries, list):
        bad(f"'files' is {json_kind(entries)}, not a list")
    files = []
    for number, entry in enumerate(entries):
        where = f"files[{number}]"
        if not isinstance(entry, dict):
            bad(f"{where} is {json_kind(entry)}, not an object")
        filename, url = entry.get("filename"), entry.get("url")
        if isinstance(filename, str):
            where += f" ({filename[:200]})"
        elif filename is not None:
            bad(f"{where} 'filename' is {json_kind(filename)}, not a string")
        if not isinstance(url, str) or not url:
            bad(f"{where} 'url' is {json_kind(url) if url != '' else 'empty'}, not a URL")
        hashes = entry.get("hashes")
        if hashes is None:
            hashes = {}
        if not isinstance(hashes, dict):
            bad(f"{where} 'hashes' is {json_kind(hashes)}, not an object")
        for name, value in hashes.items():
            if not isinstance(value, str):
                bad(f"{where} hash '{name[:40]}' is {json_kind(value)}, not a string")
        yanked = entry.get("yanked")
        if yanked is None or yanked is False:
            yanked = None
        elif yanked is True:
            yanked = ""
        elif not isinstance(yanked, str):
            bad(f"{where} 'yanked' is {json_kind(yanked)}, not true, false or a reason")
        url = urllib.parse.urljoin(final_url, url)
        files.append((filename or file_name(url), url, hashes, yanked))
    return files


def html_files(body, final_url):
    parser = Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    base = urllib.parse.urljoin(final_url, parser.base) if parser.base else final_url
    files = []
    for href, attributes in parser.links:
        url = urllib.parse.urljoin(base, href)
        hashes = {}
        fragment = urllib.parse.urlsplit(url).fragment
        name, _, value = fragment.partition("=")
        if name and value:
            hashes[name] = value
        # data-yanked="reason", or a bare data-yanked (html.parser gives None): yanked either way
        yanked = (attributes["data-yanked"] or "") if "data-yanked" in attributes else None
        files.append((file_name(url), url.split("#", 1)[0], hashes, yanked))
    return files


def page_files(client, page_url, source):
    """The files a PEP 503/691 project page (or a find-links page) lists; None when it does not exist."""
    page_url = client.rewriter.apply(page_url)
    page = without_credentials(page_url)
    too_large = Failure(BAD_INPUT, f"{page}: the index page is larger than {human_bytes(MAX_PAGE_BYTES)}, "
                                   "more than archbuild reads")
    if page_url.startswith("file:"):  # a static index on disk (like archbuild's own <cache>/simple)
        path = urllib.parse.unquote(urllib.parse.urlsplit(page_url).path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            return None
        fd, info = open_regular(path, f"the index page {path}")
        with os.fdopen(fd, "rb") as handle:
            body = handle.read(MAX_PAGE_BYTES + 1)
        final_url, content_type = "file://" + urllib.request.pathname2url(path), "text/html"
    else:
        try:
            with client.open(page_url, accept=f"{SIMPLE_JSON}, text/html;q=0.1") as response:
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > MAX_PAGE_BYTES:
                    raise too_large
                body = response.read(MAX_PAGE_BYTES + 1)
                final_url = response.geturl()
                content_type = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise
    if len(body) > MAX_PAGE_BYTES:
        raise too_large
    if content_type.startswith(SIMPLE_JSON):
        listed = json_files(body, final_url, page, source)
    else:
        listed = html_files(body, final_url)
    remote = urllib.parse.urlsplit(final_url).scheme in ("http", "https")
    files, refused = [], []
    for filename, url, hashes, yanked in listed:
        # a page from a server may not name files on this machine (file:, or ftp:, data:, ...)
        if remote and urllib.parse.urlsplit(url).scheme.lower() not in ("http", "https"):
            refused.append(filename)
            continue
        files.append(candidate(filename, url, hashes, yanked, source, page))
    if refused:
        print(f"sdist_fetch: ignored {len(refused)} link(s) on {page} that are not http(s) URLs ("
              + ", ".join(name[:100] for name in refused[:3]) + (", ..." if len(refused) > 3 else "")
              + "): a page from a server names no files on this machine", file=sys.stderr)
    return files


def local_files(location):
    path = urllib.parse.unquote(urllib.parse.urlsplit(location).path) if location.startswith("file:") else location
    path = os.path.expanduser(path)
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        return [candidate(n, "file://" + urllib.request.pathname2url(os.path.abspath(os.path.join(path, n))), {},
                          None, location) for n in names]
    if os.path.isfile(path):
        return [candidate(os.path.basename(path), "file://" + urllib.request.pathname2url(os.path.abspath(path)), {},
                          None, location)]
    return []


def file_kind(mode):
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def open_regular(path, what, source=None):
    """(fd, stat) of the regular file PATH (a symlink to one is fine). Anything else is refused from its
    stat, before any open: a FIFO never blocks, /dev/zero is never read; O_NONBLOCK covers a swap between."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise Failure(UNREACHABLE, f"cannot read {what}: {error.strerror}")
    if not stat.S_ISREG(info.st_mode):
        notes = ([f"a symlink to {os.path.realpath(path)}"] if os.path.islink(path) else []) + \
                ([f"listed by {source}"] if source else [])
        where = f"{what} ({', '.join(notes)})" if notes else what
        raise Failure(BAD_INPUT, f"{where} is {file_kind(info.st_mode)}, not a regular file: archbuild reads "
                                 "no sdist from it")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise Failure(UNREACHABLE, f"cannot read {what}: {error.strerror}")
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        raise Failure(BAD_INPUT, f"{what} was replaced while it was opened")
    return fd, opened


def sdist_parts(filename):
    """(name, version, format) for every way to read FILE as NAME-VERSION.FORMAT."""
    lower = filename.lower()
    for extension in FORMATS + OTHER_FORMATS:
        if lower.endswith(extension.lower()):
            stem = filename[:-len(extension)]
            return [(stem[:i], stem[i + 1:], extension) for i, c in enumerate(stem) if c == "-"]
    return []


def sort_key(text):
    key = version_key(text)
    return (0, key) if key is not None and not isinstance(key, str) else (1, text)


def is_prerelease(text):
    key = version_key(text)
    return bool(getattr(key, "is_prerelease", False))


def find(client, config, name, version):
    """The sdist of NAME==VERSION, or with VERSION None the newest release's."""
    wanted = canonical(name)
    sources = []
    if not config.flag("no-index"):
        sources += [("index", url) for url in [config.get("index-url") or pip_default_index()]
                    + config.words("extra-index-url")]
    sources += [("find-links", location) for location in config.words("find-links")]
    errors, looked, versions, unreadable = [], [], set(), []
    for kind, location in sources:
        location = client.remember_credentials(location)
        if location.startswith(("http://", "https://")) and not client.is_secure(location):
            print(f"sdist_fetch: ignoring {location}: not https, not this machine, and not a trusted-host "
                  "(pip ignores it too)", file=sys.stderr)
            continue
        looked.append(location)
        try:
            if kind == "index":
                files = page_files(client, location.rstrip("/") + "/" + wanted + "/", location)
            elif location.startswith(("http://", "https://")):
                files = page_files(client, location, location)
            else:
                files = local_files(location)
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", None) or error
            errors.append(f"{without_credentials(location)}: {' '.join(str(reason).split())}")
            continue
        best = None
        if version is None:
            version = newest_release(files or [], wanted)
            if version is None:
                continue
        for entry in files or []:
            if "/" in entry["file"] or entry["file"].startswith("."):
                continue
            for part_name, part_version, extension in sdist_parts(entry["file"]):
                if canonical(part_name) != wanted:
                    continue
                versions.add(part_version)
                if not same_version(part_version, version):
                    continue
                if extension not in FORMATS:
                    unreadable.append(entry["file"])
                elif best is None or FORMATS.index(extension) < FORMATS.index(best[1]):
                    best = (entry, extension)
        if best:
            best[0]["version"] = version
            return best[0]
    if unreadable:
        raise Failure(NOT_FOUND, f"only {', '.join(unreadable)}: archbuild reads .tar.gz, .tgz, .tar and .zip sdists")
    if errors and not versions:
        raise Failure(UNREACHABLE, "cannot read the package index: " + "; ".join(errors))
    where = ", ".join(looked) or "no index (no-index is set and find-links is empty)"
    if versions:
        shown = sorted(versions, key=sort_key)
        raise Failure(NOT_FOUND, f"no sdist of {name}=={version} on {where}; versions with an sdist there: "
                                 + ", ".join(shown[-10:]))
    raise Failure(NOT_FOUND, f"no sdist of {name} on {where}")


def newest_release(files, wanted):
    """pip's pick among the readable sdists listed: the newest final release not yanked, else the newest
    pre-release."""
    releases = set()
    for entry in files:
        if entry["yanked"] is not None or "/" in entry["file"] or entry["file"].startswith("."):
            continue
        for part_name, part_version, extension in sdist_parts(entry["file"]):
            if canonical(part_name) == wanted and extension in FORMATS and version_key(part_version) is not None:
                releases.add(part_version)
    finals = [release for release in releases if not is_prerelease(release)]
    chosen = finals or list(releases)
    return max(chosen, key=sort_key) if chosen else None


def copy_capped(read, write, max_bytes, too_large):
    """Copies READ's bytes to WRITE; past MAX_BYTES raises TOO_LARGE() before writing them."""
    total = 0
    while True:
        chunk = read(1 << 16)
        if not chunk:
            return total
        total += len(chunk)
        if total > max_bytes:
            raise too_large()
        write(chunk)


def remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def download(client, entry, dest, max_bytes):
    """Downloads ENTRY into DEST: at most MAX_BYTES from any source, written as .partial-PID-FILE (removed
    on any error) and renamed to FILE once complete."""
    target = os.path.join(dest, entry["file"])
    partial = os.path.join(dest, f".partial-{os.getpid()}-{entry['file']}")
    url = client.rewriter.apply(entry["url"])
    shown = without_credentials(url)
    cap = f"the download cap of {human_bytes(max_bytes)}; nothing was kept"

    def too_large():
        return Failure(BAD_INPUT, f"{entry['file']} from {shown} is larger than {cap}")

    def cannot_write(error):
        return Failure(UNREACHABLE, f"cannot write {entry['file']} into {dest}: {error.strerror or error}")

    PARTIALS.add(partial)
    try:
        try:
            out = open(partial, "xb")
        except OSError as error:
            raise cannot_write(error)
        with out:
            def write(chunk):
                try:
                    out.write(chunk)
                except OSError as error:
                    raise cannot_write(error)

            if urllib.parse.urlsplit(url).scheme.lower() == "file":
                path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
                what = path
                fd, info = open_regular(path, what, without_credentials(entry["index"]))
                with os.fdopen(fd, "rb", buffering=0) as source:
                    if info.st_size > max_bytes:
                        raise Failure(BAD_INPUT, f"{what} is {info.st_size} bytes, larger than {cap}")
                    try:
                        copy_capped(source.read, write, max_bytes, too_large)
                    except OSError as error:
                        raise Failure(UNREACHABLE, f"cannot read {what}: {error.strerror or error}")
            else:
                try:
                    with client.open(url) as response:
                        declared = response.headers.get("Content-Length", "")
                        if declared.isdigit() and int(declared) > max_bytes:
                            raise Failure(BAD_INPUT, f"{entry['file']} from {shown} is {declared} bytes, "
                                                     f"larger than {cap}")
                        copy_capped(response.read, write, max_bytes, too_large)
                except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
                    reason = getattr(error, "reason", None) or error
                    raise Failure(UNREACHABLE, f"cannot download {shown}: {' '.join(str(reason).split())}")
        try:
            os.rename(partial, target)
        except OSError as error:
            raise cannot_write(error)
    finally:
        remove_quietly(partial)  # gone already once renamed
        PARTIALS.discard(partial)
    return target


def process_start(pid):
    """The start time of process PID (ticks since boot, from /proc), or None when it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": comm may hold spaces
        return None if fields[0] in ("Z", "X") else fields[19]
    except (OSError, ValueError, IndexError):
        return None


def process_alive(pid, start):
    if not isinstance(pid, int) or pid <= 1:
        return False
    if os.path.isdir("/proc/self"):
        now = process_start(pid)
        return now is not None and (start is None or now == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # EPERM: it exists
    return True


CLAIMED = []  # the fd whose flock marks --dest as in use, held until this process ends


def claim(dest):
    """Locks archbuild's .download-* dir for this process's lifetime and records its parent (archbuild),
    so that a later run can tell this dir's writers are gone."""
    try:
        fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise Failure(UNREACHABLE, f"cannot use --dest {dest}: {error.strerror}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise Failure(UNREACHABLE, f"--dest {dest} is in use by another sdist fetcher")
    CLAIMED.append(fd)
    parent = os.getppid()
    record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "parent": parent,
                         "parent_start": process_start(parent)})
    try:  # written whole, then renamed: a reader sees all of it or nothing
        out = os.open(OWNER_FILE + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o600, dir_fd=fd)
        with os.fdopen(out, "w") as handle:
            handle.write(record + "\n")
        os.rename(OWNER_FILE + ".tmp", OWNER_FILE, src_dir_fd=fd, dst_dir_fd=fd)
    except OSError:
        pass  # without a record a later run waits UNKNOWN_WRITER_AGE before removing the dir


def writer_gone(fd, info):
    """Whether the .download-* dir open as FD (locked by us, so no fetcher is in it) is left over: its
    record names an archbuild that is no longer running, or, with no record, it is old."""
    age = time.time() - info.st_mtime  # set by mkdtemp, and by every entry made or renamed in it
    try:
        handle = os.open(OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        with os.fdopen(handle, "rb") as owner:
            if not stat.S_ISREG(os.fstat(owner.fileno()).st_mode):
                return age > UNKNOWN_WRITER_AGE
            record = json.loads(owner.read(4096))
        parent, start, host = record["parent"], record.get("parent_start"), record.get("host")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        # no record: archbuild made it a moment ago and its fetcher has not started yet, or an older
        # archbuild's fetcher wrote none; a download ends within archbuild's 30-minute limit
        return age > UNKNOWN_WRITER_AGE
    if host not in (None, socket.gethostname()):
        return age > UNKNOWN_WRITER_AGE  # a shared cache: another machine's pid means nothing here
    # the fetcher is gone (unlocked); archbuild still running may be hashing or moving the download
    return not process_alive(parent, start) or age > UNKNOWN_WRITER_AGE


def remove_stale_downloads(dest):
    """Removes the .download-* siblings of DEST (archbuild's <cache>/sdists/NAME) that this user owns and
    whose writers are gone. Another fetch of the same project may be running: its dir stays."""
    parent, own = os.path.split(os.path.abspath(dest))
    if own.startswith(DOWNLOAD_PREFIX):
        remove_stale_in(parent, own)


def sweep(sdists, dry_run):
    """`cache gc`: the stale .download-* dirs of every project under SDISTS (<cache>/sdists)."""
    if os.path.islink(sdists):
        return  # never followed out of the cache
    try:
        projects = sorted(os.listdir(sdists))
    except OSError:
        return
    for name in projects:
        path = os.path.join(sdists, name)
        if os.path.isdir(path) and not os.path.islink(path):
            remove_stale_in(path, None, dry_run)


def remove_stale_in(parent, own, dry_run=False):
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in sorted(names):
        if not name.startswith(DOWNLOAD_PREFIX) or name == own or "\n" in name:
            continue  # a newline would forge a line of what archbuild reads back
        path = os.path.join(parent, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a fetcher is writing it
            now = os.lstat(path)  # still the dir we locked (not removed and made again meanwhile)
            if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or not writer_gone(fd, now):
                continue
            if dry_run:
                print(f"sdist_fetch: would remove {path}, a download left over by an archbuild that is gone",
                      file=sys.stderr)
                continue
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.lexists(path):
                print(f"sdist_fetch: removed {path}, a download left over by an archbuild that is gone",
                      file=sys.stderr)
        except OSError:
            continue
        finally:
            os.close(fd)


class Interrupted(BaseException):
    def __init__(self, signo):
        super().__init__(signo)
        self.signo = signo


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def on_stop_signal(signo, frame):
    for other in STOP_SIGNALS:  # the cleanup that follows is not interrupted again
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signo)


def clean_up_after_interrupt(dest):
    """Removes what this process wrote into DEST, and DEST itself when nothing else is left in it (archbuild,
    if still running, removes it anyway; if it is gone, nothing is left behind)."""
    for partial in list(PARTIALS):
        remove_quietly(partial)
    if dest and CLAIMED:
        try:
            if set(os.listdir(dest)) <= {OWNER_FILE, OWNER_FILE + ".tmp"}:
                for name in (OWNER_FILE, OWNER_FILE + ".tmp"):
                    remove_quietly(os.path.join(dest, name))
                os.rmdir(dest)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name")
    parser.add_argument("--sweep", metavar="SDISTS", help="remove the stale .download-* dirs under SDISTS, then exit")
    parser.add_argument("--dry-run", action="store_true", help="with --sweep: say what would go")
    parser.add_argument("--version")
    parser.add_argument("--newest", action="store_true")
    parser.add_argument("--dest")
    parser.add_argument("--max-bytes", type=int, default=2 << 30)
    parser.add_argument("--rewrite", action="append", default=[])
    args = parser.parse_args()
    if args.sweep:
        sweep(args.sweep, args.dry_run)
        return 0
    if not args.name:
        parser.error("give --name NAME")
    if args.newest == bool(args.version) or (args.version and not args.dest):
        parser.error("give --version VERSION --dest DIR, or --newest")
    dest = None if args.newest else args.dest
    try:
        for signo in STOP_SIGNALS:
            signal.signal(signo, on_stop_signal)
        if dest and os.path.basename(os.path.abspath(dest)).startswith(DOWNLOAD_PREFIX):
            claim(dest)
            remove_stale_downloads(dest)
        config = Config()
        client = Client(config, Rewriter(args.rewrite))
        entry = find(client, config, args.name, None if args.newest else args.version)
        if not args.newest:
            download(client, entry, dest, args.max_bytes)
        print(json.dumps({"file": entry["file"], "url": without_credentials(entry["url"]),
                          "index": without_credentials(entry["index"]), "index_sha256": entry["sha256"],
                          "yanked": entry["yanked"], "version": entry.get("version")}), flush=True)
        for signo in STOP_SIGNALS:  # done: a signal from now on ends this process as usual
            signal.signal(signo, signal.SIG_DFL)
        return 0
    except Interrupted as interrupted:
        clean_up_after_interrupt(dest)
        signal.signal(interrupted.signo, signal.SIG_DFL)  # end by the signal, as if never caught
        os.kill(os.getpid(), interrupted.signo)
        return 128 + interrupted.signo
    except Failure as failure:
        print(failure, file=sys.stderr)
        return failure.code
    except (ssl.SSLError, ValueError, http.client.HTTPException) as error:
        print(f"cannot read the package index: {' '.join(str(error).split())}", file=sys.stderr)
        return UNREACHABLE
    finally:
        for partial in list(PARTIALS):
            remove_quietly(partial)


if __name__ == "__main__":
    sys.exit(main())
