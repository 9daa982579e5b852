"""HTTPS interception: a CONNECT to an intercepted host is answered with a certificate minted by
afproxy's local CA, and each request inside becomes a task of its own with its https:// URL, a
parent (the connection's stream task) and the origin verified upstream. The origin is origin.py
over TLS on 127.0.0.1 with a certificate of a test CA (make_tls_files) that the daemon trusts
through --tls-ca-file; the clients (curl, Python's ssl) trust afproxy's CA, read from /v1/ca.
Bad input: an origin the daemon does not trust, a client that refuses the certificate (then
auto-passthrough), plain HTTP or garbage where TLS was expected, a client that stalls in its
handshake, another origin named inside the connection."""

from __future__ import annotations

import hashlib
import os
import json
import signal
import ssl
import subprocess
import time

import pytest

from helpers import RawConn, ca_path, connect_through, ctl, send_after_connect, key_pin, curl, curl_sha256, live_task, start_curl, wait_for
from origin import payload_sha256, start_origin
from range_origin import file_sha256 as range_sha256, make_self_signed, start_range_origin, strong_etag

MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def intercepting(start_proxy, tls_origin, tls_files):
    """Factory: a daemon that intercepts 127.0.0.1 and localhost, trusts the test CA for the
    origin and allows CONNECT to its port; extra flags go on top."""

    def start(*extra: str, trust_origin: bool = True):
        args = ["--intercept-hosts", "127.0.0.1", "--intercept-hosts", "localhost",
                "--allow-connect-port", str(tls_origin.port)]
        if trust_origin:
            args += ["--tls-ca-file", tls_files.ca_cert]
        return start_proxy(*args, *extra)

    return start


def ca_of(proxy) -> dict:
    status, body = proxy.api("GET", "/v1/ca")
    assert status == 200, f"GET /v1/ca: {status} {body!r}"
    return body


def https(proxy, ca: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return curl(proxy, "--cacert", ca, *args, timeout=timeout)


def history(proxy, predicate, timeout: float = 20.0) -> list[dict]:
    """The tasks (live and completed) for which `predicate` holds, once there are any."""
    return wait_for(lambda: [t for t in proxy.tasks(all=True) if predicate(t)] or None, timeout=timeout)


def completed(proxy, task_id: int, timeout: float = 20.0) -> dict:
    return wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(proxy.task(task_id)),
                    timeout=timeout)


def stream_tasks(proxy) -> list[dict]:
    return [t for t in proxy.tasks(all=True) if t["kind"] == "stream"]


def tls_client(proxy, ca: str, target: str, server_hostname: str | None):
    """A socket through the proxy's CONNECT to `target`, TLS with afproxy's CA trusted."""
    sock = connect_through(proxy, target)
    context = ssl.create_default_context(cafile=ca)
    if server_hostname is None:
        context.check_hostname = False
    return context.wrap_socket(sock, server_hostname=server_hostname)


