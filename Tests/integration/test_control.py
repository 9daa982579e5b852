"""Steering tasks over the control socket: suspend, resume and cancel mid-transfer, the event
stream, the API's errors, who may connect, and the socket file's life cycle."""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from helpers import (
    EventStream, clean_env, closed_port, ctl, curl, curl_sha256, file_sha256, live_task, short_socket_dir,
    start_curl, wait_for,
)
from origin import payload, payload_sha256

MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# helpers


class Background:
    """Runs fn(*args) in a thread; .result() joins it (with a timeout) and returns its value."""

    def __init__(self, fn, *args, **kwargs):
        self._box: list = []
        self._err: list = []

        def run():
            try:
                self._box.append(fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001  (re-raised in result())
                self._err.append(e)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def running(self) -> bool:
        return self._thread.is_alive()

    def result(self, timeout: float):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"background call still running after {timeout} s"
        if self._err:
            raise self._err[0]
        return self._box[0]


def steer(proxy, verb: str, task_id: int) -> dict:
    """POST /v1/tasks/{id}/{verb}, which must succeed; returns the task's new JSON."""
    status, body = proxy.api("POST", f"/v1/tasks/{task_id}/{verb}")
    assert status == 200, f"POST /v1/tasks/{task_id}/{verb}: {status} {body!r}"
    assert isinstance(body, dict) and body.get("id") == task_id, f"{verb} answered {body!r}"
    return body


def assert_frozen(proxy, task_id: int, direction: str, seconds: float, samples: int = 7,
                  client_bytes=None) -> int:
    """Samples the task `samples` times over `seconds`: its `direction`.completed never changes and
    its state stays "suspended". With `client_bytes` (a callable), what the client has received must
    never exceed the frozen count. Returns the frozen byte count."""
    first = proxy.task(task_id)
    assert first["state"] == "suspended", f"state after suspend: {first['state']!r}"
    frozen = first[direction]["completed"]
    history = [frozen]
    received = []
    for _ in range(samples - 1):
        time.sleep(seconds / (samples - 1))
        rec = proxy.task(task_id)
        history.append(rec[direction]["completed"])
        if client_bytes is not None:
            received.append(client_bytes())
        assert rec["state"] == "suspended", f"state while suspended: {rec['state']!r}"
    assert all(v == frozen for v in history), (
        f"{direction}.completed moved while suspended (samples over {seconds} s): {history}")
    # What the daemon had already written may still drain from socket buffers into a slow client,
    # but nothing past the frozen count may reach it.
    assert all(r <= frozen for r in received), (
        f"the client received more than the frozen {frozen} bytes while suspended: {received}")
    return frozen


def assert_error_body(body, status: int, expected_status: int, what: str) -> None:
    assert status == expected_status, f"{what}: expected {expected_status}, got {status} {body!r}"
    assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"], (
        f"{what}: expected a JSON {{\"error\": \"...\"}} body, got {body!r}")


# ----------------------------------------------------------------------------------------------
# suspend / resume / cancel


def test_suspend_resume_download_mid_body(proxy, origin, tmp_path):
    """A 200 MiB download suspended mid-body stops moving for 3 s (in the record and at the client)
    with its connection open, and resumed completes byte-exact."""
    n = 200 * MiB
    url = origin.url(f"/bytes/{n}")
    out_file = tmp_path / "download.bin"
    client = start_curl(proxy, "--limit-rate", "20M", "--max-time", "120", "-o", str(out_file), url)
    try:
        rec = live_task(proxy, url, min_download=16 * MiB)
        tid = rec["id"]
        body = steer(proxy, "suspend", tid)
        assert body["state"] == "suspended", body
        frozen = assert_frozen(proxy, tid, "download", 3.0, client_bytes=lambda: out_file.stat().st_size)
        assert 0 < frozen < n, f"not mid-body when suspended: {frozen} of {n}"
        assert client.poll() is None, f"curl exited {client.returncode} while its task was suspended"
        assert any(t["id"] == tid for t in proxy.tasks()), "the suspended task left the live list"

        body = steer(proxy, "resume", tid)
        assert body["state"] == "running", body
        try:
            _, err = client.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            pytest.fail("curl did not finish within 150 s of the resume")
        assert client.returncode == 0, err
        assert file_sha256(out_file) == (n, payload_sha256(n)), "the resumed download is not byte-exact"
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
        out_file.unlink(missing_ok=True)  # 200 MiB: do not leave it in pytest's kept directories

    done = proxy.history_record(url)
    assert done["id"] == tid
    assert done["error"] is None and done["status"] == 200
    assert done["download"]["completed"] == n


