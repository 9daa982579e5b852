"""Every task ends (issue 22): an origin that answers an upload before it read the body (401, as
servers do for auth, 403 and 413), whatever the client then does — closes, keeps the connection and
sends nothing, sends the body anyway, or sent `Expect: 100-continue` — and whether the origin closes
after its answer or keeps the connection. Each case ends with no live task and the daemon's open
descriptors back at their value before it (the rule is the table at `HTTPTaskStateMachine`).
`Expect: 100-continue` goes to the origin, which decides: its 100 reaches the client once, and an
origin that ignores the expectation still gets the body (afproxy sends the client a 100 when curl
stops waiting)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time

import pytest

from helpers import RawConn, ca_path, curl, wait_for

ANSWER = b"unauthorized!!\n"


# What each early path answers as soon as the request head is in, and whether it then closes
# (else it reads and drops whatever comes until the peer closes).
EARLY = {
    "/early-close": (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER), True),
    "/early-keep": (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER), False),
    "/early-chunked": (b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"%x\r\n%s\r\n0\r\n\r\n" % (len(ANSWER), ANSWER), False),
    "/early-ok-close": (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER), True),
    "/early-ok-keep": (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER), False),
    "/early-ok-eof": (b"HTTP/1.1 200 OK\r\n\r\n%s" % ANSWER, True),
    "/early-partial": (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (10 * len(ANSWER), ANSWER), False),
}
STATUS = {path: int(answer[9:12]) for path, (answer, _) in EARLY.items()}
# How long /give-up waits for a request body before it closes without an answer.
GIVE_UP = 1.0


class EarlyOrigin:
    """An origin whose paths say how it answers:
    /early-*       EARLY's answer as soon as the head is in: 401 (-close, -keep, -chunked) or 200
                   (-ok-close, -ok-keep, -ok-eof: delimited by the close; -partial: a tenth of its body),
                   then closes or reads (and drops) whatever comes until the peer closes
    /give-up       reads what comes for GIVE_UP seconds, then closes without an answer
    /ignore-expect never sends a 100: reads the whole body (Content-Length), answers 200 with its length
                   and SHA-256 as JSON, and keeps the connection
    /continue      sends two `100 Continue` nobody asked for, then does what /ignore-expect does
    `heads` counts the request heads seen; `bodies_read` the bytes read after the heads.
    `tls`: an ssl.SSLContext to serve HTTPS with."""

    def __init__(self, tls=None) -> None:
        self.tls = tls
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.heads: list[bytes] = []
        self.bodies_read = 0
        self.lock = threading.Lock()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.stopped = True
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            if self.tls:
                conn = self.tls.wrap_socket(conn, server_side=True)
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                with self.lock:
                    self.heads.append(head)
                path = head.split(b" ")[1].decode()
                path = "/" + path.split("/", 3)[3] if "://" in path else path
                if path in EARLY:
                    answer, closes = EARLY[path]
                    conn.sendall(answer)
                    if closes:
                        return
                    while True:
                        data = conn.recv(65536)
                        if not data:
                            return
                        with self.lock:
                            self.bodies_read += len(data)
                if path == "/give-up":
                    conn.settimeout(GIVE_UP)
                    try:
                        while conn.recv(65536):
                            pass
                    except socket.timeout:
                        pass
                    return
                if path == "/continue":
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 2)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
                answer = json.dumps({"length": len(body), "sha256": hashlib.sha256(body).hexdigest()}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(answer), answer))
        except OSError:
            return
        finally:
            conn.close()


@pytest.fixture
def early_origin():
    origin = EarlyOrigin()
    yield origin
    origin.stop()


def open_fds(proxy) -> int:
    return len(os.listdir(f"/proc/{proxy.pid}/fd"))


def idle_fds(proxy, early_origin) -> int:
    """The daemon's descriptors at rest, after a first early-answered request (the network watcher
    and the lookup of client processes open theirs once the daemon runs) and once the count holds
    still for half a second."""
    with RawConn(proxy.port) as conn:
        conn.send(post_head(early_origin.url("/early-close")))
        assert conn.read_response().status == 401
    proxy.wait_idle(timeout=20)
    counts: list[int] = []

    def steady():
        counts.append(open_fds(proxy))
        return len(counts) >= 5 and len(set(counts[-5:])) == 1

    wait_for(steady, 20, message=lambda: f"a steady descriptor count; have {counts}")
    return counts[-1]


def settled(proxy, idle_fds: int) -> None:
    """No live task, and the daemon's descriptors back at their idle value."""
    proxy.wait_idle(timeout=20)
    seen: list[int] = []

    def back():
        seen[:] = [open_fds(proxy)]
        return seen[0] <= idle_fds

    wait_for(back, 20, message=lambda: f"{idle_fds} open descriptors; have {seen} "
             f"({sorted(os.readlink(f'/proc/{proxy.pid}/fd/{fd}') for fd in os.listdir(f'/proc/{proxy.pid}/fd'))})")