def read_one(tls) -> bytes:
    """One response with a Content-Length, head and body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += tls.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        body += tls.recv(65536)
    return head + b"\r\n\r\n" + body


def read_answer(tls) -> bytes:
    data = b""
    while True:
        try:
            chunk = tls.recv(65536)
        except (ssl.SSLError, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    return data


# ----------------------------------------------------------------------------------------------
# requests as tasks


def test_each_request_is_a_task_with_its_https_url_and_parent(intercepting, tls_origin, tmp_path):
    """Two GETs on one intercepted keep-alive connection: byte-exact bodies, two data tasks with
    their https:// URLs, status, byte counts, the origin's TLS phase and the stream task as parent;
    the stream task counts 2 requests and the client's own handshake."""
    proxy = intercepting()
    ca = ca_path(proxy)
    sizes = (3 * MiB + 7, 200_001)
    urls = [tls_origin.url(f"/bytes/{n}") for n in sizes]
    outputs = [tmp_path / f"out-{n}" for n in sizes]
    args = []
    for url, out in zip(urls, outputs):
        args += [url, "-o", str(out)]
    result = https(proxy, ca, *args)
    assert result.returncode == 0, result.stderr
    for n, out in zip(sizes, outputs):
        assert hashlib.sha256(out.read_bytes()).hexdigest() == payload_sha256(n)

    tasks = wait_for(lambda: (lambda ts: ts if len(ts) == 2 else None)(
        [t for t in proxy.tasks(all=True) if t["kind"] == "data" and t["state"] == "completed"]))
    streams = stream_tasks(proxy)
    assert len(streams) == 1, streams
    stream = streams[0]
    assert stream["url"] == f"127.0.0.1:{tls_origin.port}"
    assert stream["requests"] == 2
    assert stream["metrics"]["tlsMs"] is not None  # the client's handshake with afproxy
    by_url = {t["url"]: t for t in tasks}
    assert set(by_url) == set(urls)
    for n, url in zip(sizes, urls):
        task = by_url[url]
        assert task["status"] == 200 and task["errorCode"] is None, task
        assert task["parent"] == stream["id"]
        assert task["download"]["completed"] == n and task["download"]["total"] == n
        assert task["requests"] is None
    # afproxy's own handshake with the origin, on the first task's new connection (the second
    # reused it).
    first = by_url[urls[0]]
    assert first["metrics"]["tlsMs"] is not None and first["metrics"]["reusedConnection"] is False
    # The stream task ends when curl closes; it counted the encrypted bytes both ways.
    stream = completed(proxy, stream["id"])
    assert stream["errorCode"] is None
    assert stream["download"]["completed"] > sum(sizes)
    assert stream["upload"]["completed"] > 0


def test_tls_sessions_to_the_origin_are_resumed_across_tasks(intercepting, tls_origin):
    """Two clients one after the other, each its own intercepted connection and task: the second
    task's connection to the origin resumes the first one's TLS session (curl's shared cache)."""
    proxy = intercepting()
    ca = ca_path(proxy)
    before = (tls_origin.connections, tls_origin.tls_resumed)
    for n in (10, 20, 30):
        # /close/N ends its body by closing: the next task cannot reuse the connection.
        result = https(proxy, ca, tls_origin.url(f"/close/{n}"))
        assert result.returncode == 0 and len(result.stdout) == n, result.stderr
    assert tls_origin.connections - before[0] == 3
    assert tls_origin.tls_resumed - before[1] >= 2


def test_upload_inside_an_intercepted_connection_is_byte_exact(intercepting, tls_origin, tmp_path):
    proxy = intercepting()
    ca = ca_path(proxy)
    body = bytes(range(256)) * (12 * 1024 + 3)
    source = tmp_path / "up.bin"
    source.write_bytes(body)
    result = https(proxy, ca, "--data-binary", f"@{source}", tls_origin.url("/upload"))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["length"] == len(body) and answer["sha256"] == hashlib.sha256(body).hexdigest()
    task = history(proxy, lambda t: t["kind"] == "upload")[0]
    task = completed(proxy, task["id"])
    assert task["url"] == tls_origin.url("/upload") and task["method"] == "POST"
    assert task["upload"]["completed"] == len(body)


def test_a_python_client_gets_a_certificate_for_the_name_it_asked_for(intercepting, tls_origin):
    """SNI "localhost" on a CONNECT to localhost: the leaf names localhost and verifies against
    afproxy's CA with Python's own checks; the request is a task for https://localhost:PORT."""
    proxy = intercepting()
    ca = ca_path(proxy)
    target = f"localhost:{tls_origin.port}"
    with tls_client(proxy, ca, target, "localhost") as tls:
        assert tls.selected_alpn_protocol() in (None, "http/1.1")
        tls.sendall(f"GET /bytes/1000 HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n".encode())
        answer = read_answer(tls)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    task = history(proxy, lambda t: t["kind"] == "data")[0]
    assert task["url"] == f"https://localhost:{tls_origin.port}/bytes/1000"


