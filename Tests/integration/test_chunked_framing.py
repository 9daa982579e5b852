"""Chunked bodies read strictly (issue 22): libcurl 7.88 reads a chunk-size line as its leading hex
digits, so `0x10` was a last chunk and a cut body reached the client as a complete 200. afproxy now
has curl hand over the raw chunked bytes and reads them itself (ChunkedBodyDecoder): a size line
that is not hex digits and extensions, chunk data without its CRLF, or a message that ends before
the trailer section's final CRLF never reaches the client as complete. The client is real curl;
the task's record carries the failure code."""

from __future__ import annotations

import hashlib
import random
import subprocess

import pytest

from helpers import RawConn, assert_serves, curl, file_sha256, live_task, request_bytes, start_curl, wait_for
from origin import payload_sha256
from scripted_origin import CLOSE, ScriptedOrigin

HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
DATA16 = b"0123456789abcdef"


@pytest.fixture
def scripted():
    o = ScriptedOrigin()
    yield o
    o.stop()


def fetch(proxy, url: str, tmp_path):
    """curl through the proxy: (exit code, status, body bytes)."""
    out = tmp_path / "body"
    out.unlink(missing_ok=True)
    p = curl(proxy, "-o", str(out), "-w", "%{http_code}", url, timeout=60)
    return p.returncode, int(p.stdout or b"0"), out.read_bytes() if out.exists() else b""


