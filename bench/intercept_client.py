#!/usr/bin/env python3
"""Idle HTTPS connections through a forward proxy's CONNECT, for bench/intercept.

Each connection is opened here: a TCP connection to the proxy, `CONNECT HOST:PORT`, then TLS to
HOST verified against CAFILE (the proxy's CA when it intercepts, the origin's certificate through
a plain tunnel), then a GET. (The keep-alive load is bench/intercept_client.c: this Python client,
asyncio in one process, spent more CPU per request than the proxies it measured.)

  intercept_client.py idle PROXY_PORT HOST PORT CAFILE COUNT PID
      COUNT GETs on one connection first (so what the proxy keeps per request served, within a
      bound, is full before the first reading), then COUNT connections, one GET /1k each, left
      open and idle. The proxy's RSS (process tree, procmon.py) before the first and SETTLE_S
      after the last; connections the proxy closed are counted apart. Prints
      IDLE count=N ok=N alive=N before_kib=N after_kib=N per_conn_kib=F
Problems go to stderr. Raise `ulimit -n` before `idle` with a large COUNT.
"""
import os
import select
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402

SETTLE_S = 3.0
# More than the loops of any daemon measured here (one per core).
WARM_CONNECTIONS = 8
PATH = "/1k"


def tls_context(cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def request_bytes(host, port):
    return f"GET {PATH} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: afproxy-bench\r\n\r\n".encode()


def content_length(head):
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise ValueError("response without Content-Length")


# ------------------------------------------------------------------ idle --

def sync_tunnel(proxy_port, host, port, ctx):
    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=30)
    sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)   # byte by byte: nothing of the TLS stream may be read here
        if not chunk:
            raise RuntimeError("proxy closed during CONNECT")
        head += chunk
    if b" 200" not in head.split(b"\r\n")[0]:
        raise RuntimeError(f"CONNECT answered {head.splitlines()[0]!r}")
    return ctx.wrap_socket(sock, server_hostname=host)


def sync_get(tls, req):
    tls.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = tls.recv(65536)
        if not chunk:
            raise RuntimeError("closed before the response")
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    want = content_length(head + b"\r\n")
    while len(body) < want:
        chunk = tls.recv(65536)
        if not chunk:
            raise RuntimeError("closed in the body")
        body += chunk
    return head.startswith(b"HTTP/1.1 200")


def idle(proxy_port, host, port, cafile, count, pid):
    ctx = tls_context(cafile)
    req = request_bytes(host, port)
    # Warm every event loop and its curl session (the daemon hands new connections to its loops
    # in turn), so that what a loop keeps once, as its session's TLS connection to the origin,
    # is in `before` rather than in the figure per idle connection.
    warm = [sync_tunnel(proxy_port, host, port, ctx) for _ in range(WARM_CONNECTIONS)]
    for i in range(count):
        sync_get(warm[i % len(warm)], req)
    for tls in warm:
        tls.close()
    time.sleep(SETTLE_S)
    before = procmon.status_kib(pid, "VmRSS")
    conns, ok = [], 0
    for _ in range(count):
        try:
            tls = sync_tunnel(proxy_port, host, port, ctx)
            ok += sync_get(tls, req)
            conns.append(tls)
        except Exception as e:  # noqa: BLE001
            print(f"connection {len(conns)}: {e!r}", file=sys.stderr)
    time.sleep(SETTLE_S)
    after = procmon.status_kib(pid, "VmRSS")
    # Readable while idle means closed (or an alert): the proxy gave it up.
    readable, _, _ = select.select(conns, [], [], 0) if conns else ([], [], [])
    alive = len(conns) - len(readable)
    per = (after - before) / count if count else 0.0
    print(f"IDLE count={count} ok={ok} alive={alive} before_kib={before} after_kib={after} "
          f"per_conn_kib={per:.1f}")
    for c in conns:
        c.close()


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    proxy_port, host, port, cafile = int(args[0]), args[1], int(args[2]), args[3]
    if mode == "idle":
        idle(proxy_port, host, port, cafile, int(args[4]), int(args[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