def test_a_client_without_sni_gets_the_connect_hosts_certificate(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    with tls_client(proxy, ca, f"127.0.0.1:{tls_origin.port}", None) as tls:
        names = [value for kind, value in tls.getpeercert()["subjectAltName"]]
        tls.sendall(b"GET /bytes/10 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % tls_origin.port)
        answer = read_answer(tls)
    assert "127.0.0.1" in names, names
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_another_origin_inside_the_connection_is_421_and_connect_is_400(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    target = f"127.0.0.1:{tls_origin.port}"
    with tls_client(proxy, ca, target, None) as tls:
        tls.sendall(b"GET /bytes/10 HTTP/1.1\r\nHost: other.test\r\n\r\n")
        answer = read_one(tls)
        assert answer.startswith(b"HTTP/1.1 421"), answer[:200]
        assert b"other.test" in answer
        tls.sendall(b"CONNECT elsewhere.test:443 HTTP/1.1\r\nHost: elsewhere.test:443\r\n\r\n")
        answer = read_answer(tls)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert not [t for t in proxy.tasks(all=True) if t["kind"] == "data"]


def test_a_refusal_to_a_request_that_asked_for_close_closes(intercepting, tls_origin):
    """RFC 9112 §9.6: the 421 to a request with `Connection: close` says close and closes (it
    said keep-alive and waited for the client to give up), as the answers from the origin do."""
    proxy = intercepting()
    target = f"127.0.0.1:{tls_origin.port}"
    with tls_client(proxy, ca_path(proxy), target, None) as tls:
        tls.sendall(b"GET /bytes/10 HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n")
        answer = read_answer(tls)  # to the end of the connection
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 421") and b"connection: close" in head, answer[:300]


def test_hosts_not_intercepted_stay_plain_tunnels(start_proxy, tls_origin, tls_files):
    """An excluded host (and any host no rule names) is relayed as before: the client sees the
    origin's own certificate, and the stream task carries no requests."""
    proxy = start_proxy("--intercept-hosts", "*", "--intercept-exclude", "127.0.0.1",
                        "--allow-connect-port", str(tls_origin.port))
    result = curl_sha256(proxy, "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/100000"))
    assert result.returncode == 0 and result.sha256 == payload_sha256(100000), result.stderr
    stream = history(proxy, lambda t: t["kind"] == "stream")[0]
    assert stream["requests"] is None
    assert not [t for t in proxy.tasks(all=True) if t["kind"] == "data"]


def test_runtime_intercept_rules_survive_a_restart(start_proxy, tls_origin, tls_files, tmp_path):
    state = tmp_path / "state"
    args = ("--state-dir", str(state), "--allow-connect-port", str(tls_origin.port),
            "--tls-ca-file", tls_files.ca_cert)
    proxy = start_proxy(*args)
    assert ctl(proxy, "intercept").stdout.strip().startswith("no host is intercepted")
    added = ctl(proxy, "intercept", "127.0.0.1")
    assert added.returncode == 0, added.stderr
    assert "intercept  127.0.0.1  (runtime)" in added.stdout
    ca = ca_path(proxy)
    assert https(proxy, ca, tls_origin.url("/bytes/10")).returncode == 0
    proxy.stop(by_test=True)

    again = start_proxy(*args)
    assert "127.0.0.1  (runtime)" in ctl(again, "intercept", "--list").stdout
    result = https(again, ca, tls_origin.url("/bytes/20"))
    assert result.returncode == 0, result.stderr
    assert history(again, lambda t: t["kind"] == "data")[0]["url"] == tls_origin.url("/bytes/20")
    removed = ctl(again, "intercept", "--remove", "127.0.0.1")
    assert removed.returncode == 0 and "no host is intercepted" in removed.stdout
    missing = ctl(again, "intercept", "--remove", "127.0.0.1")
    assert missing.returncode != 0 and "no runtime intercept rule" in missing.stderr


def test_intercept_keys_are_reloaded_on_sighup(start_proxy, tls_origin, tls_files, tmp_path):
    """intercept-hosts and intercept-exclude in the config file take effect on SIGHUP: a host
    added is intercepted on its next connection, one excluded is a plain tunnel again."""
    conf = tmp_path / "afproxy.conf"
    conf.write_text(f"allow-connect-port = {tls_origin.port}\ntls-ca-file = {tls_files.ca_cert}\n")
    proxy = start_proxy("--config", str(conf))
    # Not intercepted: the client trusts the origin's own CA only.
    assert curl(proxy, "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/10")).returncode == 0
    assert not [t for t in proxy.tasks(all=True) if t["kind"] == "data"]

    conf.write_text(conf.read_text() + "intercept-hosts = 127.0.0.1\n")
    os.kill(proxy.pid, signal.SIGHUP)
    wait_for(lambda: proxy.log().count("configuration reloaded") >= 1, message="the first reload")
    assert "127.0.0.1" in ctl(proxy, "intercept", "--list").stdout
    ca = ca_path(proxy)
    result = https(proxy, ca, tls_origin.url("/bytes/20"))
    assert result.returncode == 0, result.stderr
    assert history(proxy, lambda t: t["kind"] == "data")[0]["url"] == tls_origin.url("/bytes/20")

    conf.write_text(conf.read_text() + "intercept-exclude = 127.0.0.1\n")
    os.kill(proxy.pid, signal.SIGHUP)
    wait_for(lambda: proxy.log().count("configuration reloaded") >= 2, message="the second reload")
    before = len([t for t in proxy.tasks(all=True) if t["kind"] == "data"])
    assert curl(proxy, "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/30")).returncode == 0
    assert len([t for t in proxy.tasks(all=True) if t["kind"] == "data"]) == before


