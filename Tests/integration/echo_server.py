"""A TCP echo server for the tests of connections afproxy relays as bytes (SOCKS5, capture)."""

from __future__ import annotations

import socket
import threading


class EchoServer:
    """A TCP server on 127.0.0.1 that says `greeting` first (a server-first protocol, as SMTP),
    then echoes what it reads until the client half-closes."""

    def __init__(self, greeting: bytes = b""):
        self.greeting = greeting
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.echo, args=(conn,), daemon=True).start()

    def echo(self, conn: socket.socket) -> None:
        with conn:
            if self.greeting:
                conn.sendall(self.greeting)
            while data := conn.recv(65536):
                conn.sendall(data)

    def close(self) -> None:
        self.listener.close()
