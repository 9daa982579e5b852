"""An HTTP/1.1 origin for downloads and resumes: deterministic files with validators, `Range` and
`If-Range`, and connections it breaks off at chosen offsets.

Every path serves a file; the query says which file and how the origin behaves, so one origin
serves every case and a URL names its case completely (the last path segment can be any file name):

    /file/big.bin?size=6291456&break=1048576,4194304

    size=N              the file's length (default 1 MiB); its bytes are file_bytes(N, seed) (version 1)
    seed=S              which content (default 1); version 2 of a file is seed S + VERSION_STEP
    break=A,B,...       absolute body offsets: an answer whose body would cross the next offset
                        not yet broken at sends the bytes up to it and closes the connection (FIN,
                        after the bytes are written); each offset breaks once, so a file breaking at
                        A and B needs three attempts
    reset=1             break with a TCP reset (SO_LINGER 0) instead of a FIN, once the bytes left
    etag=strong|weak|none          default strong: "s<seed>-v<version>-<size>"; weak: W/"..."
    last-modified=old|recent|none  default old (2020, 2021 for version 2); recent: a few seconds
                        before the file was first asked for (less than 60 s old during a test)
    no-validators=1     etag=none and last-modified=none
    accept-ranges=0     no `Accept-Ranges: bytes` (sent by default, even with ignore-range)
    ignore-range=1      Range is ignored: always 200 with the whole file
    answer-416=1        any request with a Range gets 416 (`Content-Range: bytes */SIZE`)
    change-after=N      the first N GETs of this URL get version 1, later ones version 2 (other
                        content, other ETag and Last-Modified): If-Range with the old validator
                        then gets a 200 with the whole of version 2
    status-503-first=K  the first K GETs of this URL get 503 with `Retry-After` (retry-after=S, 1)
    status=CODE         every GET gets that status with a short body (404 for `http-error`)
    trickle=RATE        the body goes out at about RATE bytes a second (for suspend, cancel, kill)
    disposition=NAME    `Content-Disposition: attachment; filename="NAME"`

`Range: bytes=N-`, `bytes=N-M` and `bytes=-N` are honoured with 206 and `Content-Range`; a range
that starts at or after the end gets 416; several ranges or a malformed one get the whole file
(200). `If-Range` matches a strong ETag (strong comparison: a weak one never matches) or the exact
`Last-Modified` date; when it does not match, the answer is 200 with the whole current version.

State (GET counts, offsets already broken at) is kept per request target (path and query), so a
test gives each case its own URL, or its own origin. `requests` records every request received
(method, target, `range`, `if_range`, headers) and how it was answered (status, version, the body
range and the bytes actually sent, whether the origin broke the connection).

`start_range_origin(tls=context)` serves over HTTPS; `make_tls_files(directory)` makes a
throwaway CA and a server certificate for 127.0.0.1 and localhost signed by it (openssl CLI).

Run this file directly to serve on a port by hand: `python3 Tests/integration/range_origin.py 8099`;
a second argument is the address to bind (`… 8099 10.1.2.1`: reachable from another network
namespace, as test_reachability.py runs it).
"""

from __future__ import annotations

import email.utils
import fcntl
import functools
import hashlib
import random
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from origin import HeaderLookup

# --------------------------------------------------------------------------------------------
# Content: a file of (size, seed) is 64 KiB blocks; block i is a random block of the seed whose
# first 16 bytes are replaced by a hash of (seed, i), so no two blocks of any file are equal and
# bytes from a wrong offset or another version never pass for the right ones.

BLOCK_SIZE = 64 * 1024
WRITE_SLICE = 256 * 1024
#: Version 2 of a file of seed S is the content of seed S + VERSION_STEP.
VERSION_STEP = 1_000_000


@functools.lru_cache(maxsize=32)
def _base_block(seed: int) -> bytes:
    return random.Random(seed).randbytes(BLOCK_SIZE)


def _block(seed: int, index: int) -> bytes:
    tag = hashlib.blake2b(b"%d:%d" % (seed, index), digest_size=16).digest()
    return tag + _base_block(seed)[16:]


