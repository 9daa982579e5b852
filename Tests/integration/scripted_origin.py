"""An origin that answers each request with bytes a test scripted, exactly as given: the hostile
answers (bad framing, bad heads, bytes nobody asked for) that origin.py, which always frames
correctly, cannot send.

    origin = ScriptedOrigin()
    origin.script("/twocl", b"HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\n...", close=False)
    curl(proxy, origin.url("/twocl"))

A script is a list of steps: bytes to send, a float to sleep that many seconds, or CLOSE. The
connection stays open for the next request unless the script closes it. `requests` records
every request head received, `connections` the TCP connections accepted.
"""

from __future__ import annotations

import socket
import threading
import time

CLOSE = object()


class ScriptedOrigin:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.scripts: dict[str, list] = {}
        self.requests: list[bytes] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, path: str, *steps) -> None:
        self.scripts[path] = list(steps)

    def stop(self) -> None:
        self.stopped = True
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                with self.lock:
                    self.requests.append(head)
                target = head.split(b" ")[1].decode("latin-1")
                path = "/" + target.split("/", 3)[3] if target.startswith("http") else target
                for step in self.scripts.get(path.split("?")[0], [b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"]):
                    if step is CLOSE:
                        return
                    if isinstance(step, float):
                        time.sleep(step)
                    else:
                        conn.sendall(step)
        except OSError:
            return
        finally:
            conn.close()
