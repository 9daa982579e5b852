"""CONNECT tunnels as stream tasks: HTTPS through the proxy to a TLS origin on 127.0.0.1 (a
self-signed certificate made here, passed to curl with --cacert), the task's record, suspend,
resume and cancel mid-tunnel, half-close, and the refusals (403 port not allowed, 400 bad target,
502 refused, 504 timeout)."""

from __future__ import annotations

import json
import random
import socket
import ssl
import subprocess
import threading
import time

import pytest

from helpers import (
    local_resolver_wrapper,
    EventStream, RawConn, assert_serves, closed_port, curl, curl_sha256, file_sha256, live_task,
    request_bytes, start_curl, wait_for,
)
from origin import payload, payload_sha256, start_origin
from range_origin import make_self_signed

MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem)."""
    return make_self_signed(tmp_path_factory.mktemp("tls"), "127.0.0.1", "IP:127.0.0.1,DNS:localhost")


@pytest.fixture(scope="module")
def tls_origin(certificate):
    """origin.py's endpoints over HTTPS on 127.0.0.1."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    o = start_origin(tls=context)
    yield o
    o.stop()


@pytest.fixture
def tunnel_proxy(start_proxy, tls_origin):
    """A daemon that allows CONNECT to the TLS origin's port."""
    return start_proxy("--allow-connect-port", str(tls_origin.port))


def https(proxy, certificate, *args, timeout: float = 120):
    return curl(proxy, "--cacert", certificate[0], *args, timeout=timeout)


def connect_head(target: str) -> bytes:
    return f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()


def steer(proxy, verb: str, task_id: int) -> dict:
    status, body = proxy.api("POST", f"/v1/tasks/{task_id}/{verb}")
    assert status == 200, f"POST /v1/tasks/{task_id}/{verb}: {status} {body!r}"
    return body


# ----------------------------------------------------------------------------------------------
# through the tunnel


def test_download_through_the_tunnel_is_intact_and_recorded(tunnel_proxy, tls_origin, certificate):
    """200 MiB over TLS through the tunnel arrive intact; the task is a stream to host:port with
    both byte counts (totals unknown), connect metrics, the remote address and why it ended."""
    n = 200 * MiB
    out = curl_sha256(tunnel_proxy, "--cacert", certificate[0], "--max-time", "120",
                      tls_origin.url(f"/bytes/{n}"), timeout=150)
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n)), "the download through the tunnel is not intact"

    rec = tunnel_proxy.history_record(tls_origin.host)
    assert rec["kind"] == "stream" and rec["method"] == "CONNECT", rec
    assert rec["url"] == f"127.0.0.1:{tls_origin.port}"
    assert rec["status"] == 200 and rec["error"] is None, rec
    assert rec["endReason"] in ("client closed", "upstream closed"), rec["endReason"]
    assert rec["download"]["completed"] > n and rec["download"]["total"] is None  # TLS records on top
    assert rec["upload"]["completed"] > 0 and rec["upload"]["total"] is None
    metrics = rec["metrics"]
    assert metrics["dnsMs"] is None, "an address literal needs no lookup"
    assert metrics["connectMs"] is not None and metrics["totalMs"] is not None, metrics
    assert metrics["tlsMs"] is None, "TLS is end to end, not the proxy's"
    assert metrics["remoteAddress"] == f"127.0.0.1:{tls_origin.port}"
    assert not any(h["name"].lower().startswith("proxy-") for h in rec["requestHeaders"]), rec["requestHeaders"]
    assert tunnel_proxy.tasks() == [], "the tunnel is still live after curl finished"


def test_upload_through_the_tunnel_is_intact(tunnel_proxy, tls_origin, certificate, tmp_path):
    """A 20 MiB upload through the tunnel reaches the origin intact and counts as upload progress."""
    n = 20 * MiB
    f = tmp_path / "upload.bin"
    f.write_bytes(random.Random(20).randbytes(n))
    size, digest = file_sha256(f)
    r = https(tunnel_proxy, certificate, "--max-time", "60", "--data-binary", f"@{f}", tls_origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["length"], got["sha256"]) == (size, digest), "the origin did not get the file intact"
    rec = tunnel_proxy.history_record(tls_origin.host)
    assert rec["upload"]["completed"] > n and rec["error"] is None, rec


