"""Helpers shared by the afproxy integration tests: the daemon process, its control API, curl, raw sockets.

Everything that waits has a deadline; every subprocess has a timeout.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

import origin as origin_module
from origin import HeaderLookup

REPO = Path(__file__).resolve().parents[2]

PROXY_ENV_VARS = (
    "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
    "no_proxy", "NO_PROXY", "ftp_proxy", "FTP_PROXY",
)

LISTENING_RE = re.compile(rb"listening on 127\.0\.0\.1:(\d+)")

# Where every daemon a test starts may go: this machine, by its loopback addresses and its names
# (the machine's own name resolves through /etc/hosts). Any other name (a browser's background
# request, a typo) is refused by afproxy as it is written, before a lookup could leave the
# machine (docs/rules.md: a loopback-only allow list resolves no unlisted name). A test adds its
# own names with --allow-hosts; `allow-hosts` adds up across its flags.
TEST_DESTINATIONS = ("127.0.0.0/8", "::1", "localhost", socket.gethostname())

# Chromium as every test starts it: as little background traffic of its own as flags allow
# (updates, sync, metrics, safe browsing, field trials), and a host resolver that answers every
# name but loopback with "not found", so that no lookup of its own leaves the machine. Flags are
# not enough: Chromium 14x still reaches for hosts of its own (CHROMIUM_OWN_HOSTS), which a test
# that sends it through a proxy sends direct (chromium_proxy_arguments), where those attempts
# end in the browser's own resolver.
CHROMIUM_QUIET = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
    "--disable-breakpad", "--no-default-browser-check", "--no-first-run", "--no-pings",
    "--metrics-recording-only", "--safebrowsing-disable-auto-update", "--disable-field-trial-config",
    "--disable-features=OptimizationHints,MediaRouter,DialMediaRouteProvider,Translate,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying,"
    "InterestFeedContentSuggestions,SafeBrowsingEnhancedProtection",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)


# Where Chromium 14x reaches on its own whatever the flags say (measured: accounts.google.com,
# update.googleapis.com, sb-ssl.google.com, start.duckduckgo.com within seconds of starting).
# They bypass the proxy, so CHROMIUM_QUIET's resolver rule ends them in the browser.
CHROMIUM_OWN_HOSTS = ("*.google.com", "*.googleapis.com", "*.gstatic.com", "*.gvt1.com", "*.duckduckgo.com",
                      "*.chromium.org", "*.googleusercontent.com")


def chromium_proxy_arguments(port: int) -> tuple[str, ...]:
    """Chromium's flags for the proxy on `port`: loopback hosts go through it too (<-loopback>
    lifts Chromium's implicit bypass), Chromium's own hosts do not."""
    return (f"--proxy-server=http://127.0.0.1:{port}",
            "--proxy-bypass-list=" + ";".join(("<-loopback>", *CHROMIUM_OWN_HOSTS)))


def start_chromium(proxy_port: int, profile: Path, home: Path):
    """A headless Chromium (selenium) through the proxy on `proxy_port`, as every test starts it,
    with its profile in `profile` and HOME at `home` (where an NSS database it trusts may be);
    the caller quits it. Fails the test where chromium, its driver or selenium are missing."""
    import shutil
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if chromium is None or not os.path.exists(driver_path):
        pytest.fail("needs chromium and chromium-driver (apt) and selenium (pip): scripts/install-deps")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (*CHROMIUM_QUIET, f"--user-data-dir={profile}", *chromium_proxy_arguments(proxy_port)):
        options.add_argument(argument)
    service = Service(executable_path=driver_path, env=clean_env({"HOME": str(home)}))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    return driver


def connect_through(proxy: AfproxyProcess, target: str) -> socket.socket:
    """A socket through the proxy's CONNECT to `target` (`host:port`), its 200 read byte by byte
    so that nothing after it (a TLS server's first bytes) is taken from the socket."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(1)
        assert chunk, f"the proxy closed before answering the CONNECT: {answer!r}"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer
    return sock


def send_after_connect(proxy: AfproxyProcess, target: str, sent: bytes) -> None:
    """A client that CONNECTs to `target`, sends `sent` where TLS was due, and waits for the proxy
    to close the connection (asserted)."""
    with RawConn(proxy.port) as conn:
        conn.send(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        assert conn.read_response(head=True).status == 200
        conn.send(sent)
        assert conn.wait_closed()


def local_resolver_wrapper(tmp_path: Path, names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A wrapper that runs the daemon in its own mount namespace, where /etc/hosts maps `names`
    to 127.0.0.1 and /etc/resolv.conf names a resolver on 127.0.0.1 that is not there: every
    other lookup fails at once, on this machine (the tests of DNS failures). Needs root."""
    if os.geteuid() != 0:
        pytest.fail("needs root for a mount namespace (CI runs as root)")
    hosts = tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1 localhost {' '.join(names)}\n::1 localhost ip6-localhost\n")
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    script = f"mount --bind {hosts} /etc/hosts && mount --bind {resolv} /etc/resolv.conf && exec \"$0\" \"$@\""
    return ("unshare", "--mount", "sh", "-c", script)

# scripts/sanitize runs the suite against binaries built with a sanitizer and says which one here
# ("address" or "thread"); empty for a normal build.
SANITIZER = os.environ.get("AFPROXY_SANITIZER", "")
# What a sanitized daemon must see of the environment wherever it is started: its options (where
# reports go, halt on error) and the symbolizer. clean_env keeps them; wrappers that build a fresh
# environment must pass them on (socket_activate does).
SANITIZER_ENV_VARS = (
    "ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH",
    "SWIFT_BACKTRACE",
)


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The current environment without any proxy variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_ENV_VARS}
    if extra:
        env.update(extra)
    return env


def socket_activate(*args: str) -> tuple[str, ...]:
    """`systemd-socket-activate ARGS` as a wrapper. It gives the program it starts only PATH, TERM,
    USER, HOME and what `-E` names, so the sanitizer's variables are named here when set, and the
    state directory `launch_afproxy` gives each daemon."""
    passed = [arg for name in SANITIZER_ENV_VARS if name in os.environ for arg in ("-E", name)]
    return ("systemd-socket-activate", *args, *passed, "-E", "XDG_STATE_HOME")


def skip_under_sanitizer(reason: str, *kinds: str):
    """Marks a test that cannot work with a sanitized daemon (all sanitizers, or only `kinds`):
    skipped there with `reason`, which pytest's summary shows (scripts/sanitize passes -rs)."""
    applies = bool(SANITIZER) and (not kinds or SANITIZER in kinds)
    return pytest.mark.skipif(applies, reason=f"under the {SANITIZER} sanitizer: {reason}")


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.1,
             message: str | Callable[[], str] = "condition") -> Any:
    """Polls `predicate` until it returns something truthy; fails with `message` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout} s waiting for: {text}")
        time.sleep(interval)


# ----------------------------------------------------------------------------------------------
# The daemon


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over an AF_UNIX stream socket (the control socket)."""

    def __init__(self, path: str, timeout: float = 10.0):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.unix_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


@dataclass
class AfproxyProcess:
    """A running afproxy daemon started by the tests."""

    proc: subprocess.Popen
    port: int
    control_socket: str
    argv: list[str]
    stderr_lines: list[str] = field(default_factory=list)
    stopped_by_test: bool = False
    # The state directory launch_afproxy made for it, removed once it stopped (None when the test
    # named one: that one is the test's).
    state_dir: str | None = None

    def __repr__(self) -> str:
        return f"<afproxy pid {self.proc.pid} on 127.0.0.1:{self.port}>"

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kib(self) -> int:
        """Resident set size of the daemon, from /proc/PID/status VmRSS."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS in /proc status")

    def log(self) -> str:
        return "\n".join(self.stderr_lines)

    def wait_control_ready(self, timeout: float = 10.0) -> None:
        """Waits for the daemon's "control socket at PATH" log line: the socket is bound and has its
        final mode (the file exists a moment earlier, before its chmod)."""
        needle = f"control socket at {self.control_socket}"
        wait_for(lambda: any(needle in line for line in self.stderr_lines) or not self.alive(), timeout,
                 message=f"the log line {needle!r}")
        assert self.alive(), "afproxy exited before its control socket was ready:\n" + self.log()

    def stop(self, by_test: bool = False) -> int:
        """SIGTERM, wait up to 15 s, then SIGKILL. Returns the exit status."""
        if by_test:
            self.stopped_by_test = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.stderr_lines.append("[test] afproxy did not exit 15 s after SIGTERM: killed")
                self.proc.kill()
                self.proc.wait(timeout=15)
        if self.state_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir = None
        return self.proc.returncode

    # ---- control API -----------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> tuple[int, Any]:
        """One HTTP/1.1 request on the control socket: (status, parsed JSON or raw text)."""
        deadline = time.monotonic() + 10.0
        while True:  # the control socket may appear a moment after the proxy port
            conn = UnixHTTPConnection(self.control_socket, timeout=timeout)
            try:
                conn.connect()
                break
            except (FileNotFoundError, ConnectionRefusedError):
                conn.close()
                if time.monotonic() > deadline or not self.alive():
                    raise
                time.sleep(0.05)
        try:
            headers = {}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw.decode("utf-8", "replace")

    def tasks(self, all: bool = False) -> list[dict]:
        """GET /v1/tasks[?all=1] → the list of task records."""
        status, body = self.api("GET", "/v1/tasks?all=1" if all else "/v1/tasks")
        assert status == 200, f"GET /v1/tasks: {status} {body!r}"
        assert isinstance(body, dict) and isinstance(body.get("tasks"), list), f"bad tasks body: {body!r}"
        return body["tasks"]

    def task(self, task_id: int) -> dict:
        status, body = self.api("GET", f"/v1/tasks/{task_id}")
        assert status == 200, f"GET /v1/tasks/{task_id}: {status} {body!r}"
        return body

    def stats(self) -> dict:
        status, body = self.api("GET", "/v1/stats")
        assert status == 200, f"GET /v1/stats: {status} {body!r}"
        return body

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Waits until no task is live."""
        last: list = []

        def idle():
            last[:] = self.tasks()
            return not last

        wait_for(idle, timeout, message=lambda: f"no live tasks; still live: {json.dumps(last)[:2000]}")

    def history_record(self, url: str, timeout: float = 10.0) -> dict:
        """Waits for the completed record of the (last) task for `url` and returns it."""
        seen: list = []

        def find():
            seen[:] = self.tasks(all=True)
            done = [t for t in seen if t.get("url") == url and t.get("state") == "completed"]
            return done[-1] if done else None

        return wait_for(find, timeout, message=lambda: f"a completed task for {url}; have {json.dumps(seen)[:3000]}")


def launch_afproxy(binary: str, control_socket: str, args: tuple[str, ...] = (),
                   env: dict[str, str] | None = None, startup_timeout: float = 30.0,
                   wrapper: tuple[str, ...] = (), default_flags: bool = True) -> AfproxyProcess:
    """Starts `afproxy --listen 127.0.0.1:0 --control-socket PATH ARGS` and waits for its port.

    `wrapper` goes before the binary (a command that ends by exec'ing it, such as
    systemd-socket-activate or unshare, so that the pid is afproxy's); without `default_flags`
    neither --listen nor --control-socket is added."""
    argv = [*wrapper, binary]
    if default_flags:
        argv += ["--listen", "127.0.0.1:0", "--control-socket", control_socket]
        for host in TEST_DESTINATIONS:
            argv += ["--allow-hosts", host]
    argv += list(args)
    extra = os.environ.get("AFPROXY_TEST_ARGS")
    if extra:
        argv += extra.split()
    # A daemon keeps its download journal in the state directory; one of its own (unless the test
    # names one) keeps the downloads of one test from being restored by another test's daemon.
    own_state = {} if "XDG_STATE_HOME" in (env or {}) else {"XDG_STATE_HOME": tempfile.mkdtemp(prefix="afp-state-")}
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=clean_env({**own_state, **(env or {})}), start_new_session=True,
    )
    lines: list[str] = []
    found = threading.Event()
    port_box: list[int] = []

    def reader(stream, prefix: str):
        for raw_line in iter(stream.readline, b""):
            lines.append(prefix + raw_line.rstrip(b"\n").decode("utf-8", "replace"))
            if not port_box:
                m = LISTENING_RE.search(raw_line)
                if m:
                    port_box.append(int(m.group(1)))
                    found.set()
        stream.close()

    threading.Thread(target=reader, args=(proc.stderr, ""), daemon=True).start()
    threading.Thread(target=reader, args=(proc.stdout, "[stdout] "), daemon=True).start()

    deadline = time.monotonic() + startup_timeout
    while not found.wait(0.05):
        if proc.poll() is not None:
            time.sleep(0.2)  # let the readers drain
            raise AssertionError(
                f"afproxy exited with status {proc.returncode} before listening.\n"
                f"argv: {argv}\nlog:\n" + "\n".join(lines))
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(timeout=10)
            raise AssertionError(
                f"afproxy printed no 'listening on 127.0.0.1:PORT' line within {startup_timeout} s.\n"
                f"argv: {argv}\nlog:\n" + "\n".join(lines))
    if default_flags:
        # The control socket is bound by a service of its own, a moment after the proxy port on a
        # busy machine: a test that runs afproxyctl (`watch` exits when it finds no socket) could
        # otherwise come first. Not an assertion: a test of a daemon that fails there checks it.
        needle = f"control socket at {control_socket}"
        while proc.poll() is None and time.monotonic() < deadline and not any(needle in l for l in lines):
            time.sleep(0.02)
    return AfproxyProcess(proc=proc, port=port_box[0], control_socket=control_socket, argv=argv,
                          stderr_lines=lines, state_dir=own_state.get("XDG_STATE_HOME"))


def short_socket_dir(tmp_path: Path) -> Path:
    """A directory for Unix sockets: tmp_path unless its path is too long for sun_path."""
    if len(str(tmp_path / "control-00.sock")) < 100:
        return tmp_path
    return Path(tempfile.mkdtemp(prefix="afp-", dir="/tmp"))


# ----------------------------------------------------------------------------------------------
# curl


def curl_argv(proxy: AfproxyProcess | None, args: tuple[str, ...]) -> list[str]:
    argv = ["curl", "-sS"]
    if proxy is not None:
        argv += ["-x", proxy.proxy_url]
    return argv + [str(a) for a in args]


def curl(proxy: AfproxyProcess | None, *args: str, timeout: float = 120,
         input: bytes | None = None) -> subprocess.CompletedProcess:
    """Runs the real curl through the proxy (`-sS -x PROXY ARGS`); stdout/stderr are bytes."""
    return subprocess.run(curl_argv(proxy, args), input=input, capture_output=True, timeout=timeout,
                          env=clean_env())


def start_curl(proxy: AfproxyProcess | None, *args: str, stdout=subprocess.DEVNULL) -> subprocess.Popen:
    """curl in the background (the caller waits on it with a timeout, or kills it)."""
    return subprocess.Popen(curl_argv(proxy, args), stdout=stdout, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=clean_env())


@dataclass
class HashedOutput:
    returncode: int
    size: int
    sha256: str
    stderr: str


def curl_sha256(proxy: AfproxyProcess | None, *args: str, timeout: float = 300) -> HashedOutput:
    """curl with its body streamed into SHA-256 (never held in memory). Kills curl at `timeout`."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(curl_argv(proxy, args), stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL, env=clean_env())
        killed = threading.Event()

        def kill():
            killed.set()
            proc.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        h = hashlib.sha256()
        n = 0
        try:
            while True:
                chunk = proc.stdout.read(1024 * 1024)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
            rc = proc.wait(timeout=30)
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        if killed.is_set():
            text += f"\n[test] curl killed after {timeout} s"
        return HashedOutput(rc, n, h.hexdigest(), text)


def file_sha256(path: Path | str) -> tuple[int, str]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1024 * 1024):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def assert_serves(proxy: AfproxyProcess, origin: origin_module.Origin, n: int = 1000) -> None:
    """The daemon still answers an ordinary request correctly."""
    assert proxy.alive(), "afproxy died"
    r = curl(proxy, "--max-time", "30", origin.url(f"/bytes/{n}"), timeout=60)
    assert r.returncode == 0, f"curl failed after the bad input: {r.stderr!r}"
    assert r.stdout == origin_module.payload(n)


def parse_head_block(text: bytes) -> list[tuple[int, dict[str, str]]]:
    """Parses `curl -D -`/`-i` style header blocks into [(status, {lower name: value})]."""
    blocks = []
    for block in re.split(rb"\r?\n\r?\n", text):
        lines = block.split(b"\r\n") if b"\r\n" in block else block.split(b"\n")
        if not lines or not lines[0].startswith(b"HTTP/"):
            continue
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.decode("latin-1").partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        blocks.append((status, headers))
    return blocks


# ----------------------------------------------------------------------------------------------
# Raw sockets


def raw(proxy_port: int, data: bytes, read_timeout: float = 10) -> bytes:
    """Sends `data` on a fresh TCP connection to the proxy and reads until close or
    `read_timeout` seconds without data. Returns everything read."""
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        s.settimeout(read_timeout)
        out = bytearray()
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return bytes(out)


def parse_status(data: bytes) -> int:
    """The status code of the first response in `data` (AssertionError if there is none)."""
    first = data.split(b"\r\n", 1)[0]
    m = re.match(rb"HTTP/1\.[01] (\d{3})", first)
    assert m, f"no HTTP status line in {data[:300]!r}"
    return int(m.group(1))


@dataclass
class Response(HeaderLookup):
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    complete: bool  # False when the connection closed before the framing said the body ended
    trailers: list[tuple[str, str]] = field(default_factory=list)

    def trailer(self, name: str) -> str | None:
        return next((v for n, v in self.trailers if n.lower() == name.lower()), None)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


class RawConn:
    """A raw TCP connection to the proxy that can read responses one at a time."""

    def __init__(self, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.eof = False
        self.reset = False

    @classmethod
    def adopt(cls, sock: socket.socket, timeout: float = 10.0) -> "RawConn":
        """A RawConn over a socket the caller connected itself (to set options that only count
        before the connect, such as a small SO_RCVBUF)."""
        conn = cls.__new__(cls)
        conn.sock = sock
        sock.settimeout(timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.buf = bytearray()
        conn.eof = False
        conn.reset = False
        return conn

    def at_end_in_order(self, timeout: float = 10.0) -> bool:
        """Whether the peer closed in order (a FIN) with nothing after what was read: False after
        a reset, or if more bytes come."""
        if self.buf or self.reset:
            return False
        if self.eof:
            return True
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return False

    def __enter__(self) -> "RawConn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data: bytes) -> bool:
        """sendall; False if the peer had already closed/reset."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _fill(self, deadline: float) -> bool:
        """Reads more into buf; False on EOF/reset. Raises socket.timeout at the deadline."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(256 * 1024)
        except ConnectionResetError:
            chunk = b""
            self.reset = True
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _read_until(self, marker: bytes, deadline: float) -> bytes | None:
        while True:
            i = self.buf.find(marker)
            if i >= 0:
                out = bytes(self.buf[: i + len(marker)])
                del self.buf[: i + len(marker)]
                return out
            if not self._fill(deadline):
                return None

    def _read_exact(self, n: int, deadline: float) -> tuple[bytes, bool]:
        while len(self.buf) < n:
            if not self._fill(deadline):
                out = bytes(self.buf)
                self.buf.clear()
                return out, False
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out, True

    def read_response(self, head: bool = False, timeout: float = 10.0,
                      skip_informational: bool = True) -> Response:
        """Reads and parses one response. `head`: it answers a HEAD request (no body)."""
        deadline = time.monotonic() + timeout
        while True:
            raw_head = self._read_until(b"\r\n\r\n", deadline)
            if raw_head is None:
                raise AssertionError(f"connection closed before a response head; got {bytes(self.buf)[:500]!r}")
            lines = raw_head[:-4].decode("latin-1").split("\r\n")
            m = re.match(r"(HTTP/\d\.\d) (\d{3}) ?(.*)", lines[0])
            assert m, f"bad status line {lines[0]!r}"
            version, status, reason = m.group(1), int(m.group(2)), m.group(3)
            headers = []
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                assert sep, f"bad response header line {line!r}"
                headers.append((name.strip(), value.strip()))
            if skip_informational and 100 <= status < 200 and status != 101:
                continue
            break
        resp = Response(version, status, reason, headers, b"", True)
        te = ",".join(resp.header_all("transfer-encoding")).lower()
        if head or 100 <= status < 200 or status in (204, 304):
            return resp
        if "chunked" in te:
            body = bytearray()
            while True:
                size_line = self._read_until(b"\r\n", deadline)
                if size_line is None:
                    resp.body, resp.complete = bytes(body), False
                    return resp
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:  # trailers
                        t = self._read_until(b"\r\n", deadline)
                        if t is None:
                            resp.complete = False
                            break
                        if t == b"\r\n":
                            break
                        name, _, value = t.decode("latin-1").partition(":")
                        resp.trailers.append((name.strip(), value.strip()))
                    resp.body = bytes(body)
                    return resp
                data, ok = self._read_exact(size + 2, deadline)
                body += data[:size]
                if not ok:
                    resp.body, resp.complete = bytes(body), False
                    return resp
        cl = resp.header("content-length")
        if cl is not None:
            resp.body, resp.complete = self._read_exact(int(cl), deadline)
            return resp
        # close-delimited
        while self._fill(deadline):
            pass
        resp.body = bytes(self.buf)
        self.buf.clear()
        return resp

    def wait_closed(self, timeout: float = 10.0) -> bool:
        """True if the peer closes (EOF or reset) within `timeout`; data read meanwhile is kept in buf."""
        deadline = time.monotonic() + timeout
        try:
            while self._fill(deadline):
                pass
            return True
        except (socket.timeout, TimeoutError):
            return False


def client_descriptors(proxy: AfproxyProcess) -> int:
    """How many of the daemon's descriptors are client connections to its proxy port: its
    /proc/PID/fd socket inodes that /proc/net/tcp{,6} lists with that local port, not listening.
    Unlike the whole descriptor count it is 0 at rest, whatever the daemon opens lazily."""
    inodes = set()
    for fd in os.listdir(f"/proc/{proxy.pid}/fd"):
        try:
            target = os.readlink(f"/proc/{proxy.pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local_port, state, inode = int(fields[1].rsplit(":", 1)[1], 16), fields[3], fields[9]
                if local_port == proxy.port and state != "0A" and inode in inodes:
                    count += 1
    return count


def request_bytes(method: str, url: str, headers: list[tuple[str, str]] | None = None,
                  body: bytes = b"", version: str = "HTTP/1.1") -> bytes:
    """A raw request. A Host header is derived from the URL unless given; Content-Length added for a body."""
    headers = list(headers or [])
    names = {k.lower() for k, _ in headers}
    if "host" not in names:
        m = re.match(r"[a-z]+://([^/]+)", url)
        if m:
            headers.insert(0, ("Host", m.group(1)))
    if body and "content-length" not in names and "transfer-encoding" not in names:
        headers.append(("Content-Length", str(len(body))))
    head = f"{method} {url} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode("latin-1") + body


# ----------------------------------------------------------------------------------------------
# afproxyctl and the control API's event stream


def afproxyctl_path() -> str:
    """The afproxyctl binary: $AFPROXYCTL_BIN, default <repo>/.build/debug/afproxyctl."""
    return str(os.environ.get("AFPROXYCTL_BIN", REPO / ".build" / "debug" / "afproxyctl"))


def ctl(proxy: AfproxyProcess | str | None, *args: str, timeout: float = 30,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Runs `afproxyctl --socket SOCKET ARGS` (no --socket when `proxy` is None); text stdout/stderr.
    `proxy` is a daemon or a socket path."""
    argv = [afproxyctl_path()]
    if isinstance(proxy, AfproxyProcess):
        # the control socket may appear a moment after the proxy port
        wait_for(lambda: os.path.exists(proxy.control_socket) or not proxy.alive(), timeout=10,
                 message=f"the control socket {proxy.control_socket}")
    if proxy is not None:
        argv += ["--socket", proxy if isinstance(proxy, str) else proxy.control_socket]
    argv += [str(a) for a in args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=clean_env(env))


def live_task(proxy: AfproxyProcess, url: str, timeout: float = 20.0, min_download: int = 1,
              min_upload: int = 0) -> dict:
    """Waits for the live record of `url` that has moved at least min_download/min_upload bytes."""
    seen: list = []

    def find():
        seen[:] = proxy.tasks()
        for t in seen:
            if (t.get("url") == url and (t.get("download") or {}).get("completed", 0) >= min_download
                    and (t.get("upload") or {}).get("completed", 0) >= min_upload):
                return t
        return None

    return wait_for(find, timeout, message=lambda: (
        f"a live task for {url} with download ≥ {min_download}, upload ≥ {min_upload}; "
        f"live: {json.dumps(seen)[:2000]}"))


class EventStream:
    """`GET /v1/events` on the control socket, read by a background thread.

    `events` holds (monotonic receive time, parsed JSON line) in order; `status` the response status.
    Use as a context manager; `close()` ends the stream. `pause()` stops reading from the socket
    (a reader that stopped: the daemon's buffers fill), `go()` reads on.
    """

    def __init__(self, control_socket: str, timeout: float = 10.0, path: str = "/v1/events"):
        deadline = time.monotonic() + timeout
        while True:  # the control socket may appear a moment after the proxy port
            self.conn = UnixHTTPConnection(control_socket, timeout=timeout)
            try:
                self.conn.connect()
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.conn.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.conn.request("GET", path)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.headers = dict((k.lower(), v) for k, v in self.resp.getheaders())
        self.events: list[tuple[float, dict]] = []
        self.bad_lines: list[bytes] = []
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._closing = False
        self._reading = threading.Event()
        self._reading.set()
        self.conn.sock.settimeout(None)  # a quiet stream is not an error; close() unblocks the reader
        self._thread = threading.Thread(target=self._read, daemon=True, name="event-stream")
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                self._reading.wait()
                line = self.resp.readline()
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    with self._lock:
                        self.bad_lines.append(line)
                    continue
                with self._lock:
                    self.events.append((time.monotonic(), obj))
        except (OSError, ValueError, http.client.HTTPException) as e:
            if not self._closing:
                self.error = e
        finally:
            self.ended.set()

    def pause(self) -> None:
        self._reading.clear()

    def go(self) -> None:
        self._reading.set()

    def snapshot(self) -> list[dict]:
        with self._lock:
            return [e for _, e in self.events]

    def timed(self) -> list[tuple[float, dict]]:
        with self._lock:
            return list(self.events)

    def for_task(self, task_id: int) -> list[dict]:
        return [e for e in self.snapshot() if (e.get("task") or {}).get("id") == task_id]

    def close(self) -> None:
        self._closing = True
        self._reading.set()
        try:
            if self.conn.sock is not None:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(timeout=5)
        self.conn.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ----------------------------------------------------------------------------------------------
# systemd's side: the notify socket and the journal socket, owned by the test


@dataclass
class Datagram:
    at: float                      # time.monotonic() at receipt
    pid: int | None                # the sender's pid (SCM_CREDENTIALS)
    data: bytes


class DatagramCollector:
    """A Unix datagram socket at `path`, read by a background thread into `datagrams`."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o666)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.settimeout(0.2)
        self.datagrams: list[Datagram] = []
        self.callbacks: list[Callable[[Datagram], None]] = []
        self._lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._read, daemon=True, name=f"dgram {self.path}")
        self._thread.start()

    def _read(self) -> None:
        while not self._closing:
            try:
                data, ancillary, _, _ = self.sock.recvmsg(1 << 20, socket.CMSG_SPACE(12))
            except socket.timeout:
                continue
            except OSError:
                break
            pid = None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
                    pid = struct.unpack("iII", payload[:12])[0]
            datagram = Datagram(time.monotonic(), pid, data)
            for callback in list(self.callbacks):
                callback(datagram)
            with self._lock:
                self.datagrams.append(datagram)

    def snapshot(self) -> list[Datagram]:
        with self._lock:
            return list(self.datagrams)

    def close(self) -> None:
        self._closing = True
        self._thread.join(timeout=5)
        self.sock.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parse_notify(data: bytes) -> dict[str, str]:
    """An sd_notify message: newline-separated KEY=value assignments."""
    out = {}
    for line in data.decode("utf-8", "replace").split("\n"):
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


class NotifySocket(DatagramCollector):
    """What NOTIFY_SOCKET points at: collects sd_notify messages as (time, pid, {KEY: value})."""

    def messages(self) -> list[tuple[float, int | None, dict[str, str]]]:
        return [(d.at, d.pid, parse_notify(d.data)) for d in self.snapshot()]

    def with_key(self, key: str, value: str | None = None) -> list[tuple[float, int | None, dict[str, str]]]:
        return [m for m in self.messages() if key in m[2] and (value is None or m[2][key] == value)]

    def wait_for(self, key: str, value: str | None = None, count: int = 1, timeout: float = 10.0,
                 after: float = 0.0) -> tuple[float, int | None, dict[str, str]]:
        """The count-th message (received after `after`) that assigns `key` (= `value`)."""
        def find():
            hits = [m for m in self.with_key(key, value) if m[0] > after]
            return hits[count - 1] if len(hits) >= count else None
        return wait_for(find, timeout, message=lambda: (
            f"{count} notify message(s) with {key}{'=' + value if value else ''}; got "
            f"{[m[2] for m in self.messages()]}"))


def parse_journal_entry(data: bytes) -> dict[str, str]:
    """One entry of journald's native protocol: `KEY=value\\n`, or `KEY\\n` + 64-bit LE length +
    value + `\\n` for values that contain newlines."""
    fields: dict[str, str] = {}
    i = 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            key, value = line.split(b"=", 1)
            i = nl + 1
        else:
            key = line
            size = int.from_bytes(data[nl + 1:nl + 9], "little")
            value = data[nl + 9:nl + 9 + size]
            assert data[nl + 9 + size:nl + 10 + size] == b"\n", f"bad binary field {key!r}"
            i = nl + 10 + size
        fields[key.decode()] = value.decode("utf-8", "replace")
    return fields


class JournalSocket(DatagramCollector):
    """A stand-in for /run/systemd/journal/socket: collects the entries sent to it."""

    def entries(self) -> list[dict[str, str]]:
        return [parse_journal_entry(d.data) for d in self.snapshot()]

    def wait_entry(self, predicate: Callable[[dict[str, str]], bool], timeout: float = 10.0) -> dict[str, str]:
        def find():
            hits = [e for e in self.entries() if predicate(e)]
            return hits[-1] if hits else None
        return wait_for(find, timeout, message=lambda: f"a journal entry; got {self.entries()}")


def ca_path(proxy: AfproxyProcess) -> str:
    """Where the daemon's local CA certificate is, from /v1/ca (made there on first use)."""
    status, body = proxy.api("GET", "/v1/ca")
    assert status == 200, f"GET /v1/ca: {status} {body!r}"
    return body["certificatePath"]


def key_pin(cert: str) -> str:
    """The sha256// pin of a certificate's key, computed by openssl."""
    pem = subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"],
                         check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pem,
                         check=True, capture_output=True).stdout
    return "sha256//" + base64.b64encode(hashlib.sha256(der).digest()).decode()
