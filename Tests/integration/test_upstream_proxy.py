"""The upstream proxy (`upstream-proxy`, `upstream-exclude`) with Debian's Squid as the real upstream:
proxied GET and upload, download tasks, CONNECT tunnels (TLS inside; spliced once Squid answered)
and the pin probe go through it byte-exact, as Squid's access log proves; its basic authentication, right and wrong; Squid down; excluded hosts
direct; a download's redirect to a host on the other route taking that host's route; SIGHUP switching it on and off; and socks5h through a small SOCKS5 server of our own.

The origins listen on 127.0.0.1, which is always reached directly; the tests name them by this
machine's host name instead (it resolves to 127.0.0.1 through /etc/hosts), which afproxy does not
take for loopback and Squid resolves itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import ctl, curl, curl_sha256, file_sha256, key_pin, wait_for
from origin import payload_sha256, start_origin
from range_origin import make_self_signed
from socks5_server import Socks5Server

SQUID = "/usr/sbin/squid"
NCSA = "/usr/lib/squid/basic_ncsa_auth"
USER, PASSWORD = "alice", "s3cret-Pw-7781"
HOST = socket.gethostname()

pytestmark = [
    pytest.mark.skipif(not os.access(SQUID, os.X_OK), reason="squid is not installed (scripts/install-deps)"),
    pytest.mark.skipif(
        HOST in ("localhost", "") or "127.0.0.1" not in {a[4][0] for a in socket.getaddrinfo(HOST, None)},
        reason="this machine's host name does not resolve to 127.0.0.1"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Squid:
    """Squid in the foreground (-N) on a free 127.0.0.1 port, with its config, logs and pid file in a
    directory of its own under /tmp: world-writable, and not under pytest's (mode 0700), since Squid
    drops to the user proxy."""

    def __init__(self, auth: bool) -> None:
        directory = Path(tempfile.mkdtemp(prefix="afproxy-squid-"))
        os.chmod(directory, 0o777)
        self.directory = directory
        self.port = free_port()
        self.access_log = directory / "access.log"
        lines = [
            f"http_port 127.0.0.1:{self.port}",
            f"pid_filename {directory}/squid.pid",
            f"access_log stdio:{self.access_log} squid",
            f"cache_log {directory}/cache.log",
            "cache_store_log none", "cache deny all", "cache_mem 8 MB", f"coredump_dir {directory}",
            "logfile_rotate 0", "pinger_enable off", "netdb_filename none", "shutdown_lifetime 0 seconds",
            "buffered_logs off",
        ]
        if auth:
            digest = subprocess.run(["openssl", "passwd", "-apr1", PASSWORD], capture_output=True, text=True,
                                    check=True).stdout.strip()
            passwords = directory / "passwords"
            passwords.write_text(f"{USER}:{digest}\n")
            os.chmod(passwords, 0o644)
            lines += [
                f"auth_param basic program {NCSA} {passwords}", "auth_param basic children 2",
                "acl authenticated proxy_auth REQUIRED", "http_access deny !authenticated",
            ]
        lines += ["http_access allow localhost", "http_access deny all"]
        (directory / "squid.conf").write_text("\n".join(lines) + "\n")
        with open(directory / "stderr.txt", "wb") as stderr:
            self.proc = subprocess.Popen([SQUID, "-N", "-f", str(directory / "squid.conf")], cwd=directory,
                                         stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
        wait_for(self._accepts, 30, message=lambda: f"squid on port {self.port}: {self.cache_log()[-2000:]}")

    def _accepts(self) -> bool:
        assert self.proc.poll() is None, f"squid exited: {self.cache_log()[-2000:]}"
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def cache_log(self) -> str:
        return "".join(path.read_text(errors="replace") for path in (self.directory / "stderr.txt",
                       self.directory / "cache.log") if path.exists())

    def log(self) -> str:
        return self.access_log.read_text(errors="replace") if self.access_log.exists() else ""

    def saw(self, needle: str) -> bool:
        return needle in self.log()

    def url(self, credentials: str = "") -> str:
        return f"http://{credentials}127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def squid():
    s = Squid(auth=False)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def squid_auth():
    s = Squid(auth=True)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for this machine's host name: (cert.pem, key.pem)."""
    return make_self_signed(tmp_path_factory.mktemp("tls"), HOST, f"DNS:{HOST}")


