#!/usr/bin/env python3
"""Mixed load on afproxy for a long time, with its RSS, fds and live tasks sampled; for bench/soak.

  soak_load.py --proxy HOST:PORT --origin HOST:PORT --tls-port N --cafile PEM
               --control-socket PATH --pid PID --csv OUT [options]

Phases (the CSV's `phase` column):
  idle      after one request of each kind: the baseline (live tasks, fds)
  warmup    the load runs; samples not judged (heap, history ring and upstream
            connection pool still filling)
  load      the load runs; RSS judged against its median here
  cooldown  the load stopped and every client socket closed: waits up to
            --cooldown s for live tasks and fds to return to the baseline
  resumed   only if tasks were left suspended: after POST /v1/tasks/resume?all=1,
            do they end (a diagnosis, not part of the verdict)
Load, all through the proxy, each kind in its own thread(s):
  get       --get-conns keep-alive connections, 1 KiB GETs, --get-rate req/s in all
  upload    a --upload-mib MiB PUT to the origin every --upload-every s
  download  a 200 MiB GET read at full speed every --download-every s
  connect   CONNECT to the HTTPS origin, TLS, GET 1 MiB, close; every --connect-every s
  abort     every --abort-every s one client that breaks off: a download after
            1-32 MiB (FIN or RST), an upload half sent, a tunnel mid-transfer, a
            request closed before its answer
  early     every --early-every s one upload the origin answers 401 before reading
            its body (nginx `return 401`), with a client that then closes, stays
            silent until afproxy closes, sends its body anyway, or sent
            `Expect: 100-continue` (and so never sends it)
  victim    --victims downloads (one in three through a CONNECT tunnel) read at
            about 2 MiB/s, started again when they end, for the storm to steer
  storm     --storm-rate control calls a second on the victims' tasks over the
            control socket: suspend, resume, cancel (and a few illegal
            transitions, 409 expected); every 15 s suspend?all=1 then resume?all=1
Counts are cumulative in the CSV. A failure is anything unexpected: an error
status, a short body, a refused or reset connection (a victim the storm
canceled, a 409 or a 404 for a task that just ended are expected, counted apart).

Prints one line for bench/soak:
  SOAK key=value ...   (see the end of main)
and problems on stderr.
"""
import argparse
import csv
import json
import os
import random
import socket
import ssl
import statistics
import struct
import sys
import threading
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402

BIG = 200 * 1024 * 1024
MIB = 1024 * 1024
stop = threading.Event()
counts = Counter()
count_lock = threading.Lock()
victim_ports = set()          # local ports of the victims' connections to the proxy
canceled_ports = set()        # victims the storm canceled: their end is expected
victim_lock = threading.Lock()
errors = Counter()            # "kind: reason" -> count, for stderr


def count(key, reason=None):
    with count_lock:
        counts[key] += 1
        if reason:
            errors[f"{key}: {reason}"] += 1


# ------------------------------------------------------------------ HTTP --