def test_suspend_resume_upload_mid_body(proxy, origin, tmp_path):
    """A 50 MiB upload suspended mid-body stops moving for 3 s, and resumed reaches the origin intact."""
    n = 50 * MiB
    f = tmp_path / "upload.bin"
    f.write_bytes(random.Random(50).randbytes(n))
    size, digest = file_sha256(f)
    url = origin.url("/upload")
    up = Background(curl, proxy, "--max-time", "120", "--limit-rate", "10M", "--data-binary", f"@{f}", url,
                    timeout=150)

    rec = live_task(proxy, url, min_download=0, min_upload=8 * MiB)
    tid = rec["id"]
    assert rec["kind"] == "upload"
    body = steer(proxy, "suspend", tid)
    assert body["state"] == "suspended", body
    frozen = assert_frozen(proxy, tid, "upload", 3.0)
    assert 0 < frozen < n, f"not mid-body when suspended: {frozen} of {n}"
    assert up.running(), "curl finished (or failed) while its upload was suspended"

    body = steer(proxy, "resume", tid)
    assert body["state"] == "running", body
    r = up.result(timeout=160)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["length"], got["sha256"]) == (size, digest), "the origin did not get the file intact"

    done = proxy.history_record(url)
    assert done["id"] == tid
    assert done["error"] is None and done["status"] == 200
    assert done["upload"]["completed"] == n


def test_suspended_longer_than_every_timeout(start_proxy, origin):
    """A download suspended for 6 s under 2 s upstream/idle/header timeouts is not timed out, and
    resumed completes byte-exact."""
    proxy = start_proxy("--upstream-timeout", "2", "--idle-timeout", "2", "--header-timeout", "2")
    n = 60 * MiB
    url = origin.url(f"/bytes/{n}")
    dl = Background(curl_sha256, proxy, "--limit-rate", "20M", "--max-time", "120", url, timeout=150)

    tid = live_task(proxy, url, min_download=8 * MiB)["id"]
    assert steer(proxy, "suspend", tid)["state"] == "suspended"
    time.sleep(6.0)  # the duration is the point: three times every timeout of the daemon
    rec = proxy.task(tid)
    assert rec["state"] == "suspended", f"after 6 s suspended: {rec['state']!r}, error {rec['error']!r}"
    assert rec["error"] is None
    assert dl.running(), "curl's connection ended while its task was suspended"

    assert steer(proxy, "resume", tid)["state"] == "running"
    out = dl.result(timeout=160)
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))
    done = proxy.history_record(url)
    assert done["error"] is None and done["download"]["completed"] == n


def test_cancel_running_download(proxy, origin, tmp_path):
    """Cancel mid-download closes the client's connection (curl fails, body truncated), aborts the
    upstream transfer, and the record completes with error "canceled"."""
    n = 100 * MiB
    url = origin.url(f"/bytes/{n}")
    out = tmp_path / "canceled.bin"
    origin_conns_before = origin.open_connections
    client = start_curl(proxy, "--limit-rate", "10M", "--max-time", "60", "-o", str(out), url)
    try:
        tid = live_task(proxy, url, min_download=4 * MiB)["id"]
        body = steer(proxy, "cancel", tid)
        try:
            _, err = client.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("curl still running 15 s after its task was canceled")
        assert client.returncode != 0, "curl succeeded although its task was canceled"
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
    assert out.stat().st_size < n, "the whole body arrived although the task was canceled"

    rec = proxy.history_record(url)
    assert rec["id"] == tid
    assert rec["state"] == "completed"
    assert rec["error"] == "canceled", f"error of a canceled task: {rec['error']!r} (cancel answered {body!r})"
    assert rec["download"]["completed"] < n
    assert not any(t["id"] == tid for t in proxy.tasks()), "a canceled task is still live"
    wait_for(lambda: origin.open_connections <= origin_conns_before, timeout=10,
             message=lambda: f"the origin's connection to close after cancel "
                             f"(open: {origin.open_connections}, before: {origin_conns_before})")


