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

import pytest

from helpers import RawConn, curl, wait_for

ANSWER = b"unauthorized!!\n"


class EarlyOrigin:
    """An origin whose paths say how it answers:
    /early-close   401 as soon as the head is in, then closes
    /early-keep    401 as soon as the head is in, then reads (and drops) whatever comes until the peer closes
    /early-chunked the same as /early-keep with a chunked 401
    /ignore-expect never sends a 100: reads the whole body (Content-Length), answers 200 with its length
                   and SHA-256 as JSON, and keeps the connection
    `heads` counts the request heads seen; `bodies_read` the bytes read after the heads."""

    def __init__(self) -> None:
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
        return f"http://127.0.0.1:{self.port}{path}"

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
                if path.startswith("/early-chunked"):
                    conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"%x\r\n%s\r\n0\r\n\r\n" % (len(ANSWER), ANSWER))
                elif path.startswith("/early"):
                    conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER))
                if path.startswith("/early"):
                    if path.startswith("/early-close"):
                        return
                    while True:
                        data = conn.recv(65536)
                        if not data:
                            return
                        with self.lock:
                            self.bodies_read += len(data)
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


def post_head(url: str, expect: bool = False) -> bytes:
    host = url.split("/")[2]
    extra = b"Expect: 100-continue\r\n" if expect else b""
    return b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 3\r\n%s\r\n" % (url.encode(), host.encode(), extra)


@pytest.mark.parametrize("path", ["/early-close", "/early-keep", "/early-chunked"],
                         ids=["origin-closes", "origin-keeps", "origin-keeps-chunked"])
@pytest.mark.parametrize("client", ["closes", "stays-silent", "sends-body", "expects-100"])
def test_an_early_answer_ends_the_task_whatever_the_client_does(proxy, early_origin, path, client):
    idle = idle_fds(proxy, early_origin)
    url = early_origin.url(path)
    for _ in range(3):
        with RawConn(proxy.port) as conn:
            conn.send(post_head(url, expect=client == "expects-100"))
            # An origin that answers early answers the client at once; with Expect, no 100 first.
            resp = conn.read_response(skip_informational=False)
            assert resp.status == 401 and resp.body == ANSWER and resp.complete, resp
            # The request body never came: the connection cannot carry another request.
            assert (resp.header("connection") or "").lower() == "close", resp.headers
            if client == "sends-body":
                conn.send(b"abc")
            if client != "closes":
                assert conn.wait_closed(timeout=20), "afproxy kept a connection it cannot read on"
        record = proxy.history_record(url)
        assert record["status"] == 401 and record["error"] is None, record
        assert record["download"]["completed"] == len(ANSWER), record
    settled(proxy, idle)


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
    assert any("defect: task" in line and "ended as stalled" in line for line in proxy.stderr_lines), proxy.log()
    status, metrics = proxy.api("GET", "/metrics")
    assert status == 200
    assert 'afproxy_tasks_completed_total{kind="upload",outcome="stalled"} 1' in metrics, metrics
    proxy.wait_idle()
