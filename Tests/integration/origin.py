"""An in-process HTTP/1.1 test origin for the afproxy integration tests.

Written on raw sockets (no http.server) so that it controls framing exactly: it parses chunked
request bodies itself, answers pipelined requests in order, can close mid-body on purpose, and
counts the TCP connections it accepts (the keep-alive test reads that count).

Endpoints (N is a byte count, S seconds as a float):

    GET|HEAD /bytes/N          N bytes of payload(N), Content-Length
    GET      /chunked/N        the same bytes, Transfer-Encoding: chunked, chunks of 1000..70000 bytes
    GET      /close/N          the same bytes, no length, Connection: close, the body ends at close
    POST|PUT|PATCH /upload     JSON {"method", "length", "sha256", "chunked", "headers"}
    ANY      /echo             JSON {"method", "path", "headers": [[name, value], ...]} as received
    GET      /abort/N          Content-Length: N, then N//2 bytes, then close
    GET      /abort-chunked/N  chunked, about N//2 bytes, then close without the last chunk
    GET      /delay/S          sleeps S seconds, then 200 "ok"
    GET      /status/CODE      that status (204 and 304 without a body)
    GET      /gzip             GZIP_BODY with Content-Encoding: gzip
    GET      /png              PNG_BODY, a 48×32 image, Content-Type: image/png
    GET      /hang             reads the request and never answers
    GET      /slowbody/N       Content-Length: N, then 1 KiB every 50 ms
                               (?chunk=BYTES&interval=SECONDS change the pace)
    GET      /redirect/HOST    302 to http://HOST:PORT/bytes/10, PORT the one the request's Host names
    GET      /bounce/HOST      302 to http://HOST:PORT/bounce/HERE, HERE:PORT the request's Host: a
                               redirect loop between two names

`start_origin(tls=context)` serves the same endpoints over HTTPS (a server `ssl.SSLContext`; the
CONNECT tests make a self-signed certificate for it).

Run this file directly for a self-check: `python3 Tests/integration/origin.py`.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import random
import select
import socket
import socketserver
import ssl
import struct
import threading
import time
import zlib
from collections import deque
from urllib.parse import parse_qs, urlsplit

# --------------------------------------------------------------------------------------------
# The deterministic payload: a 64 KiB random block repeated.

BLOCK_SIZE = 64 * 1024
_BLOCK = random.Random(1234).randbytes(BLOCK_SIZE)
#: 4 MiB of repeated blocks plus one spare block, so any slice of up to 4 MiB starting anywhere in
#: the cycle is a plain slice of this buffer.
_SLICE_MAX = 4 * 1024 * 1024
_BIG = _BLOCK * (_SLICE_MAX // BLOCK_SIZE + 1)
#: Size of the slices the origin writes (≥ 256 KiB so 200 MiB is served quickly).
WRITE_SLICE = 1024 * 1024


def payload_slice(offset: int, length: int) -> memoryview:
    """Bytes [offset, offset+length) of the infinite payload stream (length ≤ 4 MiB)."""
    assert 0 <= length <= _SLICE_MAX
    start = offset % BLOCK_SIZE
    return memoryview(_BIG)[start : start + length]


def payload(n: int) -> bytes:
    """The first n bytes of the payload, as bytes. Meant for small n; use payload_sha256 for big ones."""
    out = bytearray()
    offset = 0
    while offset < n:
        k = min(_SLICE_MAX, n - offset)
        out += payload_slice(offset, k)
        offset += k
    return bytes(out)


def iter_payload(n: int, slice_size: int = WRITE_SLICE):
    """payload(n) as successive memoryviews of at most slice_size bytes."""
    offset = 0
    while offset < n:
        k = min(slice_size, n - offset)
        yield payload_slice(offset, k)
        offset += k


@functools.lru_cache(maxsize=64)
def payload_sha256(n: int) -> str:
    """Hex SHA-256 of payload(n), computed without holding it in memory."""
    h = hashlib.sha256()
    for part in iter_payload(n, _SLICE_MAX):
        h.update(part)
    return h.hexdigest()


#: The body of /gzip: gzip of a repetitive text, compressed once with a fixed mtime.
GZIP_PLAIN = b"".join(b"line %d of the afproxy gzip test body\n" % i for i in range(2000))
GZIP_BODY = gzip.compress(GZIP_PLAIN, compresslevel=6, mtime=0)


def _png(width: int, height: int) -> bytes:
    """A true-colour PNG of a gradient, made here so that no image file is needed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    pixels = b"".join(b"\0" + b"".join(bytes((x * 255 // (width - 1), y * 255 // (height - 1), 160))
                                         for x in range(width)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))


#: The body of /png: a 48×32 PNG.
PNG_BODY = _png(48, 32)

_REASONS = {
    100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
    301: "Moved Permanently", 302: "Found", 304: "Not Modified", 400: "Bad Request",
    401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
    409: "Conflict", 410: "Gone", 418: "I'm a teapot", 429: "Too Many Requests",
    500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout",
}

MAX_LINE = 128 * 1024


class _ClientGone(Exception):
    """The peer closed or the request could not be parsed: end this connection."""


class HeaderLookup:
    """Case-insensitive access to `self.headers`, a list of (name, value) in arrival order;
    shared by the origin's requests and the harness's parsed responses."""

    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        values = self.header_all(name)
        return values[0] if values else None

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]


class _Request(HeaderLookup):
    def __init__(self, method: str, target: str, version: str, headers: list[tuple[str, str]]):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        parts = urlsplit(target)
        self.path = parts.path or "/"
        self.query = {k: v[-1] for k, v in parse_qs(parts.query).items()}


    def tokens(self, name: str) -> set[str]:
        return {t.strip().lower() for v in self.header_all(name) for t in v.split(",") if t.strip()}

    @property
    def wants_close(self) -> bool:
        conn = self.tokens("connection")
        if self.version == "HTTP/1.0":
            return "keep-alive" not in conn
        return "close" in conn


class _Handler(socketserver.BaseRequestHandler):
    server: "_OriginTCPServer"

    # ---- connection loop ---------------------------------------------------------------
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(300)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(sock, ssl.SSLSocket):
            try:
                sock.do_handshake()
            except (ssl.SSLError, OSError):
                return
            if sock.session_reused:
                with self.server.origin._lock:
                    self.server.origin._tls_resumed += 1
        self.sock = sock
        self.rfile = sock.makefile("rb", buffering=256 * 1024)
        origin = self.server.origin
        origin._connection_opened(sock)
        try:
            while not origin._stopping.is_set():
                req = self._read_request()
                if req is None:
                    return
                origin._record(req)
                keep_open = self._dispatch(req)
                if not keep_open or req.wants_close:
                    return
        except (_ClientGone, OSError, ValueError):
            return
        finally:
            origin._connection_closed(sock)
            try:
                self.rfile.close()
            except OSError:
                pass

    def _readline(self) -> bytes:
        line = self.rfile.readline(MAX_LINE)
        if not line:
            raise _ClientGone()
        if not line.endswith(b"\n"):
            raise _ClientGone("line too long")
        return line

    def _read_request(self) -> _Request | None:
        try:
            line = self.rfile.readline(MAX_LINE)
        except OSError:
            return None
        while line in (b"\r\n", b"\n"):  # tolerate stray empty lines between requests
            line = self.rfile.readline(MAX_LINE)
        if not line:
            return None
        parts = line.decode("latin-1").strip().split(" ")
        if len(parts) != 3:
            raise _ClientGone("bad request line")
        method, target, version = parts
        headers: list[tuple[str, str]] = []
        while True:
            h = self._readline()
            if h in (b"\r\n", b"\n"):
                break
            name, _, value = h.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        return _Request(method, target, version, headers)

    # ---- request bodies ----------------------------------------------------------------
    def _send_continue_if_expected(self, req: _Request) -> None:
        if (req.header("expect") or "").lower() == "100-continue" and req.version == "HTTP/1.1":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _body_chunks(self, req: _Request):
        """Yields the request body in pieces, de-chunking if needed."""
        if "chunked" in req.tokens("transfer-encoding"):
            self._send_continue_if_expected(req)
            while True:
                size_line = self._readline().decode("latin-1")
                size = int(size_line.split(";", 1)[0].strip(), 16)
                if size == 0:
                    while self._readline() not in (b"\r\n", b"\n"):  # trailers
                        pass
                    return
                remaining = size
                while remaining:
                    data = self.rfile.read(min(remaining, 1024 * 1024))
                    if not data:
                        raise _ClientGone()
                    remaining -= len(data)
                    yield data
                if self._readline() not in (b"\r\n", b"\n"):
                    raise _ClientGone("bad chunk terminator")
        else:
            length = int(req.header("content-length") or "0")
            if length:
                self._send_continue_if_expected(req)
            remaining = length
            while remaining:
                data = self.rfile.read(min(remaining, 1024 * 1024))
                if not data:
                    raise _ClientGone()
                remaining -= len(data)
                yield data

    def _drain_body(self, req: _Request) -> None:
        for _ in self._body_chunks(req):
            pass

    # ---- responses -----------------------------------------------------------------------
    def _head(self, req: _Request, status: int, headers: list[tuple[str, str]], close: bool = False) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        lines.append("Server: afproxy-test-origin")
        lines += [f"{k}: {v}" for k, v in headers]
        if close or req.wants_close:
            lines.append("Connection: close")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _simple(self, req: _Request, status: int, body: bytes, ctype: str = "text/plain") -> bool:
        self._head(req, status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
        if req.method != "HEAD" and body:
            self.sock.sendall(body)
        return True

    def _json(self, req: _Request, obj) -> bool:
        return self._simple(req, 200, json.dumps(obj).encode(), "application/json")

    @staticmethod
    def _number(text: str) -> int:
        n = int(text)
        if n < 0:
            raise ValueError("negative")
        return n

    def _dispatch(self, req: _Request) -> bool:
        """Answers one request; returns False when the connection must close afterwards."""
        seg = req.path.strip("/").split("/")
        name, arg = seg[0], (seg[1] if len(seg) > 1 else "")
        m = req.method

        if name == "upload" and m in ("POST", "PUT", "PATCH"):
            h = hashlib.sha256()
            n = 0
            for part in self._body_chunks(req):
                h.update(part)
                n += len(part)
            return self._json(req, {
                "method": m, "length": n, "sha256": h.hexdigest(),
                "chunked": "chunked" in req.tokens("transfer-encoding"),
                "headers": {k.lower(): v for k, v in req.headers},
            })

        if name == "echo":
            self._drain_body(req)
            return self._json(req, {
                "method": m, "path": req.target, "headers": [[k, v] for k, v in req.headers],
            })

        # Everything else is a GET (or HEAD) without a body; drain one anyway.
        self._drain_body(req)
        try:
            if name == "bytes" and m in ("GET", "HEAD"):
                return self._bytes(req, self._number(arg))
            if name == "chunked" and m == "GET":
                return self._chunked(req, self._number(arg))
            if name == "close" and m == "GET":
                return self._close_delimited(req, self._number(arg))
            if name == "abort" and m == "GET":
                return self._abort(req, self._number(arg))
            if name == "abort-chunked" and m == "GET":
                return self._abort_chunked(req, self._number(arg))
            if name == "gather" and m == "GET":
                # /gather/NAME/N: held until N requests for NAME have arrived (at most 30 s),
                # so that that many are under way at once, on as many connections.
                return self._simple(req, 200, str(self.server.origin._gather(arg, self._number(seg[2]))).encode())
            if name == "delay" and m in ("GET", "HEAD"):
                self._wait(float(arg))
                return self._simple(req, 200, b"ok")
            if name == "status" and m in ("GET", "HEAD"):
                return self._status(req, int(arg))
            if name == "gzip" and m in ("GET", "HEAD"):
                self._head(req, 200, [("Content-Type", "text/plain"), ("Content-Encoding", "gzip"),
                                      ("Content-Length", str(len(GZIP_BODY)))])
                if m != "HEAD":
                    self.sock.sendall(GZIP_BODY)
                return True
            if name == "png" and m in ("GET", "HEAD"):
                return self._simple(req, 200, PNG_BODY, "image/png")
            if name == "hang":
                self._hang()
                return False
            if name == "slowbody" and m == "GET":
                return self._slowbody(req, self._number(arg))
            if name == "redirect" and m == "GET":
                port = (req.header("host") or "").rpartition(":")[2]
                self._head(req, 302, [("Location", f"http://{arg}:{port}/bytes/10"), ("Content-Length", "0")])
                return True
            if name == "bounce" and m == "GET":
                here, _, port = (req.header("host") or "").rpartition(":")
                self._head(req, 302, [("Location", f"http://{arg}:{port}/bounce/{here}"), ("Content-Length", "0")])
                return True
        except ValueError:
            return self._simple(req, 400, b"bad argument\n")
        return self._simple(req, 404, b"no such endpoint\n")

    def _bytes(self, req: _Request, n: int) -> bool:
        self._head(req, 200, [("Content-Type", "application/octet-stream"), ("Content-Length", str(n))])
        if req.method != "HEAD":
            for part in iter_payload(n):
                self.sock.sendall(part)
        return True

    def _chunked(self, req: _Request, n: int) -> bool:
        self._head(req, 200, [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")])
        rng = random.Random(n)
        out = bytearray()
        offset = 0
        while offset < n:
            k = min(rng.randint(1000, 70000), n - offset)
            out += b"%x\r\n" % k
            out += payload_slice(offset, k)
            out += b"\r\n"
            offset += k
            if len(out) >= 256 * 1024:
                self.sock.sendall(out)
                out.clear()
        out += b"0\r\n\r\n"
        self.sock.sendall(out)
        return True

    def _close_delimited(self, req: _Request, n: int) -> bool:
        self._head(req, 200, [("Content-Type", "application/octet-stream")], close=True)
        for part in iter_payload(n):
            self.sock.sendall(part)
        return False

    def _abort(self, req: _Request, n: int) -> bool:
        self._head(req, 200, [("Content-Type", "application/octet-stream"), ("Content-Length", str(n))])
        for part in iter_payload(n // 2):
            self.sock.sendall(part)
        return False

    def _abort_chunked(self, req: _Request, n: int) -> bool:
        self._head(req, 200, [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")])
        offset = 0
        target = n // 2
        while offset < target:
            k = min(10000, target - offset)
            self.sock.sendall(b"%x\r\n" % k + bytes(payload_slice(offset, k)) + b"\r\n")
            offset += k
        return False  # no terminating 0-chunk

    def _status(self, req: _Request, code: int) -> bool:
        if code in (204, 304):
            self._head(req, code, [])
            return True
        if not 200 <= code <= 599:
            raise ValueError("status out of range")
        return self._simple(req, code, b"status %d\n" % code)

    def _slowbody(self, req: _Request, n: int) -> bool:
        chunk = int(req.query.get("chunk", "1024"))
        interval = float(req.query.get("interval", "0.05"))
        self._head(req, 200, [("Content-Type", "application/octet-stream"), ("Content-Length", str(n))])
        offset = 0
        while offset < n:
            k = min(chunk, n - offset)
            self.sock.sendall(payload_slice(offset, k))
            offset += k
            if offset < n and self._wait(interval):
                return False
        return True

    def _wait(self, seconds: float) -> bool:
        """Sleeps, waking early when the origin stops; True if it stopped."""
        return self.server.origin._stopping.wait(seconds)

    def _hang(self) -> None:
        """Never answers: returns when the peer closes or the origin stops."""
        while not self.server.origin._stopping.is_set():
            readable, _, _ = select.select([self.sock], [], [], 0.2)
            if readable:
                try:
                    if not self.sock.recv(65536):
                        return
                except OSError:
                    return


class _OriginTCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def __init__(self, origin: "Origin", tls: ssl.SSLContext | None = None, ipv6: bool = False):
        self.origin = origin
        self.tls = tls
        if ipv6:
            self.address_family = socket.AF_INET6
        super().__init__(("::1" if ipv6 else "127.0.0.1", 0), _Handler)

    def get_request(self):
        sock, address = super().get_request()
        if self.tls is not None:  # the handshake happens in the connection's own thread
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address):  # quiet: clients hang up on purpose
        pass


class Origin:
    """A running test origin. `connections` counts accepted TCP connections."""

    def __init__(self, tls: ssl.SSLContext | None = None, ipv6: bool = False) -> None:
        self.scheme = "https" if tls is not None else "http"
        self.address = "[::1]" if ipv6 else "127.0.0.1"
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections = 0
        self._tls_resumed = 0
        self._gathered: dict[str, int] = {}
        self._gathering = threading.Condition()
        self._open: set[socket.socket] = set()
        self.requests: deque[_Request] = deque(maxlen=1000)
        self._received = 0
        self._server = _OriginTCPServer(self, tls, ipv6)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
            name=f"origin-{self.port}", daemon=True,
        )
        self._thread.start()

    def url(self, path: str) -> str:
        if not path.startswith("/"):
            path = "/" + path
        return f"{self.scheme}://{self.address}:{self.port}{path}"

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def connections(self) -> int:
        with self._lock:
            return self._connections

    @property
    def tls_resumed(self) -> int:
        """TLS connections whose client resumed an earlier session."""
        with self._lock:
            return self._tls_resumed

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    @property
    def received(self) -> int:
        """Every request ever received: `requests` keeps only the latest 1000, so a count taken
        from it stops moving on a busy shared origin."""
        with self._lock:
            return self._received

    @property
    def last_request(self) -> _Request | None:
        with self._lock:
            return self.requests[-1] if self.requests else None

    @property
    def last_headers(self) -> list[tuple[str, str]] | None:
        req = self.last_request
        return None if req is None else list(req.headers)

    def gathered(self, name: str) -> int:
        """Requests for /gather/NAME/… so far."""
        with self._gathering:
            return self._gathered.get(name, 0)

    def _gather(self, name: str, count: int) -> int:
        """Counts one request for `name` and waits until `count` have come (or 30 s pass, or
        the origin stops); returns how many had come."""
        with self._gathering:
            self._gathered[name] = self._gathered.get(name, 0) + 1
            self._gathering.notify_all()
            self._gathering.wait_for(lambda: self._gathered[name] >= count or self._stopping.is_set(), timeout=30)
            return self._gathered[name]

    def _connection_opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._connections += 1
            self._open.add(sock)

    def _connection_closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)

    def _record(self, req: _Request) -> None:
        with self._lock:
            self.requests.append(req)
            self._received += 1

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            still_open = list(self._open)
        for sock in still_open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)


def start_origin(tls: ssl.SSLContext | None = None, ipv6: bool = False) -> Origin:
    """Starts an origin on 127.0.0.1 (with `ipv6`, on ::1) with an ephemeral port, serving in a
    background thread; with `tls` (a server context), the same endpoints over HTTPS."""
    return Origin(tls, ipv6)


# --------------------------------------------------------------------------------------------
# Self-check: python3 Tests/integration/origin.py

def _self_check() -> None:  # pragma: no cover - run by hand
    import http.client
    import urllib.request

    o = start_origin()
    try:
        def get(path, method="GET", body=None, headers=None):
            c = http.client.HTTPConnection("127.0.0.1", o.port, timeout=10)
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            c.close()
            return r, data

        r, d = get("/bytes/100000")
        assert r.status == 200 and d == payload(100000), "bytes"
        r, d = get("/chunked/300000")
        assert r.getheader("transfer-encoding") == "chunked" and d == payload(300000), "chunked"
        r, d = get("/close/123457")
        assert d == payload(123457), "close"
        r, d = get("/bytes/5", method="HEAD")
        assert r.getheader("content-length") == "5" and d == b"", "head"
        body = random.Random(5).randbytes(3_000_000)
        r, d = get("/upload", "POST", body)
        j = json.loads(d)
        assert j["length"] == len(body) and j["sha256"] == hashlib.sha256(body).hexdigest(), "upload"
        assert j["chunked"] is False
        r, d = get("/upload", "PUT", iter([body[:1000], body[1000:]]))  # http.client chunks it
        j = json.loads(d)
        assert j["length"] == len(body) and j["chunked"] is True and j["method"] == "PUT", "chunked upload"
        r, d = get("/echo", headers={"X-A": "1"})
        assert ["X-A", "1"] in json.loads(d)["headers"], "echo"
        r, d = get("/status/204")
        assert r.status == 204 and d == b"", "204"
        r, d = get("/status/418")
        assert r.status == 418 and d == b"status 418\n", "418"
        r, d = get("/gzip")
        assert d == GZIP_BODY and gzip.decompress(d) == GZIP_PLAIN, "gzip"
        try:
            get("/abort/100000")
            raise AssertionError("abort did not fail")
        except http.client.IncompleteRead:
            pass
        try:
            get("/abort-chunked/100000")
            raise AssertionError("abort-chunked did not fail")
        except (http.client.IncompleteRead, http.client.HTTPException):
            pass
        t0 = time.monotonic()
        r, d = get("/slowbody/4096?interval=0.05")
        assert d == payload(4096) and time.monotonic() - t0 >= 0.1, "slowbody"
        r, d = get("/delay/0.2")
        assert d == b"ok", "delay"
        s = socket.create_connection(("127.0.0.1", o.port), timeout=1)
        s.sendall(b"GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            s.recv(10)
            raise AssertionError("hang answered")
        except socket.timeout:
            pass
        s.close()
        # keep-alive + pipelining on one connection
        before = o.connections
        s = socket.create_connection(("127.0.0.1", o.port), timeout=5)
        s.sendall(b"GET /bytes/10 HTTP/1.1\r\nHost: x\r\n\r\nGET /bytes/20 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        assert data.count(b"HTTP/1.1 200") == 2 and data.endswith(payload(20)), "pipelining"
        assert o.connections == before + 1
        with urllib.request.urlopen(o.url("/bytes/1000"), timeout=5) as resp:
            assert resp.read() == payload(1000)
        assert payload_sha256(5 * 1024 * 1024 + 3) == hashlib.sha256(payload(5 * 1024 * 1024 + 3)).hexdigest()
        print(f"origin self-check OK (port {o.port}, {o.connections} connections)")
    finally:
        o.stop()


if __name__ == "__main__":
    _self_check()