def post_head(url: str, expect: bool = False, length: int = 3) -> bytes:
    host = url.split("/")[2]
    extra = b"Expect: 100-continue\r\n" if expect else b""
    return b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n%s\r\n" % (
        url.encode(), host.encode(), length, extra)


@pytest.mark.parametrize("path", ["/early-close", "/early-keep", "/early-chunked", "/early-ok-close",
                                  "/early-ok-keep", "/early-ok-eof"],
                         ids=["origin-closes", "origin-keeps", "origin-keeps-chunked", "success-origin-closes",
                              "success-origin-keeps", "success-ends-with-the-close"])
@pytest.mark.parametrize("client", ["closes", "stays-silent", "sends-body", "expects-100"])
def test_an_early_answer_ends_the_task_whatever_the_client_does(proxy, early_origin, path, client):
    """A 2xx as well as an error: once the answer is whole nothing the client sends can change
    it (Squid closes the client then too). Before, a 200 from an origin that then closed left
    the task running and the origin's socket in CLOSE-WAIT for as long as the client stayed."""
    idle = idle_fds(proxy, early_origin)
    url = early_origin.url(path)
    for _ in range(3):
        with RawConn(proxy.port) as conn:
            conn.send(post_head(url, expect=client == "expects-100", length=100000))
            # An origin that answers early answers the client at once; with Expect, no 100 first.
            resp = conn.read_response(skip_informational=False)
            assert resp.status == STATUS[path] and resp.body == ANSWER and resp.complete, resp
            # The request body never came: the connection cannot carry another request.
            assert (resp.header("connection") or "").lower() == "close", resp.headers
            if client == "sends-body":
                conn.send(b"abc")
            if client != "closes":
                assert conn.wait_closed(timeout=20), "afproxy kept a connection it cannot read on"
        record = proxy.history_record(url)
        assert record["status"] == STATUS[path] and record["error"] is None, record
        assert record["download"]["completed"] == len(ANSWER), record
    settled(proxy, idle)


def test_an_origin_that_gives_up_waiting_for_the_body_ends_the_task_at_once(proxy, early_origin):
    """The origin waits for a body the client never sends, then closes without an answer: the
    client gets 502 then, not when it gives up itself (curl, its send side paused, never notices
    the close; the session loop does)."""
    idle = idle_fds(proxy, early_origin)
    url = early_origin.url("/give-up")
    with RawConn(proxy.port) as conn:
        conn.send(post_head(url, length=100000) + b"x" * 1000)
        resp = conn.read_response(timeout=30)
        assert resp.status == 502 and b"before it answered" in resp.body, resp
        assert (resp.header("connection") or "").lower() == "close", resp.headers
        assert conn.wait_closed(timeout=20)
    record = proxy.history_record(url)
    assert record["errorCode"] == "upstream-broken", record
    settled(proxy, idle)


