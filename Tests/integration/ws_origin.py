"""A WebSocket origin on 127.0.0.1 (RFC 6455), plain or over TLS, written here so that the tests
see every byte: the handshake on /echo is answered 101 and every message is sent back as it
came (text or binary, any size); any other path is answered 404 with a body, on a keep-alive
connection, and every request line the origin reads is recorded, so a test can prove that
nothing a client sent after a declined upgrade reached it. Also the client side's framing, for
tests that speak WebSocket over a raw socket."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import ssl
import struct
import threading

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def frame(opcode: int, payload: bytes, mask: bool) -> bytes:
    """One final frame; a client masks (RFC 6455 §5.3), a server does not."""
    head = bytes([0x80 | opcode])
    bit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_exact(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def read_frame(sock) -> tuple[int, bytes]:
    """(opcode, payload) of one frame, unmasked."""
    return read_frame_fin(sock)[1:]


def read_frame_fin(sock) -> tuple[bool, int, bytes]:
    """(FIN, opcode, payload) of one frame, unmasked."""
    b0, b1 = read_exact(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", read_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read_exact(sock, 8))[0]
    key = read_exact(sock, 4) if b1 & 0x80 else None
    payload = read_exact(sock, n)
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return bool(b0 & 0x80), b0 & 0x0F, payload


def read_head(sock, rest: bytes = b"") -> tuple[bytes, bytes]:
    """(head up to its empty line, bytes after it)."""
    data = rest
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError(f"closed in a head: {data!r}")
        data += chunk
    head, _, after = data.partition(b"\r\n\r\n")
    return head, after


class WebSocketOrigin:
    def __init__(self, tls: ssl.SSLContext | None = None):
        self.tls = tls
        self.requests: list[str] = []
        self.heads: list[bytes] = []
        self.messages = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            rest = b""
            while True:
                head, rest = read_head(conn, rest)
                lines = head.decode("latin-1").split("\r\n")
                fields = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.strip()
                with self._lock:
                    self.requests.append(lines[0])
                    self.heads.append(head)
                path = lines[0].split(" ")[1].split("?")[0]
                if path == "/echo" and fields.get("upgrade", "").lower() == "websocket":
                    conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                  "Connection: Upgrade\r\nSec-WebSocket-Accept: "
                                  f"{accept_key(fields['sec-websocket-key'])}\r\n\r\n").encode())
                    self._echo(conn)
                    return
                body = b"no WebSocket here"
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except (EOFError, OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def _echo(self, conn) -> None:
        """A fragmented message is echoed whole, as one frame, once its last fragment came; a
        ping between its fragments is answered at once."""
        fragments: list[bytes] = []
        first = 0
        while True:
            fin, opcode, payload = read_frame_fin(conn)
            if opcode in (0, 1, 2) and not fin:
                first = first or opcode
                fragments.append(payload)
                continue
            if opcode == 0:
                opcode, payload = first, b"".join(fragments) + payload
                fragments, first = [], 0
            if opcode == 8:  # close: answered, then the server closes (RFC 6455 §5.5.1)
                conn.sendall(frame(8, payload[:2], mask=False))
                return
            if opcode == 9:
                conn.sendall(frame(10, payload, mask=False))
                continue
            with self._lock:
                self.messages += 1
            conn.sendall(frame(opcode, payload, mask=False))
