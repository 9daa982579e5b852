"""Bad requests, failing upstreams and resource limits: clear error statuses, and the daemon keeps serving."""

from __future__ import annotations

import socket

import pytest

from helpers import (
    local_resolver_wrapper,
    RawConn, assert_serves, client_descriptors, closed_port, curl, parse_status, raw, request_bytes, wait_for,
)

# ---- malformed requests ----------------------------------------------------------------------------


def test_origin_form_request_is_refused(proxy, origin):
    """A request with a path instead of an absolute URL gets 400 explaining the proxy needs absolute form."""
    with RawConn(proxy.port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        resp = c.read_response()
    assert resp.status == 400
    text = resp.text.lower()
    assert "proxy" in text or "absolute" in text, resp.text
    assert_serves(proxy, origin)


def test_malformed_request_line(proxy, origin):
    """A request line that is not `METHOD TARGET VERSION` gets 400."""
    data = raw(proxy.port, b"GARBAGE\r\n\r\n")
    assert parse_status(data) == 400
    assert_serves(proxy, origin)


def test_malformed_header_line(proxy, origin):
    """A header line without a colon gets 400."""
    data = raw(proxy.port, f"GET {origin.url('/echo')} HTTP/1.1\r\nHost: {origin.host}\r\n"
                           "ThisLineHasNoColon\r\n\r\n".encode())
    assert parse_status(data) == 400
    assert_serves(proxy, origin)


def test_oversized_header_section(proxy, origin):
    """A header section over 64 KiB (one 70000-byte header) gets 431."""
    data = raw(proxy.port, request_bytes("GET", origin.url("/echo"), [("X-Big", "a" * 70000)]))
    assert parse_status(data) == 431
    assert_serves(proxy, origin)


def test_unsupported_scheme(proxy, origin):
    """An ftp:// URL gets 400 whose body names the scheme."""
    with RawConn(proxy.port) as c:
        c.send(b"GET ftp://127.0.0.1/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        resp = c.read_response()
    assert resp.status == 400
    assert "ftp" in resp.text.lower(), resp.text
    assert_serves(proxy, origin)


@pytest.mark.parametrize("framing", [
    pytest.param([("Content-Length", "abc")], id="non-numeric-length"),
    pytest.param([("Content-Length", "5"), ("Content-Length", "6")], id="two-lengths"),
    pytest.param([("Content-Length", "5"), ("Transfer-Encoding", "chunked")], id="length-and-chunked"),
])
def test_invalid_framing_is_refused_and_closed(proxy, origin, framing):
    """Invalid or conflicting body framing gets 400 and the proxy closes the connection (no smuggling)."""
    before = origin.connections
    with RawConn(proxy.port) as c:
        c.send(request_bytes("POST", origin.url("/upload"), framing) + b"5\r\nhello\r\n0\r\n\r\n")
        resp = c.read_response()
        assert resp.status == 400
        assert c.wait_closed(timeout=10), "the proxy kept the connection open after a framing error"
    assert origin.connections == before, "the request was forwarded upstream"
    assert_serves(proxy, origin)


# ---- upstream failures ----------------------------------------------------------------------------


def test_upstream_connection_refused(proxy, origin):
    """A URL whose port is closed gets 502 with a text body naming the cause."""
    port = closed_port()
    r = curl(proxy, "--max-time", "30", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}/x")
    assert r.returncode == 0, r.stderr
    body, _, status = r.stdout.rpartition(b"\n")
    assert int(status) == 502
    text = body.decode("utf-8", "replace").lower()
    assert text.strip(), "empty 502 body"
    assert "connect" in text or "refused" in text, text
    assert_serves(proxy, origin)


def test_upstream_dns_failure(start_proxy, origin, tmp_path):
    """A host that cannot resolve gets 502 with a non-empty body (the lookup fails on this
    machine: local_resolver_wrapper)."""
    proxy = start_proxy("--allow-hosts", "nonexistent.invalid", wrapper=local_resolver_wrapper(tmp_path))
    r = curl(proxy, "--max-time", "60", "-w", "\n%{http_code}", "http://nonexistent.invalid/x", timeout=90)
    assert r.returncode == 0, r.stderr
    body, _, status = r.stdout.rpartition(b"\n")
    assert int(status) == 502
    assert body.strip(), "empty 502 body"
    assert_serves(proxy, origin)


def test_upstream_timeout(start_proxy, origin):
    """An origin that never answers gets 504 once --upstream-timeout has passed."""
    proxy = start_proxy("--upstream-timeout", "2")
    r = curl(proxy, "--max-time", "30", "-w", "\n%{http_code}", origin.url("/hang"), timeout=60)
    assert r.returncode == 0, r.stderr
    body, _, status = r.stdout.rpartition(b"\n")
    assert int(status) == 504, body
    assert body.strip(), "empty 504 body"
    assert_serves(proxy, origin)


@pytest.mark.parametrize("path", ["/abort/1000000", "/abort-chunked/1000000"])
def test_upstream_breaks_mid_body(proxy, origin, path):
    """When the origin dies mid-body the client sees a truncated transfer (not a clean end), and the
    task is recorded as completed with an error."""
    url = origin.url(path)
    r = curl(proxy, "--max-time", "30", "-o", "/dev/null", url, timeout=60)
    # 18: partial file, 56: recv failure, 92: HTTP/2 stream error; anything but success.
    assert r.returncode != 0, "the client got a clean end for a truncated body"
    assert r.returncode in (18, 56, 92), f"unexpected curl exit {r.returncode}: {r.stderr!r}"
    rec = proxy.history_record(url)
    assert rec["error"] is not None, f"no error recorded: {rec}"
    assert_serves(proxy, origin)


# ---- limits and timeouts -----------------------------------------------------------------------------


def assert_own_answer(resp, status_line: str, body: str, via_name: str) -> None:
    """An answer the proxy wrote itself: exact status line and body, a Content-Length that frames
    the body, the configured Via name, and the connection closed."""
    assert f"{resp.version} {resp.status} {resp.reason}" == status_line, resp
    assert resp.body == body.encode(), resp.body
    assert resp.header_all("content-length") == [str(len(body.encode()))], resp.headers
    assert resp.header_all("via") == [f"1.1 {via_name}"], resp.headers
    assert resp.header("connection") == "close", resp.headers
    assert resp.complete


def test_connection_limit(start_proxy, origin):
    """With --max-connections 2, a third concurrent client connection gets 503, whose Via names
    the proxy by its configured --via-name."""
    proxy = start_proxy("--max-connections", "2", "--via-name", "edge-7")
    held = [RawConn(proxy.port), RawConn(proxy.port)]
    try:
        # A full exchange on each proves the proxy has accepted both; they then stay open, idle.
        for c in held:
            c.send(request_bytes("GET", origin.url("/bytes/10")))
            resp = c.read_response()
            assert resp.status == 200
            assert resp.header_all("via") == ["1.1 edge-7"], resp.headers
        with RawConn(proxy.port) as third:
            third.send(request_bytes("GET", origin.url("/bytes/10")))
            resp = third.read_response()
            assert_own_answer(resp, "HTTP/1.1 503 Service Unavailable",
                              "503 Service Unavailable: the proxy is at its limit of 2 client connections\n",
                              "edge-7")
            assert resp.header("retry-after") == "1", resp.headers
            assert third.wait_closed(timeout=10), "connection left open after the 503"
    finally:
        for c in held:
            c.close()

    def serves_again():
        r = curl(proxy, "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", origin.url("/bytes/10"))
        return r.returncode == 0 and r.stdout == b"200"

    wait_for(serves_again, timeout=10, interval=0.2, message="a request succeeds once the connections closed")


def test_slow_client_header_timeout(start_proxy):
    """A client that stops in the middle of its header section gets 408, whose Via names the proxy
    by its configured --via-name, and is disconnected."""
    proxy = start_proxy("--header-timeout", "2", "--via-name", "edge-7")
    with RawConn(proxy.port) as c:
        c.send(b"GET http://127.0.0.1:9/echo HTTP/1.1\r\n")
        resp = c.read_response(timeout=15)
        assert_own_answer(resp, "HTTP/1.1 408 Request Timeout",
                          "408 Request Timeout: the request head did not arrive in time\n", "edge-7")
        assert c.wait_closed(timeout=10), "connection left open after the 408"
    # The configured name is also what a loop is recognised by.
    data = raw(proxy.port, request_bytes("GET", "http://127.0.0.1:9/echo", [("Via", "1.1 edge-7")]), read_timeout=5)
    assert parse_status(data) == 508, data[:300]


def test_idle_connection_is_closed(start_proxy, origin):
    """A connection that sends nothing is closed once --idle-timeout has passed."""
    proxy = start_proxy("--idle-timeout", "2")
    with RawConn(proxy.port) as c:
        assert c.wait_closed(timeout=15), "idle connection not closed"
    # The same for a connection that went idle after a complete exchange (keep-alive).
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/bytes/10")))
        assert c.read_response().status == 200
        assert c.wait_closed(timeout=15), "idle keep-alive connection not closed"
    assert_serves(proxy, origin)


def test_client_sending_junk_then_closing(proxy, origin):
    """A client that sends half a request and vanishes does not disturb the daemon."""
    for data in (b"GET http://127.0.0.1", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(50), b"\r\n" * 10):
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        s.sendall(data)
        s.close()
    assert_serves(proxy, origin)


# ---- answers of our own -------------------------------------------------------------------------


def test_host_with_characters_no_host_may_hold_is_400_at_once(proxy, origin):
    """`http://12*.0.0.1/` became a task that curl then refused; it is answered before any task."""
    with RawConn(proxy.port) as c:
        c.send(b"GET http://12*.0.0.1/ HTTP/1.1\r\nHost: 12*.0.0.1\r\n\r\n")
        resp = c.read_response()
    assert resp.status == 400
    assert "host" in resp.text, resp.text
    assert not [t for t in proxy.tasks(all=True) if "12*" in t["url"]]
    assert_serves(proxy, origin)


def test_own_answers_carry_a_date(start_proxy, origin):
    """RFC 9110 §6.6.1: 400, 403, 502 and the CONNECT 200 carry Date."""
    from email.utils import parsedate_to_datetime
    import time as clock

    proxy = start_proxy("--allow-connect-port", str(origin.port))

    def date_of(data: bytes) -> float:
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        dates = [line.split(":", 1)[1].strip() for line in head.split("\r\n")[1:] if line.lower().startswith("date:")]
        assert len(dates) == 1, head
        return parsedate_to_datetime(dates[0]).timestamp()

    answers = {
        400: raw(proxy.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", read_timeout=2),
        403: raw(proxy.port, b"CONNECT 127.0.0.1:25 HTTP/1.1\r\nHost: 127.0.0.1:25\r\n\r\n", read_timeout=2),
        502: raw(proxy.port, request_bytes("GET", f"http://127.0.0.1:{closed_port()}/"), read_timeout=2),
    }
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
        s.sendall(f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        answers[200] = s.recv(4096)
    for status, data in answers.items():
        assert parse_status(data) == status, data[:200]
        assert abs(date_of(data) - clock.time()) < 60, data[:300]


def test_valid_request_then_malformed_one_in_one_packet(proxy, origin):
    """Only the 400 came back: the valid request's answer was lost and its upstream request cut
    off. Now the valid one is answered in full, then the 400, then the connection closes."""
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/bytes/300000")) + b"GARBAGE LINE\r\n\r\n")
        first = c.read_response()
        assert first.status == 200 and first.complete and len(first.body) == 300000
        second = c.read_response()
        assert second.status == 400, second
        assert c.wait_closed(5)
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/delay/0.3")) + request_bytes("GET", origin.url("/bytes/10"))
               + f"GET {origin.url('/echo')} HTTP/1.1\r\nNo Colon Here\r\n\r\n".encode())
        statuses = [c.read_response().status for _ in range(3)]
        assert statuses == [200, 200, 400]
        assert c.wait_closed(5)
    assert_serves(proxy, origin)


def test_a_short_via_name_is_no_false_loop(start_proxy, origin):
    """A loop is a Via entry received by this proxy (RFC 9110 §7.6.3), not the name's letters
    somewhere in the field: with --via-name a, a request that passed through `squid.local` is
    served with our entry after the others, while one received by `A` is the 508 loop."""
    proxy = start_proxy("--via-name", "a")
    with RawConn(proxy.port) as c:
        c.send(request_bytes("GET", origin.url("/echo"), [("Via", "1.1 squid.local (squid/5.7), 1.0 cache")]))
        resp = c.read_response()
        assert resp.status == 200, (resp.status, resp.body[:300])
        vias = [v for k, v in resp.json()["headers"] if k.lower() == "via"]
        assert vias == ["1.1 squid.local (squid/5.7), 1.0 cache, 1.1 a"], vias
        c.send(request_bytes("GET", origin.url("/echo"), [("Via", "1.1 cache (a comment, a), 1.1 A")]))
        resp = c.read_response()
        assert resp.status == 508, (resp.status, resp.body[:300])


def test_refused_connections_cost_few_descriptors_and_briefly(start_proxy, origin):
    """Over --max-connections every refused client reads its whole 503, and the daemon holds at
    most 32 refused connections at a time (the rest are answered and closed at once), each only
    until its client closes: once the clients close, the daemon holds no descriptor for them.
    The same for clients outside allow-clients, refused with 403."""
    proxy = start_proxy("--max-connections", "2")
    held = [RawConn(proxy.port), RawConn(proxy.port)]
    refused = []
    try:
        for c in held:
            c.send(request_bytes("GET", origin.url("/bytes/10")))
            assert c.read_response().status == 200
        for _ in range(80):
            c = RawConn(proxy.port)
            refused.append(c)
            c.send(request_bytes("GET", origin.url("/bytes/10")))
        for c in refused:
            resp = c.read_response()
            assert resp.status == 503 and resp.complete, (resp.status, resp.headers)
            assert b"at its limit of 2 client connections" in resp.body
        # The clients keep their ends open: the lingering ones are the daemon's only cost (and a
        # few closed at once whose close may still be on its way).
        assert client_descriptors(proxy) <= 2 + 32 + 4, client_descriptors(proxy)
    finally:
        for c in refused + held:
            c.close()
    wait_for(lambda: client_descriptors(proxy) == 0, timeout=10,
             message=lambda: f"the daemon to close its client connections (holds {client_descriptors(proxy)})")

    outsider = start_proxy("--allow-clients", "127.0.0.2/32")
    refused = []
    try:
        for _ in range(80):
            c = RawConn(outsider.port)
            refused.append(c)
            c.send(request_bytes("GET", origin.url("/bytes/10")))
        for c in refused:
            assert c.read_response().status == 403
        assert client_descriptors(outsider) <= 32 + 4, client_descriptors(outsider)
    finally:
        for c in refused:
            c.close()
    wait_for(lambda: client_descriptors(outsider) == 0, timeout=10,
             message=lambda: f"the daemon to close its client connections (holds {client_descriptors(outsider)})")