def silent_upload(proxy, url: str, sent: bytes = b"0123456789") -> RawConn:
    """A client that sends a head for 100000 bytes and `sent` of them, then nothing."""
    conn = RawConn(proxy.port, timeout=30)
    conn.send(post_head(url, length=100000) + sent)
    return conn


def test_a_client_silent_mid_body_gets_408_after_the_body_timeout(start_proxy, early_origin):
    proxy = start_proxy("--body-timeout", "1")
    idle = idle_fds(proxy, early_origin)
    url = early_origin.url("/ignore-expect")
    with silent_upload(proxy, url) as conn:
        resp = conn.read_response(timeout=30)
        assert resp.status == 408 and b"request body for 1 s" in resp.body, resp
        assert (resp.header("connection") or "").lower() == "close", resp.headers
        assert conn.wait_closed(timeout=20)
    record = proxy.history_record(url)
    assert record["errorCode"] == "client-timeout" and record["upload"]["completed"] <= 10, record
    settled(proxy, idle)


def test_a_client_silent_mid_body_after_its_response_started_is_closed(start_proxy, early_origin):
    """The origin sent a tenth of its answer and waits: the response cannot be finished for a
    client that stopped sending, so its connection closes before the answer's end (a truncation
    the client sees, never a short body passed off as complete)."""
    proxy = start_proxy("--body-timeout", "1")
    idle = idle_fds(proxy, early_origin)
    url = early_origin.url("/early-partial")
    with silent_upload(proxy, url) as conn:
        received = b""
        while True:
            chunk = conn.sock.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and body == ANSWER, received
    record = proxy.history_record(url)
    assert record["errorCode"] == "client-timeout", record
    settled(proxy, idle)