# ----------------------------------------------------------------------------------------------
# steering HTTPS requests


def test_suspend_and_resume_mid_body_of_an_https_request(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    size = 2 * MiB
    url = tls_origin.url(f"/slowbody/{size}?chunk=65536&interval=0.02")
    client = start_curl(proxy, "--cacert", ca, "-o", "/dev/null", "-w", "%{size_download}", url,
                        stdout=subprocess.PIPE)
    try:
        task = live_task(proxy, url, min_download=64 * 1024)
        status, body = proxy.api("POST", f"/v1/tasks/{task['id']}/suspend")
        assert status == 200, body
        held = wait_for(lambda: (lambda t: t if t["state"] == "suspended" else None)(proxy.task(task["id"])))
        assert held["download"]["completed"] < size
        status, body = proxy.api("POST", f"/v1/tasks/{task['id']}/resume")
        assert status == 200, body
        out, err = client.communicate(timeout=120)
    finally:
        client.kill()
    assert client.returncode == 0, err
    assert int(out) == size
    done = completed(proxy, task["id"])
    assert done["download"]["completed"] == size and done["errorCode"] is None


def test_an_https_get_whose_origin_breaks_off_is_resumed_transparently(start_proxy, tls_files):
    """The range origin over TLS breaks once at 2 MiB: the client gets one intact response over
    its intercepted connection, the origin got the rest with Range and If-Range, and the task
    records the resume, as for a proxied http:// GET."""
    origin = start_range_origin(tls=tls_files.server_context())
    try:
        proxy = start_proxy("--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(origin.port),
                            "--tls-ca-file", tls_files.ca_cert)
        ca = ca_path(proxy)
        size = 5 * MiB
        url = origin.url(f"/intercepted.bin?size={size}&break={2 * MiB}")
        out = curl_sha256(proxy, "--cacert", ca, "--max-time", "60", url)
        assert out.returncode == 0, out.stderr
        assert (out.size, out.sha256) == (size, range_sha256(size))
        gets = origin.requests_for(url)
        assert [(r.range, r.if_range, r.status) for r in gets] == [
            (None, None, 200), (f"bytes={2 * MiB}-", strong_etag(size), 206)], gets
        task = completed(proxy, history(proxy, lambda t: t["url"] == url)[0]["id"])
        assert [r["offset"] for r in task["resumes"]] == [2 * MiB] and task["parent"] is not None
    finally:
        origin.stop()


def test_a_hold_rule_catches_an_https_path(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    added = ctl(proxy, "hold", "add", "--url", "/bytes/4321$")
    assert added.returncode == 0, added.stderr
    url = tls_origin.url("/bytes/4321")
    client = start_curl(proxy, "--cacert", ca, "-o", "/dev/null", "-w", "%{size_download}", url,
                        stdout=subprocess.PIPE)
    try:
        task = history(proxy, lambda t: t["url"] == url)[0]
        assert task["state"] == "suspended" and task["heldBy"] == int(added.stdout.strip())
        assert ctl(proxy, "resume", str(task["id"])).returncode == 0
        out, err = client.communicate(timeout=60)
    finally:
        client.kill()
    assert client.returncode == 0 and int(out) == 4321, err


def test_a_throttle_rule_on_the_https_host_applies_to_its_requests(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    set_rule = ctl(proxy, "throttle", "--host", "127.0.0.1", "400k")
    assert set_rule.returncode == 0, set_rule.stderr
    url = tls_origin.url(f"/bytes/{MiB}")
    client = start_curl(proxy, "--cacert", ca, "-o", "/dev/null", url)
    try:
        task = live_task(proxy, url, min_download=1)
        assert task["limit"]["down"]["rule"].startswith("host"), task["limit"]
        assert client.wait(timeout=60) == 0
    finally:
        client.kill()


@pytest.fixture(scope="module")
def self_signed_origin(tmp_path_factory):
    """origin.py over TLS with a self-signed certificate for 127.0.0.1 that no CA vouches for."""
    cert, key = make_self_signed(tmp_path_factory.mktemp("self-signed"))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    o = start_origin(tls=context)
    o.cert = cert
    yield o
    o.stop()


@pytest.mark.parametrize("rule, expected", [
    ("standalone", None),                  # the pin alone decides: the self-signed origin is trusted
    ("", "tls-verify-failed"),             # a pin without standalone needs the chain to verify too
    ("wrong-pin", "tls-pin-mismatch"),     # standalone never means "no check": a key off the pins fails
])
def test_a_standalone_pin_trusts_a_self_signed_origin_by_its_key_alone(
        start_proxy, self_signed_origin, rule, expected):
    pin = key_pin(self_signed_origin.cert)
    line = {"standalone": f"127.0.0.1 {pin} standalone", "": f"127.0.0.1 {pin}",
            "wrong-pin": "127.0.0.1 sha256//" + "A" * 43 + "= standalone"}[rule]
    proxy = start_proxy("--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(self_signed_origin.port),
                        "--pin", line)
    ca = ca_path(proxy)
    result = https(proxy, ca, "-w", "\n%{http_code}", self_signed_origin.url("/bytes/2000"))
    assert result.returncode == 0, result.stderr
    body, _, code = result.stdout.rpartition(b"\n")
    task = completed(proxy, history(proxy, lambda t: t["kind"] == "data")[0]["id"])
    if expected is None:
        assert code == b"200" and hashlib.sha256(body).hexdigest() == payload_sha256(2000)
        assert task["errorCode"] is None
    else:
        assert code == b"502"
        assert task["errorCode"] == expected and task["download"]["completed"] == 0


# ----------------------------------------------------------------------------------------------
# bad input


def test_an_origin_the_daemon_does_not_trust_is_502_and_nothing_is_relayed(intercepting, tls_origin):
    proxy = intercepting(trust_origin=False)
    ca = ca_path(proxy)
    result = https(proxy, ca, "-w", "\n%{http_code}", tls_origin.url("/bytes/5000"))
    assert result.returncode == 0, result.stderr
    body, _, code = result.stdout.rpartition(b"\n")
    assert code == b"502"
    assert b"certificate" in body.lower()
    task = completed(proxy, history(proxy, lambda t: t["kind"] == "data")[0]["id"])
    assert task["errorCode"] == "tls-verify-failed"
    assert task["download"]["completed"] == 0


def test_a_client_that_refuses_the_certificate_is_recorded_then_passed_through(
        intercepting, tls_origin, tls_files):
    """curl that trusts only the origin's CA refuses afproxy's leaf: its stream task ends with
    client-tls-failed naming the alert, the host is listed as passed through, and curl's next
    try reaches the origin through a plain tunnel."""
    proxy = intercepting()
    ca_of(proxy)
    refused = curl(proxy, "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/10"))
    assert refused.returncode == 60, refused.stderr  # curl: peer certificate cannot be authenticated
    stream = completed(proxy, history(proxy, lambda t: t["kind"] == "stream")[0]["id"])
    assert stream["errorCode"] == "client-tls-failed"
    assert "alert" in stream["error"] and "passed through" in stream["error"], stream["error"]
    listing = ctl(proxy, "intercept", "--list").stdout
    assert "passthrough  127.0.0.1" in listing, listing
    again = curl_sha256(proxy, "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/3000"))
    assert again.returncode == 0 and again.sha256 == payload_sha256(3000), again.stderr
    assert not [t for t in proxy.tasks(all=True) if t["kind"] == "data"]


@pytest.mark.parametrize("sent, expected", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "plain HTTP"),
    (b"\x16\x03\x01\x00\x10" + b"\xff" * 16, "TLS"),
])
def test_bytes_that_are_not_a_tls_handshake_end_the_connection(intercepting, tls_origin, sent, expected):
    proxy = intercepting()
    ca_of(proxy)
    send_after_connect(proxy, f"127.0.0.1:{tls_origin.port}", sent)
    stream = completed(proxy, history(proxy, lambda t: t["kind"] == "stream")[0]["id"])
    assert stream["errorCode"] == "client-tls-failed"
    assert expected in stream["error"], stream["error"]