def iter_file(size: int, seed: int = 1, start: int = 0, end: int | None = None,
              slice_size: int = WRITE_SLICE):
    """Bytes [start, end) of the file (size, seed) as successive pieces of at most slice_size."""
    end = size if end is None else min(end, size)
    offset = start
    out = bytearray()
    while offset < end:
        index, within = divmod(offset, BLOCK_SIZE)
        take = min(BLOCK_SIZE - within, end - offset, slice_size - len(out))
        out += _block(seed, index)[within:within + take]
        offset += take
        if len(out) >= slice_size:
            yield bytes(out)
            out.clear()
    if out:
        yield bytes(out)


def file_bytes(size: int, seed: int = 1, start: int = 0, end: int | None = None) -> bytes:
    """The file (size, seed), or bytes [start, end) of it, as bytes (meant for a few MiB)."""
    return b"".join(iter_file(size, seed, start, end))


@functools.lru_cache(maxsize=64)
def file_sha256(size: int, seed: int = 1) -> str:
    """Hex SHA-256 of the file (size, seed)."""
    h = hashlib.sha256()
    for part in iter_file(size, seed, slice_size=4 * 1024 * 1024):
        h.update(part)
    return h.hexdigest()


def version_seed(seed: int, version: int) -> int:
    """The content seed of version `version` (1 or 2) of the file of seed `seed`."""
    return seed + (version - 1) * VERSION_STEP


OLD_DATES = {1: "Wed, 01 Jan 2020 00:00:00 GMT", 2: "Fri, 01 Jan 2021 00:00:00 GMT"}


def strong_etag(size: int, seed: int = 1, version: int = 1) -> str:
    return f'"s{seed}-v{version}-{size}"'


# --------------------------------------------------------------------------------------------
# What the origin records