def test_suspend_freezes_both_directions_and_resume_completes(tunnel_proxy, tls_origin, certificate):
    """Suspended mid-tunnel, neither byte count moves for 3 s and the connection stays open;
    resumed, the download completes intact. The events are those of any task."""
    n = 60 * MiB
    target = tls_origin.host
    with EventStream(tunnel_proxy.control_socket) as events:
        client = start_curl(tunnel_proxy, "--cacert", certificate[0], "--limit-rate", "10M", "--max-time", "120",
                            "-o", "/dev/null", "-w", "%{size_download}", tls_origin.url(f"/bytes/{n}"),
                            stdout=subprocess.PIPE)
        try:
            tid = live_task(tunnel_proxy, target, min_download=8 * MiB)["id"]
            assert steer(tunnel_proxy, "suspend", tid)["state"] == "suspended"
            first = tunnel_proxy.task(tid)
            samples = []
            for _ in range(6):
                time.sleep(0.5)
                rec = tunnel_proxy.task(tid)
                assert rec["state"] == "suspended", rec["state"]
                samples.append((rec["upload"]["completed"], rec["download"]["completed"]))
            frozen = (first["upload"]["completed"], first["download"]["completed"])
            assert all(s == frozen for s in samples), f"byte counts moved while suspended: {frozen} then {samples}"
            assert 0 < frozen[1] < n, f"not mid-tunnel when suspended: {frozen}"
            assert client.poll() is None, f"curl exited {client.returncode} while its tunnel was suspended"

            assert steer(tunnel_proxy, "resume", tid)["state"] == "running"
            try:
                size, err = client.communicate(timeout=150)
            except subprocess.TimeoutExpired:
                pytest.fail("curl did not finish within 150 s of the resume")
            assert client.returncode == 0, err
            assert int(size) == n
        finally:
            if client.poll() is None:
                client.kill()
                client.wait(timeout=10)
        done = tunnel_proxy.history_record(target)
        assert done["id"] == tid and done["error"] is None, done
        assert done["download"]["completed"] > frozen[1]
        wait_for(lambda: any(e["event"] == "completed" for e in events.for_task(tid)), timeout=10,
                 message="the completed event")
        kinds = [e["event"] for e in events.for_task(tid) if e["event"] != "progress"]
        assert kinds == ["created", "suspended", "resumed", "completed"], kinds


def test_resumed_tunnel_is_byte_exact(tunnel_proxy, tls_origin, certificate):
    """A tunnel suspended and resumed twice still carries every byte in order (checked by hash)."""
    n = 40 * MiB
    target = tls_origin.host
    result: list = []
    download = threading.Thread(daemon=True, target=lambda: result.append(curl_sha256(
        tunnel_proxy, "--cacert", certificate[0], "--limit-rate", "10M", "--max-time", "120",
        tls_origin.url(f"/bytes/{n}"), timeout=150)))
    download.start()
    tid = live_task(tunnel_proxy, target, min_download=4 * MiB)["id"]
    for _ in range(2):
        steer(tunnel_proxy, "suspend", tid)
        time.sleep(0.5)
        steer(tunnel_proxy, "resume", tid)
    download.join(timeout=160)
    assert not download.is_alive() and result, "curl did not finish"
    out = result[0]
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))


def test_half_close_is_passed_on_and_early_bytes_arrive(start_proxy, origin):
    """Bytes sent right behind the CONNECT (before its 200) reach the origin, and the client's
    half-close reaches it as the end of the request stream while the answer still comes back."""
    proxy = start_proxy("--allow-connect-port", str(origin.port))
    with RawConn(proxy.port) as c:
        c.send(connect_head(origin.host) + f"GET /bytes/5000 HTTP/1.1\r\nHost: {origin.host}\r\n\r\n".encode())
        c.sock.shutdown(socket.SHUT_WR)
        established = c.read_response(head=True)
        assert established.status == 200, established
        answer = c.read_response()
        assert answer.status == 200 and answer.body == payload(5000)
        assert c.wait_closed(timeout=10), "the tunnel stayed open after both sides closed"
    rec = proxy.history_record(origin.host)
    assert rec["endReason"] == "client closed" and rec["error"] is None, rec
    assert rec["upload"]["completed"] > 0 and rec["download"]["completed"] > 5000