def test_a_client_that_stalls_in_its_handshake_is_closed_after_the_header_timeout(intercepting, tls_origin):
    proxy = intercepting("--header-timeout", "1")
    ca_of(proxy)
    with RawConn(proxy.port, timeout=30) as conn:
        target = f"127.0.0.1:{tls_origin.port}"
        conn.send(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        assert conn.read_response(head=True).status == 200
        conn.send(b"\x16\x03\x01")  # the start of a record, never finished
        assert conn.wait_closed(timeout=30)
    stream = completed(proxy, history(proxy, lambda t: t["kind"] == "stream")[0]["id"])
    assert stream["errorCode"] == "client-tls-failed"
    assert "within 1 s" in stream["error"], stream["error"]


def test_the_ca_key_is_in_no_answer_log_or_har(intercepting, tls_origin, tmp_path):
    proxy = intercepting()
    ca = ca_of(proxy)
    assert https(proxy, ca["certificatePath"], tls_origin.url("/bytes/100")).returncode == 0
    key_file = ca["certificatePath"].rsplit("/", 1)[0] + "/ca-key.pem"
    key_lines = [line for line in open(key_file).read().splitlines() if line and "-----" not in line]
    assert key_lines
    seen = [json.dumps(proxy.api("GET", path)[1]) for path in ("/v1/tasks?all=1", "/v1/har", "/v1/status",
                                                              "/v1/ca", "/v1/intercept")]
    # The intercepted request is in the HAR as any proxied one is.
    har = proxy.api("GET", "/v1/har?all=1")[1]
    assert tls_origin.url("/bytes/100") in [e["request"]["url"] for e in har["log"]["entries"]]
    seen.append(proxy.log())
    for text in seen:
        for line in key_lines:
            assert line not in text
