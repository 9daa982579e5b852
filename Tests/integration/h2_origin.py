"""An HTTP/2 origin over TLS on 127.0.0.1 (ALPN h2 only), written on the h2 library's
sans-I/O state machine with one thread per connection, so that a test controls what hypercorn
and nginx keep to themselves: which TCP connection served a stream, and a stream reset or a
GOAWAY in the middle of a body.

Every response carries `x-conn` (the serving connection's number, from 1) and
`x-client-port` (its peer's port). Endpoints:
  /bytes/N[?seed=S]     N bytes of range_origin's deterministic file, with content-length
  /stream/N[?seed=S]    the same bytes in 64 KiB DATA frames, without content-length
  /trailers/N[?seed=S]  as /stream, then a trailer section with x-sha256 (the body's)
  /gather/KEY/N         held until N streams asked for /gather/KEY (on any connection), then a
                        JSON body naming the connection (at most 20 s)
  /echo                 any method: JSON with the request body's length and SHA-256, the
                        request's header fields (a 100 first when it expects one)
  /valve/KEY/N[?seed=S] the /bytes answer, its body sent only as far as the test allows with
                        `open_valve(KEY, bytes)` (none at first): a test that needs a stream still
                        live when it looks does not race the transfer's end
  /reset/N, /reset-streamed/N, /goaway/N
                        half of N bytes, then RST_STREAM (INTERNAL_ERROR) or GOAWAY and the
                        socket closed (reset-streamed: without content-length)
"""

from __future__ import annotations

import hashlib
import json
import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from range_origin import TLSFiles, file_bytes

PIECE = 64 * 1024


@dataclass
class H2Request:
    connection: int
    client_port: int
    method: str
    path: str
    headers: list[tuple[str, str]]
    body_length: int = 0
    body_sha256: str = ""


@dataclass
class _Stream:
    headers: list[tuple[str, str]]
    hasher: "hashlib._Hash" = field(default_factory=hashlib.sha256)
    length: int = 0


@dataclass
class _Outgoing:
    data: bytes
    sent: int = 0
    end: str = "end"  # "end", "trailers", "reset" or "goaway" once `data` is sent
    valve: str | None = None  # sent only as far as the origin's allowance for this key
    trailers: list[tuple[str, str]] = field(default_factory=list)


