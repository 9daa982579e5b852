"""The control socket's limits, through the real daemon: request bodies (413) and heads (431, 400)
over their limits are answered at once, half-sent requests time out (408), connections over the
cap get 503, and none of it touches the event stream or the daemon's other connections."""

from __future__ import annotations

import json
import socket
import threading
import time

from helpers import EventStream, curl, ctl, wait_for

# The daemon's limits (Sources/AFProxyControl/ControlLimits.swift).
MAX_CONNECTIONS = 64
MAX_BODY_BYTES = 64 * 1024
REQUEST_TIMEOUT = 10.0


# ----------------------------------------------------------------------------------------------
# helpers


def connect(proxy, timeout: float = 10.0) -> socket.socket:
    """A raw connection to the daemon's control socket (which may appear a moment after the port)."""
    deadline = time.monotonic() + 10
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(proxy.control_socket)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def send_ignoring_close(sock: socket.socket, data: bytes) -> None:
    """Sends `data`; a daemon that answers and closes before taking all of it is not an error here."""
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes, closed: bool):
        self.status = status
        self.headers = headers
        self.body = body
        self.closed = closed  # the daemon closed the connection after the answer

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"<{self.status} {self.headers} {self.body[:200]!r} closed={self.closed}>"


def read_answer(sock: socket.socket, timeout: float = 5.0, expect_close: bool = False) -> Answer:
    """Reads one response framed by Content-Length; with `expect_close`, also waits for the EOF."""
    sock.settimeout(timeout)
    data = b""

    def more() -> bytes:
        try:
            return sock.recv(65536)
        except ConnectionResetError:
            return b""

    while b"\r\n\r\n" not in data:
        chunk = more()
        assert chunk, f"the daemon closed the connection without an answer (got {data!r})"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = more()
        assert chunk, f"the daemon closed the connection in the body of {status} (got {body!r})"
        body += chunk
    closed = False
    if expect_close:
        closed = more() == b""
    return Answer(status, headers, body[:length], closed)


def assert_refusal(answer: Answer, status: int) -> None:
    """An answer of the daemon's own: the status, the API's JSON error shape, Date, Connection: close."""
    assert answer.status == status, answer
    assert answer.headers.get("content-type", "").startswith("application/json"), answer
    assert isinstance(answer.json().get("error"), str) and answer.json()["error"], answer
    assert "date" in answer.headers and answer.headers["date"].endswith(" GMT"), answer
    assert answer.headers.get("connection", "").lower() == "close", answer
    assert answer.closed, f"the connection stayed open after {answer}"


def stats_on(sock: socket.socket) -> Answer:
    sock.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\n\r\n")
    return read_answer(sock)


# ----------------------------------------------------------------------------------------------
# bodies and heads


def test_declared_body_over_the_limit_gets_413_at_once(proxy):
    sock = connect(proxy)
    send_ignoring_close(sock, b"POST /v1/tasks/1/cancel HTTP/1.1\r\nHost: afproxy\r\n"
                              b"Content-Type: application/json\r\nContent-Length: 104857600\r\n\r\n"
                              + b"x" * 1024)
    # At once: a 413 to a body that never comes (not the 408 of the request timeout) was sent
    # without waiting for it.
    answer = read_answer(sock, timeout=REQUEST_TIMEOUT - 2, expect_close=True)
    sock.close()
    assert_refusal(answer, 413)
    assert answer.headers.get("date"), answer.headers
    assert proxy.stats()["version"], "the daemon stopped answering after a 413"


