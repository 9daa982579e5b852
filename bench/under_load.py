#!/usr/bin/env python3
"""afproxy watched while it works: issue 13's "under load" targets, measured in one run.

  bench/under_load.py            (release binaries from .build/release; AFPROXY_BIN and
                                  AFPROXYCTL_BIN choose others)

1. Answers with many live tasks. UL_TASKS (1000) clients each start a slow download through the
   proxy (an origin that sends 1 KiB every half second), so the daemon holds that many live,
   moving tasks. Then each of these is timed UL_SAMPLES (7) times, and the median and the worst
   are printed beside the 100 ms target:
     - `afproxyctl list` (the whole command: exec, connect, fetch, format, exit),
     - `GET /v1/tasks` on the control socket (request to last byte),
     - `GET /metrics` on the control socket,
     - the dashboard's first render in headless chromium: from navigation start to the frame in
       which the first piece of its task table (at least a screenful of rows) is drawn and laid
       out (the page's own `performance` clock), when the daemon has `--web` and selenium and
       chromium are installed; and, printed apart with no target, to the frame that drew the
       last piece (every live task). Beside it, the same browser's floor: a one-line page from a
       plain local server to its first paint, under the same load.
2. What watching costs. wrk at 64 connections (1 KiB GETs from an nginx origin through the proxy,
   UL_SECONDS (10) each), in UL_ROUNDS (3) alternating rounds: nobody watching; a dashboard
   (headless chromium) and `afproxyctl watch` on a terminal (a pty) open; and, apart, `afproxyctl
   watch --json`, which reads every event. Prints req/s of each, their medians and the drop,
   beside the 5 % target for the first pair, and the CPU the daemon used per request with and
   without the watchers beside the CPU the browser and `watch` used (percent of one core): what
   of a drop is the daemon's and what is a page drawing on the same cores. The live tasks of part 1
   are gone by then: this part measures the event stream's cost per request, not the 1,000-task
   page.
3. A reader that stops. A subscriber to `GET /v1/events` stops reading while wrk runs; the
   daemon's RSS is read before and after, and the `missed` count the reader gets when it reads
   again is printed.

Needs nginx and wrk (Debian) and, for the dashboard, chromium, chromium-driver and selenium.
Prints `UNDER_LOAD key=value …` lines; problems go to stderr. Timings on a shared 2-core machine
are noisy: compare figures of one run only.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import procmon  # noqa: E402

TASKS = int(os.environ.get("UL_TASKS", "1000"))
SAMPLES = int(os.environ.get("UL_SAMPLES", "7"))
SECONDS = int(os.environ.get("UL_SECONDS", "10"))
ROUNDS = int(os.environ.get("UL_ROUNDS", "3"))
AFPROXY = os.environ.get("AFPROXY_BIN", os.path.join(REPO, ".build/release/afproxy"))
AFPROXYCTL = os.environ.get("AFPROXYCTL_BIN", os.path.join(REPO, ".build/release/afproxyctl"))
TARGET_MS = 100.0
TARGET_DROP = 5.0


def warn(message: str) -> None:
    print(f"under_load: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 30):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def control_get(sock: str, path: str) -> tuple[float, bytes]:
    """Milliseconds from the request to the answer's last byte, and the body."""
    conn = UnixConnection(sock)
    conn.connect()
    start = time.perf_counter()
    conn.request("GET", path)
    body = conn.getresponse().read()
    elapsed = (time.perf_counter() - start) * 1000
    conn.close()
    return elapsed, body


# ------------------------------------------------------------------------------------------
# origins


def start_nginx(tmp: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    root = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(root, "www"))
    with open(os.path.join(root, "www", "1k"), "wb") as f:
        f.write(os.urandom(1024))
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process on; worker_processes 1;
pid {root}/nginx.pid; error_log {root}/error.log warn;
events {{ worker_connections 4096; }}
http {{ access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path {root}/b; proxy_temp_path {root}/p; fastcgi_temp_path {root}/f;
  uwsgi_temp_path {root}/u; scgi_temp_path {root}/s;
  server {{ listen 127.0.0.1:{port} backlog=4096; root {root}/www; }} }}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", root], stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