class H2Origin:
    def __init__(self, tls: TLSFiles) -> None:
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(tls.cert, tls.key)
        self._context.set_alpn_protocols(["h2"])
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._gathered: dict[str, int] = {}
        self._valves: dict[str, int] = {}
        self._connections = 0
        self._open: set[int] = set()
        self._closed = False
        self.requests: list[H2Request] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    @property
    def connections(self) -> int:
        with self._lock:
            return self._connections

    def stop(self) -> None:
        self._closed = True
        self._listener.close()

    # ------------------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                raw, address = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw, address[1]), daemon=True).start()

    def _serve(self, raw: socket.socket, client_port: int) -> None:
        try:
            raw.settimeout(10)
            sock = self._context.wrap_socket(raw, server_side=True)
            sock.settimeout(None)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        with self._lock:
            self._connections += 1
            number = self._connections
        try:
            _Connection(self, sock, number, client_port).run()
        except (ssl.SSLError, OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def open_valve(self, key: str, allowed: int) -> None:
        """Lets streams of /valve/KEY/N send their body up to `allowed` bytes."""
        with self._lock:
            self._valves[key] = allowed

    def _allowance(self, key: str) -> int:
        with self._lock:
            return self._valves.get(key, 0)

    def _gather(self, key: str) -> None:
        with self._lock:
            self._gathered[key] = self._gathered.get(key, 0) + 1

    def _gathered_count(self, key: str) -> int:
        with self._lock:
            return self._gathered.get(key, 0)


class _Connection:
    def __init__(self, origin: H2Origin, sock: ssl.SSLSocket, number: int, client_port: int) -> None:
        self.origin = origin
        self.sock = sock
        self.number = number
        self.client_port = client_port
        self.h2 = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams: dict[int, _Stream] = {}
        self.outgoing: dict[int, _Outgoing] = {}
        self.held: list[tuple[int, str, int, float]] = []  # stream, gather key, count, deadline
        self.done = False

    def run(self) -> None:
        self.h2.initiate_connection()
        self.flush()
        while not self.done and not self.origin._closed:
            self.send_bodies()
            self.release_held()
            self.flush()
            if self.done:
                return
            if self.sock.pending() == 0:
                waiting = self.held or any(out.valve is not None for out in self.outgoing.values())
                wait = 0.05 if waiting else 1.0
                readable, _, _ = select.select([self.sock], [], [], wait)
                if not readable:
                    continue
            try:
                data = self.sock.recv(65536)
            except ssl.SSLWantReadError:
                continue
            if not data:
                return
            for event in self.h2.receive_data(data):
                self.handle(event)

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def handle(self, event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            headers = [(str(k), str(v)) for k, v in event.headers]
            self.streams[event.stream_id] = _Stream(headers)
            if any(k == "expect" and v.lower() == "100-continue" for k, v in headers):
                self.h2.send_headers(event.stream_id, [(":status", "100")])
        elif isinstance(event, h2.events.DataReceived):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.hasher.update(event.data)
                stream.length += len(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.answer(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            self.outgoing.pop(event.stream_id, None)
            self.held = [h for h in self.held if h[0] != event.stream_id]
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.done = True

    def answer(self, stream_id: int) -> None:
        stream = self.streams.pop(stream_id)
        pseudo = dict((k, v) for k, v in stream.headers if k.startswith(":"))
        fields = [(k, v) for k, v in stream.headers if not k.startswith(":")]
        target = urlsplit(pseudo.get(":path", "/"))
        parts = target.path.strip("/").split("/")
        query = {k: v[-1] for k, v in parse_qs(target.query).items()}
        record = H2Request(self.number, self.client_port, pseudo.get(":method", ""), pseudo.get(":path", ""),
                           fields, stream.length, stream.hasher.hexdigest())
        with self.origin._lock:
            self.origin.requests.append(record)
        seed = int(query.get("seed", "1"))
        if parts[0] == "bytes" and len(parts) == 2:
            self.respond(stream_id, file_bytes(int(parts[1]), seed), length=True)
        elif parts[0] == "valve" and len(parts) == 3:
            self.respond(stream_id, file_bytes(int(parts[2]), seed), length=True, valve=parts[1])
        elif parts[0] == "stream" and len(parts) == 2:
            self.respond(stream_id, file_bytes(int(parts[1]), seed), length=False)
        elif parts[0] in ("reset", "reset-streamed", "goaway") and len(parts) == 2:
            size = int(parts[1])
            body = file_bytes(size, seed)[: size // 2]
            self.respond(stream_id, body, length=parts[0] != "reset-streamed",
                         end="goaway" if parts[0] == "goaway" else "reset", announced=size)
        elif parts[0] == "trailers" and len(parts) == 2:
            body = file_bytes(int(parts[1]), seed)
            self.respond(stream_id, body, length=False, end="trailers",
                         trailers=[("x-sha256", hashlib.sha256(body).hexdigest())])
        elif parts[0] == "gather" and len(parts) == 3:
            self.origin._gather(parts[1])
            self.held.append((stream_id, parts[1], int(parts[2]), time.monotonic() + 20))
        elif parts[0] == "echo":
            body = json.dumps({"length": stream.length, "sha256": stream.hasher.hexdigest(),
                               "method": record.method, "headers": fields}).encode()
            self.respond(stream_id, body, length=True, content_type="application/json")
        else:
            self.respond(stream_id, b"not found\n", length=True, status=404)

    def respond(self, stream_id: int, body: bytes, length: bool, status: int = 200, end: str = "end",
                announced: int | None = None, content_type: str = "application/octet-stream",
                trailers: list[tuple[str, str]] | None = None, valve: str | None = None) -> None:
        headers = [(":status", str(status)), ("content-type", content_type), ("x-conn", str(self.number)),
                   ("x-client-port", str(self.client_port))]
        if length:
            headers.append(("content-length", str(len(body) if announced is None else announced)))
        self.h2.send_headers(stream_id, headers, end_stream=not body and end == "end")
        if body or end != "end":
            self.outgoing[stream_id] = _Outgoing(body, end=end, trailers=trailers or [], valve=valve)

    def release_held(self) -> None:
        now = time.monotonic()
        for held in list(self.held):
            stream_id, key, count, deadline = held
            gathered = self.origin._gathered_count(key)
            if gathered >= count or now >= deadline:
                self.held.remove(held)
                body = json.dumps({"connection": self.number, "client_port": self.client_port,
                                   "gathered": gathered}).encode()
                self.respond(stream_id, body, length=True, content_type="application/json")

    def send_bodies(self) -> None:
        for stream_id, out in list(self.outgoing.items()):
            while out.sent < len(out.data):
                try:
                    window = self.h2.local_flow_control_window(stream_id)
                except h2.exceptions.StreamClosedError:
                    self.outgoing.pop(stream_id, None)
                    break
                limit = len(out.data) if out.valve is None else min(len(out.data), self.origin._allowance(out.valve))
                piece = min(window, self.h2.max_outbound_frame_size, PIECE, limit - out.sent)
                if piece <= 0:
                    break
                self.h2.send_data(stream_id, out.data[out.sent:out.sent + piece])
                out.sent += piece
                self.flush()
            if stream_id not in self.outgoing or out.sent < len(out.data):
                continue
            del self.outgoing[stream_id]
            if out.end == "end":
                self.h2.end_stream(stream_id)
            elif out.end == "trailers":
                self.h2.send_headers(stream_id, out.trailers, end_stream=True)
            elif out.end == "reset":
                self.h2.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
            else:
                self.h2.close_connection(error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
                self.flush()
                self.done = True
                return


def start_h2_origin(tls: TLSFiles) -> H2Origin:
    return H2Origin(tls)
