"""Hostile input: zips whose declared sizes lie or explode, and cache index
pages that are not what archbuild writes. archbuild runs under an address-space
limit and a timeout, with its own peak RSS measured: a size field is not data,
and a page is read with bounded, non-recursive code."""
import base64
import hashlib
import json
import os
import pathlib
import resource
import struct
import subprocess
import tempfile
import time
import unittest
import zlib

from harness import BIN, scratch_dir
from waiting import scaled

MiB = 1 << 20
GiB = 1 << 30
# A normal inspect of a small wheel runs under 64 MiB of address space, the
# 530 MB torch wheel under 192 MiB; each hostile size below is larger than this.
ADDRESS_SPACE = 512 * MiB
PEAK_RSS = 160 * MiB


class Bounded:
    """One run of archbuild: exit code, output, peak RSS (bytes) and seconds."""

    def __init__(self, *args, timeout=120):
        timeout = scaled(timeout)  # a busy machine's allowance; what never ends runs past any of them

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

        env = dict(os.environ, NO_COLOR="1")
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.monotonic()
            process = subprocess.Popen([BIN, *args], stdout=out, stderr=err, env=env, preexec_fn=limit)
            while True:
                # wait4 gives this child's own peak RSS, not the test process's
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - start > timeout:
                    process.kill()
                    os.wait4(process.pid, 0)
                    process.returncode = -9
                    raise AssertionError(f"archbuild {' '.join(args)} ran past {timeout} s")
                time.sleep(0.02)
            self.seconds = time.monotonic() - start
            self.returncode = process.returncode = os.waitstatus_to_exitcode(status)
            self.peak_rss = usage.ru_maxrss * 1024
            out.seek(0)
            err.seek(0)
            self.stdout = out.read().decode(errors="replace")
            self.stderr = err.read().decode(errors="replace")

    def __str__(self):
        return (f"exit {self.returncode}, {self.seconds:.1f} s, peak RSS {self.peak_rss >> 20} MiB\n"
                f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}")


# --- zips written by hand, so that every size field can lie -------------------

def member(name, data, declared=None, crc=None, zip64=False):
    """A deflated member; `declared` replaces the uncompressed size its entries give."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = compressor.compress(data) + compressor.flush()
    return {"name": name, "raw": raw, "crc": zlib.crc32(data) if crc is None else crc,
            "size": len(data) if declared is None else declared, "zip64": zip64}


def zip_bytes(members):
    out, central = bytearray(), bytearray()
    for m in members:
        name, raw, offset = m["name"].encode(), m["raw"], len(out)
        if m["zip64"]:
            local_extra = struct.pack("<HHQQ", 1, 16, m["size"], len(raw))
            central_extra = struct.pack("<HHQQQ", 1, 24, m["size"], len(raw), offset)
            size32 = comp32 = offset32 = 0xFFFFFFFF
            version = 45
        else:
            local_extra = central_extra = b""
            size32, comp32, offset32, version = m["size"], len(raw), offset, 20
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, version, 0, 8, 0, 0x21, m["crc"], comp32, size32,
                           len(name), len(local_extra)) + name + local_extra + raw
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, version, 0, 8, 0, 0x21, m["crc"], comp32,
                               size32, len(name), len(central_extra), 0, 0, 0, 0o100644 << 16,
                               offset32) + name + central_extra
    directory_at = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                                 directory_at, 0)
    return bytes(out)


def wheel_with_record(members, dist_info="hostile-1.0.dist-info", digests=None):
    """Members plus a RECORD listing them (sha256 and size as `digests` or the members' data say)."""
    lines = [f"{name},sha256={digest},{size}" for name, (digest, size) in digests.items()]
    lines.append(f"{dist_info}/RECORD,,")
    return zip_bytes(members + [member(f"{dist_info}/RECORD", ("\n".join(lines) + "\n").encode())])


def record_digest(sha256):
    return base64.urlsafe_b64encode(sha256.digest()).rstrip(b"=").decode()


def fatbin(*entries):
    """A fatbin container: (kind, sm) entries, kind 2 SASS, 1 PTX, each with a 64-byte payload."""
    body = b""
    for kind, sm in entries:
        body += struct.pack("<HHIQIIIIQQQQ", kind, 0x0101, 64, 64, 0, 0, 0, sm, 0, 0, 0, 0) + bytes(64)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf_pieces(size, fatbin_at, fatbin_bytes):
    """A `size`-byte ELF shared object, zeros but for .nv_fatbin at `fatbin_at` and the
    section table at the very end: bytes pieces and ints (runs of zeros)."""
    names = b"\0.nv_fatbin\0.shstrtab\0"
    table_at = size - 3 * 64
    names_at = table_at - len(names)
    header = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0, 0, table_at, 0, 64,
                         0, 0, 64, 3, 2)
    section = lambda name, kind, offset, length: struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, length, 0, 0,
                                                              1, 0)
    table = bytes(64) + section(1, 1, fatbin_at, len(fatbin_bytes)) + section(12, 3, names_at, len(names))
    return [header, fatbin_at - len(header), fatbin_bytes, names_at - fatbin_at - len(fatbin_bytes), names, table]


