"""Edits at a hold (issue 37): `afproxyctl edit ID` changes a held request — method, path and
query, header fields, the body — before `resume` sends it, proven on the origin's side (it sees
the edited request, byte for byte); `afproxyctl respond ID` answers a held request from the proxy
and the origin never sees it; every change is listed on the task (`edits`, `show`, HAR) and in
the `edited` event; bad input is answered precisely (a task that is not held 409, an unknown id
404, a body file that does not exist, fields the proxy owns, a wrong status) and leaves the task
held."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import subprocess

from helpers import EventStream, ctl, curl, start_curl, wait_for
from origin import payload
from test_hold import add_rule, finish, wait_held
from test_rules import fresh_origin  # noqa: F401 (a fixture: an origin whose requests are this test's alone)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_an_edited_request_reaches_the_origin_as_edited(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/upload")
    new_body = os.urandom(200_000)
    (tmp_path / "body.bin").write_bytes(new_body)
    with EventStream(proxy.control_socket) as events:
        client = start_curl(proxy, "--data-binary", "the client's own body", "-H", "X-Drop: secret-ish",
                            "-H", "X-Keep: 1", "-H", "Authorization: Bearer s3cret", fresh_origin.url("/upload?n=1"),
                            stdout=subprocess.PIPE)
        [task] = wait_held(proxy)
        task_id = task["id"]
        r = ctl(proxy, "edit", str(task_id), "--method", "PUT", "--path", "/upload?n=2",
                "--header", "X-Edited: yes", "--header", "Authorization: Bearer other",
                "--remove-header", "X-Drop", "--body", f"@{tmp_path / 'body.bin'}")
        assert r.returncode == 0, r.stderr
        assert "method POST → PUT" in r.stdout and "removed header X-Drop" in r.stdout, r.stdout
        assert "Bearer other" not in r.stdout and "Authorization: <redacted>" in r.stdout, r.stdout
        edited = proxy.task(task_id)
        assert edited["state"] == "suspended" and edited["heldBy"] is not None  # still held
        assert edited["method"] == "PUT" and edited["url"].endswith("/upload?n=2")
        assert not fresh_origin.requests, "nothing went upstream before the resume"
        wait_for(lambda: "edited" in [e["event"] for e in events.for_task(task_id)], 10,
                 message="the edited event")

        assert ctl(proxy, "resume", str(task_id)).returncode == 0
        rc, out, err = finish(client)
    assert rc == 0, err
    got = json.loads(out)
    assert got["method"] == "PUT" and got["length"] == len(new_body) and got["sha256"] == sha(new_body), got
    headers = {name.lower(): value for name, value in got["headers"].items()}
    assert headers.get("x-edited") == "yes" and headers.get("x-keep") == "1", headers
    assert "x-drop" not in headers and headers.get("authorization") == "Bearer other", headers
    assert fresh_origin.last_request.target == "/upload?n=2"

    record = proxy.history_record(fresh_origin.url("/upload?n=2"))
    assert record["status"] == 200 and record["upload"]["completed"] == len(new_body), record
    changes = [(e["side"], e["change"]) for e in record["edits"]]
    assert changes == [
        ("request", "method POST → PUT"),
        ("request", "path /upload?n=1 → /upload?n=2"),
        ("request", "removed header X-Drop"),
        ("request", "set header X-Edited: yes"),
        ("request", "set header Authorization: <redacted>"),
        ("request", f"body replaced ({len(new_body)} bytes)"),
    ], changes
    shown = ctl(proxy, "show", str(task_id))
    assert "edits" in shown.stdout and "request: body replaced" in shown.stdout, shown.stdout
    har = json.loads(ctl(proxy, "har", str(task_id)).stdout)
    [entry] = [e for e in har["log"]["entries"] if e["_taskId"] == task_id]
    assert [e["change"] for e in entry["_edits"]] == [c for _, c in changes]


def test_a_recorded_request_body_is_the_edited_one(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    assert ctl(proxy, "record", "127.0.0.1").returncode == 0
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/upload")
    client = start_curl(proxy, "--data-binary", "x" * 5000, fresh_origin.url("/upload"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert ctl(proxy, "edit", str(task["id"]), "--body", '{"edited": true}').returncode == 0
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    rc, out, err = finish(client)
    assert rc == 0 and json.loads(out)["sha256"] == sha(b'{"edited": true}'), (out, err)
    kept = ctl(proxy, "body", str(task["id"]), "--request")
    assert kept.returncode == 0 and kept.stdout == '{"edited": true}', kept


def test_respond_answers_from_the_proxy_and_the_origin_never_sees_it(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/bytes/", "--once")
    held_url = fresh_origin.url("/bytes/1000")
    next_url = fresh_origin.url("/bytes/2000")
    (tmp_path / "answer.json").write_text('{"down": "for maintenance"}')
    # Two requests on one connection: the answered one, then one that goes to the origin.
    client = start_curl(proxy, "-sS", "-D", "-", held_url, next_url, stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    r = ctl(proxy, "respond", str(task["id"]), "--status", "503", "--header", "Content-Type: application/json",
            "--header", "Retry-After: 120", "--body", f"@{tmp_path / 'answer.json'}")
    assert r.returncode == 0 and r.stdout.strip() == f"{task['id']} answered 503", r
    rc, out, err = finish(client)
    assert rc == 0, err
    first, _, rest = out.partition(b'{"down": "for maintenance"}')
    assert first.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), out[:300]
    assert b"Retry-After: 120" in first and b"Content-Length: 27" in first, first
    assert rest.startswith(b"HTTP/1.1 200") and rest.endswith(payload(2000)), rest[:200]
    assert [r.target for r in fresh_origin.requests] == ["/bytes/2000"], "the answered request never reached the origin"
    assert fresh_origin.connections == 1

    record = proxy.history_record(held_url)
    assert record["state"] == "completed" and record["status"] == 503 and record["error"] is None, record
    assert record["download"]["completed"] == 27
    assert [(e["side"], e["change"]) for e in record["edits"]] == [("response", "answered by afproxy: 503")]


def test_respond_to_a_request_whose_body_was_not_read_closes_its_connection(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/upload")
    host, port = "127.0.0.1", proxy.port
    body = os.urandom(3 * 1024 * 1024)
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.putrequest("POST", fresh_origin.url("/upload"), skip_host=True)
    conn.putheader("Host", fresh_origin.host)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    conn.sock.sendall(body[:65536])  # more waits in the client: the held task reads none of it
    [task] = wait_held(proxy)
    assert ctl(proxy, "respond", str(task["id"]), "--status", "403", "--body", "no uploads now").returncode == 0
    response = conn.getresponse()
    assert response.status == 403 and response.read() == b"no uploads now"
    assert response.getheader("Connection", "").lower() == "close" or response.will_close
    conn.close()
    assert not fresh_origin.requests and fresh_origin.connections == 0
    record = proxy.history_record(fresh_origin.url("/upload"))
    assert record["status"] == 403 and record["state"] == "completed"


def test_bad_edits_are_refused_and_the_task_stays_held(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/bytes/")
    url = fresh_origin.url("/bytes/500")
    client = start_curl(proxy, url, stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    task_id = str(task["id"])

    missing = ctl(proxy, "edit", task_id, "--body", f"@{tmp_path / 'nowhere.json'}")
    assert missing.returncode == 1 and "nowhere.json: No such file or directory" in missing.stderr, missing
    for args, reason in [
        (["--header", "Host: elsewhere.test"], "Host is written by the proxy"),
        (["--remove-header", "Content-Length"], "Content-Length is written by the proxy"),
        (["--method", "HEAD"], "a HEAD stays a HEAD"),
        (["--path", "no-slash"], "is not a path and query"),
        (["--path", "/a b"], "is not a path and query"),
    ]:
        r = ctl(proxy, "edit", task_id, *args)
        assert r.returncode == 1 and reason in r.stderr, (args, r)
    assert ctl(proxy, "edit", task_id).returncode == 2  # nothing named: a usage error
    assert ctl(proxy, "respond", task_id, "--status", "99").returncode == 2
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task_id}/request", {"body": "not base64!"})
    assert status == 400 and "base64" in answer["error"], answer
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task_id}/request", {})
    assert status == 400, answer
    status, answer = proxy.api("POST", f"/v1/tasks/{task_id}/respond", {"status": 204, "body": "eA=="})
    assert status == 400 and "has no body" in answer["error"], answer
    status, answer = proxy.api("PATCH", "/v1/tasks/999999/request", {"method": "PUT"})
    assert status == 404, answer
    assert ctl(proxy, "edit", "999999", "--method", "PUT").returncode == 1

    still = proxy.task(task["id"])
    assert still["heldBy"] is not None and still["edits"] == [] and still["method"] == "GET"
    assert ctl(proxy, "resume", task_id).returncode == 0
    rc, out, err = finish(client)
    assert rc == 0 and len(out) == 500, err
    # Completed now: not held, 409.
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task_id}/request", {"method": "PUT"})
    assert status == 409 and "cannot edit a task that is completed" in answer["error"], answer
    status, answer = proxy.api("POST", f"/v1/tasks/{task_id}/respond", {"status": 200})
    assert status == 409, answer


def test_a_running_or_suspended_task_is_not_editable(proxy, origin):
    url = origin.url("/slowbody/400000")
    client = start_curl(proxy, url, stdout=subprocess.DEVNULL)
    task = wait_for(lambda: next((t for t in proxy.tasks() if t["url"] == url), None), 20)
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task['id']}/request", {"method": "PUT"})
    assert status == 409 and "cannot edit a task that is running" in answer["error"], answer
    assert ctl(proxy, "suspend", str(task["id"])).returncode == 0
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task['id']}/request", {"method": "PUT"})
    assert status == 409 and "suspended, not held" in answer["error"], answer
    ctl(proxy, "cancel", str(task["id"]))
    client.wait(30)


def test_replay_takes_the_same_edits(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    first = curl(proxy, "--data-binary", "unrecorded", "-H", "X-Run: 1", fresh_origin.url("/upload"))
    assert first.returncode == 0
    original = proxy.history_record(fresh_origin.url("/upload"))
    refused = ctl(proxy, "replay", str(original["id"]))
    assert refused.returncode == 1 and "was not recorded whole" in refused.stderr, refused
    # With a body of its own it is another request that can be sent: the edit says so.
    r = ctl(proxy, "replay", str(original["id"]), "--method", "PUT", "--header", "X-Run: 2",
            "--body", "a new body", "--json")
    assert r.returncode == 0, r.stderr
    replayed = json.loads(r.stdout)
    assert replayed["replayOf"] == original["id"] and replayed["status"] == 200 and replayed["method"] == "PUT"
    assert [e["change"] for e in replayed["edits"]] == [
        "method POST → PUT", "set header X-Run: 2", "body replaced (10 bytes)"]
    got = fresh_origin.last_request
    assert got.method == "PUT" and got.header("x-run") == "2"
    assert replayed["upload"]["completed"] == 10
    bad = ctl(proxy, "replay", str(original["id"]), "--header", "Content-Length: 3", "--body", "x")
    assert bad.returncode == 1 and "Content-Length is written by the proxy" in bad.stderr, bad


def test_a_response_hold_changes_what_the_client_gets(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    rule = add_rule(proxy, "--host", "127.0.0.1", "--url", "/bytes/", "--response")
    assert "response" in ctl(proxy, "hold", "list").stdout
    n = 200_000
    client = start_curl(proxy, "-sS", "-D", "-", fresh_origin.url(f"/bytes/{n}"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert task["heldBy"] == rule and task["status"] == 200 and task["download"]["completed"] == 0, task
    assert [r.target for r in fresh_origin.requests] == [f"/bytes/{n}"]  # the request went; the answer waits
    # The request went already: only the response can be changed.
    r = ctl(proxy, "edit", str(task["id"]), "--method", "PUT")
    assert r.returncode == 1 and "held at its response" in r.stderr, r
    status, answer = proxy.api("PATCH", f"/v1/tasks/{task['id']}/request", {"method": "PUT"})
    assert status == 409 and "held at its response" in answer["error"], answer
    r = ctl(proxy, "edit", str(task["id"]), "--status", "203", "--header", "X-Held: yes",
            "--remove-header", "Content-Type")
    assert r.returncode == 0 and "status 200 → 203" in r.stdout, r
    bad = ctl(proxy, "edit", str(task["id"]), "--status", "204")
    assert bad.returncode == 1 and "give the body too" in bad.stderr, bad
    assert client.poll() is None
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    rc, out, err = finish(client)
    assert rc == 0, err
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 203") and b"X-Held: yes" in head and b"Content-Type" not in head, head
    assert body == payload(n)
    record = proxy.history_record(fresh_origin.url(f"/bytes/{n}"))
    assert record["status"] == 203 and record["download"]["completed"] == n
    assert [e["change"] for e in record["edits"]] == [
        "status 200 → 203", "removed header Content-Type", "set header X-Held: yes"]


def test_a_held_response_replaced_answered_or_canceled(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    add_rule(proxy, "--host", "127.0.0.1", "--url", "/bytes/", "--response")

    # A new body: the edited head and that body are the answer, the origin's is dropped.
    client = start_curl(proxy, "-sS", "-D", "-", fresh_origin.url("/bytes/100000"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert ctl(proxy, "edit", str(task["id"]), "--header", "X-Edited: 1", "--body", "replaced").returncode == 0
    rc, out, err = finish(client)
    head, _, body = out.partition(b"\r\n\r\n")
    assert rc == 0 and head.startswith(b"HTTP/1.1 200") and b"X-Edited: 1" in head and body == b"replaced", out[:300]
    assert b"Content-Length: 8" in head

    # respond at a response hold: the proxy's answer instead of the origin's.
    client = start_curl(proxy, "-sS", "-w", "%{http_code}", fresh_origin.url("/bytes/100001"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert ctl(proxy, "respond", str(task["id"]), "--status", "502", "--body", "held and answered").returncode == 0
    rc, out, _ = finish(client)
    assert rc == 0 and out == b"held and answered502", out

    # A short body ends its transfer while held: the release still sends it whole.
    client = start_curl(proxy, "-sS", fresh_origin.url("/bytes/10"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    assert ctl(proxy, "resume", str(task["id"])).returncode == 0
    rc, out, _ = finish(client)
    assert rc == 0 and out == payload(10)

    # A cancel while held: the client gets the cancel's 503, never the held head.
    client = start_curl(proxy, "-sS", "-w", "%{http_code}", fresh_origin.url("/bytes/11"), stdout=subprocess.PIPE)
    [task] = wait_held(proxy)
    wait_for(lambda: proxy.task(task["id"])["download"]["completed"] == 0, 5)
    assert ctl(proxy, "cancel", str(task["id"])).returncode == 0
    rc, out, _ = finish(client)
    assert out.endswith(b"503"), out
    record = proxy.history_record(fresh_origin.url("/bytes/11"))
    assert record["errorCode"] == "canceled", record