def wait_port(port: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class SlowWorld:
    """An origin that sends a long body 1 KiB each half second, and TASKS clients reading it
    through the proxy, all on one asyncio loop in a thread."""

    def __init__(self, proxy_port: int):
        self.proxy_port = proxy_port
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.ready = threading.Event()
        self.stopping = False
        self.clients_ok = 0
        self.clients: list = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._origin, "127.0.0.1", 0, backlog=4096)
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        while not self.stopping:
            await asyncio.sleep(0.2)
        server.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    async def _origin(self, reader, writer) -> None:
        try:
            while not (await reader.readline()) in (b"\r\n", b""):
                pass
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n")
            chunk = b"x" * 1024
            while not self.stopping:
                writer.write(chunk)
                await writer.drain()
                await asyncio.sleep(0.5)
        except (OSError, asyncio.CancelledError):
            pass
        writer.close()

    async def _client(self, index: int) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.proxy_port)
            writer.write(f"GET http://127.0.0.1:{self.port}/slow/{index} HTTP/1.1\r\n"
                         f"Host: 127.0.0.1:{self.port}\r\n\r\n".encode())
            await writer.drain()
            self.clients_ok += 1
            while not self.stopping and await reader.read(65536):
                pass
            writer.close()
        except asyncio.CancelledError:
            writer.close()
        except OSError as error:
            warn(f"slow client {index}: {error}")

    def start_clients(self, count: int) -> None:
        # The loop holds its tasks weakly: without these futures the garbage collector may take
        # a client mid-read and close its connection, which ends the task.
        self.clients = [asyncio.run_coroutine_threadsafe(self._client(index), self.loop)
                        for index in range(count)]

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(10)


# ------------------------------------------------------------------------------------------
# the daemon, the dashboard, watch