def test_connect_after_requests_on_a_keep_alive_connection(start_proxy, origin):
    """A CONNECT on a connection that answered requests before (and went idle between them)
    opens its tunnel as on a fresh one, and bytes sent right behind it arrive."""
    proxy = start_proxy("--allow-connect-port", str(origin.port))
    with RawConn(proxy.port) as c:
        for n in (10, 20):
            c.send(request_bytes("GET", origin.url(f"/bytes/{n}")))
            assert c.read_response().body == payload(n)
        c.send(connect_head(origin.host)
               + f"GET /bytes/5000 HTTP/1.1\r\nHost: {origin.host}\r\nConnection: close\r\n\r\n".encode())
        assert c.read_response(head=True).status == 200
        assert c.read_response().body == payload(5000)
        assert c.wait_closed(timeout=10)


def test_tunnel_to_an_ipv6_literal(start_proxy, origin_v6):
    """CONNECT [::1]:PORT: established, carries a request, and records the IPv6 remote address."""
    proxy = start_proxy("--allow-connect-port", str(origin_v6.port))
    with RawConn(proxy.port) as c:
        c.send(connect_head(origin_v6.host))
        assert c.read_response(head=True).status == 200
        c.send(f"GET /bytes/5000 HTTP/1.1\r\nHost: {origin_v6.host}\r\nConnection: close\r\n\r\n".encode())
        assert c.read_response().body == payload(5000)
        assert c.wait_closed(timeout=10)
    rec = proxy.history_record(origin_v6.host)
    assert rec["error"] is None and rec["download"]["completed"] > 5000, rec
    assert rec["metrics"]["remoteAddress"] == f"[::1]:{origin_v6.port}", rec["metrics"]


def test_silent_tunnel_is_closed_after_the_idle_timeout(start_proxy, origin):
    """A tunnel that carries a request, then nothing either way for --tunnel-idle-timeout, is
    closed on both sides; its task ends without an error and says why. Suspended for three
    times the limit, it stays open, and carries a request after the resume."""
    proxy = start_proxy("--allow-connect-port", str(origin.port), "--tunnel-idle-timeout", "1")
    request = f"GET /bytes/100 HTTP/1.1\r\nHost: {origin.host}\r\n\r\n".encode()
    opened_before = origin.open_connections
    with RawConn(proxy.port, timeout=20) as c:
        c.send(connect_head(origin.host))
        assert c.read_response(head=True).status == 200
        c.send(request)
        assert c.read_response().body == payload(100)
        tid = live_task(proxy, origin.host)["id"]

        assert steer(proxy, "suspend", tid)["state"] == "suspended"
        time.sleep(3)
        assert proxy.task(tid)["state"] == "suspended", "a suspended tunnel was closed as idle"
        assert steer(proxy, "resume", tid)["state"] == "running"
        c.send(request)
        assert c.read_response().body == payload(100), "the resumed tunnel does not carry bytes"

        started = time.monotonic()
        assert c.wait_closed(timeout=30), "the silent tunnel stayed open"
        quiet = time.monotonic() - started
        # Not before the limit; how much later a busy machine closes it says nothing (the end
        # reason below says why it was closed).
        assert quiet >= 0.9, f"closed after {quiet:.1f} s of silence with a 1 s limit"
    rec = proxy.history_record(origin.host)
    assert rec["id"] == tid and rec["error"] is None, rec
    assert rec["endReason"] == "closed after 1 s without a byte either way", rec
    wait_for(lambda: origin.open_connections == opened_before, timeout=10,
             message="the upstream side of the tunnel to close")


