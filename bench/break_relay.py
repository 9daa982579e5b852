#!/usr/bin/env python3
"""A TCP relay in front of bench/run's nginx origin that breaks a response off after a fixed number
of body bytes, for the "concurrent download tasks with breaks" measurement.

  break_relay.py LISTEN_PORT ORIGIN_PORT BREAK_BYTES

It listens on 127.0.0.1:LISTEN_PORT and relays each connection to 127.0.0.1:ORIGIN_PORT. On the
way back it follows the responses (their heads, and bodies by `Content-Length`): a response whose
body is longer than BREAK_BYTES is passed on up to BREAK_BYTES bytes of body, and then both sides
of the connection are closed (a FIN to the client in the middle of the body, as an origin that
breaks off would). A shorter response passes whole, and the next response on the same
connection (a client reuses kept-alive connections) gets BREAK_BYTES of its own. nginx does
everything HTTP: the strong ETag, Range and If-Range, so a client that asks for the rest gets
another BREAK_BYTES, and a 50 MiB file broken every 8 MiB takes seven requests.

BREAK_RELAY_DEBUG=1 prints one line per connection to stderr: how it ended.

Why a relay and not Tests/integration/range_origin.py: that origin makes its bytes in Python for
every answer; here nginx sends a file with sendfile and this process only copies 1 MiB reads, so
the origin's side costs little next to the daemon under test. One thread per direction per
connection; the copies release the GIL.
"""
import os
import re
import socket
import socketserver
import sys
import threading

CHUNK = 1 << 20
HEAD_LIMIT = 64 * 1024  # a response head longer than this: pass the rest through unexamined
DEBUG = os.environ.get("BREAK_RELAY_DEBUG") == "1"
CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*([0-9]+)[ \t]*\r\n", re.IGNORECASE)
UNBOUNDED = float("inf")   # a body without Content-Length: until the origin closes


def pump_up(client, origin):
    """Client to origin, until the client stops sending or either side is gone."""
    buf = bytearray(64 * 1024)
    view = memoryview(buf)
    try:
        while True:
            n = client.recv_into(buf)
            if n == 0:
                origin.shutdown(socket.SHUT_WR)
                return
            origin.sendall(view[:n])
    except OSError:
        return


class Relay(socketserver.BaseRequestHandler):
    def handle(self):
        client = self.request
        try:
            origin = socket.create_connection(("127.0.0.1", self.server.origin_port))
        except OSError:
            return
        for s in (client, origin):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump_up, args=(client, origin), daemon=True).start()
        why = "origin closed"
        try:
            why = self.relay_down(origin, client)
        except OSError as e:
            why = f"error: {e}"
        finally:
            if DEBUG:
                sys.stderr.write(why + "\n")
                sys.stderr.flush()
            for s in (origin, client):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def relay_down(self, origin, client):
        """Origin to client; returns why it stopped."""
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        head = bytearray()   # the current response's head so far
        body_left = None     # body bytes of the current response not yet passed; None: in its head
        budget = 0           # body bytes the current response may still pass before the break
        responses = 0
        while True:
            n = origin.recv_into(buf)
            if n == 0:
                return f"origin closed after {responses} responses"
            pos = 0
            while pos < n:
                if body_left is None:
                    before = len(head)
                    head += view[pos:n]
                    end = head.find(b"\r\n\r\n")
                    if end < 0 and len(head) <= HEAD_LIMIT:
                        client.sendall(view[pos:n])
                        pos = n
                        continue
                    take = (end + 4 - before) if end >= 0 else n - pos
                    client.sendall(view[pos:pos + take])
                    pos += take
                    match = CONTENT_LENGTH.search(head, 0, end + 2) if end >= 0 else None
                    body_left = int(match.group(1)) if match else UNBOUNDED
                    budget = self.server.break_bytes
                    head = bytearray()
                    responses += 1
                else:
                    take = int(min(n - pos, body_left, budget))
                    client.sendall(view[pos:pos + take])
                    pos += take
                    body_left -= take
                    budget -= take
                    if body_left == 0:
                        body_left = None          # complete; the next bytes are a new head
                    elif budget == 0:
                        return f"break after {self.server.break_bytes} body bytes of response {responses}"


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    listen_port, origin_port, break_bytes = (int(a) for a in sys.argv[1:])
    server = Server(("127.0.0.1", listen_port), Relay)
    server.origin_port = origin_port
    server.break_bytes = break_bytes
    server.serve_forever()


if __name__ == "__main__":
    main()