def test_a_suspended_upload_is_never_timed_out(start_proxy, early_origin):
    """Silence afproxy asked for is not the client's: a task suspended for three body timeouts
    and resumed still carries its whole body."""
    proxy = start_proxy("--body-timeout", "1")
    url = early_origin.url("/ignore-expect")
    data = os.urandom(100000)
    with silent_upload(proxy, url, sent=data[:10]) as conn:
        task = wait_for(lambda: next((t for t in proxy.tasks() if t["url"] == url), None), 20)
        assert proxy.api("POST", f"/v1/tasks/{task['id']}/suspend")[0] == 200
        wait_for(lambda: proxy.task(task["id"])["state"] == "suspended", 20)
        time.sleep(3)  # three body timeouts: none may end the task
        assert proxy.task(task["id"])["state"] == "suspended"
        assert proxy.api("POST", f"/v1/tasks/{task['id']}/resume")[0] == 200
        conn.send(data[10:])
        resp = conn.read_response(timeout=30)
        assert resp.status == 200, resp
        assert json.loads(resp.body) == {"length": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_200_silent_clients_leave_no_task_and_no_socket(start_proxy, early_origin):
    """The issue's probe: 200 clients that send a head for 100000 bytes and then nothing held 200
    live tasks and 425 descriptors. Half get a whole 200 and are closed; half wait on an origin
    that waits for their body, and get 408 after the body timeout."""
    proxy = start_proxy("--body-timeout", "2")
    idle = idle_fds(proxy, early_origin)
    conns = [silent_upload(proxy, early_origin.url("/early-ok-close" if i % 2 else "/ignore-expect"))
             for i in range(200)]
    try:
        for i, conn in enumerate(conns):
            resp = conn.read_response(timeout=60)
            assert resp.status == (200 if i % 2 else 408), resp
            assert conn.wait_closed(timeout=30), f"client {i} was kept"
    finally:
        for conn in conns:
            conn.close()
    settled(proxy, idle)
    assert proxy.stats()["live"] == 0


def test_many_early_answers_leave_no_task_and_no_socket(proxy, early_origin):
    """The issue's figure: 200 such requests left 205 live tasks and 200 more descriptors."""
    idle = idle_fds(proxy, early_origin)
    for i in range(100):
        with RawConn(proxy.port) as conn:
            conn.send(post_head(early_origin.url("/early-keep" if i % 2 else "/early-close")))
            assert conn.read_response().status == 401
    settled(proxy, idle)
    assert proxy.stats()["live"] == 0


def test_curl_still_uploading_when_the_early_answer_comes(proxy, early_origin, tmp_path):
    """The second shape: `curl --limit-rate 100k -d @1MiB` left a stuck task in 8 of 10 tries."""
    body = tmp_path / "1mib"
    body.write_bytes(os.urandom(1 << 20))
    idle = idle_fds(proxy, early_origin)
    for path in ["/early-close", "/early-keep"] * 5:
        r = curl(proxy, "-s", "-o", "/dev/null", "-w", "%{http_code}", "--limit-rate", "100k",
                 "--data-binary", f"@{body}", early_origin.url(path))
        assert r.stdout.decode().strip() == "401", (r.returncode, r.stdout, r.stderr)
    settled(proxy, idle)


def test_curl_with_expect_gets_the_early_answer_without_sending_its_body(proxy, early_origin, tmp_path):
    body = tmp_path / "1mib"
    body.write_bytes(os.urandom(1 << 20))
    idle = idle_fds(proxy, early_origin)
    r = curl(proxy, "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_upload}", "-H", "Expect: 100-continue",
             "--data-binary", f"@{body}", early_origin.url("/early-keep"))
    assert r.stdout.decode().split() == ["401", "0"], (r.returncode, r.stdout, r.stderr)
    settled(proxy, idle)
    assert early_origin.bodies_read == 0
    head = early_origin.heads[-1].lower()
    assert b"expect: 100-continue" in head, head


def test_the_origins_100_continue_reaches_the_client_once(proxy, origin, tmp_path):
    data = os.urandom(300_000)
    body = tmp_path / "body"
    body.write_bytes(data)
    r = curl(proxy, "-sv", "-H", "Expect: 100-continue", "--data-binary", f"@{body}", origin.url("/upload"))
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    stderr = r.stderr.decode()
    assert answer["length"] == len(data) and answer["sha256"] == hashlib.sha256(data).hexdigest()
    # The origin got the expectation (its 100 is what curl waited for) and curl saw one 100.
    assert answer["headers"].get("expect") == "100-continue", answer
    assert stderr.count("< HTTP/1.1 100 Continue") == 1, stderr


def test_an_origin_that_ignores_expect_still_gets_the_body(proxy, early_origin):
    """curl waits a second for the origin's 100, then sends; the client then gets afproxy's 100."""
    data = os.urandom(5000)
    with RawConn(proxy.port) as conn:
        url = early_origin.url("/ignore-expect")
        host = url.split("/")[2]
        conn.send(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n"
                  % (url.encode(), host.encode(), len(data)))
        interim = conn.read_response(skip_informational=False)
        assert interim.status == 100, interim
        conn.send(data)
        resp = conn.read_response()
        assert resp.status == 200, resp
        answer = json.loads(resp.body)
        assert answer == {"length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    proxy.wait_idle()


def unasked_continue_exchange(conn: RawConn, url: str, version: bytes = b"HTTP/1.1") -> list:
    """Posts 5000 bytes without `Expect` to /continue; answers the responses read, interim included."""
    data = os.urandom(5000)
    host = url.split("/")[2]
    conn.send(b"POST %s %s\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s"
              % (url.encode(), version, host.encode(), len(data), data))
    responses = []
    while not responses or responses[-1].status < 200:
        responses.append(conn.read_response(skip_informational=False))
    answer = json.loads(responses[-1].body)
    assert answer == {"length": len(data), "sha256": hashlib.sha256(data).hexdigest()}, answer
    return responses


def test_an_origins_unasked_100_continue_reaches_the_client_once(proxy, early_origin):
    """RFC 9110 §15.2: a proxy forwards every 1xx it did not ask for. The origin sends two 100s
    to a request without `Expect`: the client gets one, before the 200; an HTTP/1.0 client none."""
    url = early_origin.url("/continue")
    with RawConn(proxy.port) as conn:
        responses = unasked_continue_exchange(conn, url)
    assert [r.status for r in responses] == [100, 200], responses
    with RawConn(proxy.port) as conn:
        responses = unasked_continue_exchange(conn, url, version=b"HTTP/1.0")
    assert [r.status for r in responses] == [200], responses


def test_an_unasked_100_continue_reaches_an_intercepted_client_once(start_proxy, tls_files):
    """The same inside an intercepted connection: the origin is HTTPS, the client speaks TLS to
    afproxy's minted certificate, in HTTP/1.1 and in HTTP/2 (a 100 HEADERS frame on the stream)."""
    origin = EarlyOrigin(tls=tls_files.server_context())
    try:
        proxy = start_proxy("--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(origin.port),
                            "--tls-ca-file", tls_files.ca_cert)
        for version, interim in (("--http1.1", "< HTTP/1.1 100 Continue"), ("--http2", "< HTTP/2 100 ")):
            r = curl(proxy, "-sv", version, "--cacert", ca_path(proxy), "--data-binary", "@-",
                     origin.url("/continue"), input=b"y" * 5000)
            assert r.returncode == 0, r.stderr
            stderr = r.stderr.decode()
            assert stderr.count(interim) == 1, stderr
            assert json.loads(r.stdout)["length"] == 5000, r.stdout
        record = proxy.history_record(origin.url("/continue"))
        assert record["parent"] is not None and record["status"] == 200, record
    finally:
        origin.stop()


def test_an_http10_client_expectation_is_not_forwarded(proxy, origin):
    data = b"x" * 100
    with RawConn(proxy.port) as conn:
        url = origin.url("/upload")
        conn.send(b"POST %s HTTP/1.0\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n%s"
                  % (url.encode(), url.split("/")[2].encode(), len(data), data))
        resp = conn.read_response(skip_informational=False)
        assert resp.status == 200, resp
        answer = json.loads(resp.body)
        assert answer["length"] == len(data)
        assert "expect" not in {k.lower() for k in answer["headers"]}, answer


def test_the_safety_net_ends_a_task_the_rule_missed(start_proxy, origin):
    """The net under the rule: with the failpoint `client-close-ignored` a client's close leaves
    its task alive, as a gap in the rule would. An upload whose body never came, to an origin that
    never answers, is then a task with no client and no progress (curl waits for the body, not for
    the origin, so the upstream timeout does not end it). The net ends it with `stalled` once the
    upstream timeout passed, logs the defect, and /metrics counts it."""
    proxy = start_proxy("--upstream-timeout", "2", env={"AFPROXY_FAILPOINTS": "client-close-ignored"})
    url = origin.url("/hang")
    with RawConn(proxy.port) as conn:
        conn.send(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 3\r\n\r\n"
                  % (url.encode(), url.split("/")[2].encode()))
        wait_for(lambda: [t for t in proxy.tasks() if t["url"] == url], 20, message="the task")
    # The client is gone; the task lives on (the failpoint) until the net ends it.
    seen: list = []

    def stalled():
        seen[:] = [t for t in proxy.tasks(all=True) if t["url"] == url]
        return seen and seen[-1]["state"] == "completed" and seen[-1]

    record = wait_for(stalled, 60, message=lambda: f"the net's end of the task; have {seen}")
    assert record["errorCode"] == "stalled", record
    # The log line is written as the task ends; the reader thread may not have it yet.
    wait_for(lambda: any("defect: task" in line and "ended as stalled" in line for line in proxy.stderr_lines),
             message=lambda: f"the defect's log line; have {proxy.log()}")
    status, metrics = proxy.api("GET", "/metrics")
    assert status == 200
    assert 'afproxy_tasks_completed_total{kind="upload",outcome="stalled"} 1' in metrics, metrics
    proxy.wait_idle()
