"""The core forwarding behaviour: bodies intact both ways, framing, keep-alive, pipelining, hop-by-hop."""

from __future__ import annotations

import hashlib
import json
import random
import socket
import subprocess
import time
import urllib.request

import pytest

from helpers import (
    RawConn, clean_env, curl, curl_sha256, file_sha256, parse_head_block, request_bytes, wait_for,
)
from origin import GZIP_BODY, payload, payload_sha256

MiB = 1024 * 1024
BIG = 200 * MiB


def _write_random_file(path, size: int, seed: int) -> str:
    data = random.Random(seed).randbytes(size)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


# ---- downloads ---------------------------------------------------------------------------------

def test_download_200mib_content_length(proxy, origin):
    """200 MiB with Content-Length arrive through the proxy byte for byte."""
    out = curl_sha256(proxy, "--max-time", "280", origin.url(f"/bytes/{BIG}"), timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.size == BIG
    assert out.sha256 == payload_sha256(BIG)


def test_download_200mib_chunked(proxy, origin):
    """200 MiB sent chunked by the origin arrive through the proxy byte for byte."""
    out = curl_sha256(proxy, "--max-time", "280", origin.url(f"/chunked/{BIG}"), timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.size == BIG
    assert out.sha256 == payload_sha256(BIG)


# ---- uploads -----------------------------------------------------------------------------------

def test_upload_20mib_content_length(proxy, origin, tmp_path):
    """A 20 MiB POST body with Content-Length reaches the origin intact."""
    f = tmp_path / "up.bin"
    digest = _write_random_file(f, 20 * MiB, seed=20)
    r = curl(proxy, "--max-time", "100", "-H", "Content-Type: application/octet-stream",
             "--data-binary", f"@{f}", origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["method"] == "POST"
    assert j["length"] == 20 * MiB
    assert j["sha256"] == digest


def test_upload_20mib_chunked(proxy, origin, tmp_path):
    """A 20 MiB chunked POST body reaches the origin intact (the proxy may re-frame it)."""
    f = tmp_path / "up.bin"
    digest = _write_random_file(f, 20 * MiB, seed=21)
    r = curl(proxy, "--max-time", "100", "-H", "Transfer-Encoding: chunked",
             "-H", "Content-Type: application/octet-stream", "--data-binary", f"@{f}", origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["method"] == "POST"
    assert j["length"] == 20 * MiB
    assert j["sha256"] == digest


def test_put_upload_file(proxy, origin, tmp_path):
    """`curl -T file` sends a PUT whose body reaches the origin intact."""
    f = tmp_path / "put.bin"
    digest = _write_random_file(f, 3 * MiB + 17, seed=3)
    r = curl(proxy, "--max-time", "60", "-T", str(f), origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert (j["method"], j["length"], j["sha256"]) == ("PUT", 3 * MiB + 17, digest)


def test_patch_with_body(proxy, origin):
    """A PATCH with a small body is forwarded with its method and body."""
    body = b'{"op":"replace","path":"/a","value":1}'
    r = curl(proxy, "--max-time", "30", "-X", "PATCH", "-H", "Content-Type: application/json",
             "--data-binary", body.decode(), origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert (j["method"], j["length"], j["sha256"]) == ("PATCH", len(body), hashlib.sha256(body).hexdigest())


# ---- bodiless responses and framing -----------------------------------------------------------

def test_head_has_length_and_no_body(proxy, origin):
    """HEAD returns the origin's Content-Length with no body; the connection stays usable after it."""
    r = curl(proxy, "--max-time", "30", "-I", origin.url("/bytes/12345"))
    assert r.returncode == 0, r.stderr
    status, headers = parse_head_block(r.stdout)[-1]
    assert status == 200
    assert headers.get("content-length") == "12345"

    # On a raw connection: if the proxy sent a body after the HEAD response, the next response
    # would not start where it should.
    with RawConn(proxy.port) as c:
        c.send(request_bytes("HEAD", origin.url("/bytes/12345"))
               + request_bytes("GET", origin.url("/bytes/10")))
        head = c.read_response(head=True)
        assert head.status == 200 and head.header("content-length") == "12345"
        nxt = c.read_response()
        assert nxt.status == 200, "bytes after the HEAD response (a body was sent?)"
        assert nxt.body == payload(10)


def test_204_and_304_have_no_body(proxy, origin):
    """204 and 304 are relayed without a body, and the connection stays in sync afterwards."""
    for code in (204, 304):
        r = curl(proxy, "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                 origin.url(f"/status/{code}"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode() == f"{code} 0"

    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/status/204"))
               + request_bytes("GET", origin.url("/status/304"))
               + request_bytes("GET", origin.url("/bytes/10")))
        first, second, third = c.read_response(), c.read_response(), c.read_response()
        assert (first.status, first.body) == (204, b"")
        assert (second.status, second.body) == (304, b"")
        assert first.header("transfer-encoding") is None and second.header("transfer-encoding") is None
        assert (third.status, third.body) == (200, payload(10))


def test_other_status_codes_are_relayed(proxy, origin):
    """Non-2xx statuses from the origin are relayed as they are, with their body."""
    for code in (404, 418, 500, 503):
        r = curl(proxy, "--max-time", "30", "-w", "\n%{http_code}", origin.url(f"/status/{code}"))
        assert r.returncode == 0, r.stderr
        body, _, status = r.stdout.rpartition(b"\n")
        assert int(status) == code
        assert body == b"status %d\n" % code


def test_gzip_passes_through_compressed(proxy, origin, tmp_path):
    """Without --compressed, a gzip body arrives exactly as the origin sent it, Content-Encoding kept."""
    hdr = tmp_path / "headers.txt"
    r = curl(proxy, "--max-time", "30", "-D", str(hdr), origin.url("/gzip"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == GZIP_BODY
    status, headers = parse_head_block(hdr.read_bytes())[-1]
    assert status == 200
    assert headers.get("content-encoding") == "gzip"
    if "content-length" in headers:
        assert headers["content-length"] == str(len(GZIP_BODY))


def test_close_delimited_to_http11_and_http10_clients(proxy, origin):
    """A body delimited by the origin closing arrives intact to HTTP/1.1 and HTTP/1.0 clients."""
    n = 5 * MiB + 123
    for extra in ((), ("-0",)):
        out = curl_sha256(proxy, "--max-time", "60", *extra, origin.url(f"/close/{n}"), timeout=90)
        assert out.returncode == 0, f"curl {extra}: {out.stderr}"
        assert (out.size, out.sha256) == (n, payload_sha256(n)), f"curl {extra}"


def test_http10_client_with_content_length(proxy, origin):
    """An HTTP/1.0 client gets a correctly framed response for a Content-Length body too."""
    r = curl(proxy, "--max-time", "30", "-0", origin.url("/bytes/100000"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == payload(100000)


# ---- other clients ------------------------------------------------------------------------------

def test_python_urllib_client(proxy, origin):
    """Python's urllib with a ProxyHandler downloads and posts through the proxy."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.proxy_url}))
    with opener.open(origin.url("/bytes/300000"), timeout=30) as resp:
        assert resp.status == 200
        assert resp.read() == payload(300000)
    body = b"x" * 5000
    req = urllib.request.Request(origin.url("/upload"), data=body, method="POST")
    with opener.open(req, timeout=30) as resp:
        j = json.loads(resp.read())
    assert (j["length"], j["sha256"]) == (5000, hashlib.sha256(body).hexdigest())


def test_wget_client(proxy, origin, tmp_path):
    """wget configured with use_proxy/http_proxy downloads through the proxy."""
    out = tmp_path / "wget.bin"
    n = 2 * MiB + 5
    r = subprocess.run(
        ["wget", "-q", "-O", str(out), "--tries=1", "--timeout=30", "-e", "use_proxy=yes",
         "-e", f"http_proxy={proxy.proxy_url}", origin.url(f"/bytes/{n}")],
        capture_output=True, timeout=60, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert file_sha256(out) == (n, payload_sha256(n))


def test_ipv6_origin(proxy, origin_v6):
    """An origin named by an IPv6 literal, http://[::1]:PORT/…: intact, and Host keeps the brackets."""
    n = 3 * MiB + 7
    r = curl_sha256(proxy, "--max-time", "60", origin_v6.url(f"/bytes/{n}"))
    assert r.returncode == 0, r.stderr
    assert (r.size, r.sha256) == (n, payload_sha256(n))
    assert origin_v6.last_request.header("host") == origin_v6.host
    rec = proxy.history_record(origin_v6.url(f"/bytes/{n}"))
    assert rec["metrics"]["remoteAddress"] == f"[::1]:{origin_v6.port}", rec["metrics"]


# ---- connection reuse ---------------------------------------------------------------------------

def test_keep_alive_reuses_client_and_upstream_connections(proxy, origin):
    """Two URLs in one curl run share one client connection, and the proxy reuses one upstream connection."""
    # Warm nothing up: the proxy is fresh, so exactly one upstream connection must be opened.
    before = origin.connections
    r = curl(proxy, "--max-time", "30", "-w", "%{num_connects}\n",
             "-o", "/dev/null", origin.url("/bytes/1000"),
             "-o", "/dev/null", origin.url("/bytes/2000"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["1", "0"], "curl did not reuse its connection to the proxy"
    assert origin.connections - before == 1, "the proxy opened more than one upstream connection"


def test_upstream_connections_survive_a_lull(proxy, origin):
    """24 requests in flight at once, twice: the second burst reuses the first one's upstream
    connections. (curl's default connection cache shrinks with the number of transfers running,
    so without a fixed cache size the end of the first burst closed most of them.)"""
    def burst():
        urls = [arg for _ in range(24) for arg in ("-o", "/dev/null", origin.url("/delay/0.5"))]
        r = curl(proxy, "--max-time", "60", "-Z", "--parallel-immediate", "--parallel-max", "24",
                 "-w", "%{http_code}\n", *urls, timeout=90)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().split() == ["200"] * 24, r.stdout

    before = origin.connections
    burst()
    first = origin.connections - before
    assert 1 <= first <= 24, first
    time.sleep(0.5)
    burst()
    assert origin.connections - before == first, \
        f"the second burst opened {origin.connections - before - first} new upstream connections"


def test_many_requests_in_turn_on_one_connection(proxy, origin):
    """Forty requests of every framing, one after another on one connection, each answered in
    full: between them the connection is idle and lets its parser go, and each request makes a
    new one (uploads that end in their body, chunked ones, HEADs, GETs)."""
    with RawConn(proxy.port) as c:
        for i in range(40):
            kind = i % 4
            if kind == 0:
                c.send(request_bytes("GET", origin.url(f"/bytes/{100 + i}")))
                r = c.read_response()
                assert (r.status, r.body, r.complete) == (200, payload(100 + i), True), i
            elif kind == 1:
                body = payload(3000 + i)
                c.send(request_bytes("POST", origin.url("/upload"), body=body))
                j = c.read_response().json()
                assert (j["length"], j["sha256"]) == (len(body), hashlib.sha256(body).hexdigest()), i
            elif kind == 2:
                c.send(request_bytes("PUT", origin.url("/upload"), [("Transfer-Encoding", "chunked")],
                                     body=b"5\r\nhello\r\n0\r\n\r\n"))
                j = c.read_response().json()
                assert (j["length"], j["sha256"]) == (5, hashlib.sha256(b"hello").hexdigest()), i
            else:
                c.send(request_bytes("HEAD", origin.url("/bytes/10")))
                r = c.read_response(head=True)
                assert (r.status, r.body) == (200, b""), i


def test_a_request_sent_byte_by_byte_after_idle(proxy, origin):
    """Once a keep-alive connection went idle, a request that arrives one byte at a time, head
    and body, is parsed whole and answered, and so is the one after it."""
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/bytes/10")))
        assert c.read_response().body == payload(10)
        time.sleep(0.2)
        body = b"split into single bytes"
        for byte in request_bytes("POST", origin.url("/upload"), body=body):
            assert c.send(bytes([byte]))
            time.sleep(0.002)
        j = c.read_response().json()
        assert (j["length"], j["sha256"]) == (len(body), hashlib.sha256(body).hexdigest())
        c.send(request_bytes("GET", origin.url("/bytes/20")))
        assert c.read_response().body == payload(20)


def test_pipelined_requests_answered_in_order(proxy, origin):
    """Three requests written in one go are answered in order, each response complete."""
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/bytes/100"))
               + request_bytes("GET", origin.url("/echo?n=2"))
               + request_bytes("GET", origin.url("/bytes/70000")))
        first, second, third = c.read_response(), c.read_response(), c.read_response()
    assert (first.status, first.body, first.complete) == (200, payload(100), True)
    assert second.status == 200 and second.json()["path"] == "/echo?n=2"
    assert (third.status, third.complete) == (200, True)
    assert third.body == payload(70000)


@pytest.mark.parametrize("closer", ["asks-close", "malformed", "cut-by-origin"])
def test_answers_before_a_closing_one_arrive_whole(proxy, origin, closer):
    """Requests pipelined behind one whose answer closes the connection (the client asked for
    close; it is malformed and gets our 400; its response is cut by the origin): the answers before
    it arrive whole and the connection then ends in order, not in a reset. Reads are held behind a
    pipelined request, so the requests further behind sit unread in the daemon's socket; closing
    over them made the kernel reset the connection, which threw away every byte the client had not
    read yet (the fuzzing run lost 850 KB of a pipelined answer that way). The client reads
    nothing until the daemon is through with the closing request, and reads slowly (a small
    receive buffer), so that nothing of what the daemon wrote can have been read before."""
    size = 300_000
    second = {
        "asks-close": request_bytes("GET", origin.url("/bytes/10"), headers=[("Connection", "close")]),
        "malformed": b"GET /no-absolute-form HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n",
        "cut-by-origin": request_bytes("GET", origin.url("/abort/40000")),
    }[closer]
    padding = [("X-Padding", "p" * 2000)]
    behind = b"".join(request_bytes("GET", origin.url(f"/bytes/{n}"), headers=padding) for n in range(1, 9))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", proxy.port))
    with RawConn.adopt(sock) as c:
        c.send(request_bytes("GET", origin.url(f"/bytes/{size}")) + second + behind)

        def through() -> bool:
            tasks = {t["url"].rsplit("/", 1)[-1]: t for t in proxy.tasks(all=True)}
            first = tasks.get(str(size))
            if first is None or first["state"] != "completed":
                return False
            if closer == "malformed":
                return True  # our 400 follows the first answer's end on the loop at once
            return tasks.get("10" if closer == "asks-close" else "40000", {}).get("state") in ("completed", "failed")

        wait_for(through, message=f"the daemon through with the request behind /bytes/{size}")
        first = c.read_response()
        assert (first.status, first.complete, len(first.body)) == (200, True, size)
        assert first.body == payload(size)
        answer = c.read_response()
        if closer == "asks-close":
            assert (answer.status, answer.complete, answer.body) == (200, True, payload(10))
        elif closer == "malformed":
            assert (answer.status, answer.complete) == (400, True)
        else:
            assert answer.status == 200 and not answer.complete  # cut where the origin cut it
        assert c.at_end_in_order(), "the connection ended in a reset, or went on"
    assert len(proxy.tasks(all=True)) == 2 if closer != "malformed" else 1  # nothing behind was served


# ---- headers ---------------------------------------------------------------------------------------

def test_hop_by_hop_headers_removed_and_via_added(proxy, origin):
    """Hop-by-hop fields (fixed ones and those named by Connection) don't reach the origin;
    Via names afproxy both ways; Host is the URL's authority."""
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/echo"), [
            ("Host", origin.host),
            ("Connection", "X-Foo"),
            ("X-Foo", "1"),
            ("Keep-Alive", "5"),
            ("Proxy-Authorization", "Basic xx"),
            ("Proxy-Connection", "keep-alive"),
            ("TE", "trailers"),
            ("Upgrade", "h2c"),
            ("X-End-To-End", "kept"),
        ]))
        resp = c.read_response()
    assert resp.status == 200
    seen = resp.json()["headers"]
    names = [k.lower() for k, _ in seen]
    for hop in ("x-foo", "keep-alive", "proxy-authorization", "proxy-connection", "te", "upgrade"):
        assert hop not in names, f"{hop} reached the origin: {seen}"
    for k, v in seen:
        if k.lower() == "connection":
            assert "x-foo" not in v.lower(), f"Connection: {v} reached the origin"
    headers = {k.lower(): v for k, v in seen}
    assert headers.get("x-end-to-end") == "kept"
    assert "afproxy" in headers.get("via", ""), f"no Via: afproxy at the origin: {seen}"
    assert headers.get("host") == origin.host
    assert any("afproxy" in v for v in resp.header_all("via")), f"no Via in the response: {resp.headers}"


def test_end_to_end_headers_forwarded_in_order(proxy, origin):
    """End-to-end request headers, repeated ones included, reach the origin with their values and order."""
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/echo"), [
            ("X-Multi", "one"), ("Accept", "*/*"), ("X-Multi", "two"), ("Cookie", "a=1"),
        ]))
        resp = c.read_response()
    seen = [(k.lower(), v) for k, v in resp.json()["headers"]]
    assert [v for k, v in seen if k == "x-multi"] == ["one", "two"]
    assert ("cookie", "a=1") in seen
    assert ("accept", "*/*") in seen


def test_requests_after_one_asking_for_an_upgrade_are_served(proxy, origin):
    """A request asking for a protocol upgrade other than WebSocket (curl's h2c offer) is
    forwarded without it, `Upgrade` being hop-by-hop, and the origin answers in HTTP; the
    requests behind it on the same keep-alive connection are served, sent after the answer or
    pipelined behind the upgrade request, not left unread until a 408. (A WebSocket handshake
    becomes a tunnel: test_websocket.py.)"""
    h2c = [("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQCAAAAAAIAAAAA")]
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/echo"), h2c))
        resp = c.read_response()
        assert resp.status == 200, resp.status
        sent = {k.lower() for k, _ in resp.json()["headers"]}
        assert "upgrade" not in sent and "http2-settings" not in sent, sent
        c.send(request_bytes("GET", origin.url("/bytes/10")))
        resp = c.read_response()
        assert resp.status == 200 and resp.body == payload(10), (resp.status, resp.body[:200])
        # curl's h2c offer answered 426 by the origin, with the next request pipelined behind it.
        c.send(request_bytes("GET", origin.url("/status/426"), h2c) + request_bytes("GET", origin.url("/bytes/20")))
        assert c.read_response().status == 426
        resp = c.read_response()
        assert resp.status == 200 and resp.body == payload(20), (resp.status, resp.body[:200])
        c.send(request_bytes("GET", origin.url("/bytes/30")))
        assert c.read_response().body == payload(30)
