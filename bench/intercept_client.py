#!/usr/bin/env python3
"""HTTPS clients through a forward proxy's CONNECT, for bench/intercept.

wrk cannot speak TLS through a proxy, so this opens each connection itself: a TCP connection to
the proxy, `CONNECT HOST:PORT`, then TLS to HOST verified against CAFILE (the proxy's CA when it
intercepts, the origin's certificate through a plain tunnel), then keep-alive GETs.

  intercept_client.py load PROXY_PORT HOST PORT CAFILE CONNS SECONDS
      CONNS connections (asyncio, one thread), all set up before the clock starts, each sending
      GET /1k back to back for SECONDS. Prints
      LOAD conns=N requests=N seconds=F rps=F p50_ms=F p99_ms=F errors=N
  intercept_client.py idle PROXY_PORT HOST PORT CAFILE COUNT PID
      COUNT GETs on one connection first (so what the proxy keeps per request served, within a
      bound, is full before the first reading), then COUNT connections, one GET /1k each, left
      open and idle. The proxy's RSS (process tree, procmon.py) before the first and SETTLE_S
      after the last; connections the proxy closed are counted apart. Prints
      IDLE count=N ok=N alive=N before_kib=N after_kib=N per_conn_kib=F
Problems go to stderr. Raise `ulimit -n` before `idle` with a large COUNT.
"""
import asyncio
import os
import select
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402

SETTLE_S = 3.0
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


# ------------------------------------------------------------------ load --

async def open_tunnel(proxy_port, host, port, ctx):
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
        raise RuntimeError(f"CONNECT answered {head.splitlines()[0]!r}")
    await writer.start_tls(ctx, server_hostname=host)
    return reader, writer


async def one_get(reader, writer, req):
    writer.write(req)
    head = await reader.readuntil(b"\r\n\r\n")
    body = await reader.readexactly(content_length(head))
    if not head.startswith(b"HTTP/1.1 200") or len(body) != 1024:
        raise RuntimeError(f"answer {head.splitlines()[0]!r}, {len(body)} bytes")


async def load(proxy_port, host, port, cafile, conns, seconds):
    ctx = tls_context(cafile)
    req = request_bytes(host, port)
    pairs = []
    errors = 0
    for _ in range(conns):   # one at a time: the setup is not what is measured
        try:
            pair = await open_tunnel(proxy_port, host, port, ctx)
            await one_get(*pair, req)
            pairs.append(pair)
        except Exception as e:  # noqa: BLE001 - any failure counts, the run goes on
            errors += 1
            print(f"setup: {e!r}", file=sys.stderr)
    latencies = []
    start = time.monotonic()
    deadline = start + seconds

    async def worker(pair):
        nonlocal errors
        reader, writer = pair
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                await one_get(reader, writer, req)
            except Exception as e:  # noqa: BLE001
                errors += 1
                print(f"request: {e!r}", file=sys.stderr)
                return
            latencies.append(time.monotonic() - t0)

    await asyncio.gather(*(worker(p) for p in pairs))
    elapsed = time.monotonic() - start
    for _, writer in pairs:
        writer.close()
    latencies.sort()
    n = len(latencies)

    def pct(p):
        return latencies[min(n - 1, int(p * n))] * 1000 if n else 0.0

    print(f"LOAD conns={conns} requests={n} seconds={elapsed:.3f} rps={n / elapsed:.1f} "
          f"p50_ms={pct(0.50):.2f} p99_ms={pct(0.99):.2f} errors={errors}")


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
    warm = sync_tunnel(proxy_port, host, port, ctx)
    for _ in range(count):
        sync_get(warm, req)
    warm.close()
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
    if mode == "load":
        asyncio.run(load(proxy_port, host, port, cafile, int(args[4]), float(args[5])))
    elif mode == "idle":
        idle(proxy_port, host, port, cafile, int(args[4]), int(args[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
