#!/usr/bin/env python3
"""RSS cost of idle keep-alive client connections to a forward proxy.

  idle_conns.py PROXY_HOST:PORT URL COUNT PID

First sends COUNT requests over one keep-alive connection, so that what a
proxy keeps per request served, within a bound (afproxy's task history, a
cache), is full before the first reading. Then opens COUNT connections. On each it sends one complete
absolute-form GET of URL with keep-alive and reads the whole response, so the
connection is fully set up (parser state, buffers, any upstream connection the
proxy keeps for it); then it leaves the connection idle. The proxy's VmRSS
(process tree, see procmon.py) is read before the first connection and after
the last one, with a short settle pause, and the connections are checked to
still be open: a proxy that closes them after one response would otherwise
look free.

Prints one line for bench/run:
  IDLE count=N opened=N ok=N alive=N before_kib=N after_kib=N per_conn_kib=F
and problems, if any, on stderr. Raise `ulimit -n` before running.
"""
import os
import socket
import sys
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402

# Idle means idle for a few seconds, as a browser's pooled connections are: afproxy sheds a
# connection's HTTP codec after 250 ms without a request, and the last connection opened must
# have had that time before the reading.
SETTLE_S = 3.0
# More than the loops of any daemon measured here (one per core).
WARM_CONNECTIONS = 8


def read_response(sock):
    """Read one response; return (status, keep_alive) or raise."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before response head")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    version, status = lines[0].split(" ")[0], int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    conn = headers.get("connection", "")
    keep_alive = ("close" not in conn) if version == "HTTP/1.1" else ("keep-alive" in conn)
    if "content-length" in headers:
        need = int(headers["content-length"]) - len(body)
        while need > 0:
            chunk = sock.recv(min(need, 65536))
            if not chunk:
                raise ConnectionError("closed inside body")
            need -= len(chunk)
    elif "chunked" in headers.get("transfer-encoding", ""):
        while not body.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed inside chunked body")
            body += chunk
    else:
        keep_alive = False  # body delimited by close
    return status, keep_alive


def open_one(proxy, request):
    s = socket.create_connection(proxy, timeout=10)
    s.sendall(request)
    status, keep_alive = read_response(s)
    return s, status, keep_alive


def is_alive(sock):
    """Open and idle: a non-blocking peek has nothing to read and no EOF."""
    sock.setblocking(False)  # with a timeout set, Python would wait first
    try:
        data = sock.recv(1, socket.MSG_PEEK)
        return data != b""  # b"" is EOF; unsolicited bytes still mean open
    except BlockingIOError:
        return True
    except OSError:
        return False


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    host, _, port = argv[1].rpartition(":")
    proxy = (host, int(port))
    url, count, pid = argv[2], int(argv[3]), int(argv[4])
    authority = urlsplit(url).netloc
    request = (f"GET {url} HTTP/1.1\r\nHost: {authority}\r\n"
               "Connection: keep-alive\r\nUser-Agent: afproxy-bench\r\n\r\n").encode()

    # Warm-up: as many requests as there will be connections, on one keep-alive
    # connection, before the first reading. What a proxy keeps per request
    # served but bounds (afproxy's task history: at most history-size records,
    # 1000 by default; a cache) is then at its steady state, and what the
    # idle connections add is theirs alone. Without it, each connection's one
    # request would also be charged with a history record (about 1.1 KiB).
    # The requests go over WARM_CONNECTIONS connections open together, so that every event loop
    # of a daemon that hands connections to its loops in turn is warm too.
    try:
        warm = [open_one(proxy, request)[0] for _ in range(WARM_CONNECTIONS)]
        for i in range(count - WARM_CONNECTIONS):
            s = warm[i % len(warm)]
            s.sendall(request)
            _, keep_alive = read_response(s)
            if not keep_alive:
                s.close()
                warm[i % len(warm)] = open_one(proxy, request)[0]
        for s in warm:
            s.close()
    except OSError as e:
        print(f"idle_conns: warm-up requests failed: {e}", file=sys.stderr)
    time.sleep(SETTLE_S)
    before = procmon.status_kib(pid, "VmRSS")

    socks, ok, errors = [], 0, {}
    for _ in range(count):
        try:
            s, status, _ = open_one(proxy, request)
            socks.append(s)
            if 200 <= status < 300:
                ok += 1
            else:
                errors[f"HTTP {status}"] = errors.get(f"HTTP {status}", 0) + 1
        except OSError as e:
            key = type(e).__name__
            errors[key] = errors.get(key, 0) + 1

    time.sleep(SETTLE_S)
    after = procmon.status_kib(pid, "VmRSS")
    alive = sum(1 for s in socks if is_alive(s))
    for s in socks:
        s.close()

    if errors:
        print(f"idle_conns: failures: {errors}", file=sys.stderr)
    if before is None or after is None:
        sys.exit(f"idle_conns: process {pid} is gone")
    print(f"IDLE count={count} opened={len(socks)} ok={ok} alive={alive} "
          f"before_kib={before} after_kib={after} per_conn_kib={(after - before) / count:.2f}")


if __name__ == "__main__":
    main(sys.argv)