def deflate_pieces(name, pieces, want_sha256=False):
    """A member from pieces without holding its data: after a full flush, a block of
    zeros compresses to the same bytes every time, so it is compressed once."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw, crc, size, sha = [], 0, 0, hashlib.sha256()
    zeros = bytes(MiB)
    block = None
    for piece in pieces:
        if isinstance(piece, bytes):
            raw.append(compressor.compress(piece))
            crc, size = zlib.crc32(piece, crc), size + len(piece)
            if want_sha256:
                sha.update(piece)
            continue
        raw.append(compressor.flush(zlib.Z_FULL_FLUSH))
        full, rest = divmod(piece, MiB)
        if full and block is None:
            block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
            full -= 1
            raw.append(block)
            crc = zlib.crc32(zeros, crc)
            if want_sha256:
                sha.update(zeros)
        for _ in range(full):
            raw.append(block)
            crc = zlib.crc32(zeros, crc)
            if want_sha256:
                sha.update(zeros)
        raw.append(compressor.compress(bytes(rest)))
        crc = zlib.crc32(bytes(rest), crc)
        if want_sha256:
            sha.update(bytes(rest))
        size += piece
    raw.append(compressor.flush())
    return {"name": name, "raw": b"".join(raw), "crc": crc, "size": size, "zip64": False}, sha


SM90_FATBIN = fatbin((2, 90), (1, 90))


class HostileWheels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.good = member("hostile/good.fatbin", SM90_FATBIN)

    def write(self, name, data):
        path = self.dir / name
        path.write_bytes(data)
        return path

    def inspect_json(self, path):
        run = Bounded("inspect", str(path), "--all-files", "--json")
        self.assertLess(run.peak_rss, PEAK_RSS, run)
        try:
            return run, {f["path"].split("!", 1)[1]: f for f in json.loads(run.stdout)["files"]}
        except json.JSONDecodeError as error:
            raise AssertionError(f"--json printed no JSON ({error}): {run}")

    def assert_listed_good(self, files, run):
        self.assertEqual(files["hostile/good.fatbin"]["sass"], {"sm_90": 1}, run)
        self.assertEqual(files["hostile/good.fatbin"]["ptx"], {"compute_90": 1}, run)

    def test_zip64_member_declaring_2_to_the_62_bytes(self):
        elf = b"\x7fELF\x02\x01\x01" + bytes(57)
        path = self.write("zip64-1.0-py3-none-any.whl", zip_bytes(
            [member("hostile/huge.so", elf, declared=1 << 62, zip64=True), self.good]))
        run, files = self.inspect_json(path)
        self.assertEqual(run.returncode, 2, run)
        self.assertIn("declares 4611686018427387904 bytes", files["hostile/huge.so"]["error"])
        self.assert_listed_good(files, run)  # the members after it are still read
        text = Bounded("inspect", str(path))
        self.assertEqual(text.returncode, 2, text)
        self.assertIn(f"{path}!hostile/huge.so: cannot read member: declares", text.stderr)
        self.assertNotIn("internal error", text.stderr)

    def test_small_wheel_declaring_3_gib(self):
        elf = b"\x7fELF\x02\x01\x01" + bytes(57) + b"code" * 100
        data = zip_bytes([member("hostile/lib3g.so", elf, declared=3 * GiB), self.good])
        self.assertLess(len(data), 2000)
        path = self.write("small-1.0-py3-none-any.whl", data)
        run, files = self.inspect_json(path)
        self.assertEqual(run.returncode, 2, run)
        self.assertIn("declares 3221225472 bytes from", files["hostile/lib3g.so"]["error"])
        self.assert_listed_good(files, run)

    def test_declared_sizes_that_lie_within_what_deflate_could_hold(self):
        noise = bytes((i * 7919 + (i >> 8) * 31) % 251 for i in range(200_000))
        # section table declared at 150,000 of 180,000: the data ends at 64 + 100,000 first
        longer = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0, 0, 150_000, 0, 64,
                             0, 0, 64, 2, 1) + noise[:100_000]
        # declares 4 KiB and holds 200 KiB: its section table ends exactly at the declared end
        shorter = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0, 0, 4096 - 128, 0,
                              64, 0, 0, 64, 2, 0) + noise
        path = self.write("lying-1.0-py3-none-any.whl", zip_bytes([
            member("hostile/longer.so", longer, declared=180_000),
            member("hostile/shorter.so", shorter, declared=4096),
            member("hostile/badcrc.fatbin", SM90_FATBIN, crc=0x1234),
            self.good]))
        run, files = self.inspect_json(path)
        self.assertEqual(run.returncode, 2, run)
        self.assertIn("its data ends after 100064 bytes of the 180000 bytes its zip entry declares",
                      files["hostile/longer.so"]["error"])
        self.assertIn("holds more than the 4096 bytes its zip entry declares", files["hostile/shorter.so"]["error"])
        self.assertIn("CRC error", files["hostile/badcrc.fatbin"]["error"])
        self.assert_listed_good(files, run)
        self.assertEqual(json.loads(run.stdout)["summary"]["unreadable"], 3)

    def test_validate_names_the_member_whose_size_lies(self):
        elf = b"\x7fELF\x02\x01\x01" + bytes(57) + b"code" * 100
        digest = record_digest(hashlib.sha256(elf))
        path = self.write("lying-1.0-py3-none-linux_x86_64.whl", wheel_with_record(
            [member("hostile/lib3g.so", elf, declared=3 * GiB)],
            digests={"hostile/lib3g.so": (digest, 3 * GiB)}))
        run = Bounded("validate", str(path), "--arch", "9.0")
        self.assertEqual(run.returncode, 2, run)
        self.assertIn("wheel member hostile/lib3g.so: declares 3221225472 bytes", run.stderr)
        self.assertLess(run.peak_rss, PEAK_RSS, run)

    def test_deflate_bomb_is_streamed_in_bounded_memory(self):
        # 1 GiB of (nearly all) zeros in about 1 MB: a real ELF whose section
        # table lies at its end and whose fatbin lies in its middle, so the
        # whole member is read, part of it twice, never held.
        size, at = GiB, GiB // 2
        bomb, sha = deflate_pieces("hostile/bomb.so", elf_pieces(size, at, SM90_FATBIN), want_sha256=True)
        self.assertLess(len(bomb["raw"]), 2 * MiB)
        good_sha = hashlib.sha256(SM90_FATBIN)
        path = self.write("bomb-1.0-py3-none-linux_x86_64.whl", wheel_with_record(
            [bomb, self.good], digests={"hostile/bomb.so": (record_digest(sha), size),
                                        "hostile/good.fatbin": (record_digest(good_sha), len(SM90_FATBIN))}))
        run, files = self.inspect_json(path)
        self.assertEqual(run.returncode, 0, run)
        bomb_file = files["hostile/bomb.so"]
        self.assertEqual(bomb_file["format"], "shared object", run)
        self.assertEqual((bomb_file["sass"], bomb_file["ptx"]), ({"sm_90": 1}, {"compute_90": 1}), run)
        self.assertEqual(bomb_file["entries"][0]["offset"], at + 16)
        self.assert_listed_good(files, run)
        # validate hashes every member against RECORD: streamed too
        validate = Bounded("validate", str(path), "--arch", "9.0")
        self.assertLess(validate.peak_rss, PEAK_RSS, validate)
        self.assertEqual(validate.returncode, 0, validate)
        self.assertIn("ok   RECORD: 2 files hashed", validate.stdout, validate)


class HostileIndexPages(unittest.TestCase):
    """`cache verify` on pages under <cache>/simple/<project>/index.html."""

    def setUp(self):
        self.cache = scratch_dir(self)
        (self.cache / "simple" / "demo").mkdir(parents=True)
        (self.cache / "wheels").mkdir()
        self.page = self.cache / "simple" / "demo" / "index.html"

    def verify(self, timeout=60):
        run = Bounded("cache", "verify", "--cache-dir", str(self.cache), timeout=timeout)
        self.assertGreaterEqual(run.returncode, 0, f"killed by a signal: {run}")
        self.assertNotIn("internal error", run.stderr, run)
        return run

    def link(self, href, digest="0" * 64):
        return f'<a href="{href}#sha256={digest}">wheel</a><br>\n'

    def test_well_formed_page_still_verifies(self):
        wheel = self.cache / "wheels" / "demo-1.0-py3-none-any.whl"
        wheel.write_bytes(b"not really a wheel")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        self.page.write_text(self.link("../../wheels/demo-1.0-py3-none-any.whl", digest))
        # read whole and found consistent with the file; what remains is that no store entry publishes it
        run = self.verify()
        self.assertEqual(run.returncode, 1, run)
        self.assertEqual([line.strip() for line in run.stdout.splitlines() if "simple/demo" in line],
                         ["simple/demo/index.html links demo-1.0-py3-none-any.whl, which no store entry publishes"])
        self.page.write_text(self.link("../../wheels/demo-1.0-py3-none-any.whl"))
        run = self.verify()
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html: sha256 of demo-1.0-py3-none-any.whl differs from the link's", run.stdout)

    def test_href_of_40000_characters(self):
        for length in (20_000, 40_000, 1_000_000):
            with self.subTest(length=length):
                self.page.write_text(self.link("a" * length))
                run = self.verify()
                self.assertEqual(run.returncode, 1, run)
                self.assertIn("simple/demo/index.html links a missing wheel", run.stdout)
                self.assertLess(len(run.stdout), 2000)  # the href is shortened in the message

    def test_random_bytes(self):
        noise = os.urandom(200_000)
        # and the same with links whose value runs to the end of the page
        for page in (noise, b'<a href="' + noise, (b'href="' + os.urandom(997)) * 200 + b'href="' + b"a" * 200_000):
            self.page.write_bytes(page)
            run = self.verify()
            self.assertIn(run.returncode, (0, 1), run)

    def test_links_to_devices_fifos_and_outside_the_cache(self):
        os.symlink("/dev/zero", self.cache / "wheels" / "zero.whl")
        os.mkfifo(self.cache / "wheels" / "fifo.whl")
        self.page.write_text(self.link("/dev/zero") + self.link("../../../../../../../../dev/zero") +
                             self.link("../../wheels/zero.whl") + self.link("../../wheels/fifo.whl"))
        run = self.verify(timeout=60)
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html: the link /dev/zero is not relative", run.stdout)
        self.assertIn("points outside the cache", run.stdout)
        self.assertIn("zero.whl, which is a character device, not a regular file", run.stdout)
        self.assertIn("fifo.whl, which is a FIFO, not a regular file", run.stdout)

    def test_page_that_is_a_fifo_a_device_or_too_large(self):
        os.mkfifo(self.page)
        run = self.verify(timeout=60)
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html is a FIFO, not a regular file", run.stdout)
        self.page.unlink()
        os.symlink("/dev/zero", self.page)
        run = self.verify(timeout=60)
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html is a character device, not a regular file", run.stdout)
        self.page.unlink()
        with open(self.page, "wb") as page:
            page.truncate(64 * MiB)  # sparse: costs no disk
        run = self.verify()
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html is larger than 16 MiB", run.stdout)
        self.assertLess(run.peak_rss, PEAK_RSS, run)

    def test_malformed_percent_escapes(self):
        self.page.write_text(self.link("../../wheels/x%zz.whl") + self.link("../../wheels/x%4") +
                             self.link("../../wheels/x%00.whl"))
        run = self.verify()
        self.assertEqual(run.returncode, 1, run)
        self.assertEqual(run.stdout.count("simple/demo/index.html: malformed percent-escape in the link"), 3, run)

    def test_many_links_to_one_wheel_hash_it_once(self):
        wheel = self.cache / "wheels" / "big-1.0-py3-none-any.whl"
        with open(wheel, "wb") as out:
            out.truncate(64 * MiB)
        self.page.write_text(self.link("../../wheels/big-1.0-py3-none-any.whl") * 100_000)  # 10 MB of page
        run = self.verify()
        self.assertEqual(run.returncode, 1, run)
        self.assertIn("simple/demo/index.html: 99980 more problems", run.stdout)
        # hashed once: well under a second here; hashed per link, 100,000 x 64 MiB would take hours
        self.assertLess(run.seconds, scaled(60), run)


if __name__ == "__main__":
    unittest.main()