def test_bad_tunnel_idle_timeout_is_refused_naming_it(afproxy_bin, tmp_path):
    """A value that is neither 0 nor a number of seconds stops the daemon before it listens, from
    the flag and from the config file (with its line)."""
    r = subprocess.run([afproxy_bin, "--listen", "127.0.0.1:0", "--tunnel-idle-timeout", "soon"],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode != 0 and "tunnel-idle-timeout" in r.stderr and "soon" in r.stderr, r.stderr
    assert "listening" not in r.stderr
    conf = tmp_path / "afproxy.conf"
    conf.write_text("tunnel-idle-timeout = -5\n")
    r = subprocess.run([afproxy_bin, "--check-config", str(conf)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and f"{conf}:1" in r.stderr and "-5" in r.stderr, r.stderr
    conf.write_text("tunnel-idle-timeout = 0\n")
    r = subprocess.run([afproxy_bin, "--check-config", str(conf)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr


# ----------------------------------------------------------------------------------------------
# refusals


def test_port_not_allowed_is_403_naming_the_allowed_ports(start_proxy, tls_origin, certificate):
    """443 only by default; --allow-connect-port adds ports, and the 403 names them all."""
    proxy = start_proxy("--allow-connect-port", "8443")
    with RawConn(proxy.port) as c:
        c.send(connect_head(tls_origin.host))
        resp = c.read_response()
    assert resp.status == 403, resp
    assert "443, 8443" in resp.text and str(tls_origin.port) in resp.text, resp.text
    r = https(proxy, certificate, "--max-time", "20", tls_origin.url("/bytes/10"), timeout=30)
    assert r.returncode != 0
    rec = proxy.tasks(all=True)
    assert rec == [], f"a refused CONNECT became a task: {rec}"


@pytest.mark.parametrize("target", [
    "nohost", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:", "::1:443", "bad^host:443", "[::1]x:443",
])
def test_bad_targets_are_400(proxy, origin, target):
    with RawConn(proxy.port) as c:
        c.send(connect_head(target))
        resp = c.read_response()
    assert resp.status == 400, f"CONNECT {target}: {resp.status} {resp.text!r}"
    assert_serves(proxy, origin)


def test_upstream_refused_is_502(start_proxy):
    """Any port with '*'; a closed one answers 502 naming the cause, and the task records it."""
    proxy = start_proxy("--allow-connect-port", "*")
    target = f"127.0.0.1:{closed_port()}"
    with RawConn(proxy.port) as c:
        c.send(connect_head(target))
        resp = c.read_response()
    assert resp.status == 502, resp
    assert "refused" in resp.text.lower(), resp.text
    rec = proxy.history_record(target)
    assert rec["kind"] == "stream" and rec["status"] is None, rec
    assert "refused" in rec["error"].lower() and rec["endReason"] == rec["error"], rec


def test_upstream_name_that_does_not_resolve_is_502(start_proxy, tmp_path):
    """A target whose name does not resolve: 502 naming the host, recorded on the task. The
    lookup fails on this machine (local_resolver_wrapper)."""
    proxy = start_proxy("--allow-connect-port", "*", "--allow-hosts", "nonexistent.invalid",
                        wrapper=local_resolver_wrapper(tmp_path))
    target = "nonexistent.invalid:443"
    with RawConn(proxy.port, timeout=60) as c:
        c.send(connect_head(target))
        resp = c.read_response(timeout=60)
    assert resp.status == 502, resp
    assert "nonexistent.invalid" in resp.text, resp.text
    rec = proxy.history_record(target)
    assert rec["kind"] == "stream" and rec["error"], rec


def test_upstream_connect_timeout_is_504(start_proxy):
    """An origin whose accept queue is full drops the SYN: past --connect-timeout, 504."""
    proxy = start_proxy("--allow-connect-port", "*", "--connect-timeout", "1")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    fillers = []
    try:
        for _ in range(3):  # fill the accept queue (never accepted)
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(server.getsockname())
            fillers.append(s)
        target = f"127.0.0.1:{server.getsockname()[1]}"
        with RawConn(proxy.port, timeout=20) as c:
            c.send(connect_head(target))
            resp = c.read_response(timeout=20)
        assert resp.status == 504, resp
        assert "timed out" in resp.text, resp.text
        assert "timed out" in proxy.history_record(target)["error"]
    finally:
        for s in fillers:
            s.close()
        server.close()