_REASONS = {200: "OK", 206: "Partial Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
            410: "Gone", 416: "Range Not Satisfiable", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass
class RecordedRequest(HeaderLookup):
    """One request as received, and how it was answered."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    at: float                                  # time.monotonic() when its head was read
    status: int | None = None                  # the status answered
    version: int | None = None                 # which version of the file it got
    body_start: int | None = None              # the body range announced: [body_start, body_end)
    body_end: int | None = None
    sent: int = 0                              # body bytes written
    broke: bool = False                        # the origin broke the connection off mid-body

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(urlsplit(self.target).query).items()}

    @property
    def range(self) -> str | None:
        return self.header("range")

    @property
    def if_range(self) -> str | None:
        return self.header("if-range")

    def __repr__(self) -> str:
        return (f"<{self.method} {self.target} range={self.range!r} if-range={self.if_range!r} → "
                f"{self.status} v{self.version} [{self.body_start}, {self.body_end}) sent {self.sent}"
                f"{' broke' if self.broke else ''}>")


@dataclass
class _Resource:
    """Per-target state: GETs counted, offsets already broken at, when it was first asked for."""

    gets: int = 0
    broken: set[int] = field(default_factory=set)
    created: float = field(default_factory=time.time)


class _Spec:
    """The query of a request, parsed: what file and which behaviours."""

    def __init__(self, query: dict[str, str]):
        def flag(name: str) -> bool:
            return query.get(name, "0") not in ("", "0", "no", "false")

        self.size = int(query.get("size", str(1024 * 1024)))
        self.seed = int(query.get("seed", "1"))
        self.breaks = sorted(int(b) for b in query.get("break", "").split(",") if b.strip())
        self.reset = flag("reset")
        self.etag = query.get("etag", "strong")
        self.last_modified = query.get("last-modified", "old")
        if flag("no-validators"):
            self.etag = self.last_modified = "none"
        self.accept_ranges = query.get("accept-ranges", "1") != "0"
        self.ignore_range = flag("ignore-range")
        self.answer_416 = flag("answer-416")
        self.change_after = int(query["change-after"]) if "change-after" in query else None
        self.first_503 = int(query.get("status-503-first", "0"))
        self.retry_after = query.get("retry-after", "1")
        self.status = int(query["status"]) if "status" in query else None
        self.trickle = int(query["trickle"]) if "trickle" in query else None
        self.disposition = query.get("disposition")
        if self.size < 0 or self.etag not in ("strong", "weak", "none") \
                or self.last_modified not in ("old", "recent", "none"):
            raise ValueError("bad query")


def _parse_range(value: str, size: int) -> tuple[int, int] | None | str:
    """A single byte range → (start, end exclusive); "416" when unsatisfiable; None to ignore it."""
    value = value.strip()
    if not value.lower().startswith("bytes=") or "," in value:
        return None
    first, sep, last = value[6:].strip().partition("-")
    if not sep:
        return None
    try:
        if first == "":
            suffix = int(last)
            if suffix <= 0:
                return "416"
            return max(0, size - suffix), size
        start = int(first)
        end = size if last == "" else min(int(last) + 1, size)
    except ValueError:
        return None
    if start >= size:
        return "416"
    if end <= start:
        return None
    return start, end


# --------------------------------------------------------------------------------------------
# The server


class _ClientGone(Exception):
    pass


class _Handler(socketserver.BaseRequestHandler):
    server: "_RangeTCPServer"

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(300)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(sock, ssl.SSLSocket):
            try:
                sock.do_handshake()
            except (ssl.SSLError, OSError):
                return
        self.sock = sock
        self.rfile = sock.makefile("rb")
        origin = self.server.origin
        origin._connection_opened(sock)
        try:
            while not origin._stopping.is_set():
                rec = self._read_request()
                if rec is None:
                    return
                origin._record(rec)
                close = "close" in (rec.header("connection") or "").lower()
                if not self._answer(rec) or close:
                    return
        except (_ClientGone, OSError, ValueError):
            return
        finally:
            origin._connection_closed(sock)
            try:
                self.rfile.close()
            except OSError:
                pass

    def _read_request(self) -> RecordedRequest | None:
        line = self.rfile.readline(64 * 1024)
        while line in (b"\r\n", b"\n"):
            line = self.rfile.readline(64 * 1024)
        if not line:
            return None
        parts = line.decode("latin-1").strip().split(" ")
        if len(parts) != 3:
            raise _ClientGone("bad request line")
        method, target, _ = parts
        if target.startswith(("http://", "https://")):  # absolute form: keep path and query
            split = urlsplit(target)
            target = split.path + (f"?{split.query}" if split.query else "")
        headers: list[tuple[str, str]] = []
        while True:
            h = self.rfile.readline(64 * 1024)
            if not h:
                raise _ClientGone()
            if h in (b"\r\n", b"\n"):
                break
            name, _, value = h.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        length = int(dict((k.lower(), v) for k, v in headers).get("content-length", "0") or "0")
        if length:
            self.rfile.read(length)
        return RecordedRequest(method, target, headers, time.monotonic())

    def _head(self, status: int, headers: list[tuple[str, str]]) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "Server: afproxy-range-origin",
                 f"Date: {email.utils.formatdate(usegmt=True)}"]
        lines += [f"{k}: {v}" for k, v in headers]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _short(self, rec: RecordedRequest, status: int, body: bytes, extra: list[tuple[str, str]] = ()) -> bool:
        rec.status = status
        self._head(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body))), *extra])
        if rec.method != "HEAD":
            self.sock.sendall(body)
        return True

    def _answer(self, rec: RecordedRequest) -> bool:
        """Answers one request; False when the connection must close."""
        origin = self.server.origin
        if rec.method not in ("GET", "HEAD"):
            return self._short(rec, 405, b"GET or HEAD only\n", [("Allow", "GET, HEAD")])
        try:
            spec = _Spec({k: v[-1] for k, v in parse_qs(urlsplit(rec.target).query).items()})
        except (ValueError, KeyError):
            return self._short(rec, 400, b"bad query\n")
        with origin._lock:
            res = origin._resources.setdefault(rec.target, _Resource())
            if rec.method == "GET":
                res.gets += 1
            count = res.gets

        if spec.first_503 and count <= spec.first_503:
            return self._short(rec, 503, b"try again later\n", [("Retry-After", spec.retry_after)])
        if spec.status is not None:
            return self._short(rec, spec.status, b"status %d\n" % spec.status)

        version = 2 if spec.change_after is not None and count > spec.change_after else 1
        rec.version = version
        seed = version_seed(spec.seed, version)
        etag = None
        if spec.etag != "none":
            etag = strong_etag(spec.size, spec.seed, version)
            if spec.etag == "weak":
                etag = "W/" + etag
        last_modified = None
        if spec.last_modified == "old":
            last_modified = OLD_DATES[version]
        elif spec.last_modified == "recent":
            last_modified = email.utils.formatdate(res.created - 20 + 5 * version, usegmt=True)

        headers = [("Content-Type", "application/octet-stream")]
        if spec.accept_ranges:
            headers.append(("Accept-Ranges", "bytes"))
        if etag:
            headers.append(("ETag", etag))
        if last_modified:
            headers.append(("Last-Modified", last_modified))
        if spec.disposition:
            headers.append(("Content-Disposition", f'attachment; filename="{spec.disposition}"'))

        start, end, status = 0, spec.size, 200
        wanted = rec.range
        if wanted is not None and not spec.ignore_range:
            parsed = _parse_range(wanted, spec.size)
            if_range = rec.if_range
            if parsed is not None and if_range is not None:
                if if_range.startswith(('"', "W/")):
                    matches = etag is not None and not etag.startswith("W/") and if_range == etag
                else:
                    matches = last_modified is not None and if_range == last_modified
                if not matches:
                    parsed = None
            if parsed is not None and spec.answer_416:
                parsed = "416"
            if parsed == "416":
                return self._short(rec, 416, b"range not satisfiable\n",
                                   [("Content-Range", f"bytes */{spec.size}"), *headers[1:]])
            if parsed is not None:
                start, end = parsed
                status = 206
                headers.append(("Content-Range", f"bytes {start}-{end - 1}/{spec.size}"))

        headers.append(("Content-Length", str(end - start)))
        rec.status, rec.body_start, rec.body_end = status, start, end
        self._head(status, headers)
        if rec.method == "HEAD":
            return True

        stop = end
        with origin._lock:
            pending = [b for b in spec.breaks if start < b < end and b not in res.broken]
            if pending:
                stop = pending[0]
                res.broken.add(stop)
        self._body(rec, seed, spec, start, stop)
        if stop < end:
            rec.broke = True
            self._break(spec.reset)
            return False
        return True

    def _body(self, rec: RecordedRequest, seed: int, spec: _Spec, start: int, stop: int) -> None:
        stopping = self.server.origin._stopping
        if spec.trickle is None:
            for part in iter_file(spec.size, seed, start, stop):
                self.sock.sendall(part)
                rec.sent += len(part)
            return
        piece = max(1, min(16 * 1024, spec.trickle // 10))
        t0 = time.monotonic()
        for part in iter_file(spec.size, seed, start, stop, slice_size=piece):
            self.sock.sendall(part)
            rec.sent += len(part)
            delay = t0 + rec.sent / spec.trickle - time.monotonic()
            if delay > 0 and stopping.wait(delay):
                raise _ClientGone("origin stopping")

    def _break(self, reset: bool) -> None:
        """Ends the connection mid-body: a FIN once the bytes are written, or a reset once they left."""
        sock = self.sock
        if reset:
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:  # SIOCOUTQ: bytes not yet acknowledged by the peer
                queued = struct.unpack("i", fcntl.ioctl(sock.fileno(), 0x5411, b"\0\0\0\0"))[0]
                if queued == 0:
                    break
                time.sleep(0.01)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()
            sock.close()  # now, before socketserver's shutdown(SHUT_WR) could send a FIN first
        else:
            try:
                socket.socket.shutdown(sock, socket.SHUT_WR)  # TCP FIN, no TLS close_notify
            except OSError:
                pass


class _RangeTCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, origin: "RangeOrigin", tls: ssl.SSLContext | None, port: int = 0,
                 host: str = "127.0.0.1"):
        self.origin = origin
        self.tls = tls
        super().__init__((host, port), _Handler)

    def get_request(self):
        sock, address = super().get_request()
        if self.tls is not None:  # the handshake happens in the connection's own thread
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address):  # quiet: clients hang up on purpose
        pass


class RangeOrigin:
    """A running range origin on 127.0.0.1 (or `host`). `requests` lists every request received, in order."""

    def __init__(self, tls: ssl.SSLContext | None = None, port: int = 0, host: str = "127.0.0.1") -> None:
        self.scheme = "https" if tls is not None else "http"
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._resources: dict[str, _Resource] = {}
        self._open: set[socket.socket] = set()
        self._requests: list[RecordedRequest] = []
        self.connections = 0
        self._server = _RangeTCPServer(self, tls, port, host)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"range-origin-{self.port}", daemon=True)
        self._thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        if not path.startswith("/"):
            path = "/" + path
        return f"{self.scheme}://{host}:{self.port}{path}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, url_or_target: str, method: str | None = "GET") -> list[RecordedRequest]:
        """The requests for one URL (or path?query), GETs only unless `method` is None or another."""
        split = urlsplit(url_or_target)
        target = split.path + (f"?{split.query}" if split.query else "")
        return [r for r in self.requests if r.target == target and (method is None or r.method == method)]

    def _connection_opened(self, sock: socket.socket) -> None:
        with self._lock:
            self.connections += 1
            self._open.add(sock)

    def _connection_closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(rec)

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            still_open = list(self._open)
        for sock in still_open:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)


def start_range_origin(tls: ssl.SSLContext | None = None, port: int = 0, host: str = "127.0.0.1") -> RangeOrigin:
    """Starts a range origin on 127.0.0.1 or `host` (an ephemeral port unless `port`), serving in a
    background thread; with `tls` (a server context), over HTTPS."""
    return RangeOrigin(tls, port, host)


# --------------------------------------------------------------------------------------------
# TLS: a throwaway CA and a server certificate it signed, made with the openssl CLI


@dataclass
class TLSFiles:
    ca_cert: str        # the CA's certificate (what a client trusts: curl --cacert, --tls-ca-file)
    ca_key: str
    cert: str           # the server's certificate for 127.0.0.1 and localhost, signed by the CA
    key: str

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


def make_tls_files(directory: Path | str) -> TLSFiles:
    """A CA (CN "afproxy test CA") and a server certificate for IP 127.0.0.1 and DNS localhost,
    valid two days, P-256 keys, written into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    files = TLSFiles(str(d / "ca.pem"), str(d / "ca.key"), str(d / "server.pem"), str(d / "server.key"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", *ec, "-keyout", files.ca_key, "-out", files.ca_cert, "-days", "2",
            "-subj", "/CN=afproxy test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    csr = d / "server.csr"
    openssl("req", "-new", *ec, "-keyout", files.key, "-out", str(csr), "-subj", "/CN=127.0.0.1")
    extensions = d / "server.ext"
    extensions.write_text("basicConstraints=critical,CA:FALSE\n"
                          "keyUsage=critical,digitalSignature\n"
                          "extendedKeyUsage=serverAuth\n"
                          "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", files.ca_cert, "-CAkey", files.ca_key,
            "-CAcreateserial", "-out", files.cert, "-days", "2", "-sha256", "-extfile", str(extensions))
    return files



def make_self_signed(directory: Path | str, name: str = "127.0.0.1",
                     alt_names: str = "IP:127.0.0.1") -> tuple[str, str]:
    """A self-signed certificate that no CA vouches for, P-256, valid two days, its subject CN
    `name` and its subjectAltName `alt_names`: (certificate path, key path)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName={alt_names}"], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


if __name__ == "__main__":  # pragma: no cover - by hand, or in another network namespace
    o = start_range_origin(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0,
                           host=sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1")
    print(f"range origin on {o.url('/file.bin?size=1048576', host=o._server.server_address[0])}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        o.stop()