# The body after the head; each must not reach the client as a complete message.
BAD_SIZE_LINES = {
    # the issue's own body: curl read `0x10` as a last chunk of size 0
    "issue-0x": b"4\r\nabcd\r\n0x10\r\n\r\n" + DATA16,
    "plus": b"4\r\nabcd\r\n+10\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "minus": b"4\r\nabcd\r\n-1\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "leading-space": b"4\r\nabcd\r\n 10\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "trailing-space": b"4\r\nabcd\r\n10 \r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "17-digits": b"4\r\nabcd\r\n00000000000000010\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "overflow": b"4\r\nabcd\r\nffffffffffffffff\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "nul": b"4\r\nabcd\r\n10\x00\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "empty-size-line": b"4\r\nabcd\r\n\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "junk-after-digits": b"4\r\nabcd\r\n10zz\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "no-crlf-after-data": b"4\r\nabcdXY10\r\n" + DATA16 + b"\r\n0\r\n\r\n",
    "bare-lf-size-line": b"4\nabcd\r\n0\r\n\r\n",
    "bare-lf-in-extension": b"4;x\nabcd\r\n0\r\n\r\n",
    "bad-trailer": b"4\r\nabcd\r\n0\r\nX-Bad : v\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(BAD_SIZE_LINES))
def test_invalid_chunked_framing_never_reaches_the_client_as_complete(proxy, scripted, tmp_path, name):
    scripted.script(f"/{name}", HEAD + BAD_SIZE_LINES[name], CLOSE)
    url = scripted.url(f"/{name}")
    code, status, body = fetch(proxy, url, tmp_path)
    assert code in (18, 56), (code, status, body)
    assert status == 200 and b"0123456789" not in body, (status, body)
    record = proxy.history_record(url)
    assert record["errorCode"] == "upstream-bad-response", record
    assert "invalid chunked framing" in record["error"], record
    assert proxy.alive()


# Cut before the trailer section's final CRLF, the last one in a lone CR (fuzz seed 1266339637):
# trailer fields may be missing and the end never came, so the client's response ends truncated.
CUT_AT_THE_END = {
    "lone-cr-after-trailer": b"HTTP/1.1 302 Found\r\nLocation: /x\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"4\r\nabcd\r\n0\r\nX-Trailer-Rid: u0n18\r\n\r",
    "lone-cr": HEAD + b"4\r\nabcd\r\n0\r\n\r",
    "after-last-chunk": HEAD + b"4\r\nabcd\r\n0\r\n",
    "after-a-trailer": HEAD + b"4\r\nabcd\r\n0\r\nX-A: 1\r\n",
}


@pytest.mark.parametrize("name", sorted(CUT_AT_THE_END))
def test_a_chunked_body_cut_before_its_final_crlf_is_truncated(proxy, scripted, tmp_path, name):
    scripted.script(f"/{name}", CUT_AT_THE_END[name], CLOSE)
    url = scripted.url(f"/{name}")
    code, status, body = fetch(proxy, url, tmp_path)
    assert code in (18, 56), (code, status, body)
    assert body == b"abcd", body
    record = proxy.history_record(url)
    assert record["errorCode"] == "upstream-broken", record
    # the raw client sees no last chunk: the connection closes after the data
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", url))
        resp = c.read_response()
    assert not resp.complete and resp.body == b"abcd", resp


def _chunked(data: bytes, rng: random.Random, extensions: bool) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        n = min(len(data) - i, rng.choice([1, 7, 300, 4096, 70000]))
        size = rng.choice([b"%x", b"%X", b"000%x"]) % n
        if extensions:
            size += rng.choice([b";a=b", b';name="quoted ; value"', b";flag", b" ; x = y", b""])
        out += size + b"\r\n" + data[i:i + n] + b"\r\n"
        i += n
    return bytes(out)


def test_valid_chunked_bodies_with_extensions_and_trailers_arrive_intact(proxy, scripted, tmp_path):
    rng = random.Random(22)
    data = rng.randbytes(600_000)
    body = _chunked(data, rng, extensions=True) + b"0;last=1\r\nX-Sum: " + hashlib.sha256(data).hexdigest().encode() \
        + b"\r\nX-Two: a\r\n\r\n"
    scripted.script("/valid", HEAD.replace(b"\r\n\r\n", b"\r\nTrailer: X-Sum, X-Two\r\n\r\n") + body)
    # the same bytes cut at awkward places: inside a size line, an extension, a CRLF, a trailer
    cuts = sorted({3, 4, 5, 9, 11, len(body) // 2, len(body) - 20, len(body) - 3, len(body) - 1})
    steps = []
    start = 0
    for cut in cuts:
        steps += [body[start:cut], 0.05]
        start = cut
    steps.append(body[start:])
    scripted.script("/trickled", HEAD, *steps)
    for path in ("/valid", "/trickled"):
        url = scripted.url(path)
        code, status, got = fetch(proxy, url, tmp_path)
        assert (code, status) == (0, 200), path
        assert len(got) == len(data) and hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), path
        record = proxy.history_record(url)
        assert record.get("errorCode") is None and record["download"]["completed"] == len(data), record
        with RawConn(proxy.port) as c:
            c.send(request_bytes("GET", url))
            resp = c.read_response()
        assert resp.complete and resp.body == data, path
        assert resp.trailers == [("X-Sum", hashlib.sha256(data).hexdigest()), ("X-Two", "a")], resp.trailers


def test_chunked_applied_twice_is_read_as_one_chunked_coding(proxy, scripted, tmp_path):
    """`Transfer-Encoding: chunked, chunked` was a 502; it is read as one chunked coding (RFC 9112
    §6.1 forbids applying chunked twice, and curl reads it once): the client gets that body,
    framed as plain chunked."""
    scripted.script("/twice", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"
                              b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    url = scripted.url("/twice")
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", url))
        resp = c.read_response()
    assert resp.status == 200 and resp.header("transfer-encoding") == "chunked", resp
    assert resp.complete and resp.body == b"hello world", resp
    code, status, body = fetch(proxy, url, tmp_path)
    assert (code, status, body) == (0, 200, b"hello world")
    assert proxy.history_record(url).get("errorCode") is None


def test_the_daemon_serves_on_after_bad_framing(proxy, scripted, origin, tmp_path):
    for name in ("issue-0x", "nul"):
        scripted.script(f"/{name}", HEAD + BAD_SIZE_LINES[name], CLOSE)
        fetch(proxy, scripted.url(f"/{name}"), tmp_path)
    assert_serves(proxy, origin)


def test_a_chunked_body_suspended_and_resumed_mid_body_arrives_byte_exact(proxy, origin, tmp_path):
    """Suspended, the task refuses the decoded bytes and curl offers the same raw bytes again
    later: the decoder goes back to where it was before them. A rate-limited client fills the
    window on the way (the other pause). Several suspends, each at a later point of the body."""
    n = 48 << 20
    url = origin.url(f"/chunked/{n}")
    out = tmp_path / "chunked.bin"
    client = start_curl(proxy, "--limit-rate", "16M", "--max-time", "120", "-o", str(out), url)
    try:
        for step in range(1, 4):
            tid = live_task(proxy, url, min_download=step * (8 << 20))["id"]
            status, body = proxy.api("POST", f"/v1/tasks/{tid}/suspend")
            assert status == 200 and body["state"] == "suspended", (status, body)
            wait_for(lambda: proxy.task(tid)["state"] == "suspended", message="the task suspended")
            status, body = proxy.api("POST", f"/v1/tasks/{tid}/resume")
            assert status == 200 and body["state"] == "running", (status, body)
        try:
            _, err = client.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            pytest.fail("curl did not finish within 150 s")
        assert client.returncode == 0, err
        assert file_sha256(out) == (n, payload_sha256(n))
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
        out.unlink(missing_ok=True)
    record = proxy.history_record(url)
    assert record["error"] is None and record["download"]["completed"] == n, record
