"""Hold rules (breakpoints without editing) through the real daemon: `afproxyctl hold add` catches
a new task before any byte goes upstream — the origin sees no connection until the task is
resumed — for a request and for a tunnel; cancel answers 503; `--once`; `resume --all`; rules
that survive a reload and a restart; a held task that outlives afproxy's shortened timeouts; the
`held` event.

Each test starts its own origin, so its connection count is the test's own.
"""

from __future__ import annotations

import hashlib
import json
import signal
import socket
import subprocess
import time

import pytest

from helpers import EventStream, RawConn, client_descriptors, ctl, curl, start_curl, wait_for
from origin import payload, payload_sha256, start_origin


@pytest.fixture
def fresh_origin():
    o = start_origin()
    yield o
    o.stop()


def held_tasks(proxy) -> list[dict]:
    return [t for t in proxy.tasks() if t.get("heldBy") is not None]


def wait_held(proxy, count: int = 1, timeout: float = 20.0) -> list[dict]:
    return wait_for(lambda: (lambda h: h if len(h) >= count else None)(held_tasks(proxy)), timeout,
                    message=f"{count} held task(s); live: {proxy.tasks()}")


def add_rule(proxy, *args: str) -> int:
    r = ctl(proxy, "hold", "add", *args)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, bytes, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out or b"", err.decode("utf-8", "replace") if err else ""


