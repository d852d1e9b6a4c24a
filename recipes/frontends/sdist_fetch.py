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
before pre-releases, yanked files skipped, as pip chooses). Exit 2: no such
sdist (or too large); 3: no index could be read, or the download failed.
"""
import argparse
import ast
import base64
import html.parser
import ipaddress
import json
import netrc
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

NOT_FOUND = 2
UNREACHABLE = 3
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
            True: urllib.request.build_opener(proxies, urllib.request.HTTPSHandler(context=verified)),
            False: urllib.request.build_opener(proxies, urllib.request.HTTPSHandler(context=unverified)),
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


def candidate(filename, url, hashes, yanked, source):
    return {"file": filename, "url": url, "sha256": (hashes or {}).get("sha256"), "yanked": yanked, "index": source}


def page_files(client, page_url, source):
    """The files a PEP 503/691 project page (or a find-links page) lists; None when it does not exist."""
    page_url = client.rewriter.apply(page_url)
    if page_url.startswith("file:"):  # a static index on disk (like archbuild's own <cache>/simple)
        path = urllib.parse.unquote(urllib.parse.urlsplit(page_url).path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            body = handle.read(64 << 20)
        final_url, content_type = "file://" + path, "text/html"
    else:
        try:
            with client.open(page_url, accept=f"{SIMPLE_JSON}, text/html;q=0.1") as response:
                body = response.read(64 << 20)
                final_url = response.geturl()
                content_type = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise
    files = []
    if content_type.startswith(SIMPLE_JSON):
        for entry in json.loads(body).get("files", []):
            url = urllib.parse.urljoin(final_url, entry.get("url", ""))
            yanked = entry.get("yanked") or None
            files.append(candidate(entry.get("filename") or file_name(url), url, entry.get("hashes"),
                                   yanked if yanked is not True else "", source))
        return files
    parser = Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    base = urllib.parse.urljoin(final_url, parser.base) if parser.base else final_url
    for href, attributes in parser.links:
        url = urllib.parse.urljoin(base, href)
        hashes = {}
        fragment = urllib.parse.urlsplit(url).fragment
        name, _, value = fragment.partition("=")
        if name and value:
            hashes[name] = value
        # data-yanked="reason", or a bare data-yanked (html.parser gives None): yanked either way
        yanked = (attributes["data-yanked"] or "") if "data-yanked" in attributes else None
        files.append(candidate(file_name(url), url.split("#", 1)[0], hashes, yanked, source))
    return files


def local_files(location):
    path = urllib.parse.urlsplit(location).path if location.startswith("file:") else location
    path = os.path.expanduser(path)
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        return [candidate(n, "file://" + os.path.abspath(os.path.join(path, n)), {}, None, location) for n in names]
    if os.path.isfile(path):
        return [candidate(os.path.basename(path), "file://" + os.path.abspath(path), {}, None, location)]
    return []


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
        except (urllib.error.URLError, OSError, ValueError) as error:
            errors.append(f"{location}: {getattr(error, 'reason', None) or error}")
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


def download(client, entry, dest, max_bytes):
    target = os.path.join(dest, entry["file"])
    url = client.rewriter.apply(entry["url"])
    if url.startswith("file://"):
        source = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
        if os.path.getsize(source) > max_bytes:
            raise Failure(NOT_FOUND, f"{entry['file']} is larger than {max_bytes} bytes")
        shutil.copyfile(source, target)
        return target
    try:
        with client.open(url) as response, open(target, "xb") as out:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise Failure(NOT_FOUND, f"{entry['file']} is {declared} bytes, more than {max_bytes}")
            total = 0
            while True:
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise Failure(NOT_FOUND, f"{entry['file']} is larger than {max_bytes} bytes")
                out.write(chunk)
    except (urllib.error.URLError, OSError) as error:
        raise Failure(UNREACHABLE, f"cannot download {without_credentials(url)}: "
                                   f"{getattr(error, 'reason', None) or error}")
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--version")
    parser.add_argument("--newest", action="store_true")
    parser.add_argument("--dest")
    parser.add_argument("--max-bytes", type=int, default=2 << 30)
    parser.add_argument("--rewrite", action="append", default=[])
    args = parser.parse_args()
    if args.newest == bool(args.version) or (args.version and not args.dest):
        parser.error("give --version VERSION --dest DIR, or --newest")
    try:
        config = Config()
        client = Client(config, Rewriter(args.rewrite))
        entry = find(client, config, args.name, None if args.newest else args.version)
        if not args.newest:
            download(client, entry, args.dest, args.max_bytes)
    except Failure as failure:
        print(failure, file=sys.stderr)
        return failure.code
    except (ssl.SSLError, ValueError) as error:
        print(f"cannot read the package index: {error}", file=sys.stderr)
        return UNREACHABLE
    print(json.dumps({"file": entry["file"], "url": without_credentials(entry["url"]),
                      "index": without_credentials(entry["index"]), "index_sha256": entry["sha256"],
                      "yanked": entry["yanked"], "version": entry.get("version")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