@pytest.fixture(scope="module")
def tls_origin(certificate):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    o = start_origin(tls=context)
    yield o
    o.stop()


def url(origin, path: str) -> str:
    return f"{origin.scheme}://{HOST}:{origin.port}{path}"


def get_exact(proxy, origin, n: int) -> None:
    out = curl_sha256(proxy, "--fail", url(origin, f"/bytes/{n}"))
    assert (out.returncode, out.size, out.sha256) == (0, n, payload_sha256(n)), out.stderr


def https_exact(proxy, tls_origin, certificate, n: int) -> None:
    out = curl_sha256(proxy, "--fail", "--cacert", certificate[0], url(tls_origin, f"/bytes/{n}"))
    assert (out.returncode, out.size, out.sha256) == (0, n, payload_sha256(n)), out.stderr


def status_and_body(proxy, target: str, *args: str) -> tuple[int, str]:
    r = curl(proxy, "-o", "-", "-w", "\n%{http_code}", *args, target)
    body, _, code = r.stdout.decode("utf-8", "replace").rpartition("\n")
    return int(code), body


def failed_task(proxy, code: str) -> dict:
    def find():
        return next((t for t in proxy.tasks(all=True) if t.get("errorCode") == code), None)
    return wait_for(find, 10, message=lambda: f"a task failed with {code}: {json.dumps(proxy.tasks(all=True))[:3000]}")


# --------------------------------------------------------------------------------------------


def test_get_upload_and_download_task_go_through_squid_byte_exact(start_proxy, squid, origin, tmp_path):
    proxy = start_proxy("--upstream-proxy", squid.url())
    n = 3 * 1024 * 1024 + 17
    get_exact(proxy, origin, n)
    wait_for(lambda: squid.saw(f"GET {url(origin, f'/bytes/{n}')}"), 10, message="the GET in squid's log")

    body = os.urandom(2 * 1024 * 1024 + 5)
    upload = tmp_path / "upload.bin"
    upload.write_bytes(body)
    r = curl(proxy, "--fail", "--data-binary", f"@{upload}", url(origin, "/upload"))
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert (answer["length"], answer["sha256"]) == (len(body), hashlib.sha256(body).hexdigest())
    wait_for(lambda: squid.saw(f"POST {url(origin, '/upload')}"), 10, message="the POST in squid's log")

    target = tmp_path / "download.bin"
    size = 1024 * 1024 + 3
    done = ctl(proxy, "download", url(origin, f"/bytes/{size}"), "-o", str(target), "--wait")
    assert done.returncode == 0, done.stderr
    assert file_sha256(target) == (size, payload_sha256(size))
    wait_for(lambda: squid.saw(f"GET {url(origin, f'/bytes/{size}')}"), 10, message="the download in squid's log")


def test_connect_tunnel_with_tls_inside_goes_through_squid(start_proxy, squid, tls_origin, certificate):
    """Byte-exact, and spliced once Squid's answer is read: the socket then carries the origin's bytes
    (a tunnel is spliced once it carries bulk, hence the size)."""
    proxy = start_proxy("--upstream-proxy", squid.url(), "--allow-connect-port", str(tls_origin.port))
    n = 32 * 1024 * 1024 + 11
    https_exact(proxy, tls_origin, certificate, n)
    wait_for(lambda: squid.saw(f"CONNECT {HOST}:{tls_origin.port}"), 10, message="the CONNECT in squid's log")
    assert proxy.history_record(f"{HOST}:{tls_origin.port}")["relay"] == "splice"