class Conn:
    """A socket with a read buffer: enough HTTP/1.1 for this load."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def close(self, rst=False):
        try:
            if rst:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.sock.close()
        except OSError:
            pass

    def recv(self, n=1 << 20):
        data = self.sock.recv(n)
        if not data:
            raise ConnectionError("closed by peer")
        return data

    def head(self):
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def body(self, headers, limit=None):
        """Read (and drop) the body; returns its length. limit: stop after that
        many bytes (returns what was read)."""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return self._chunked()
        length = int(headers.get("content-length", "0"))
        want = length if limit is None else min(length, limit)
        got = min(len(self.buf), want)
        self.buf = self.buf[got:]
        sink = memoryview(bytearray(1 << 20))
        while got < want:
            n = self.sock.recv_into(sink, min(want - got, len(sink)))
            if not n:
                raise ConnectionError("closed by peer")
            got += n
        return got

    def _chunked(self):
        total = 0
        while True:
            while b"\r\n" not in self.buf:
                self.buf += self.recv(65536)
            line, self.buf = self.buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            while len(self.buf) < size + 2:
                self.buf += self.recv(max(65536, size + 2 - len(self.buf)))
            self.buf = self.buf[size + 2:]
            total += size
            if size == 0:
                return total


def request_bytes(method, target, host, extra="", length=None):
    lines = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: afproxy-soak\r\n{extra}"
    if length is not None:
        lines += f"Content-Length: {length}\r\n"
    return (lines + "\r\n").encode()


class Load:
    def __init__(self, args):
        self.args = args
        host, _, port = args.proxy.rpartition(":")
        self.proxy = (host, int(port))
        self.origin = args.origin
        self.tls_host = f"{args.origin.rpartition(':')[0]}:{args.tls_port}"
        self.tls = ssl.create_default_context(cafile=args.cafile)
        self.upload_body = b"\0" * (args.upload_mib * MIB)

    def url(self, path):
        return f"http://{self.origin}{path}"

    def connect(self, timeout=30):
        return Conn(socket.create_connection(self.proxy, timeout=timeout))

    def tunnel(self, timeout=30):
        """A CONNECT tunnel to the HTTPS origin, TLS set up: (Conn over TLS, our local port)."""
        c = self.connect(timeout)
        c.sock.sendall(request_bytes("CONNECT", self.tls_host, self.tls_host))
        status, headers = c.head()
        if status != 200:
            c.close()
            raise ConnectionError(f"CONNECT answered {status}")
        port = c.sock.getsockname()[1]  # before wrap_socket takes the fd over
        s = self.tls.wrap_socket(c.sock, server_hostname=self.tls_host.rpartition(":")[0])
        return Conn(s), port

    # ---------------------------------------------------------- workers --

    def pace(self, every, fn):
        """Run fn every `every` seconds (start to start) until stop."""
        while not stop.is_set():
            t0 = time.monotonic()
            fn()
            stop.wait(max(0.0, every - (time.monotonic() - t0)))

    def get_worker(self, rate):
        conn = None
        req = request_bytes("GET", self.url("/1k"), self.origin)
        interval = 1.0 / rate
        next_t = time.monotonic()
        while not stop.is_set():
            try:
                if conn is None:
                    conn = self.connect()
                conn.sock.sendall(req)
                status, headers = conn.head()
                n = conn.body(headers)
                if status == 200 and n == 1024:
                    count("get_done")
                else:
                    count("get_failed", f"HTTP {status}, {n} bytes")
                if "close" in headers.get("connection", "").lower():
                    conn.close()
                    conn = None
            except (OSError, ValueError, IndexError) as e:
                count("get_failed", type(e).__name__)
                if conn:
                    conn.close()
                conn = None
            next_t += interval
            delay = next_t - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            else:
                next_t = time.monotonic()
        if conn:
            conn.close()

    def upload_once(self):
        c = None
        try:
            c = self.connect()
            name = f"/upload/soak-{random.randrange(4)}.bin"
            c.sock.sendall(request_bytes("PUT", self.url(name), self.origin, length=len(self.upload_body)))
            c.sock.sendall(self.upload_body)
            status, headers = c.head()
            c.body(headers)
            if status in (200, 201, 204):
                count("upload_done")
            else:
                count("upload_failed", f"HTTP {status}")
        except (OSError, ValueError, IndexError) as e:
            count("upload_failed", type(e).__name__)
        finally:
            if c:
                c.close()

    def download_once(self):
        c = None
        try:
            c = self.connect(60)
            c.sock.sendall(request_bytes("GET", self.url("/200m"), self.origin))
            status, headers = c.head()
            n = c.body(headers)
            if status == 200 and n == BIG:
                count("download_done")
            else:
                count("download_failed", f"HTTP {status}, {n} bytes")
        except (OSError, ValueError, IndexError) as e:
            count("download_failed", type(e).__name__)
        finally:
            if c:
                c.close()

    def connect_once(self, path: str = "/1m", size: int = MIB):
        t = None
        try:
            t, _ = self.tunnel()
            t.sock.sendall(request_bytes("GET", path, self.tls_host, "Connection: close\r\n"))
            status, headers = t.head()
            n = t.body(headers)
            if status == 200 and n == size:
                count("connect_done")
            else:
                count("connect_failed", f"HTTP {status}, {n} bytes")
        except (OSError, ValueError, IndexError) as e:
            count("connect_failed", type(e).__name__)
        finally:
            if t:
                t.close()

    def abort_once(self):
        """A client that breaks off; only a failure to get as far as planned counts as failed."""
        kind = random.choice(["download", "download-rst", "upload", "tunnel", "early"])
        c = None
        try:
            if kind.startswith("download"):
                c = self.connect()
                c.sock.sendall(request_bytes("GET", self.url("/200m"), self.origin))
                status, headers = c.head()
                if status != 200:
                    raise ValueError(f"HTTP {status}")
                c.body(headers, limit=random.randint(1, 32) * MIB)
                c.close(rst=kind.endswith("rst"))
            elif kind == "upload":
                c = self.connect()
                c.sock.sendall(request_bytes("PUT", self.url("/upload/soak-abort.bin"), self.origin,
                                             length=len(self.upload_body)))
                c.sock.sendall(self.upload_body[: len(self.upload_body) // 2])
                time.sleep(0.05)
                c.close(rst=random.random() < 0.5)
            elif kind == "tunnel":
                t, _ = self.tunnel()
                c = t
                t.sock.sendall(request_bytes("GET", "/200m", self.tls_host))
                status, headers = t.head()
                if status != 200:
                    raise ValueError(f"HTTP {status} in the tunnel")
                t.body(headers, limit=random.randint(1, 16) * MIB)
                t.close(rst=random.random() < 0.5)
            else:  # the request, then gone before the answer
                c = self.connect()
                c.sock.sendall(request_bytes("GET", self.url("/200m"), self.origin))
                c.close(rst=random.random() < 0.5)
            count("abort_done")
        except (OSError, ValueError, IndexError) as e:
            count("abort_failed", f"{kind}: {type(e).__name__} {e}")
            if c:
                c.close()

    def early_once(self):
        """An upload answered before its body was read: afproxy must end the task whatever the
        client does next (issue 22); the cooldown's idle check is what proves it."""
        kind = random.choice(["closes", "silent", "sends-body", "expect"])
        c = None
        try:
            c = self.connect()
            length = random.choice([3, 64 << 10, MIB])
            extra = "Expect: 100-continue\r\n" if kind == "expect" else ""
            c.sock.sendall(request_bytes("POST", self.url(f"/early/{kind}"), self.origin, extra, length=length))
            status, headers = c.head()
            while 100 <= status < 200:
                # nginx sends its 100 even to a request it answers 401 (to drop the body it asks
                # for): afproxy passes the origin's 100 on; the client still sends nothing.
                status, headers = c.head()
            c.body(headers)
            if status != 401:
                raise ValueError(f"HTTP {status}")
            if kind == "sends-body":
                try:
                    c.sock.sendall(b"x" * length)
                except OSError:
                    pass  # afproxy may have closed already: the body was moot
            if kind != "closes":
                c.sock.settimeout(30)
                while c.sock.recv(65536):
                    pass  # afproxy closes the connection it cannot read another request on
            count("early_done")
        except (OSError, ValueError, IndexError) as e:
            count("early_failed", f"{kind}: {type(e).__name__} {e}")
        finally:
            if c:
                c.close()

    def victim(self, i):
        """A slow download for the storm to steer; again and again until stop."""
        through_tunnel = i % 3 == 2
        while not stop.is_set():
            c, port = None, None
            try:
                if through_tunnel:
                    c, port = self.tunnel(timeout=5)
                    host, target = self.tls_host, "/200m"
                else:
                    c = self.connect(timeout=5)
                    port = c.sock.getsockname()[1]
                    host, target = self.origin, self.url("/200m")
                with victim_lock:
                    victim_ports.add(port)
                c.sock.sendall(request_bytes("GET", target, host))
                self.victim_read(c, port)
            except InterruptedError:
                pass
            except (ConnectionError, ssl.SSLError) as e:
                with victim_lock:
                    mine = port in canceled_ports
                if mine:
                    count("victim_canceled")
                else:
                    count("victim_failed", f"{type(e).__name__} {e}")
            except (OSError, ValueError, IndexError) as e:
                count("victim_failed", f"{type(e).__name__} {e}")
                stop.wait(0.5)  # no tight loop against a daemon that refuses
            finally:
                if c:
                    c.close()
                with victim_lock:
                    victim_ports.discard(port)
                    canceled_ports.discard(port)

    def victim_read(self, c, port):
        """Head and body at about 2 MiB/s. A suspended task sends nothing for
        as long as it stays suspended: waiting is normal, only stop ends it."""
        c.sock.settimeout(1)
        while True:
            try:
                status, headers = c.head()
                break
            except TimeoutError:
                if stop.is_set():
                    raise InterruptedError("stopping")
        if status != 200:
            with victim_lock:
                mine = port in canceled_ports
            count("victim_canceled" if mine and status == 503 else "victim_failed",
                  None if mine and status == 503 else f"HTTP {status}")
            return
        want, got = int(headers.get("content-length", "0")), len(c.buf)
        c.buf = b""
        rate, t0, paused = 2 * MIB, time.monotonic(), 0.0
        while got < want:
            try:
                got += len(c.recv(65536))
            except TimeoutError:
                if stop.is_set():
                    raise InterruptedError("stopping")
                paused += 1
                continue
            ahead = got / rate - (time.monotonic() - t0 - paused)
            if ahead > 0:
                if stop.wait(ahead):
                    raise InterruptedError("stopping")
        count("victim_done" if got == want == BIG else "victim_failed",
              None if got == want == BIG else f"{got} of {want} bytes")

    def storm(self):
        interval = 1.0 / self.args.storm_rate
        last_bulk = time.monotonic()
        tasks = []
        n = 0
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                if n % 5 == 0:
                    _, body = control(self.args.control_socket, "GET", "/v1/tasks")
                    with victim_lock:
                        ports = set(victim_ports)
                    tasks = [t for t in json.loads(body)["tasks"]
                             if int(t.get("client", ":0").rpartition(":")[2] or 0) in ports]
                    count("ctl_ok")
                n += 1
                if time.monotonic() - last_bulk > 15:
                    last_bulk = time.monotonic()
                    for verb in ("suspend", "resume"):
                        st, _ = control(self.args.control_socket, "POST", f"/v1/tasks/{verb}?all=1")
                        count("ctl_ok" if st == 200 else "ctl_failed", None if st == 200 else f"bulk {verb}: {st}")
                        if verb == "suspend":
                            time.sleep(0.2)
                elif tasks:
                    t = random.choice(tasks)
                    r = random.random()
                    if r < 0.05:
                        verb = "cancel"
                    elif r < 0.10:  # illegal on purpose: 409 expected
                        verb = "resume" if t["state"] == "running" else "suspend"
                    else:
                        verb = "suspend" if t["state"] == "running" else "resume"
                    if verb == "cancel":
                        with victim_lock:
                            canceled_ports.add(int(t["client"].rpartition(":")[2]))
                    st, body = control(self.args.control_socket, "POST", f"/v1/tasks/{t['id']}/{verb}")
                    if st == 200:
                        count("ctl_ok")
                        t.update(json.loads(body))
                    elif st == 409:
                        count("ctl_conflict")
                    elif st == 404:
                        count("ctl_gone")
                    else:
                        count("ctl_failed", f"{verb}: HTTP {st}")
            except (OSError, ValueError, KeyError) as e:
                count("ctl_failed", type(e).__name__)
            stop.wait(max(0.0, interval - (time.monotonic() - t0)))