def test_chunked_body_over_the_limit_gets_413(proxy):
    sock = connect(proxy)
    send_ignoring_close(sock, b"POST /v1/tasks/1/cancel HTTP/1.1\r\nHost: afproxy\r\n"
                              b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (16 * 1024, b"y" * 16 * 1024)
    for _ in range(MAX_BODY_BYTES // (16 * 1024) + 1):
        send_ignoring_close(sock, chunk)
    answer = read_answer(sock, timeout=5, expect_close=True)
    sock.close()
    assert_refusal(answer, 413)
    assert proxy.stats()["version"]


def test_small_body_is_still_accepted(proxy):
    """A body under the limit is read and ignored, as before."""
    sock = connect(proxy)
    body = b'{"why": "a body no endpoint needs"}'
    sock.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    answer = read_answer(sock)
    assert answer.status == 200, answer
    assert "date" in answer.headers, answer
    assert stats_on(sock).status == 200  # the connection is kept
    sock.close()


def test_header_of_one_megabyte_gets_431(proxy):
    sock = connect(proxy)
    big = b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\nX-Big: " + b"a" * (1024 * 1024) + b"\r\n\r\n"
    sender = threading.Thread(target=send_ignoring_close, args=(sock, big), daemon=True)
    sender.start()
    answer = read_answer(sock, timeout=5, expect_close=True)
    sender.join(5)
    sock.close()
    assert_refusal(answer, 431)
    assert proxy.stats()["version"]


def test_malformed_request_gets_400(proxy):
    sock = connect(proxy)
    send_ignoring_close(sock, b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\nthis is no header field\r\n\r\n")
    answer = read_answer(sock, timeout=5, expect_close=True)
    sock.close()
    assert_refusal(answer, 400)
    assert proxy.stats()["version"]


# ----------------------------------------------------------------------------------------------
# time


def test_half_sent_requests_get_408(proxy):
    """A head that stops halfway and a body that stops halfway are both answered 408 once the
    request timeout has passed, and not before."""
    half_head = connect(proxy, timeout=REQUEST_TIMEOUT + 5)
    half_head.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: afp")
    half_body = connect(proxy, timeout=REQUEST_TIMEOUT + 5)
    half_body.sendall(b"POST /v1/tasks/1/cancel HTTP/1.1\r\nHost: afproxy\r\nContent-Length: 10\r\n\r\n12345")
    started = time.monotonic()
    answers = {}

    def wait(name, sock):
        answers[name] = read_answer(sock, timeout=REQUEST_TIMEOUT + 5, expect_close=True)
        answers[name + " after"] = time.monotonic() - started  # in the message of a failure

    threads = [threading.Thread(target=wait, args=(n, s), daemon=True)
               for n, s in (("head", half_head), ("body", half_body))]
    for t in threads:
        t.start()
    time.sleep(REQUEST_TIMEOUT - 2)
    assert not answers, f"answered before the timeout: {answers}"
    assert proxy.stats()["version"]  # the daemon serves others meanwhile
    for t in threads:
        t.join(REQUEST_TIMEOUT + 6)
    half_head.close()
    half_body.close()
    for name in ("head", "body"):
        assert name in answers, f"no answer to the half-sent {name}: {answers}"
        assert_refusal(answers[name], 408)


def test_event_stream_outlives_the_request_timeout(proxy, origin):
    """`GET /v1/events` has been received in full: it is answered for as long as the client reads,
    well past the request timeout, and still carries events."""
    with EventStream(proxy.control_socket) as ev:
        assert ev.status == 200
        assert "date" in ev.headers, ev.headers
        time.sleep(REQUEST_TIMEOUT + 2)
        assert not ev.ended.is_set(), f"the event stream ended after {REQUEST_TIMEOUT + 2} s: {ev.error!r}"
        url = origin.url("/bytes/1000")
        done = curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", url)
        assert done.stdout == b"200", done
        wait_for(lambda: any(e.get("event") == "completed" and e["task"]["url"] == url for e in ev.snapshot()),
                 timeout=10, message=lambda: f"a completed event for {url}; got {ev.snapshot()}")
        assert ev.error is None


# ----------------------------------------------------------------------------------------------
# connections


def test_connections_over_the_cap_get_503(proxy):
    held = []
    try:
        # Each of the first connections is answered once, so the daemon has surely counted it.
        for _ in range(MAX_CONNECTIONS):
            sock = connect(proxy)
            held.append(sock)
            assert stats_on(sock).status == 200
        for late in (False, True, False):
            extra = connect(proxy)
            if late:  # a client slower to send than the daemon to answer can still send, then read
                time.sleep(0.3)
                extra.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\n\r\n")
            else:
                send_ignoring_close(extra, b"GET /v1/stats HTTP/1.1\r\nHost: afproxy\r\n\r\n")
            answer = read_answer(extra, timeout=5, expect_close=True)
            extra.close()
            assert answer.status == 503, answer
            assert "date" in answer.headers and answer.headers.get("connection") == "close", answer
            assert str(MAX_CONNECTIONS) in answer.json()["error"], answer
        # afproxyctl reports it as a refusal, with the daemon's reason
        refused = ctl(proxy, "stats")
        assert refused.returncode == 1 and "limit" in refused.stderr, refused
        # the first connections are still served
        assert stats_on(held[0]).status == 200
        assert stats_on(held[-1]).status == 200
    finally:
        for sock in held:
            sock.close()
    # and once they are gone, new connections are served again
    wait_for(lambda: proxy.api("GET", "/v1/stats")[0] == 200, timeout=10,
             message="a new connection served after the held ones closed")
    assert ctl(proxy, "stats").returncode == 0