def test_cancel_task_waiting_for_response(proxy, origin):
    """Cancel of a task still waiting for its response head (/hang) answers the client 503."""
    url = origin.url("/hang")
    client = start_curl(proxy, "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}", url,
                        stdout=subprocess.PIPE)
    try:
        tid = live_task(proxy, url, min_download=0)["id"]
        steer(proxy, "cancel", tid)
        try:
            stdout, err = client.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("curl still waiting 15 s after its task was canceled")
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
    assert stdout.decode().strip() == "503", f"status seen by the client: {stdout!r} (curl: {err!r})"
    rec = proxy.history_record(url)
    assert rec["id"] == tid
    assert rec["state"] == "completed" and rec["error"] == "canceled", rec


def test_failures_and_cancellations_are_counted_apart(proxy, origin):
    """One meaning of failed in the stats, the log and `afproxyctl status`: a refused connection is a
    failure; a canceled task is not (it was counted as one in the stats, not in the log)."""
    before = proxy.stats()
    refused = f"http://127.0.0.1:{closed_port()}/nothing-here"
    assert curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", refused).stdout == b"502"
    url = origin.url("/hang?counted-apart")
    client = start_curl(proxy, "--max-time", "30", "-o", "/dev/null", url)
    try:
        steer(proxy, "cancel", live_task(proxy, url, min_download=0)["id"])
        client.wait(timeout=15)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
    wait_for(lambda: proxy.stats()["served"] >= before["served"] + 2, message="both tasks to end")
    after = proxy.stats()
    assert (after["failed"] - before["failed"], after["canceled"] - before["canceled"]) == (1, 1), after
    status = ctl(proxy, "stats")
    assert status.returncode == 0, status.stderr
    assert f"({after['failed']} failed, {after['canceled']} canceled)" in status.stdout, status.stdout

    def levels():
        found = {}
        for line in proxy.log().splitlines():
            for marker in ("nothing-here", "counted-apart"):
                if marker in line and " failed: " in line:
                    found[marker] = line.split()[1]
        return len(found) == 2 and (found["nothing-here"], found["counted-apart"])

    assert wait_for(levels, 10, message=lambda: proxy.log()[-2000:]) == ("error", "info")


def test_suspend_all_resume_all(proxy, origin):
    """suspend?all=1 suspends both of two running downloads (and reports them), resume?all=1
    resumes both, and both complete byte-exact."""
    n = 60 * MiB
    urls = [origin.url(f"/bytes/{n}?i={i}") for i in range(2)]
    dls = [Background(curl_sha256, proxy, "--limit-rate", "10M", "--max-time", "120", u, timeout=150)
           for u in urls]
    ids = {live_task(proxy, u, min_download=4 * MiB)["id"] for u in urls}
    assert len(ids) == 2

    status, body = proxy.api("POST", "/v1/tasks/suspend?all=1")
    assert status == 200, body
    assert {t["id"] for t in body["tasks"]} == ids, f"suspend?all=1 changed {body!r}"
    assert all(t["state"] == "suspended" for t in body["tasks"]), body
    frozen = {tid: proxy.task(tid)["download"]["completed"] for tid in ids}
    time.sleep(1.5)
    for tid in ids:
        rec = proxy.task(tid)
        assert rec["state"] == "suspended"
        assert rec["download"]["completed"] == frozen[tid], f"task {tid} moved while suspended"
    status, body = proxy.api("POST", "/v1/tasks/suspend?all=1")
    assert (status, body) == (200, {"tasks": []}), f"a second suspend?all=1 changed something: {body!r}"
    assert all(d.running() for d in dls)

    status, body = proxy.api("POST", "/v1/tasks/resume?all=1")
    assert status == 200, body
    assert {t["id"] for t in body["tasks"]} == ids, f"resume?all=1 changed {body!r}"
    assert all(t["state"] == "running" for t in body["tasks"]), body
    status, body = proxy.api("POST", "/v1/tasks/resume?all=1")
    assert (status, body) == (200, {"tasks": []}), f"a second resume?all=1 changed something: {body!r}"

    for d in dls:
        out = d.result(timeout=160)
        assert out.returncode == 0, out.stderr
        assert (out.size, out.sha256) == (n, payload_sha256(n))


