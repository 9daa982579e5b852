#!/usr/bin/env python3
"""RSS cost of slow downloads through a forward proxy, for bench/slow_clients.

  slow_clients.py --proxy HOST:PORT --url URL --count N --pid PID [options]

Opens COUNT connections to the proxy and sends on each an absolute-form GET of
URL (a large file; "?c=I" is appended so no two requests are alike). The
clients then read SLOWLY: every --interval seconds each socket gets one
non-blocking recv of --read-bytes (1 KiB every 100 ms by default, 10 KiB/s),
and each socket's receive buffer is made small (--rcvbuf) so the proxy meets
the slow reader at once instead of after the kernel's buffers fill; its MSS is
an Ethernet one (--mss), so the proxy's kernel send buffer is what it would be
for a real client, not megabytes as on loopback. A proxy
that applies backpressure then holds a bounded amount per transfer; one that
does not grows until the transfer ends (a memory cap stops the run first).

The proxy's RSS (VmRSS summed over its process tree, see procmon.py) is read
before the first connection (idle, after one warm-up request) and, once every
transfer has received body bytes, every second until it settles: the last
--window samples lie within 2% of the growth (+1 MiB). The loaded figure is the
median of that window.

While the slow transfers still run, optional probes:
  --probe-url URL        time a 1 KiB GET through the proxy on a new
                         connection (connect to last body byte), --probes times
  --hold S               keep the transfers running S seconds at the end (to
                         look at them with ss, afproxyctl, /proc)
  --control-socket PATH  afproxy: time GET /v1/tasks on its control socket
                         (request sent to last byte received; the connection
                         is opened before the clock starts), and read
                         GET /v1/stats for the live task count

Prints for bench/slow_clients one line
  SLOW count=N opened=N ok=N running=N flowing=N min_body=B total_body=B
       idle_kib=K loaded_kib=K per_kib=F settled=0|1 settle_s=S aborted=none|memcap|gone
and with probes
  PROBE get_n=N get_ok=N get_ms_med=F get_ms_max=F
        tasks_n=N tasks_ms_med=F tasks_ms_max=F tasks_bytes=B tasks_listed=N live=N
Problems go to stderr. Raise `ulimit -n` above COUNT first.
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402
from idle_conns import read_response  # noqa: E402


def rss(pid):
    return procmon.status_kib(pid, "VmRSS")


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 4 * 1024 * 1024


class Client:
    """One slow download: the head is parsed from the first bytes read."""

    __slots__ = ("sock", "head", "status", "body", "eof", "error")

    def __init__(self, sock):
        self.sock, self.head, self.status = sock, b"", None
        self.body, self.eof, self.error = 0, False, None

    def feed(self, data):
        if self.status is not None:
            self.body += len(data)
            return
        self.head += data
        if b"\r\n\r\n" in self.head:
            head, rest = self.head.split(b"\r\n\r\n", 1)
            try:
                self.status = int(head.split(b"\r\n", 1)[0].split()[1])
            except (IndexError, ValueError):
                self.status = 0
            self.body, self.head = len(rest), b""

    @property
    def running(self):
        return self.status == 200 and self.body > 0 and not self.eof and self.error is None


class Slow:
    def __init__(self, args):
        self.args = args
        host, _, port = args.proxy.rpartition(":")
        self.proxy = (host, int(port))
        self.authority = urlsplit(args.url).netloc
        self.clients = []
        self.errors = {}

    def request(self, i):
        sep = "&" if "?" in self.args.url else "?"
        return (f"GET {self.args.url}{sep}c={i} HTTP/1.1\r\nHost: {self.authority}\r\n"
                "User-Agent: afproxy-bench-slow\r\n\r\n").encode()

    def count_error(self, key):
        self.errors[key] = self.errors.get(key, 0) + 1

    def open_one(self, i):
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if self.args.rcvbuf > 0:
                # Before connect, so the advertised window is small from the start.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.args.rcvbuf)
            if self.args.mss > 0:
                # An Internet-sized MSS instead of loopback's 64 KiB: the proxy's kernel
                # send buffer is then sized as for a real client (about 2 x 10 segments)
                # instead of megabytes, which N clients would take from the whole
                # machine's TCP memory (net.ipv4.tcp_mem).
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, self.args.mss)
            s.settimeout(10)
            s.connect(self.proxy)
            s.sendall(self.request(i))
            s.setblocking(False)
            self.clients.append(Client(s))
        except OSError as e:
            self.count_error(f"connect/send: {type(e).__name__}")

    def read_pass(self):
        """One slow read on every live socket."""
        n = self.args.read_bytes
        for c in self.clients:
            if c.eof or c.error:
                continue
            try:
                data = c.sock.recv(n)
            except BlockingIOError:
                continue
            except OSError as e:
                c.error = type(e).__name__
                continue
            if data:
                c.feed(data)
            else:
                c.eof = True

    def pace(self, seconds):
        """Keep reading slowly for SECONDS."""
        end = time.monotonic() + seconds
        while True:
            start = time.monotonic()
            self.read_pass()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, max(0.0, self.args.interval - (time.monotonic() - start))))

    def open_all(self):
        """Open in batches, reading between them, so no accept queue overflows."""
        batch = 50
        for first in range(0, self.args.count, batch):
            for i in range(first, min(first + batch, self.args.count)):
                self.open_one(i)
            self.pace(0.02)

    def all_running(self):
        return all(c.running or c.eof or c.error for c in self.clients)


def probe_get(proxy, url):
    """One 1 KiB GET through the proxy on a new connection: (ok, ms)."""
    authority = urlsplit(url).netloc
    request = (f"GET {url} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n"
               "User-Agent: afproxy-bench-probe\r\n\r\n").encode()
    t0 = time.perf_counter()
    try:
        with socket.create_connection(proxy, timeout=10) as s:
            s.sendall(request)
            status, _ = read_response(s)
        return 200 <= status < 300, (time.perf_counter() - t0) * 1000
    except OSError as e:
        ms = (time.perf_counter() - t0) * 1000
        print(f"slow_clients: probe GET failed after {ms:.1f} ms: {e} ({listen_state(proxy[1])})",
              file=sys.stderr)
        return False, ms


def listen_state(port):
    """Whether anything listens on PORT, and its accept queue (for a failed probe)."""
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                p = line.split()
                if p[3] == "0A" and int(p[1].rpartition(":")[2], 16) == port:
                    rx = int(p[4].partition(":")[2], 16)
                    return f"port {port} listening, accept queue {rx}"
    except OSError:
        pass
    return f"nothing listens on port {port}"


def control_get(path, target):
    """GET TARGET on the control socket: (ms from request sent to last byte, body bytes)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(path)
        request = f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
        t0 = time.perf_counter()
        s.sendall(request)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(1 << 20)
            if not chunk:
                raise ConnectionError("control socket closed before the response head")
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        parts = [body]
        got = len(body)
        while length is None or got < length:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        ms = (time.perf_counter() - t0) * 1000
    status = int(head.split(b"\r\n", 1)[0].split()[1])
    if status != 200:
        raise ConnectionError(f"control GET {target}: HTTP {status}")
    return ms, b"".join(parts)


