"""The SOCKS5 port (`socks-listen`): curl's `--socks5-hostname` through it to the test's HTTP and
TLS origins, byte-exact, each connection sniffed as a captured one is (`ArrivalSniffer`): plain
HTTP a task per request with its full URL (keep-alive included), TLS a stream task named
host:port, intercepted when an intercept rule names the host, anything else a stream task;
users and passwords from `proxy-auth-file` (RFC 1929), and every refusal, read from raw
sockets: a closed port (answered, then closed: the reply cannot wait for the destination), a
destination outside the test's own (code 2), BIND and UDP ASSOCIATE, an address type nobody
defined, SOCKS4, an HTTP request, a client without an acceptable method, a wrong password, a
client that stays silent, a server that speaks first."""

from __future__ import annotations

import re
import socket
import struct
import subprocess

import pytest

from echo_server import EchoServer
from helpers import ca_path, clean_env, closed_port, curl_sha256, wait_for
from origin import payload_sha256
from test_access import PASSWORD, hash_file, sha512crypt

MiB = 1024 * 1024


def socks_port(proxy) -> int:
    """The SOCKS5 port, from the daemon's "SOCKS5 on HOST:PORT" line."""
    line = wait_for(lambda: next((l for l in proxy.stderr_lines if "SOCKS5 on " in l), None),
                    message="the 'SOCKS5 on' log line")
    return int(re.search(r"SOCKS5 on 127\.0\.0\.1:(\d+)", line).group(1))


def socks(proxy, *args: str, user: str | None = None):
    """curl through the SOCKS5 port, the names resolved by afproxy (socks5h)."""
    credentials = f"{user}@" if user else ""
    return curl_sha256(None, "-x", f"socks5h://{credentials}127.0.0.1:{socks_port(proxy)}", *args)


def streams(proxy, count: int) -> list[dict]:
    """The completed stream tasks, once there are `count`."""
    def done():
        found = [t for t in proxy.tasks(all=True) if t["kind"] == "stream" and t["state"] == "completed"]
        return found if len(found) >= count else None
    return wait_for(done, message=f"{count} completed stream tasks")


class Socks:
    """A raw SOCKS5 client on one connection."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self, n: int) -> bytes:
        """Exactly `n` bytes, or fewer if the proxy closed first."""
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def closed(self) -> bool:
        """Whether the proxy closed (after anything it still had to say)."""
        try:
            while self.sock.recv(4096):
                pass
            return True
        except ConnectionResetError:
            return True

    def greet(self, methods: bytes = b"\x00") -> bytes:
        self.send(b"\x05" + bytes([len(methods)]) + methods)
        return self.read(2)

    def request(self, command: int, address: bytes, port: int) -> bytes:
        """A request; answers the reply's code byte (b"" if the proxy closed)."""
        self.send(b"\x05" + bytes([command, 0]) + address + struct.pack("!H", port))
        reply = self.read(10)
        return reply[1:2]

    def close(self) -> None:
        self.sock.close()


def name(host: str) -> bytes:
    return b"\x03" + bytes([len(host)]) + host.encode()


IPV4_LOOPBACK = b"\x01" + socket.inet_aton("127.0.0.1")


def completed(proxy, kind: str, count: int) -> list[dict]:
    """The completed tasks of `kind`, once there are `count`."""
    def done():
        found = [t for t in proxy.tasks(all=True) if t["kind"] == kind and t["state"] == "completed"]
        return found if len(found) >= count else None
    return wait_for(done, message=f"{count} completed {kind} tasks")