# ----------------------------------------------------------------------------------------------
# events


def wait_for_quietly(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_stopped_event_reader_is_told_what_it_missed(proxy, origin):
    """A reader that stops reading does not make the daemon buffer for it: events it cannot take
    are dropped and counted, and when it reads again a `missed` line says how many. Every task
    event is either received or counted, none vanishes."""
    n = 3000
    with EventStream(proxy.control_socket) as ev:
        ev.pause()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        for i in range(n):
            conn.request("GET", origin.url(f"/bytes/16?i={i}"))
            resp = conn.getresponse()
            assert (resp.status, len(resp.read())) == (200, 16)
        ev.go()
        # Markers until one's completed event arrives: the first ones may be published while the
        # reader still drains what its buffers held, and be missed (and counted) in turn.
        markers = 0

        def marker_arrived() -> bool:
            nonlocal markers
            markers += 1
            marker = origin.url(f"/bytes/16?marker={markers}")
            conn.request("GET", marker)
            assert conn.getresponse().read() == payload(16)
            return wait_for_quietly(lambda: any(e["event"] == "completed" and e["task"]["url"] == marker
                                                for e in ev.snapshot()), 2)

        wait_for(marker_arrived, timeout=60, interval=0,
                 message=lambda: f"a marker's completed event; last: {ev.snapshot()[-3:]}")
        conn.close()
        assert not ev.bad_lines and ev.error is None, (ev.bad_lines[:3], ev.error)
        events = ev.snapshot()

    missed = [e for e in events if e["event"] == "missed"]
    assert missed, f"{len(events)} events arrived for {n} requests and none was missed: the reader never stopped?"
    assert all(set(e) == {"event", "missed"} and e["missed"] > 0 for e in missed), missed
    received = [e for e in events if e["event"] in ("created", "completed")]
    assert len(received) + sum(e["missed"] for e in missed) == 2 * (n + markers), (
        f"received {len(received)} task events and {sum(e['missed'] for e in missed)} missed, "
        f"for {2 * (n + markers)} published")


def test_the_live_feed_shows_tasks_as_they_are(proxy, origin):
    """GET /v1/live: a snapshot line a few times a second with the live tasks that changed, the
    ids of all live ones, and what completed since the last line; a burst of short requests is
    counted exactly (shown or not) and the slow transfer's row follows its state."""
    n = 30 * MiB
    url = origin.url(f"/bytes/{n}")
    burst = 400
    with EventStream(proxy.control_socket, path="/v1/live") as feed:
        assert feed.status == 200
        dl = Background(curl_sha256, proxy, "--limit-rate", "10M", "--max-time", "60", url, timeout=90)
        row = wait_for(lambda: next((t for e in feed.snapshot() for t in e["tasks"]
                                     if t["url"] == url and t["download"]["completed"] > 0), None),
                       timeout=15, message=lambda: f"a moving row for {url}; got {feed.snapshot()[-2:]}")
        tid = row["id"]
        steer(proxy, "suspend", tid)
        wait_for(lambda: any(t["id"] == tid and t["state"] == "suspended" for e in feed.snapshot() for t in e["tasks"]),
                 timeout=10, message=lambda: "the suspended state in a snapshot")
        served_before = proxy.stats()["served"]
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        for i in range(burst):
            conn.request("GET", origin.url(f"/bytes/16?burst={i}"))
            assert conn.getresponse().read() == payload(16)
        conn.close()
        steer(proxy, "resume", tid)
        out = dl.result(timeout=90)
        assert out.returncode == 0, out.stderr
        assert (out.size, out.sha256) == (n, payload_sha256(n))
        wait_for(lambda: any(t["id"] == tid for e in feed.snapshot() for t in e["completed"]), timeout=10,
                 message=lambda: f"task {tid} among a snapshot's completed")
        lines = feed.snapshot()
        assert not feed.bad_lines and feed.error is None, (feed.bad_lines[:3], feed.error)

    assert all(e["event"] == "snapshot" and set(e) == {"event", "tasks", "live", "completed", "completedNotShown", "stats"}
               for e in lines), lines[0]
    last_live = next(e for e in reversed(lines) if any(t["id"] == tid for t in e["completed"]))
    assert tid not in last_live["live"], "a completed task is still listed live"
    assert any(tid in e["live"] for e in lines)
    completed_count = sum(len(e["completed"]) + e["completedNotShown"] for e in lines)
    shown_burst = {t["url"] for e in lines for t in e["completed"] if "burst=" in t["url"]}
    # The burst and the slow transfer completed while the feed was open; nothing else did.
    assert completed_count == burst + 1, f"{completed_count} completions counted for {burst + 1}"
    assert len(shown_burst) + sum(e["completedNotShown"] for e in lines) == burst
    assert lines[-1]["stats"]["served"] >= served_before + burst + 1
    assert len(lines) < 200, f"{len(lines)} lines: the feed is not coalescing"


def test_event_stream_lifecycle(proxy, origin):
    """GET /v1/events shows created → suspended → resumed → completed for one task, with progress
    events while it moves (at most 4/s) and none carrying new bytes while it is suspended."""
    n = 30 * MiB
    url = origin.url(f"/bytes/{n}")
    with EventStream(proxy.control_socket) as ev:
        assert ev.status == 200
        assert "ndjson" in ev.headers.get("content-type", "") or "json" in ev.headers.get("content-type", "")
        dl = Background(curl_sha256, proxy, "--limit-rate", "10M", "--max-time", "60", url, timeout=90)

        created = wait_for(
            lambda: next((e for e in ev.snapshot() if e.get("event") == "created"
                          and e["task"].get("url") == url), None),
            timeout=15, message=lambda: f"a created event for {url}; got {json.dumps(ev.snapshot())[:2000]}")
        tid = created["task"]["id"]
        wait_for(lambda: any(e["event"] == "progress" and e["task"]["download"]["completed"] > 0
                             for e in ev.for_task(tid)),
                 timeout=15, message=lambda: f"a progress event for task {tid}; got {ev.for_task(tid)}")

        steer(proxy, "suspend", tid)
        time.sleep(1.5)  # long enough for several 250 ms progress ticks while suspended
        # Bytes move again as soon as the resume is applied, and a progress tick may be written
        # before the resumed event is: what counts as "while suspended" ends here.
        resume_asked = time.monotonic()
        steer(proxy, "resume", tid)
        out = dl.result(timeout=90)
        assert out.returncode == 0, out.stderr
        assert (out.size, out.sha256) == (n, payload_sha256(n))
        wait_for(lambda: any(e["event"] == "completed" for e in ev.for_task(tid)), timeout=10,
                 message=lambda: f"a completed event for task {tid}; got {[e['event'] for e in ev.for_task(tid)]}")
        assert not ev.bad_lines, f"lines that are not JSON: {ev.bad_lines[:5]}"
        assert ev.error is None, f"the event stream failed: {ev.error!r}"
        timed = [(t, e) for t, e in ev.timed() if e["task"]["id"] == tid]

    events = [e for _, e in timed]
    for e in events:
        assert set(e) >= {"event", "task"} and e["task"]["url"] == url, e
    kinds = [e["event"] for e in events]
    lifecycle = [k for k in kinds if k != "progress"]
    assert lifecycle == ["created", "suspended", "resumed", "completed"], f"events for task {tid}: {kinds}"
    assert set(kinds) <= {"created", "progress", "suspended", "resumed", "completed"}, kinds

    i_susp, i_res = kinds.index("suspended"), kinds.index("resumed")
    assert "progress" in kinds[: i_susp], f"no progress event before the suspension: {kinds}"
    assert events[i_susp]["task"]["state"] == "suspended"
    assert events[i_res]["task"]["state"] == "running"
    frozen = events[i_susp]["task"]["download"]["completed"]
    during = [e["task"]["download"]["completed"] for t, e in timed[i_susp + 1: i_res] if t < resume_asked]
    # One tick may still report bytes that moved just before the suspension (they are already in the
    # suspended event's record); nothing may move after it.
    assert len(during) <= 1 and all(c == frozen for c in during), (
        f"progress while suspended (frozen at {frozen}): {during}")
    final = events[-1]["task"]
    assert final["state"] == "completed" and final["error"] is None and final["download"]["completed"] == n

    progress_times = [t for t, e in timed if e["event"] == "progress"]
    span = timed[-1][0] - timed[0][0]
    assert len(progress_times) <= 4 * span + 2, (
        f"{len(progress_times)} progress events in {span:.1f} s: more than 4 a second")


# ----------------------------------------------------------------------------------------------
# errors


def read_chunked(data: bytes) -> tuple[list[bytes], bool]:
    """A chunked body as far as it goes: its chunks, and whether the last chunk (0) ended it."""
    chunks: list[bytes] = []
    while True:
        line, sep, rest = data.partition(b"\r\n")
        if not sep:
            return chunks, False
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return chunks, rest == b"\r\n"
        if len(rest) < size + 2 or rest[size:size + 2] != b"\r\n":
            return chunks, False
        chunks.append(rest[:size])
        data = rest[size + 2:]


@pytest.mark.parametrize("path", ["/v1/events", "/v1/live"])
def test_a_stream_ends_with_its_last_chunk_when_the_daemon_stops(start_proxy, origin, path):
    """SIGTERM: an event stream (and the live feed) ends with the last chunk, 0 CRLF CRLF, before
    its connection closes, so that a reader tells a daemon that stopped cleanly from a broken
    connection (issue 22). Read with a raw socket: the bytes as sent."""
    p = start_proxy()
    p.wait_control_ready()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(20)
    conn.connect(p.control_socket)
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: afproxy\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        assert got, f"the daemon closed before the head: {data!r}"
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in head.lower(), head
    assert curl(p, origin.url("/bytes/10")).returncode == 0  # something on the stream first
    assert p.stop(by_test=True) == 0
    while got := conn.recv(65536):
        body += got
    conn.close()
    chunks, ended = read_chunked(body)
    assert ended, f"no last chunk after {len(chunks)} chunk(s); the body ends {body[-80:]!r}"
    assert chunks, "nothing was streamed before the stop"


def test_api_errors(proxy, origin):
    """Unknown ids are 404, illegal transitions 409, a malformed id 400, a wrong method 405, an
    unknown endpoint 404, all with a JSON error; and the real curl can use the socket."""
    for method, path in (("GET", "/v1/tasks/987654"), ("POST", "/v1/tasks/987654/suspend"),
                         ("POST", "/v1/tasks/987654/resume"), ("POST", "/v1/tasks/987654/cancel")):
        status, body = proxy.api(method, path)
        assert_error_body(body, status, 404, f"{method} {path}")
    status, body = proxy.api("GET", "/v1/tasks/abc")
    assert_error_body(body, status, 400, "GET /v1/tasks/abc")
    status, body = proxy.api("POST", "/v1/tasks/abc/suspend")
    assert_error_body(body, status, 400, "POST /v1/tasks/abc/suspend")
    status, body = proxy.api("DELETE", "/v1/tasks/1")
    assert_error_body(body, status, 405, "DELETE /v1/tasks/1")
    status, body = proxy.api("GET", "/v1/nonsense")
    assert_error_body(body, status, 404, "GET /v1/nonsense")

    # illegal transitions on a running, a suspended and a completed task
    n = 200 * 1024
    url = origin.url(f"/slowbody/{n}?chunk=1024&interval=0.05")  # about 10 s
    client = start_curl(proxy, "--max-time", "60", "-o", "/dev/null", url)
    try:
        tid = live_task(proxy, url, min_download=1)["id"]
        status, body = proxy.api("POST", f"/v1/tasks/{tid}/resume")
        assert_error_body(body, status, 409, "resume a running task")
        assert proxy.task(tid)["state"] == "running"
        steer(proxy, "suspend", tid)
        status, body = proxy.api("POST", f"/v1/tasks/{tid}/suspend")
        assert_error_body(body, status, 409, "suspend a suspended task")
        assert proxy.task(tid)["state"] == "suspended"
        steer(proxy, "cancel", tid)
        client.wait(timeout=15)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
    proxy.history_record(url)
    status, body = proxy.api("POST", f"/v1/tasks/{tid}/suspend")
    assert_error_body(body, status, 409, "suspend a completed task")
    rec = proxy.task(tid)
    assert (rec["state"], rec["error"]) == ("completed", "canceled"), rec

    # the real curl on the Unix socket
    r = subprocess.run(["curl", "-sS", "--max-time", "10", "--unix-socket", proxy.control_socket,
                        "-w", "\n%{http_code}", "http://localhost/v1/tasks?all=1"],
                       capture_output=True, timeout=30, env=clean_env())
    assert r.returncode == 0, r.stderr
    text, _, code = r.stdout.decode().rpartition("\n")
    assert code == "200"
    listed = json.loads(text)
    assert isinstance(listed["tasks"], list) and any(t["id"] == tid for t in listed["tasks"]), listed


# ----------------------------------------------------------------------------------------------
# who may connect, and the socket file


def _as_nobody(argv: list[str]) -> list[str]:
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
    return ["runuser", "-u", "nobody", "--", *argv]


def test_socket_mode_and_other_uid_refused(start_proxy):
    """The socket is 0600; a caller of another uid (nobody) cannot even connect, and with the file
    made 0666 it gets 403 with a JSON error (SO_PEERCRED) while root still gets 200."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    if not (shutil.which("setpriv") or shutil.which("runuser")):
        pytest.skip("needs setpriv or runuser")
    d = Path(tempfile.mkdtemp(prefix="afp-uid-", dir="/tmp"))
    try:
        os.chmod(d, 0o755)  # nobody must be able to reach the socket file
        sock = str(d / "control.sock")
        proxy = start_proxy(control_socket=sock)
        proxy.wait_control_ready()
        mode = os.stat(sock).st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600, f"socket mode {oct(stat.S_IMODE(mode))}, expected 0o600"

        probe = ["curl", "-sS", "--max-time", "10", "--unix-socket", sock, "-w", "\n%{http_code}",
                 "http://localhost/v1/tasks"]
        r = subprocess.run(_as_nobody(probe), capture_output=True, timeout=30, env=clean_env())
        assert r.returncode != 0, f"nobody connected to a 0600 socket: {r.stdout!r}"

        os.chmod(sock, 0o666)
        r = subprocess.run(_as_nobody(probe), capture_output=True, timeout=30, env=clean_env())
        assert r.returncode == 0, f"curl as nobody: {r.stderr!r}"
        text, _, code = r.stdout.decode().rpartition("\n")
        assert code == "403", f"another uid got {code}: {text!r}"
        body = json.loads(text)
        assert isinstance(body.get("error"), str) and body["error"], body
        assert "tasks" not in body

        status, body = proxy.api("GET", "/v1/tasks")
        assert status == 200, f"root refused: {status} {body!r}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_socket_file_life_cycle(start_proxy, afproxy_bin, tmp_path):
    """A stale socket left by a SIGKILLed daemon is replaced by the next one; a second daemon on a
    live socket exits 1 saying it is already served (and leaves it alone); SIGTERM removes the file."""
    sock = str(short_socket_dir(tmp_path) / "life.sock")
    first = start_proxy(control_socket=sock)
    first.tasks()  # serving
    first.stopped_by_test = True
    first.proc.kill()
    first.proc.wait(timeout=10)
    assert stat.S_ISSOCK(os.lstat(sock).st_mode), "no stale socket file after SIGKILL"

    second = start_proxy(control_socket=sock)
    assert second.tasks() == []
    assert second.stats()["served"] == 0

    argv = [afproxy_bin, "--listen", "127.0.0.1:0", "--control-socket", sock]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
                           env=clean_env())
    except subprocess.TimeoutExpired:
        pytest.fail("a daemon started on a live control socket was still running after 20 s")
    assert r.returncode == 1, f"daemon on a live socket exited {r.returncode}; stderr {r.stderr!r}"
    assert "already" in (r.stderr + r.stdout).lower(), f"no 'already' in {r.stderr!r} {r.stdout!r}"
    assert stat.S_ISSOCK(os.lstat(sock).st_mode), "the refused daemon removed the live socket file"
    assert second.tasks() == [], "the live daemon stopped answering after the refused start"

    rc = second.stop(by_test=True)
    assert rc == 0, f"exit status after SIGTERM: {rc}"
    assert not os.path.lexists(sock), "the socket file is still there after a clean exit"