class Daemon:
    def __init__(self, tmp: str, web: bool):
        self.port = free_port()
        self.sock = os.path.join(tmp, "control.sock")
        self.web_port = free_port() if web else None
        args = [AFPROXY, "--listen", f"127.0.0.1:{self.port}", "--control-socket", self.sock,
                "--state-dir", os.path.join(tmp, "state"), "--log-level", "warning"]
        if web:
            args += ["--web", f"127.0.0.1:{self.web_port}"]
        self.log = open(os.path.join(tmp, "afproxy.log"), "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        wait_port(self.port)
        deadline = time.monotonic() + 15
        while not os.path.exists(self.sock):
            if time.monotonic() > deadline:
                raise RuntimeError("the control socket did not appear")
            time.sleep(0.05)

    def live(self) -> list[dict]:
        return json.loads(control_get(self.sock, "/v1/tasks")[1])["tasks"]

    def web_url(self) -> str | None:
        out = subprocess.run([AFPROXYCTL, "--socket", self.sock, "web"], capture_output=True, text=True)
        found = re.search(r"http://\S+", out.stdout)
        return found.group(0) if out.returncode == 0 and found else None

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def daemon_has_web() -> bool:
    out = subprocess.run([AFPROXY, "--help"], capture_output=True, text=True)
    return "--web" in out.stdout


def browser():
    """Headless chromium through selenium, or None (and why) when it is not installed."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "selenium is not installed"
    binary = shutil.which("chromium")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not binary or not os.path.exists(driver_path):
        return None, "chromium or chromium-driver is not installed"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                 "--disable-dev-shm-usage"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_path), options=options), None


# The page marks its first drawn and laid-out list on <body> (`data-first-render`: the page's clock,
# milliseconds since navigation start, so fetching the page and the list count). The list shows in
# the first paint after that mark: this answers the later of the mark and the browser's first
# contentful paint (a list drawn before the first paint shows in it; one drawn after shows in the
# frame after its mark).
FIRST_RENDER_JS = """
const done = arguments[arguments.length - 1];
function look() {
  const mark = document.body ? Number(document.body.dataset.firstRender || 0) : 0;
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  if (mark && paint) { done(Math.max(mark, paint.startTime)); return; }
  if (performance.now() > 30000) { done(-1); return; }
  requestAnimationFrame(look);
}
look();
"""


# A long first list is drawn in pieces, a screenful first: `data-whole-list` is the page's clock
# when its last piece was drawn and laid out.
WHOLE_LIST_JS = """
const done = arguments[arguments.length - 1];
function look() {
  if (document.body && document.body.dataset.wholeList) { done(Number(document.body.dataset.wholeList)); return; }
  if (performance.now() > 30000) { done(-1); return; }
  requestAnimationFrame(look);
}
look();
"""


# The browser's own floor: a one-line page from a plain local server, to its first contentful
# paint, measured as the dashboard is (from about:blank, beside the same load): no page can show
# anything sooner in this browser on this machine.
FIRST_PAINT_JS = """
const done = arguments[arguments.length - 1];
function look() {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  if (paint) { done(paint.startTime); return; }
  if (performance.now() > 30000) { done(-1); return; }
  requestAnimationFrame(look);
}
look();
"""


class TrivialPage:
    """A one-line HTML page on 127.0.0.1, served by Python's http.server in a thread."""

    def __init__(self):
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><html><body><h1>afproxy</h1></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()


def first_paint_ms(driver, url: str) -> float:
    driver.get("about:blank")
    driver.set_script_timeout(40)
    driver.get(url)
    return driver.execute_async_script(FIRST_PAINT_JS)


def first_render_ms(driver, url: str, whole: list[float]) -> float:
    driver.get("about:blank")
    driver.set_script_timeout(40)
    driver.get(url)
    first = driver.execute_async_script(FIRST_RENDER_JS)
    whole.append(driver.execute_async_script(WHOLE_LIST_JS))
    return first


# ------------------------------------------------------------------------------------------
# measurements


def timed_samples(label: str, fn) -> None:
    fn()  # warm: the first call pays for page faults and lazy setup
    values = [fn() for _ in range(SAMPLES)]
    median, worst = statistics.median(values), max(values)
    verdict = "PASS" if median < TARGET_MS else "FAIL"
    print(f"UNDER_LOAD what={label} tasks={TASKS} median_ms={median:.1f} worst_ms={worst:.1f} "
          f"target_ms={TARGET_MS:.0f} {verdict} runs={','.join(f'{v:.1f}' for v in values)}", flush=True)


def ctl_list_ms(daemon: Daemon) -> float:
    start = time.perf_counter()
    subprocess.run([AFPROXYCTL, "--socket", daemon.sock, "list"], stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def wrk_rps(proxy_port: int, origin_port: int) -> float:
    env = dict(os.environ, BENCH_PATH=f"http://127.0.0.1:{origin_port}/1k", BENCH_HOST=f"127.0.0.1:{origin_port}")
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{SECONDS}s", "--timeout", "5s", "-s",
                          os.path.join(BENCH, "get.lua"), f"http://127.0.0.1:{proxy_port}/"],
                         capture_output=True, text=True, env=env)
    line = next((l for l in out.stdout.splitlines() if l.startswith("BENCH ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no result: {out.stdout[-500:]} {out.stderr[-500:]}")
    fields = dict(kv.split("=") for kv in line.split()[1:])
    ok = int(fields["requests"]) - int(fields["non2xx"])
    if ok == 0:
        raise RuntimeError(f"no request through the proxy succeeded: {line}")
    return ok / (int(fields["duration_us"]) / 1e6)


def wrk_rps_with_cpu(proxy_port: int, origin_port: int, pids: dict[str, int]) -> tuple[float, dict[str, float]]:
    """wrk_rps, and the CPU seconds each process tree in `pids` used meanwhile."""
    before = {name: procmon.cpu_seconds(pid) for name, pid in pids.items()}
    rps = wrk_rps(proxy_port, origin_port)
    return rps, {name: procmon.cpu_seconds(pid) - before[name] for name, pid in pids.items()}


class StoppedReader:
    """`GET /v1/events`, read until told to stop, then not at all until told to read on."""

    def __init__(self, sock: str):
        self.conn = UnixConnection(sock, timeout=None)
        self.conn.connect()
        self.conn.request("GET", "/v1/events")
        self.resp = self.conn.getresponse()
        self.reading = threading.Event()
        self.reading.set()
        self.missed = 0
        self.lines = 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                self.reading.wait()
                line = self.resp.readline()
                if not line:
                    return
                self.lines += 1
                if line.startswith(b'{"event":"missed"'):
                    self.missed += json.loads(line)["missed"]
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            # AttributeError: http.client's reader after close() took its file away.
            return

    def close(self) -> None:
        self.reading.set()
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def main() -> int:
    for tool in ("nginx", "wrk"):
        if not shutil.which(tool):
            warn(f"{tool} is not installed (scripts/install-deps --bench installs it)")
            return 2
    for binary in (AFPROXY, AFPROXYCTL):
        if not os.access(binary, os.X_OK):
            warn(f"{binary} is missing: swift build -c release, or set AFPROXY_BIN / AFPROXYCTL_BIN")
            return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    web = daemon_has_web()
    tmp = tempfile.mkdtemp(prefix="afproxy-under-load-")
    os.chmod(tmp, 0o755)  # nginx's workers run as nobody and read www/ below it
    nginx, origin_port = start_nginx(tmp)
    daemon = Daemon(tmp, web)
    driver, why_not = browser() if web else (None, "this afproxy has no --web")
    web_url = daemon.web_url() if web else None
    if web and not web_url:
        why_not = "afproxyctl web gave no address"
    print(f"UNDER_LOAD setup afproxy={AFPROXY} tasks={TASKS} samples={SAMPLES} wrk_seconds={SECONDS} "
          f"rounds={ROUNDS} dashboard={'yes' if driver and web_url else 'no (' + str(why_not) + ')'}", flush=True)
    status = 0
    try:
        # 1. many live tasks
        world = SlowWorld(daemon.port)
        world.start_clients(TASKS)
        deadline = time.monotonic() + 120
        while True:
            moving = [t for t in daemon.live() if t["download"]["completed"] > 0]
            if len(moving) >= TASKS:
                break
            if time.monotonic() > deadline:
                warn(f"only {len(moving)} of {TASKS} tasks are moving after 120 s")
                status = 1
                break
            time.sleep(0.5)
        print(f"UNDER_LOAD live_tasks={len(daemon.live())} rss_kib={procmon.status_kib(daemon.proc.pid, 'VmRSS')}", flush=True)
        timed_samples("afproxyctl-list", lambda: ctl_list_ms(daemon))
        timed_samples("GET-/v1/tasks", lambda: control_get(daemon.sock, "/v1/tasks")[0])
        timed_samples("GET-/metrics", lambda: control_get(daemon.sock, "/metrics")[0])
        if driver and web_url:
            whole: list[float] = []
            trivial = TrivialPage()
            timed_samples("browser-floor-first-paint", lambda: first_paint_ms(driver, trivial.url))
            trivial.stop()
            timed_samples("dashboard-first-render", lambda: first_render_ms(driver, web_url, whole))
            values = whole[1:]  # the first is the warm-up's
            print(f"UNDER_LOAD what=dashboard-whole-list tasks={TASKS} median_ms={statistics.median(values):.1f} "
                  f"worst_ms={max(values):.1f} runs={','.join(f'{v:.1f}' for v in values)}", flush=True)
        else:
            print(f"UNDER_LOAD what=dashboard-first-render not measured: {why_not}", flush=True)
        world.stop()
        deadline = time.monotonic() + 60
        while daemon.live() and time.monotonic() < deadline:
            time.sleep(0.5)

        # 2. what watching costs: a person's `watch` is on a terminal (a pty here: the refreshing
        # table); `watch --json`, every event as a line, is what a script reads, measured apart.
        wrk_rps(daemon.port, origin_port)  # warm-up
        alone, watched, firehose = [], [], []
        # CPU of the daemon per request, and of the watchers, in each round: the daemon's share of
        # a drop apart from the share of a browser or terminal drawing on the same two cores.
        daemon_us = {"alone": [], "watched": []}
        watcher_cpu = {"browser": [], "watch": []}
        browser_pid = driver.service.process.pid if driver and web_url else None
        tty_watch = ["script", "-qfc", f"{AFPROXYCTL} --socket {daemon.sock} watch", "/dev/null"]
        json_watch = [AFPROXYCTL, "--socket", daemon.sock, "watch", "--json"]
        for _ in range(ROUNDS):
            rps, cpu = wrk_rps_with_cpu(daemon.port, origin_port, {"daemon": daemon.proc.pid})
            alone.append(rps)
            daemon_us["alone"].append(cpu["daemon"] / (rps * SECONDS) * 1e6)
            watch = subprocess.Popen(tty_watch, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            if driver and web_url:
                driver.get(web_url)
            time.sleep(1)
            pids = {"daemon": daemon.proc.pid, "watch": watch.pid}
            if browser_pid:
                pids["browser"] = browser_pid
            rps, cpu = wrk_rps_with_cpu(daemon.port, origin_port, pids)
            watched.append(rps)
            daemon_us["watched"].append(cpu["daemon"] / (rps * SECONDS) * 1e6)
            for name in watcher_cpu:
                if name in cpu:
                    watcher_cpu[name].append(cpu[name] / SECONDS * 100)
            watch.terminate()
            watch.wait()
            if driver:
                driver.get("about:blank")
            watch = subprocess.Popen(json_watch, stdout=subprocess.DEVNULL)
            time.sleep(0.5)
            firehose.append(wrk_rps(daemon.port, origin_port))
            watch.terminate()
            watch.wait()
        base = statistics.median(alone)
        drop = (1 - statistics.median(watched) / base) * 100
        hose = (1 - statistics.median(firehose) / base) * 100
        print(f"UNDER_LOAD what=req/s@64 alone={base:.0f} "
              f"watched={statistics.median(watched):.0f} drop_pct={drop:.1f} target_pct={TARGET_DROP:.0f} "
              f"{'PASS' if drop < TARGET_DROP else 'FAIL'} watchers=watch(tty){'+dashboard' if driver and web_url else ''} "
              f"alone_runs={','.join(f'{v:.0f}' for v in alone)} watched_runs={','.join(f'{v:.0f}' for v in watched)}",
              flush=True)
        print(f"UNDER_LOAD what=cpu-while-watched daemon_us_per_req_alone={statistics.median(daemon_us['alone']):.0f} "
              f"daemon_us_per_req_watched={statistics.median(daemon_us['watched']):.0f} "
              + " ".join(f"{name}_pct_of_a_core={statistics.median(v):.1f}" for name, v in watcher_cpu.items() if v),
              flush=True)
        print(f"UNDER_LOAD what=req/s@64-beside-every-event watch_json={statistics.median(firehose):.0f} "
              f"drop_pct={hose:.1f} (no target: a script reading every event) "
              f"runs={','.join(f'{v:.0f}' for v in firehose)}", flush=True)

        # 3. a reader that stops
        reader = StoppedReader(daemon.sock)
        time.sleep(0.5)
        reader.reading.clear()
        rss_before = procmon.status_kib(daemon.proc.pid, 'VmRSS')
        wrk_rps(daemon.port, origin_port)
        rss_after = procmon.status_kib(daemon.proc.pid, 'VmRSS')
        reader.reading.set()
        last_curl = subprocess.run(["curl", "-s", "-o", "/dev/null", "-x", f"127.0.0.1:{daemon.port}",
                                        f"http://127.0.0.1:{origin_port}/1k"])
        time.sleep(2)
        print(f"UNDER_LOAD what=stopped-reader rss_before_kib={rss_before} rss_after_kib={rss_after} "
              f"growth_kib={rss_after - rss_before} missed={reader.missed} lines={reader.lines} "
              f"{'PASS' if reader.missed > 0 else 'FAIL (no missed line)'} last_curl={last_curl.returncode}",
              flush=True)
        reader.close()
    finally:
        if driver:
            driver.quit()
        daemon.stop()
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