def test_https_is_a_stream_task_and_http_a_task_per_request(start_proxy, origin, tls_origin, tls_files):
    proxy = start_proxy("--socks-listen", "127.0.0.1:0")
    size = 3 * MiB + 5
    tls = socks(proxy, "--cacert", tls_files.ca_cert, f"https://localhost:{tls_origin.port}/bytes/{size}")
    assert (tls.returncode, tls.size, tls.sha256) == (0, size, payload_sha256(size)), tls.stderr
    [stream] = streams(proxy, 1)
    assert stream["url"] == f"localhost:{tls_origin.port}", stream
    assert stream["download"]["completed"] > size, stream
    # Two requests on one connection (curl keeps it alive through the SOCKS5 proxy): two tasks.
    first, second = f"http://localhost:{origin.port}/bytes/{size + 1}", f"http://localhost:{origin.port}/bytes/77"
    out = subprocess.run(
        ["curl", "-sS", "--fail", "-x", f"socks5h://127.0.0.1:{socks_port(proxy)}", first, "-o", "/dev/null",
         "-w", "%{num_connects} %{size_download}\n", second, "-o", "/dev/null"],
        env=clean_env(), capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().split("\n")[:2] == [f"1 {size + 1}", "0 77"], out.stdout
    data = {t["url"]: t for t in completed(proxy, "data", 2)}
    assert set(data) == {first, second}, data
    assert data[first]["status"] == 200 and data[first]["download"]["completed"] == size + 1, data[first]
    assert data[second]["download"]["completed"] == 77, data[second]
    assert data[first]["parent"] is None, data[first]
    assert len(streams(proxy, 1)) == 1  # the HTTP connection was no stream task


def test_an_intercepted_host_is_intercepted_for_tls_and_relayed_for_the_rest(start_proxy, origin, tls_origin,
                                                                             tls_files):
    proxy = start_proxy("--socks-listen", "127.0.0.1:0", "--intercept-hosts", "localhost",
                        "--tls-ca-file", tls_files.ca_cert)
    size = 200_003
    tls = socks(proxy, "--cacert", ca_path(proxy), f"https://localhost:{tls_origin.port}/bytes/{size}")
    assert (tls.returncode, tls.size, tls.sha256) == (0, size, payload_sha256(size)), tls.stderr
    data = wait_for(lambda: [t for t in proxy.tasks(all=True) if t["kind"] == "data"] or None)
    assert [t["url"] for t in data] == [f"https://localhost:{tls_origin.port}/bytes/{size}"], data
    assert data[0]["parent"] is not None
    plain = socks(proxy, f"http://localhost:{origin.port}/bytes/{size}")
    assert (plain.returncode, plain.size, plain.sha256) == (0, size, payload_sha256(size)), plain.stderr
    urls = sorted(t["url"] for t in completed(proxy, "data", 2))
    assert urls == sorted([f"https://localhost:{tls_origin.port}/bytes/{size}",
                           f"http://localhost:{origin.port}/bytes/{size}"]), urls
    assert [t["url"] for t in streams(proxy, 1)] == [f"localhost:{tls_origin.port}"]


def test_users_and_passwords_from_the_proxy_auth_file(start_proxy, origin, tmp_path):
    users = hash_file(tmp_path, [f"alice:{sha512crypt(PASSWORD)}"])
    proxy = start_proxy("--socks-listen", "127.0.0.1:0", "--proxy-auth-file", str(users))
    url = f"http://127.0.0.1:{origin.port}/bytes/1000"
    right = socks(proxy, url, user=f"alice:{PASSWORD}")
    assert (right.returncode, right.sha256) == (0, payload_sha256(1000)), right.stderr
    assert [t["proxyUser"] for t in completed(proxy, "data", 1)] == ["alice"]
    wrong = socks(proxy, url, user="alice:not-the-password")
    assert wrong.returncode != 0 and wrong.size == 0, wrong

    raw = Socks(socks_port(proxy))
    assert raw.greet(b"\x00") == b"\x05\xff"  # no authentication offered: refused
    assert raw.closed()
    raw = Socks(socks_port(proxy))
    assert raw.greet(b"\x00\x02") == b"\x05\x02"
    raw.send(b"\x01\x05alice\x05wrong")
    assert raw.read(2) == b"\x01\x01"
    assert raw.closed()
    assert len(completed(proxy, "data", 1)) == 1
    assert [t for t in proxy.tasks(all=True) if t["kind"] == "stream"] == []


def test_each_refusal_gets_its_reply_code(start_proxy):
    proxy = start_proxy("--socks-listen", "127.0.0.1:0")
    port = socks_port(proxy)

    def reply(command: int, address: bytes, to: int) -> bytes:
        raw = Socks(port)
        try:
            assert raw.greet() == b"\x05\x00"
            code = raw.request(command, address, to)
            assert raw.closed()
            return code
        finally:
            raw.close()

    # A closed port: answered at once (the client's first bytes decide what is opened), then
    # closed once the relay finds the port refuses.
    assert reply(1, IPV4_LOOPBACK, closed_port()) == b"\x00"
    # Outside the test's destinations (allow-hosts): refused before any connection or lookup.
    assert reply(1, b"\x01" + socket.inet_aton("192.0.2.1"), 80) == b"\x02"
    assert reply(1, name("nothing.invalid"), 80) == b"\x02"
    assert reply(2, IPV4_LOOPBACK, 80) == b"\x07"  # BIND
    assert reply(3, IPV4_LOOPBACK, 53) == b"\x07"  # UDP ASSOCIATE
    assert reply(1, b"\x09" + socket.inet_aton("127.0.0.1"), 80) == b"\x08"
    failed = [t for t in proxy.tasks(all=True) if t["kind"] == "stream"]
    codes = sorted(t.get("errorCode") for t in failed)
    assert codes == ["connection-refused", "destination-denied", "destination-denied"], failed

    for first in (b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00", b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n"):
        raw = Socks(port)
        raw.send(first)
        assert raw.read(1) == b""  # SOCKS4 and HTTP: closed without a word they could misread
        raw.close()
    raw = Socks(port)
    assert raw.greet(b"\x01") == b"\x05\xff"  # GSSAPI only
    assert raw.closed()


def test_a_silent_client_is_closed_after_the_header_timeout(start_proxy):
    proxy = start_proxy("--socks-listen", "127.0.0.1:0", "--header-timeout", "1")
    raw = Socks(socks_port(proxy))
    assert raw.closed()  # nothing sent: closed by the daemon, not by the read's own 30 s limit
    mid = Socks(socks_port(proxy))
    assert mid.greet() == b"\x05\x00"
    mid.send(b"\x05\x01")  # half a request, then silence
    assert mid.closed()
    assert [t for t in proxy.tasks(all=True)] == []  # no task was started for either


def test_a_socks_port_off_loopback_needs_allow_clients(afproxy_bin, tmp_path):
    run = subprocess.run([afproxy_bin, "--listen", "127.0.0.1:0", "--control-socket", str(tmp_path / "c.sock"),
                          "--socks-listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=60,
                         env=clean_env())
    assert run.returncode != 0
    assert "listen address 0.0.0.0 is not loopback: set allow-clients" in run.stderr, run.stderr


def test_bytes_that_are_neither_http_nor_tls_and_a_server_that_speaks_first_are_relayed(start_proxy):
    proxy = start_proxy("--socks-listen", "127.0.0.1:0")
    port = socks_port(proxy)
    echo, greeter = EchoServer(), EchoServer(b"220 greeter ready\r\n")
    try:
        payload = bytes(range(256)) * 4096  # 1 MiB, starting with a byte no method or record does
        raw = Socks(port)
        assert raw.greet() == b"\x05\x00"
        assert raw.request(1, IPV4_LOOPBACK, echo.port) == b"\x00"
        raw.send(payload)
        raw.sock.shutdown(socket.SHUT_WR)
        assert raw.read(len(payload) + 1) == payload
        raw.close()
        # The client waits for the server's greeting: it comes, though the client said nothing.
        raw = Socks(port)
        assert raw.greet() == b"\x05\x00"
        assert raw.request(1, name("localhost"), greeter.port) == b"\x00"
        assert raw.read(19) == b"220 greeter ready\r\n"
        raw.send(b"QUIT\r\n")
        assert raw.read(6) == b"QUIT\r\n"
        raw.close()
    finally:
        echo.close()
        greeter.close()
    tasks = {t["url"]: t for t in streams(proxy, 2)}
    assert set(tasks) == {f"127.0.0.1:{echo.port}", f"localhost:{greeter.port}"}, tasks
    sent = tasks[f"127.0.0.1:{echo.port}"]
    assert sent["upload"]["completed"] == len(payload) and sent["download"]["completed"] == len(payload), sent


def test_chromium_through_the_socks_port_makes_a_task_of_each_request(start_proxy, tmp_path):
    """Chromium with --proxy-server=socks5://: the page and its 20 images, each a data task
    (plain HTTP through SOCKS5 is read as requests), byte counts exact."""
    import shutil

    from helpers import CHROMIUM_OWN_HOSTS, CHROMIUM_QUIET
    from page_origin import PageOrigin

    chromium = shutil.which("chromium")
    assert chromium, "needs chromium (scripts/install-deps)"
    proxy = start_proxy("--socks-listen", "127.0.0.1:0")
    page = PageOrigin(tmp_path / "site")
    base = f"http://localhost:{page.port}"
    try:
        result = subprocess.run(
            [chromium, *CHROMIUM_QUIET, f"--user-data-dir={tmp_path / 'profile'}",
             f"--proxy-server=socks5://127.0.0.1:{socks_port(proxy)}",
             "--proxy-bypass-list=" + ";".join(("<-loopback>", *CHROMIUM_OWN_HOSTS)),
             "--dump-dom", f"{base}/index.html"],
            capture_output=True, env=clean_env({"HOME": str(tmp_path)}), timeout=120, stdin=subprocess.DEVNULL)
    finally:
        page.stop()
    assert result.returncode == 0 and b"<h1>many requests</h1>" in result.stdout, result.stderr[-2000:]
    expected = page.urls(base)
    wait_for(lambda: expected <= {t["url"] for t in proxy.tasks(all=True) if t["state"] == "completed"},
             timeout=30, message="a completed task for the page and each image")
    tasks = {t["url"]: t for t in proxy.tasks(all=True)}
    assert set(tasks) <= expected | {f"{base}/favicon.ico"}, sorted(set(tasks) - expected)
    for path, body in page.images.items():
        assert tasks[base + path]["download"]["completed"] == len(body), tasks[base + path]