def test_pin_probes_through_squid_and_names_it_when_down(start_proxy, squid, tls_origin, certificate):
    """afproxyctl pin takes the route a download of the host would: through the upstream proxy, where
    a network allows nothing else. With the proxy down, the error names the proxy, not the origin."""
    proxy = start_proxy("--upstream-proxy", squid.url(), "--tls-ca-file", certificate[0])
    connect = f"CONNECT {HOST}:{tls_origin.port}"
    before = squid.log().count(connect)  # the module's Squid may have tunnelled to this origin before
    r = ctl(proxy, "pin", f"{HOST}:{tls_origin.port}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"pin = {HOST} {key_pin(certificate[0])}", r.stdout
    wait_for(lambda: squid.log().count(connect) == before + 1, 10, message="the probe's CONNECT in squid's log")
    proxy.stop(by_test=True)

    down = start_proxy("--upstream-proxy", f"http://127.0.0.1:{free_port()}", "--tls-ca-file", certificate[0])
    r = ctl(down, "pin", f"{HOST}:{tls_origin.port}")
    assert r.returncode == 1 and "upstream-proxy-unreachable" in r.stderr, (r.returncode, r.stderr)


def test_excluded_and_loopback_hosts_go_direct(start_proxy, squid, origin):
    proxy = start_proxy("--upstream-proxy", squid.url(), "--upstream-exclude", HOST)
    n = 100_003
    get_exact(proxy, origin, n)
    out = curl_sha256(proxy, "--fail", f"http://127.0.0.1:{origin.port}/bytes/{n + 1}")
    assert (out.returncode, out.sha256) == (0, payload_sha256(n + 1)), out.stderr
    # A request after them that does go through squid: once it is logged, the two would be too.
    other = start_proxy("--upstream-proxy", squid.url())
    get_exact(other, origin, n + 2)
    wait_for(lambda: squid.saw(f"/bytes/{n + 2} "), 10, message="the marker request in squid's log")
    assert f"/bytes/{n} " not in squid.log() and f"/bytes/{n + 1} " not in squid.log()


def test_a_download_redirected_across_routes_takes_each_hosts_route(start_proxy, squid, origin, tmp_path):
    """curl keeps one handle's proxy for every redirect it follows; afproxy goes on from a redirect to
    a host on the other route with a fresh handle. Through Squid to HOST, whose redirect leads to
    127.0.0.1, which is loopback and must not reach the proxy; and from 127.0.0.1 (direct) to HOST,
    which must go through it. The client's credentials do not follow the redirect to the other
    origin; a redirect that stays on its route keeps them, as curl does."""
    proxy = start_proxy("--upstream-proxy", squid.url())
    secret = "Bearer reroute-7731"

    def download(start: str, *args: str) -> str | None:
        """Downloads START (which redirects to /bytes/10) byte-exact: the Authorization /bytes/10 got."""
        out = tmp_path / "redirected.bin"
        done = ctl(proxy, "download", start, "-o", str(out), "--force", *args, "--wait")
        assert done.returncode == 0, done.stderr
        assert file_sha256(out) == (10, payload_sha256(10))
        last = origin.last_request
        assert last.target == "/bytes/10", last.target
        return last.header("authorization")

    assert download(f"http://{HOST}:{origin.port}/redirect/127.0.0.1", "--header", f"Authorization: {secret}") is None
    wait_for(lambda: squid.saw(f"GET http://{HOST}:{origin.port}/redirect/127.0.0.1 "), 10,
             message="the first hop in squid's log")

    download(f"http://127.0.0.1:{origin.port}/redirect/{HOST}")
    wait_for(lambda: squid.saw(f"GET http://{HOST}:{origin.port}/bytes/10 "), 10,
             message="the second hop in squid's log")
    assert f"/redirect/{HOST} " not in squid.log() and f"127.0.0.1:{origin.port}/" not in squid.log(), squid.log()

    # On one route, curl follows the redirect on the same handle and keeps the credentials to
    # the same origin.
    assert download(f"http://{HOST}:{origin.port}/redirect/{HOST}", "--header", f"Authorization: {secret}") == secret


def test_a_redirect_loop_across_routes_ends_at_the_redirect_limit(start_proxy, squid, origin, tmp_path):
    """HOST and 127.0.0.1 redirect to each other forever, so every hop changes the route and gets a
    handle of its own: the download still fails after 10 redirects in all, as a loop on one route
    does, at once (no retry: the loop answers the same every time), and Squid saw only the hops to HOST."""
    proxy = start_proxy("--upstream-proxy", squid.url())
    start = f"http://{HOST}:{origin.port}/bounce/127.0.0.1"
    before = len([r for r in origin.requests if r.path.startswith("/bounce/")])
    done = ctl(proxy, "download", start, "-o", str(tmp_path / "loop.bin"), "--wait")
    assert done.returncode != 0 and "more than 10 redirects" in done.stderr, (done.returncode, done.stderr)
    assert "retrying" not in done.stderr, f"a redirect loop is retried: {done.stderr}"
    hops = [r for r in origin.requests if r.path.startswith("/bounce/")][before:]
    assert len(hops) == 11, [r.path for r in hops]  # the first request and 10 redirects
    assert not (tmp_path / "loop.bin").exists()
    wait_for(lambda: squid.saw(f"GET {start} "), 10, message="the first hop in squid's log")
    assert f"127.0.0.1:{origin.port}/bounce" not in squid.log(), squid.log()


def test_basic_authentication_right_and_wrong(start_proxy, squid_auth, origin, tls_origin, certificate, tmp_path):
    good = start_proxy("--upstream-proxy", squid_auth.url(f"{USER}:{PASSWORD}@"),
                       "--allow-connect-port", str(tls_origin.port))
    get_exact(good, origin, 200_001)
    https_exact(good, tls_origin, certificate, 300_001)
    wait_for(lambda: squid_auth.saw(f"CONNECT {HOST}:{tls_origin.port}"), 10, message="the CONNECT in squid's log")
    assert f" {USER} " in squid_auth.log()

    wrong = "WrongPw-99231"
    bad = start_proxy("--upstream-proxy", squid_auth.url(f"{USER}:{wrong}@"),
                      "--allow-connect-port", str(tls_origin.port))
    code, body = status_and_body(bad, url(origin, "/bytes/10"))
    assert code == 502 and "407" in body, (code, body)
    task = failed_task(bad, "upstream-proxy-auth")
    assert "407" in task["error"], task

    r = curl(bad, "--cacert", certificate[0], "-w", "%{http_connect}", "-o", "/dev/null", url(tls_origin, "/bytes/10"))
    assert r.stdout.decode().strip() == "502", r
    stream = wait_for(lambda: next((t for t in bad.tasks(all=True)
                                    if t.get("kind") == "stream" and t.get("errorCode")), None), 10,
                      message="the failed stream task")
    assert stream["errorCode"] == "upstream-proxy-auth", stream

    # The password shows nowhere: log, task records, HAR, status.
    har = tmp_path / "all.har"
    assert ctl(bad, "har", "--all", "-o", str(har)).returncode == 0
    status = ctl(bad, "status", "--json").stdout
    shown = [bad.log(), good.log(), ctl(bad, "show", str(task["id"])).stdout,
             ctl(bad, "show", str(stream["id"])).stdout, json.dumps(bad.tasks(all=True)), har.read_text(), status,
             ctl(good, "status").stdout, json.dumps(good.tasks(all=True))]
    for text in shown:
        assert PASSWORD not in text and wrong not in text
    assert f"127.0.0.1:{squid_auth.port}" in status


def test_squid_down_is_502_and_unreachable_in_status(start_proxy, origin, tls_origin, certificate):
    port = free_port()
    proxy = start_proxy("--upstream-proxy", f"http://{USER}:{PASSWORD}@127.0.0.1:{port}",
                        "--allow-connect-port", str(tls_origin.port))
    code, body = status_and_body(proxy, url(origin, "/bytes/10"))
    assert code == 502 and "upstream proxy" in body, (code, body)
    failed_task(proxy, "upstream-proxy-unreachable")
    status = proxy.api("GET", "/v1/status")[1]
    assert status["upstreamProxy"]["proxy"] == f"http://127.0.0.1:{port}", status
    assert status["upstreamProxy"]["reachable"] is False, status
    text = ctl(proxy, "status").stdout
    assert "upstream  unreachable" in text, text

    r = curl(proxy, "--cacert", certificate[0], "-w", "%{http_connect}", "-o", "/dev/null", url(tls_origin, "/"))
    assert r.stdout.decode().strip() == "502", r
    streams = wait_for(lambda: [t for t in proxy.tasks(all=True) if t.get("kind") == "stream" and t.get("errorCode")],
                       10, message="the failed stream task")
    assert streams[0]["errorCode"] == "upstream-proxy-unreachable", streams
    assert PASSWORD not in proxy.log() + text + json.dumps(status) + json.dumps(proxy.tasks(all=True))


def test_sighup_switches_the_upstream_proxy_on_and_off(start_proxy, squid, origin, tmp_path):
    config = tmp_path / "afproxy.conf"
    config.write_text("")
    proxy = start_proxy("--config", str(config))

    def reload(text: str, times: int) -> None:
        config.write_text(text)
        os.kill(proxy.pid, signal.SIGHUP)
        wait_for(lambda: proxy.log().count("configuration reloaded") >= times, message="the reload")

    get_exact(proxy, origin, 50_001)
    reload(f"upstream-proxy = {squid.url()}\n", 1)
    get_exact(proxy, origin, 50_002)
    reload("", 2)
    get_exact(proxy, origin, 50_003)
    reload(f"upstream-proxy = {squid.url()}\n", 3)
    get_exact(proxy, origin, 50_004)
    wait_for(lambda: squid.saw("/bytes/50004 "), 10, message="the last request in squid's log")
    log = squid.log()
    assert "/bytes/50002 " in log and "/bytes/50001 " not in log and "/bytes/50003 " not in log


def test_socks5h_carries_a_get_and_a_tunnel(start_proxy, origin, tls_origin, certificate):
    socks = Socks5Server(credentials=(USER, PASSWORD))
    try:
        proxy = start_proxy("--upstream-proxy", f"socks5h://{USER}:{PASSWORD}@127.0.0.1:{socks.port}",
                            "--allow-connect-port", str(tls_origin.port))
        get_exact(proxy, origin, 400_009)
        # Bulk, so that the tunnel is spliced (`TunnelSpliceGate`).
        https_exact(proxy, tls_origin, certificate, 32 * 1024 * 1024 + 9)
        assert f"{HOST}:{origin.port}" in socks.seen() and f"{HOST}:{tls_origin.port}" in socks.seen()
        assert proxy.history_record(f"{HOST}:{tls_origin.port}")["relay"] == "splice"
    finally:
        socks.stop()
    wrong = Socks5Server(credentials=(USER, "other"))
    try:
        proxy = start_proxy("--upstream-proxy", f"socks5h://{USER}:{PASSWORD}@127.0.0.1:{wrong.port}",
                            "--allow-connect-port", str(tls_origin.port))
        r = curl(proxy, "--cacert", certificate[0], "-w", "%{http_connect}", "-o", "/dev/null", url(tls_origin, "/"))
        assert r.stdout.decode().strip() == "502", r
        failed_task(proxy, "upstream-proxy-auth")
    finally:
        wrong.stop()


def test_the_proxys_private_address_passes_deny_private_destinations(start_proxy, squid, origin, tls_origin,
                                                                     certificate):
    """The proxy on 127.0.0.1 is the one configured: the address checks let it pass, for curl's
    transfers and for tunnels, while the origin's name is still checked by name."""
    proxy = start_proxy("--upstream-proxy", squid.url(), "--deny-private-destinations", "yes",
                        "--allow-connect-port", str(tls_origin.port), "--deny-hosts", "denied.example")
    get_exact(proxy, origin, 60_007)
    https_exact(proxy, tls_origin, certificate, 60_008)
    code, body = status_and_body(proxy, "http://denied.example/")
    assert code == 403 and "deny-hosts" in body, (code, body)


def test_an_intercepted_https_request_goes_through_squid(start_proxy, squid, tls_origin, certificate):
    """Inside an intercepted connection each request is curl's own to the https origin: curl opens
    its CONNECT through the upstream proxy, and the body arrives byte-exact."""
    proxy = start_proxy("--upstream-proxy", squid.url(), "--intercept-hosts", HOST,
                        "--allow-connect-port", str(tls_origin.port), "--tls-ca-file", certificate[0])
    status, ca = proxy.api("GET", "/v1/ca")
    assert status == 200, ca
    connect = f"CONNECT {HOST}:{tls_origin.port}"
    before = squid.log().count(connect)
    n = 700_013
    out = curl_sha256(proxy, "--fail", "--cacert", ca["certificatePath"], url(tls_origin, f"/bytes/{n}"))
    assert (out.returncode, out.size, out.sha256) == (0, n, payload_sha256(n)), out.stderr
    task = wait_for(lambda: next((t for t in proxy.tasks(all=True)
                                  if t.get("url", "").endswith(f"/bytes/{n}") and t.get("state") == "completed"),
                                 None), 10, message="the intercepted request's task")
    assert task.get("parent"), task
    # Squid logs a tunnel when it closes: afproxy's stop closes curl's connection.
    proxy.stop(by_test=True)
    wait_for(lambda: squid.log().count(connect) > before, 10, message="curl's CONNECT in squid's log")