def control(path, method, target, timeout=10):
    """One request on the control socket: (status, body)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(f"{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                  "Content-Length: 0\r\n\r\n".encode())
        c = Conn(s)
        status, headers = c.head()
        length = int(headers.get("content-length", "0"))
        while len(c.buf) < length:
            c.buf += c.recv(1 << 20)
        return status, c.buf[:length]


# -------------------------------------------------------------- sampling --

def socket_table():
    """inode -> (local port, remote port, state) for every IPv4/IPv6 TCP socket."""
    table = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    p = line.split()
                    table[p[9]] = (int(p[1].rpartition(":")[2], 16), int(p[2].rpartition(":")[2], 16), p[3])
        except OSError:
            pass
    return table


def fd_census(pid, listen_port, origin_port, tls_port):
    """afproxy's fds: total, and its TCP sockets by role. Pooled upstream
    connections (idle, to the plain origin) are curl's connection cache, kept
    by design (up to 256); client sockets and tunnels must be gone at idle."""
    fd_dir = f"/proc/{pid}/fd"
    inodes = []
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return None
    for fd in names:
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.append(link[8:-1])
    table = socket_table()
    c = Counter(total=len(names))
    for ino in inodes:
        if ino not in table:
            continue
        local, remote, state = table[ino]
        if state == "0A":
            continue
        if local == listen_port:
            c["client"] += 1
        elif remote == origin_port:
            c["upstream"] += 1
            if state == "08":
                c["upstream_close_wait"] += 1
        elif remote == tls_port:
            c["tunnel"] += 1
    c["core"] = c["total"] - c["client"] - c["upstream"] - c["tunnel"]
    return c


def stats(path):
    try:
        _, body = control(path, "GET", "/v1/stats", timeout=10)
        return json.loads(body)
    except (OSError, ValueError):
        return None


COUNT_KEYS = ["get_done", "get_failed", "upload_done", "upload_failed", "download_done",
              "download_failed", "connect_done", "connect_failed", "abort_done", "abort_failed",
              "early_done", "early_failed",
              "victim_done", "victim_canceled", "victim_failed",
              "ctl_ok", "ctl_conflict", "ctl_gone", "ctl_failed"]


class Sampler:
    def __init__(self, args, out):
        self.args, self.t0, self.rows = args, time.monotonic(), []
        self.f = open(out, "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(["t_s", "phase", "rss_kib", "fds", "fds_core", "client_socks", "upstream_socks",
                         "upstream_close_wait", "tunnel_socks", "live", "suspended", "open_connections",
                         "served", "failed_tasks"] + COUNT_KEYS)
        self.origin_port = int(args.origin.rpartition(":")[2])
        self.listen_port = int(args.proxy.rpartition(":")[2])

    def sample(self, phase):
        a = self.args
        rss = procmon.status_kib(a.pid, "VmRSS")
        fds = fd_census(a.pid, self.listen_port, self.origin_port, a.tls_port)  # before our control connection
        st = stats(a.control_socket)
        if rss is None or fds is None:
            return None
        with count_lock:
            snap = [counts[k] for k in COUNT_KEYS]
        row = {"t_s": round(time.monotonic() - self.t0, 1), "phase": phase, "rss_kib": rss,
               "fds": fds["total"], "fds_core": fds["core"], "client_socks": fds["client"],
               "upstream_socks": fds["upstream"], "upstream_close_wait": fds["upstream_close_wait"],
               "tunnel_socks": fds["tunnel"],
               "live": st["live"] if st else -1,
               "suspended": st.get("byState", {}).get("suspended", 0) if st else -1,
               "open_connections": st.get("openConnections", -1) if st else -1,
               "served": st.get("served", -1) if st else -1, "failed_tasks": st.get("failed", -1) if st else -1}
        self.w.writerow(list(row.values()) + snap)
        self.f.flush()
        self.rows.append(row)
        return row


def is_idle(row, base):
    return (row["live"] == base["live"] and row["client_socks"] == 0 and row["tunnel_socks"] == 0
            and row["fds_core"] <= base["fds_core"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--origin", required=True)
    ap.add_argument("--tls-port", type=int, required=True)
    ap.add_argument("--cafile", required=True)
    ap.add_argument("--control-socket", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--duration", type=float, default=3600)
    ap.add_argument("--warmup", type=float, default=300)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--cooldown", type=float, default=60)
    ap.add_argument("--get-conns", type=int, default=4)
    ap.add_argument("--get-rate", type=float, default=200)
    ap.add_argument("--upload-mib", type=int, default=4)
    ap.add_argument("--upload-every", type=float, default=2)
    ap.add_argument("--download-every", type=float, default=10)
    ap.add_argument("--connect-every", type=float, default=1)
    ap.add_argument("--abort-every", type=float, default=1)
    ap.add_argument("--early-every", type=float, default=0.5)
    ap.add_argument("--victims", type=int, default=6)
    ap.add_argument("--storm-rate", type=float, default=10)
    args = ap.parse_args()
    load = Load(args)
    sampler = Sampler(args, args.csv)

    # One of each, so lazy set-up is in the baseline, then settle.
    load.upload_once()
    load.connect_once()
    # A tunnel that carries bulk is spliced, which starts the splice watcher (one epoll set for
    # the daemon's life); a 1 MiB exchange may stay on NIO.
    load.connect_once("/200m", 200 * MIB)
    c = load.connect()
    c.sock.sendall(request_bytes("GET", load.url("/1k"), load.origin, "Connection: close\r\n"))
    c.body(c.head()[1])
    c.close()
    with count_lock:
        counts.clear()
        errors.clear()
    time.sleep(2)
    base_rows = []
    for _ in range(3):
        time.sleep(0.5)
        row = sampler.sample("idle")
        if row:
            base_rows.append(row)
    if not base_rows:
        sys.exit("soak_load: afproxy is gone or its control socket does not answer")
    base = base_rows[-1]

    threads = [threading.Thread(target=load.get_worker, args=(args.get_rate / args.get_conns,), daemon=True)
               for _ in range(args.get_conns)]
    threads += [threading.Thread(target=load.pace, args=(every, fn), daemon=True) for every, fn in (
        (args.upload_every, load.upload_once), (args.download_every, load.download_once),
        (args.connect_every, load.connect_once), (args.abort_every, load.abort_once),
        (args.early_every, load.early_once))]
    threads += [threading.Thread(target=load.victim, args=(i,), daemon=True) for i in range(args.victims)]
    threads.append(threading.Thread(target=load.storm, daemon=True))
    t_start = time.monotonic()
    for t in threads:
        t.start()

    gone = False
    while (el := time.monotonic() - t_start) < args.duration:
        time.sleep(min(args.interval, max(0.0, args.duration - el)))
        if sampler.sample("warmup" if time.monotonic() - t_start < args.warmup else "load") is None:
            gone = True
            print("soak_load: afproxy is gone", file=sys.stderr)
            break
    stop.set()
    t_stop = time.monotonic()
    for t in threads:
        t.join(timeout=max(0.1, 40 - (time.monotonic() - t_stop)))
    stuck = sum(t.is_alive() for t in threads)
    if stuck:
        print(f"soak_load: {stuck} load threads still blocked 40 s after the stop", file=sys.stderr)

    # Cool-down: every client socket is closed; wait for the idle values.
    returned, last, after_resume = False, None, "not-needed"
    t_cool = time.monotonic()
    while not gone and time.monotonic() - t_cool < args.cooldown:
        time.sleep(1)
        last = sampler.sample("cooldown")
        if last is None:
            gone = True
            break
        if is_idle(last, base):
            returned = True
            break
    cool_s = time.monotonic() - t_cool
    leftover = ""
    if not gone and not returned:
        try:
            _, body = control(args.control_socket, "GET", "/v1/tasks")
            left = Counter(f"{t['kind']}/{t['state']}" for t in json.loads(body)["tasks"])
            leftover = ",".join(f"{k}:{v}" for k, v in sorted(left.items())) or "none"
            print(f"soak_load: live tasks left after the cool-down: {leftover}", file=sys.stderr)
        except (OSError, ValueError, KeyError) as e:
            print(f"soak_load: GET /v1/tasks after the load: {e}", file=sys.stderr)
        # Diagnosis: do tasks left suspended (their clients gone) end once resumed?
        if "suspended" in leftover:
            control(args.control_socket, "POST", "/v1/tasks/resume?all=1")
            for _ in range(10):
                time.sleep(1)
                row = sampler.sample("resumed")
                if row and is_idle(row, base):
                    after_resume = "idle"
                    break
            else:
                after_resume = "still-busy"
            print(f"soak_load: after resume?all=1: {after_resume}", file=sys.stderr)

    judged = [r["rss_kib"] for r in sampler.rows if r["phase"] == "load"]
    if errors:
        print("soak_load: failures and expected refusals by reason:", file=sys.stderr)
        for k, v in errors.most_common(30):
            print(f"  {v:7d}  {k}", file=sys.stderr)
    out = {"duration_s": round(t_stop - t_start), "samples": len(judged),
           "idle_live": base["live"], "idle_fds": base["fds"], "idle_fds_core": base["fds_core"],
           "idle_rss_kib": base["rss_kib"], "alive": int(not gone), "stuck_threads": stuck,
           "returned": int(returned), "cooldown_s": round(cool_s), "leftover": leftover or "none",
           "after_resume": after_resume}
    if judged:
        med = statistics.median(judged)
        out.update(rss_min_kib=min(judged), rss_max_kib=max(judged), rss_med_kib=int(med),
                   rss_within=int(min(judged) >= 0.9 * med and max(judged) <= 1.1 * med))
        pts = [(r["t_s"], r["rss_kib"]) for r in sampler.rows if r["phase"] == "load"]
        if len(pts) >= 2:
            mt = statistics.mean(p[0] for p in pts)
            mr = statistics.mean(p[1] for p in pts)
            den = sum((p[0] - mt) ** 2 for p in pts)
            slope = sum((p[0] - mt) * (p[1] - mr) for p in pts) / den if den else 0.0
            out["rss_slope_kib_per_h"] = round(slope * 3600)
    if last:
        out.update(final_live=last["live"], final_fds=last["fds"], final_fds_core=last["fds_core"],
                   final_client=last["client_socks"], final_upstream=last["upstream_socks"],
                   final_upstream_close_wait=last["upstream_close_wait"], final_tunnel=last["tunnel_socks"],
                   final_rss_kib=last["rss_kib"])
    peak = [r for r in sampler.rows if r["phase"] in ("warmup", "load")]
    if peak:
        out.update(max_live=max(r["live"] for r in peak), max_fds=max(r["fds"] for r in peak))
    with count_lock:
        out.update({k: counts[k] for k in COUNT_KEYS})
    print("SOAK " + " ".join(f"{k}={v}" for k, v in out.items()), flush=True)


if __name__ == "__main__":
    main()