def test_a_rule_holds_a_request_until_resume(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    rule = add_rule(proxy, "--host", "127.0.0.1", "--url", "/bytes/")
    n = 300_000
    url = fresh_origin.url(f"/bytes/{n}")
    with EventStream(proxy.control_socket) as events:
        client = start_curl(proxy, url, stdout=subprocess.PIPE)
        [task] = wait_held(proxy)
        assert task["state"] == "suspended" and task["heldBy"] == rule and task["url"] == url
        time.sleep(1.5)  # time the origin would have needed to see something
        assert fresh_origin.connections == 0 and not fresh_origin.requests
        listed = ctl(proxy, "list")
        assert f"held by rule {rule}" in listed.stdout, listed.stdout
        shown = ctl(proxy, "show", str(task["id"]))
        assert f"by rule {rule}" in shown.stdout, shown.stdout
        assert client.poll() is None, "curl ended while its request was held"
        r = ctl(proxy, "resume", str(task["id"]))
        assert r.returncode == 0, r.stderr
        rc, out, err = finish(client)
        assert rc == 0, err
        assert len(out) == n and hashlib.sha256(out).hexdigest() == payload_sha256(n)
        assert fresh_origin.connections == 1
        wait_for(lambda: [e["event"] for e in events.for_task(task["id"])][-1:] == ["completed"], 10)
        kinds = [e["event"] for e in events.for_task(task["id"])]
    assert kinds[:3] == ["created", "held", "resumed"], kinds
    assert "suspended" not in kinds
    held_event = [e for e in events.for_task(task["id"]) if e["event"] == "held"][0]
    assert held_event["task"]["heldBy"] == rule
    record = proxy.history_record(url)
    assert record["heldBy"] is None and record["status"] == 200
    assert [h for h in json.loads(ctl(proxy, "hold", "list", "--json").stdout)["holds"]][0]["caught"] == 1
    # `hold` alone lists the rules.
    alone, listed = ctl(proxy, "hold"), ctl(proxy, "hold", "list")
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout == listed.stdout and alone.stdout.split()[:1] != [], alone.stdout


def test_cancel_of_a_held_request_answers_503(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--method", "POST")
    client = start_curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "x" * 5000,
                        fresh_origin.url("/upload"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert task["kind"] == "upload" and task["method"] == "POST"
    r = ctl(proxy, "cancel", str(task["id"]))
    assert r.returncode == 0, r.stderr
    rc, out, err = finish(client)
    assert out.decode() == "503", (out, err)
    assert fresh_origin.connections == 0 and not fresh_origin.requests
    record = proxy.task(task["id"])
    assert record["errorCode"] == "canceled"
    # A GET is not caught by a POST rule.
    r = curl(proxy, fresh_origin.url("/bytes/10"), "-o", "/dev/null", "-w", "%{http_code}")
    assert r.stdout == b"200"


def test_a_tunnel_is_held_before_it_connects(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"), "--allow-connect-port", str(fresh_origin.port))
    rule = add_rule(proxy, "--kind", "stream")
    n = 100_000
    url = fresh_origin.url(f"/bytes/{n}")
    client = start_curl(proxy, "-p", url, stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert task["kind"] == "stream" and task["heldBy"] == rule and task["url"] == fresh_origin.host
    time.sleep(1.5)
    assert fresh_origin.connections == 0, "the tunnel connected upstream while held"
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    rc, out, err = finish(client)
    assert rc == 0, err
    assert hashlib.sha256(out).hexdigest() == payload_sha256(n)
    assert fresh_origin.connections == 1

    # Canceled while held: the CONNECT is refused with 503, and nothing was connected.
    client = start_curl(proxy, "-p", "-o", "/dev/null", "-w", "%{http_connect}", url, stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert ctl(proxy, "cancel", str(task["id"])).returncode == 0
    rc, out, err = finish(client)
    assert rc != 0 and out.decode() == "503", (rc, out, err)
    assert fresh_origin.connections == 1


def test_once_catches_one_task_then_leaves(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    rule = add_rule(proxy, "--url", r"/bytes/1[0-9]$", "--once")
    first = start_curl(proxy, fresh_origin.url("/bytes/11"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert task["heldBy"] == rule
    listed = json.loads(ctl(proxy, "hold", "list", "--json").stdout)
    assert listed["holds"] == [], "a --once rule stays after it caught a task"
    # The next matching request goes straight through.
    r = curl(proxy, fresh_origin.url("/bytes/12"))
    assert r.returncode == 0 and len(r.stdout) == 12
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    rc, out, err = finish(first)
    assert rc == 0 and len(out) == 11, err
    # Its id is not given again.
    assert add_rule(proxy, "--host", "example.invalid") == rule + 1


def test_resume_all_releases_every_held_task(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"), "--allow-connect-port", str(fresh_origin.port))
    add_rule(proxy, "--all")
    sizes = [1000, 2000, 3000]
    clients = [start_curl(proxy, fresh_origin.url(f"/bytes/{n}"), stdout=subprocess.PIPE) for n in sizes]
    tunnel = start_curl(proxy, "-p", fresh_origin.url("/bytes/4000"), stdout=subprocess.PIPE)
    wait_held(proxy, count=4)
    assert fresh_origin.connections == 0
    r = ctl(proxy, "resume", "--all")
    assert r.returncode == 0, r.stderr
    for n, client in zip(sizes + [4000], clients + [tunnel]):
        rc, out, err = finish(client)
        assert rc == 0, err
        assert hashlib.sha256(out).hexdigest() == payload_sha256(n)
    assert fresh_origin.connections >= 2


def test_rules_survive_reload_and_restart(start_proxy, tmp_path, fresh_origin):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    first = add_rule(proxy, "--host", "127.0.0.1", "--method", "GET")
    second = add_rule(proxy, "--kind", "upload", "--once")
    gone = add_rule(proxy, "--host", "*.example.org")
    assert ctl(proxy, "hold", "rm", str(gone)).returncode == 0
    proxy.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: any("configuration reloaded" in line for line in proxy.stderr_lines), 10,
             message="the log line 'configuration reloaded'")
    listed = json.loads(ctl(proxy, "hold", "list", "--json").stdout)["holds"]
    assert [h["id"] for h in listed] == [first, second]
    client = start_curl(proxy, fresh_origin.url("/bytes/5"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert task["heldBy"] == first
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    assert finish(client)[0] == 0
    proxy.stop(by_test=True)

    again = start_proxy("--state-dir", str(state))
    listed = json.loads(ctl(again, "hold", "list", "--json").stdout)["holds"]
    assert [(h["id"], h["host"], h["method"], h["kind"], h["once"]) for h in listed] == [
        (first, "127.0.0.1", "GET", None, False), (second, None, None, "upload", True)]
    assert listed[0]["caught"] == 1
    table = ctl(again, "hold", "list").stdout
    assert "host=127.0.0.1 method=GET" in table and "kind=upload" in table, table
    client = start_curl(again, fresh_origin.url("/bytes/6"), stdout=subprocess.PIPE)
    [task] = wait_held(again)
    assert task["heldBy"] == first
    assert ctl(again, "resume", str(task["id"])).returncode == 0
    assert finish(client)[0] == 0
    # Ids are never reused, not even those of rules removed before the restart.
    assert add_rule(again, "--method", "PUT") == gone + 1


def test_a_held_task_outlives_shortened_timeouts(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"), "--idle-timeout", "1", "--header-timeout", "1",
                        "--upstream-timeout", "1", "--connect-timeout", "1", "--tunnel-idle-timeout", "1",
                        "--allow-connect-port", str(fresh_origin.port))
    add_rule(proxy, "--host", "127.0.0.1")
    body = bytes(range(256)) * 800  # 200 KiB: more than the upload queue takes before it holds reads
    path = tmp_path / "body.bin"
    path.write_bytes(body)
    upload = start_curl(proxy, "--data-binary", f"@{path}", fresh_origin.url("/upload"), stdout=subprocess.PIPE)
    download = start_curl(proxy, fresh_origin.url("/bytes/50000"), stdout=subprocess.PIPE)
    tunnel = start_curl(proxy, "-p", fresh_origin.url("/bytes/60000"), stdout=subprocess.PIPE)
    wait_held(proxy, count=3)
    time.sleep(4)  # four times every timeout
    assert upload.poll() is None and download.poll() is None and tunnel.poll() is None
    assert len(held_tasks(proxy)) == 3 and fresh_origin.connections == 0
    assert ctl(proxy, "resume", "--all").returncode == 0
    rc, out, err = finish(upload)
    assert rc == 0, err
    answer = json.loads(out)
    assert answer["length"] == len(body) and answer["sha256"] == hashlib.sha256(body).hexdigest()
    rc, out, err = finish(download)
    assert rc == 0 and hashlib.sha256(out).hexdigest() == payload_sha256(50000), err
    rc, out, err = finish(tunnel)
    assert rc == 0 and hashlib.sha256(out).hexdigest() == payload_sha256(60000), err


def test_bad_rules_are_refused_with_a_reason(start_proxy, tmp_path):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    cases = [
        ((), "needs a condition"),
        (("--url", "(a+)+b"), "exponential"),
        (("--url", "["), "not a valid regular expression"),
        (("--host", "bad host!"), "host:"),
        (("--kind", "tunnel"), "expected data, upload, stream or download"),
        (("--method", "GE T"), "method:"),
        (("--all", "--host", "x.org"), "takes no other condition"),
    ]
    for args, needle in cases:
        r = ctl(proxy, "hold", "add", *args)
        assert r.returncode == 2 and needle in r.stderr, (args, r.returncode, r.stderr)
    status, body = proxy.api("POST", "/v1/holds", {"url": "("})
    assert status == 400 and "regular expression" in body["error"]
    status, body = proxy.api("POST", "/v1/holds", {"kind": "data", "once": True})
    assert status == 201 and body["id"] == 1 and body["once"] is True and body["kind"] == "data"
    status, body = proxy.api("DELETE", "/v1/holds/99")
    assert status == 404 and "no hold rule with id 99" in body["error"]
    r = ctl(proxy, "hold", "rm", "99")
    assert r.returncode == 1 and "no hold rule with id 99" in r.stderr
    status, body = proxy.api("PUT", "/v1/holds")
    assert status == 405
    status, body = proxy.api("DELETE", "/v1/holds/1")
    assert status == 200 and body["id"] == 1
    status, body = proxy.api("GET", "/v1/holds")
    assert status == 200 and body == {"holds": []}


def test_a_download_is_held_and_stays_held_across_a_restart(start_proxy, tmp_path, fresh_origin):
    state, downloads = tmp_path / "state", tmp_path / "downloads"
    args = ("--state-dir", str(state), "--download-dir", str(downloads))
    proxy = start_proxy(*args)
    rule = add_rule(proxy, "--kind", "download")
    n = 200_000
    target = tmp_path / "file.bin"
    r = ctl(proxy, "download", fresh_origin.url(f"/bytes/{n}"), "-o", str(target))
    assert r.returncode == 0, r.stderr
    task_id = int(r.stdout.strip())
    record = proxy.task(task_id)
    assert record["state"] == "suspended" and record["heldBy"] == rule
    time.sleep(1)
    assert fresh_origin.connections == 0
    # A proxied request is not a download: it passes.
    assert curl(proxy, fresh_origin.url("/bytes/10")).stdout == payload(10)
    proxy.stop(by_test=True)

    again = start_proxy(*args)
    again.wait_control_ready()
    record = again.task(task_id)
    assert record["state"] == "suspended" and record["heldBy"] == rule, record
    [listed] = json.loads(ctl(again, "hold", "list", "--json").stdout)["holds"]
    assert listed["caught"] == 1, "a restored download was caught again"
    assert ctl(again, "resume", str(task_id)).returncode == 0
    done = wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(again.task(task_id)), 60,
                    message="the download to complete")
    assert done["error"] is None and done["heldBy"] is None
    assert hashlib.sha256(target.read_bytes()).hexdigest() == payload_sha256(n)


def test_a_client_that_leaves_while_held_ends_its_task(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--url", "/bytes/")
    client = start_curl(proxy, fresh_origin.url("/bytes/100"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    client.kill()
    client.wait()
    record = wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(proxy.task(task["id"])), 20,
                      message="the held task to end with its client")
    assert record["errorCode"] == "client-closed", record
    assert fresh_origin.connections == 0


def test_a_held_tunnel_whose_client_half_closes_with_nothing_sent_ends(start_proxy, tmp_path, fresh_origin):
    """A client that sends its CONNECT and then its FIN, nothing else, while the tunnel is held has
    gone as far as the proxy can tell (a half-close looks like a close until something is
    written): the task ends, client-closed, and its descriptor is freed without a resume. A client
    that sent bytes for the tunnel before half-closing stays held, and the resume carries them and
    the half-close to the origin and the answer back."""
    proxy = start_proxy("--state-dir", str(tmp_path / "state"), "--allow-connect-port", str(fresh_origin.port))
    add_rule(proxy, "--kind", "stream")
    connect = f"CONNECT {fresh_origin.host} HTTP/1.1\r\nHost: {fresh_origin.host}\r\n\r\n".encode()
    with RawConn(proxy.port) as c:
        c.send(connect)
        [task] = wait_held(proxy)
        c.sock.shutdown(socket.SHUT_WR)
        record = wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(proxy.task(task["id"])), 20,
                          message="the held tunnel to end with its client's half-close")
        assert record["errorCode"] == "client-closed", record
        assert c.wait_closed(timeout=10), "the connection stayed open"
        wait_for(lambda: client_descriptors(proxy) == 0, timeout=10, message="the daemon to close the connection")
    assert fresh_origin.connections == 0

    with RawConn(proxy.port) as c:
        c.send(connect + b"GET /bytes/10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        [task] = wait_held(proxy)
        c.sock.shutdown(socket.SHUT_WR)
        time.sleep(1.5)  # time the half-close would have needed to end it
        assert proxy.task(task["id"])["state"] == "suspended"
        assert ctl(proxy, "resume", str(task["id"])).returncode == 0
        assert c.read_response(head=True).status == 200
        resp = c.read_response()
        assert resp.status == 200 and resp.body == payload(10), (resp.status, resp.body[:200])
    assert fresh_origin.connections == 1
