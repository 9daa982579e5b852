"""HTTP/2 to intercepted origins: curl offers h2 in ALPN to an https origin, multiplexes
concurrent requests on one connection, and a client that speaks HTTP/1.1 to afproxy (curl
--http1.1: HTTP/2 to the client is test_intercept_h2.py's) gets HTTP/1.1 (a standard reason
phrase, the origin's length or chunks, keep-alive). The task, `afproxyctl show` and the HAR name
the version that went upstream. The origin is h2_origin.py (h2 only) over TLS on 127.0.0.1 with a
certificate of a test CA the daemon trusts through --tls-ca-file; an HTTP/1.1-only TLS origin
(origin.py) shows the other side. Clients are the real curl, trusting afproxy's CA (/v1/ca)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from h2_origin import start_h2_origin
from helpers import ctl, curl, curl_sha256, live_task, start_curl, wait_for
from origin import start_origin
from range_origin import file_bytes, file_sha256, make_tls_files

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    return make_tls_files(tmp_path_factory.mktemp("h2-origin-tls"))


@pytest.fixture(scope="module")
def h2_origin(tls_files):
    o = start_h2_origin(tls_files)
    yield o
    o.stop()


@pytest.fixture(scope="module")
def h1_origin(tls_files):
    """origin.py over TLS without ALPN: HTTP/1.1 only."""
    o = start_origin(tls=tls_files.server_context())
    yield o
    o.stop()


@pytest.fixture
def proxy(start_proxy, tls_files, h2_origin, h1_origin):
    """A daemon intercepting 127.0.0.1, trusting the test CA for both origins. One event loop: the
    streams of client connections share an upstream connection within their curl session, and
    with one session per loop, connections landing on different loops would open one each."""
    return start_proxy("--intercept-hosts", "127.0.0.1", "--tls-ca-file", tls_files.ca_cert,
                       "--allow-connect-port", str(h2_origin.port),
                       "--allow-connect-port", str(h1_origin.port), "--threads", "1")


def ca_path(proxy) -> str:
    status, body = proxy.api("GET", "/v1/ca")
    assert status == 200, body
    return body["certificatePath"]


def https(proxy, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return curl(proxy, "--cacert", ca_path(proxy), "--http1.1", *args, input=input)


def completed_task(proxy, url: str, method: str = "GET") -> dict:
    return wait_for(lambda: next((t for t in proxy.tasks(all=True) if t["url"] == url and t["method"] == method
                                  and t["state"] == "completed"), None), timeout=20)


def test_gets_are_byte_exact_and_the_client_gets_http11_with_keep_alive(proxy, h2_origin, tmp_path):
    """A small body, 5 MiB with Content-Length and a streamed body without it, on one client
    connection: byte-exact, HTTP/1.1 with standard reason phrases, the connection kept; each a
    task that went upstream over HTTP/2."""
    cases = [("/bytes/1000", 1000, True), (f"/bytes/{5 * MiB}?seed=2", 5 * MiB, True),
             (f"/stream/{3 * MiB + 17}?seed=3", 3 * MiB + 17, False)]
    args = ["-D", str(tmp_path / "heads"), "-w", "%{http_version} %{num_connects}\n"]
    for index, (path, _, _) in enumerate(cases):
        args += [h2_origin.url(path), "-o", str(tmp_path / f"body-{index}")]
    result = https(proxy, *args)
    assert result.returncode == 0, result.stderr
    # One client connection (curl made it for the first URL only), every answer HTTP/1.1.
    assert result.stdout.decode().split("\n")[:3] == ["1.1 1", "1.1 0", "1.1 0"], result.stdout
    # The proxy's answer to the CONNECT comes first.
    heads = [h for h in (tmp_path / "heads").read_bytes().decode().lower().split("\r\n\r\n")
             if h and "connection established" not in h]
    assert len(heads) == len(cases), (tmp_path / "heads").read_text()
    for index, (path, size, sized) in enumerate(cases):
        seed = int(path.split("seed=")[1]) if "seed=" in path else 1
        body = (tmp_path / f"body-{index}").read_bytes()
        assert len(body) == size and hashlib.sha256(body).hexdigest() == file_sha256(size, seed), path
        head = heads[index] + "\r\n"
        assert head.startswith("http/1.1 200 ok\r\n"), head
        assert "via: 2 " in head, head
        if sized:
            assert f"content-length: {size}\r\n" in head and "transfer-encoding" not in head, head
        else:
            assert "transfer-encoding: chunked\r\n" in head and "content-length" not in head, head
    for path, size, _ in cases:
        task = completed_task(proxy, h2_origin.url(path))
        assert task["status"] == 200 and task["errorCode"] is None, task
        assert task["download"]["completed"] == size
        assert task["metrics"]["httpVersion"] == "2", task
    proxy.wait_idle()


def test_trailers_reach_the_client_in_the_last_chunk(proxy, h2_origin, tmp_path):
    """An h2 body without a length, then a trailer section (a HEADERS frame that ends the
    stream): the HTTP/1.1 client gets the chunks and the trailer fields after the last one."""
    url = h2_origin.url("/trailers/300000?seed=4")
    result = https(proxy, "-D", str(tmp_path / "heads"), "-o", str(tmp_path / "body"), url)
    assert result.returncode == 0, result.stderr
    body = (tmp_path / "body").read_bytes()
    assert hashlib.sha256(body).hexdigest() == file_sha256(300000, 4)
    heads = (tmp_path / "heads").read_bytes().decode().lower()
    assert "transfer-encoding: chunked\r\n" in heads, heads
    assert f"x-sha256: {file_sha256(300000, 4)}\r\n" in heads.split("\r\n\r\n", 2)[2], heads
    proxy.wait_idle()


def test_concurrent_clients_share_one_upstream_connection(proxy, h2_origin):
    """Four client connections at once, each one request the origin holds until all four have
    arrived: the origin served all four streams on one TCP connection."""
    n = 4
    url = h2_origin.url(f"/gather/shared/{n}")
    # One request first opens the upstream connection; the others then find it (PIPEWAIT also
    # covers the race where they start while it is being set up).
    clients = [start_curl(proxy, "--cacert", ca_path(proxy), "--http1.1", url, stdout=subprocess.PIPE) for _ in range(n)]
    answers = []
    for client in clients:
        out, err = client.communicate(timeout=60)
        assert client.returncode == 0, err
        answers.append(json.loads(out))
    assert all(a["gathered"] >= n for a in answers), answers
    assert len({a["connection"] for a in answers}) == 1, answers
    assert len({(r.connection, r.client_port) for r in h2_origin.requests if r.path == f"/gather/shared/{n}"}) == 1
    proxy.wait_idle()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_uploads_reach_the_origin_intact(proxy, h2_origin, chunked):
    """1 MiB up (with Content-Length, and chunked from the client), `Expect: 100-continue` on the
    chunked one: the origin hashed what it received."""
    body = file_bytes(MiB, 7)
    extra = ["-H", "Transfer-Encoding: chunked", "-H", "Expect: 100-continue"] if chunked else []
    url = h2_origin.url(f"/echo?chunked={int(chunked)}")
    result = https(proxy, "--data-binary", "@-", "-H", "Content-Type: application/octet-stream", *extra, url,
                   input=body)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["length"] == MiB and answer["sha256"] == hashlib.sha256(body).hexdigest(), answer
    assert answer["method"] == "POST"
    names = {name for name, _ in answer["headers"]}
    assert not names & {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"}
    task = completed_task(proxy, url, method="POST")
    assert task["upload"]["completed"] == MiB and task["status"] == 200, task
    assert task["metrics"]["httpVersion"] == "2"
    proxy.wait_idle()


def test_hop_by_hop_fields_do_not_reach_the_origin(proxy, h2_origin):
    """Connection-specific fields are HTTP/1's own: an h2 origin must not see them (RFC 9113
    §8.2.2 makes them a malformed request), end-to-end ones go on."""
    url = h2_origin.url("/echo?hop")
    result = https(proxy, "-H", "Connection: keep-alive, X-Hop", "-H", "Keep-Alive: timeout=5", "-H", "X-Hop: 1",
                   "-H", "TE: trailers", "-H", "Upgrade: example/1", "-H", "X-End: 2", url)
    assert result.returncode == 0, result.stderr
    fields = dict(json.loads(result.stdout)["headers"])
    assert fields.get("x-end") == "2", fields
    assert not set(fields) & {"connection", "keep-alive", "x-hop", "upgrade", "transfer-encoding", "proxy-connection"}
    assert fields.get("te", "trailers") == "trailers"
    proxy.wait_idle()


def test_show_and_har_name_the_upstream_version(proxy, h2_origin, h1_origin):
    """The task JSON, `afproxyctl show` and the HAR entry say HTTP/2 for the h2 origin and 1.1
    for the HTTP/1.1-only one."""
    urls = {"2": h2_origin.url("/bytes/100"), "1.1": h1_origin.url("/bytes/100")}
    for url in urls.values():
        result = https(proxy, "-o", "/dev/null", "-D", "-", url)
        assert result.returncode == 0, result.stderr
        # After the proxy's answer to the CONNECT.
        assert b"\r\n\r\nHTTP/1.1 200 OK\r\n" in result.stdout, result.stdout
    har = proxy.api("GET", "/v1/har?all=1")[1]
    for version, url in urls.items():
        task = completed_task(proxy, url)
        assert task["metrics"]["httpVersion"] == version, task
        shown = ctl(proxy, "show", str(task["id"]))
        assert shown.returncode == 0, shown.stderr
        assert f"HTTP/{version} " in shown.stdout, shown.stdout
        entries = [e for e in har["log"]["entries"] if e["request"]["url"] == url]
        assert entries and entries[-1]["response"]["httpVersion"] == f"HTTP/{version}", entries
    proxy.wait_idle()


def test_a_slow_or_suspended_stream_does_not_stall_the_connection(proxy, h2_origin, tmp_path):
    """A client reading slowly holds its stream back (curl pauses it, the stream's window
    closes), then a person suspends it: other clients' requests on the same upstream connection
    go on meanwhile, and the slow one completes byte-exact after its resume. The origin sends the
    slow body only as far as the test lets it (a valve): wherever its bytes wait (curl's pause
    buffer, the task, the client's socket), the stream is still live when the test looks, which
    it was not once on a busy machine when the whole body arrived at once."""
    ca = ca_path(proxy)
    slow_url = h2_origin.url(f"/valve/slow/{20 * MiB}?seed=5")
    h2_origin.open_valve("slow", 4 * MiB)
    slow = start_curl(proxy, "--cacert", ca, "--http1.1", "--limit-rate", "2M", "-o", str(tmp_path / "slow"), slow_url)
    fast = curl_sha256(proxy, "--cacert", ca, "--http1.1", h2_origin.url(f"/bytes/{8 * MiB}?seed=6"))
    assert fast.returncode == 0 and fast.sha256 == file_sha256(8 * MiB, 6), fast.stderr
    task = live_task(proxy, slow_url)
    assert ctl(proxy, "suspend", str(task["id"])).returncode == 0
    wait_for(lambda: proxy.task(task["id"])["state"] == "suspended")
    during = curl_sha256(proxy, "--cacert", ca, "--http1.1", h2_origin.url(f"/bytes/{3 * MiB}?seed=8"))
    assert during.returncode == 0 and during.sha256 == file_sha256(3 * MiB, 8), during.stderr
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    h2_origin.open_valve("slow", 20 * MiB)
    assert slow.wait(timeout=120) == 0, slow.stderr.read()
    assert hashlib.sha256((tmp_path / "slow").read_bytes()).hexdigest() == file_sha256(20 * MiB, 5)
    served = {r.connection for r in h2_origin.requests if "seed=5" in r.path or "seed=6" in r.path
              or "seed=8" in r.path}
    assert len(served) == 1, served
    assert completed_task(proxy, slow_url)["metrics"]["httpVersion"] == "2"
    proxy.wait_idle()


def test_a_download_task_goes_over_http2(proxy, h2_origin, tmp_path):
    """afproxy's own request (afproxyctl download) to an h2 origin: byte-exact, HTTP/2 upstream."""
    url = h2_origin.url(f"/bytes/{2 * MiB}?seed=9")
    target = tmp_path / "download.bin"
    started = ctl(proxy, "download", url, "-o", str(target))
    assert started.returncode == 0 and started.stdout.strip().isdigit(), started.stderr
    task = wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(
        proxy.task(int(started.stdout.strip()))), timeout=60)
    assert task["kind"] == "download" and task["errorCode"] is None, task
    assert task["metrics"]["httpVersion"] == "2", task
    assert hashlib.sha256(target.read_bytes()).hexdigest() == file_sha256(2 * MiB, 9)
    proxy.wait_idle()


@pytest.mark.parametrize("path", ["/reset/2000000", "/reset-streamed/2000000", "/goaway/2000000"])
def test_a_stream_cut_mid_body_is_a_truncation(proxy, h2_origin, path):
    """RST_STREAM or GOAWAY after half the body: the task is upstream-broken and the client sees
    a cut, never a complete message."""
    url = h2_origin.url(path)
    got = curl_sha256(proxy, "--cacert", ca_path(proxy), "--http1.1", url)
    assert got.returncode in (18, 56), (got.returncode, got.stderr)
    assert got.size < 2_000_000
    task = completed_task(proxy, url)
    assert task["errorCode"] == "upstream-broken", task
    assert task["metrics"]["httpVersion"] == "2", task
    proxy.wait_idle()