def fmt(v):
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--read-bytes", type=int, default=1024)
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("--rcvbuf", type=int, default=4096, help="SO_RCVBUF of each client, 0: system default")
    ap.add_argument("--mss", type=int, default=1460, help="TCP_MAXSEG of each client, 0: loopback's")
    ap.add_argument("--start-timeout", type=float, default=120, help="seconds for all transfers to start")
    ap.add_argument("--settle-max", type=float, default=60, help="seconds to wait for RSS to settle")
    ap.add_argument("--window", type=int, default=5, help="samples (1 s apart) that must agree")
    ap.add_argument("--rss-cap-kib", type=int, default=0, help="abort above this RSS; 0: half of MemAvailable")
    ap.add_argument("--probe-url")
    ap.add_argument("--probes", type=int, default=10)
    ap.add_argument("--control-socket")
    ap.add_argument("--hold", type=float, default=0, help="keep the transfers running this long at the end")
    args = ap.parse_args()

    pid = args.pid
    cap = args.rss_cap_kib or mem_available_kib() // 2
    slow = Slow(args)
    aborted = "none"

    # One throw-away request, so one-time allocations are not charged to the transfers.
    if args.probe_url:
        probe_get(slow.proxy, args.probe_url)
    time.sleep(1.0)
    idle = statistics.median(v for v in (rss(pid), rss(pid), rss(pid)) if v is not None)

    slow.open_all()
    t_open = time.monotonic()
    while not slow.all_running() and time.monotonic() - t_open < args.start_timeout:
        slow.pace(0.5)
        now = rss(pid)
        if now is None:
            aborted = "gone"
            break
        if now > cap:
            aborted = "memcap"
            break
    started = time.monotonic() - t_open
    if not slow.all_running():
        print(f"slow_clients: not all transfers started within {started:.0f} s", file=sys.stderr)

    # Settle: one sample a second until the last WINDOW agree (or settle-max).
    samples, settled, t_settle = [], False, time.monotonic()
    body_at = []
    while aborted == "none" and time.monotonic() - t_settle < args.settle_max:
        slow.pace(1.0)
        now = rss(pid)
        if now is None:
            aborted = "gone"
            break
        if now > cap:
            aborted = "memcap"
            break
        samples.append(now)
        body_at.append([c.body for c in slow.clients])
        if len(samples) >= args.window:
            w = samples[-args.window:]
            if max(w) - min(w) <= 0.02 * max(0, statistics.median(w) - idle) + 1024:
                settled = True
                break
    settle_s = time.monotonic() - t_settle
    window = samples[-args.window:] or [rss(pid) or 0]
    loaded = statistics.median(window)
    # Flowing: received bytes during the settle window, i.e. the transfer still moves.
    first = body_at[-len(window)] if len(body_at) >= len(window) else [0] * len(slow.clients)
    flowing = sum(1 for c, b0 in zip(slow.clients, first) if c.running and c.body > b0)
    running = sum(1 for c in slow.clients if c.running)
    ok = sum(1 for c in slow.clients if c.status == 200)
    bodies = [c.body for c in slow.clients] or [0]
    if aborted == "memcap":
        print(f"slow_clients: RSS above the cap of {cap} KiB: stopped", file=sys.stderr)
    statuses = {}
    for c in slow.clients:
        if not c.running:
            key = c.error or ("closed" if c.eof else f"HTTP {c.status}" if c.status else "no response")
            statuses[key] = statuses.get(key, 0) + 1
    if statuses or slow.errors:
        print(f"slow_clients: not running: {statuses} {slow.errors}", file=sys.stderr)
    try:
        with open("/proc/net/sockstat") as f:
            tcp = next((line.strip() for line in f if line.startswith("TCP:")), "")
        print(f"slow_clients: kernel {tcp} (mem in pages)", file=sys.stderr)
    except OSError:
        pass
    print(f"SLOW count={args.count} opened={len(slow.clients)} ok={ok} running={running} "
          f"flowing={flowing} min_body={min(bodies)} total_body={sum(bodies)} "
          f"idle_kib={int(idle)} loaded_kib={int(loaded)} "
          f"per_kib={(loaded - idle) / args.count:.1f} settled={int(settled)} "
          f"settle_s={settle_s:.0f} start_s={started:.1f} aborted={aborted}", flush=True)

    if aborted == "none" and (args.probe_url or args.control_socket):
        get_ms, get_ok = [], 0
        tasks_ms, tasks_bytes, listed, live = [], 0, -1, -1
        for _ in range(args.probes if args.probe_url else 0):
            slow.pace(0.2)
            ok1, ms = probe_get(slow.proxy, args.probe_url)
            get_ok += ok1
            get_ms.append(ms)
        if args.control_socket:
            try:
                _, stats = control_get(args.control_socket, "/v1/stats")
                live = json.loads(stats).get("live", -1)
                for _ in range(5):
                    slow.pace(0.2)
                    ms, body = control_get(args.control_socket, "/v1/tasks")
                    tasks_ms.append(ms)
                    tasks_bytes = len(body)
                listed = len(json.loads(body).get("tasks", []))
            except (OSError, ValueError) as e:
                print(f"slow_clients: control socket: {e}", file=sys.stderr)
        line = f"PROBE get_n={len(get_ms)} get_ok={get_ok}"
        if get_ms:
            line += f" get_ms_med={statistics.median(get_ms):.2f} get_ms_max={max(get_ms):.2f}"
        if tasks_ms:
            line += (f" tasks_n={len(tasks_ms)} tasks_ms_med={statistics.median(tasks_ms):.2f}"
                     f" tasks_ms_max={max(tasks_ms):.2f} tasks_bytes={tasks_bytes}"
                     f" tasks_listed={listed} live={live}")
        print(line, flush=True)
        still = sum(1 for c in slow.clients if c.running)
        if still < running:
            print(f"slow_clients: {running - still} transfers stopped during the probes", file=sys.stderr)

    if args.hold > 0:
        print(f"slow_clients: holding the transfers for {args.hold:.0f} s", file=sys.stderr, flush=True)
        slow.pace(args.hold)
    for c in slow.clients:
        c.sock.close()


if __name__ == "__main__":
    main()
