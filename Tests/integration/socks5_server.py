"""A small SOCKS5 server (RFC 1928, CONNECT only, with RFC 1929 user/password when given) for the
upstream-proxy tests: it resolves the name it is sent itself (what socks5h means) and logs each
CONNECT's target, so a test can prove its traffic went through it.
"""

from __future__ import annotations

import select
import socket
import struct
import threading


class Socks5Server:
    def __init__(self, credentials: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.targets: list[str] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._stopped = True
        self._listener.close()

    def seen(self) -> list[str]:
        with self._lock:
            return list(self.targets)

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    @staticmethod
    def _exact(sock: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def _serve(self, client: socket.socket) -> None:
        try:
            version, count = self._exact(client, 2)
            methods = self._exact(client, count)
            wanted = 2 if self.credentials else 0
            if version != 5 or wanted not in methods:
                client.sendall(b"\x05\xff")
                return
            client.sendall(bytes([5, wanted]))
            if self.credentials:
                _, ulen = self._exact(client, 2)
                user = self._exact(client, ulen).decode()
                (plen,) = self._exact(client, 1)
                password = self._exact(client, plen).decode()
                ok = (user, password) == self.credentials
                client.sendall(b"\x01\x00" if ok else b"\x01\x01")
                if not ok:
                    return
            _, command, _, kind = self._exact(client, 4)
            if kind == 1:
                host = socket.inet_ntoa(self._exact(client, 4))
            elif kind == 4:
                host = socket.inet_ntop(socket.AF_INET6, self._exact(client, 16))
            else:
                (length,) = self._exact(client, 1)
                host = self._exact(client, length).decode()
            (port,) = struct.unpack("!H", self._exact(client, 2))
            with self._lock:
                self.targets.append(f"{host}:{port}")
            try:
                upstream = socket.create_connection((host, port), timeout=10)
            except OSError:
                client.sendall(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
                return
            client.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + struct.pack("!H", port))
            self._relay(client, upstream)
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            client.close()

    @staticmethod
    def _relay(a: socket.socket, b: socket.socket) -> None:
        a.settimeout(None)
        b.settimeout(None)
        open_ends = {a: b, b: a}
        try:
            while open_ends:
                readable, _, _ = select.select(list(open_ends), [], [], 30)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(256 * 1024)
                    peer = open_ends[sock]
                    if not data:
                        del open_ends[sock]
                        try:
                            peer.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        continue
                    peer.sendall(data)
        finally:
            b.close()
