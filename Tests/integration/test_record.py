"""Recorded bodies (issue 37, its first part): `afproxyctl record HOST[/PATH]` keeps the bodies of
new tasks to that host in the state directory (files 0600 in a 0700 directory), up to `--max`
each; `afproxyctl body ID [--request]` and `GET /v1/tasks/{id}/body` give them back byte for byte
as they passed (SHA-256 against what the origin sent or got): a body over the limit kept cut and
marked, a chunked response, a gzip-coded one as coded, uploads (Content-Length and chunked),
requests inside an intercepted connection; HAR carries them (text, or base64 for bytes);
`record-max-total` removes the oldest first; no rule, no file and a clear 404; rules kept across a
restart; bad input answered precisely."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

from helpers import ca_path, ctl, curl, wait_for
from origin import GZIP_BODY, GZIP_PLAIN, payload, payload_sha256
from test_intercept import intercepting  # noqa: F401 (a fixture)
from test_rules import fresh_origin  # noqa: F401 (a fixture: an origin whose requests are this test's alone)

MiB = 1024 * 1024


def body(proxy, task_id: int, *args: str) -> bytes:
    """`afproxyctl body ID ARGS` into a file, its bytes."""
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "body"
        r = ctl(proxy, "body", str(task_id), *args, "-o", str(out))
        assert r.returncode == 0, r.stderr
        return out.read_bytes()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_bodies_are_kept_byte_exact_up_to_the_limit(proxy, origin, tmp_path):
    r = ctl(proxy, "record", "127.0.0.1", "--max", "1MiB")
    assert r.returncode == 0 and r.stdout.strip().isdigit(), r
    rule = int(r.stdout)
    listed = ctl(proxy, "record", "--list")
    assert listed.stdout.split("\n")[1].split() == [str(rule), "127.0.0.1", "*", "1MiB", "request+response"], listed

    big = 3 * MiB + 5
    got = curl(proxy, "-o", str(tmp_path / "big"), origin.url(f"/bytes/{big}"))
    assert got.returncode == 0 and sha((tmp_path / "big").read_bytes()) == payload_sha256(big)  # the client: whole
    small = curl(proxy, origin.url("/chunked/70000"))
    assert small.returncode == 0 and len(small.stdout) == 70000
    coded = curl(proxy, origin.url("/gzip"))
    assert coded.stdout == GZIP_BODY
    upload = os.urandom(300_000)
    posted = curl(proxy, "--data-binary", "@-", "-H", "Content-Type: application/octet-stream",
                  origin.url("/upload"), input=upload)
    assert json.loads(posted.stdout)["sha256"] == sha(upload)
    chunked = curl(proxy, "--data-binary", "@-", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: text/plain",
                   origin.url("/upload"), input=b"hello " * 1000)
    assert json.loads(chunked.stdout)["chunked"] is True

    by_url = {t["url"]: t for t in proxy.tasks(all=True)}
    big_task = by_url[origin.url(f"/bytes/{big}")]
    assert big_task["bodies"]["response"] == {"rule": rule, "size": MiB, "seen": big, "cut": True,
                                              "cutBy": "limit"}, big_task["bodies"]
    assert big_task["bodies"]["request"] is None  # a GET sends none
    assert body(proxy, big_task["id"]) == payload(big)[:MiB]
    r = ctl(proxy, "body", str(big_task["id"]), "-o", str(tmp_path / "cut"))
    assert f"kept cut: {MiB} of {big} bytes (limit)" in r.stderr, r.stderr

    chunked_task = by_url[origin.url("/chunked/70000")]
    assert body(proxy, chunked_task["id"]) == small.stdout
    assert chunked_task["bodies"]["response"]["cut"] is False
    gzip_task = by_url[origin.url("/gzip")]
    assert body(proxy, gzip_task["id"]) == GZIP_BODY  # as it passed, still coded
    assert body(proxy, gzip_task["id"], "--decoded") == GZIP_PLAIN  # decoded for reading only
    plain_task = by_url[origin.url("/chunked/70000")]
    assert body(proxy, plain_task["id"], "--decoded") == small.stdout  # no coding: as it passed
    uploads = [t for t in proxy.tasks(all=True) if t["url"] == origin.url("/upload")]
    assert body(proxy, uploads[0]["id"], "--request") == upload
    assert body(proxy, uploads[1]["id"], "--request") == b"hello " * 1000
    assert json.loads(body(proxy, uploads[0]["id"]))["sha256"] == sha(upload)  # and its response

    # The API: the task's own Content-Type, and the side asked for.
    status, answer = proxy.api("GET", f"/v1/tasks/{uploads[1]['id']}/body?side=request")
    assert (status, answer) == (200, "hello " * 1000)
    files = Path(proxy.state_dir) / "afproxy/bodies"
    assert stat.S_IMODE(files.stat().st_mode) == 0o700
    kept = sorted(files.iterdir())
    assert kept and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in kept), kept
    assert sum(f.stat().st_size for f in kept) == MiB + 70000 + len(GZIP_BODY) + 300_000 + 6000 + sum(
        len(body(proxy, t["id"])) for t in uploads)
    status = ctl(proxy, "status").stdout
    assert "recording 1 rule, 7 bodies kept" in status, status


def test_har_carries_the_recorded_bodies(proxy, origin):
    assert ctl(proxy, "record", "127.0.0.1/upload", "--request-only").returncode == 0
    data = bytes(range(256)) * 40
    curl(proxy, "--data-binary", "@-", origin.url("/upload"), input=data)
    curl(proxy, "--data-binary", "name=a&b=c", origin.url("/upload"))
    curl(proxy, origin.url("/bytes/100"))  # not under /upload: nothing kept
    har = json.loads(ctl(proxy, "har", "--all").stdout)
    entries = {e["_taskId"]: e for e in har["log"]["entries"]}
    posted = [e for e in entries.values() if e["request"]["url"].endswith("/upload")]
    binary = posted[0]["request"]["postData"]
    assert binary["_encoding"] == "base64" and base64.b64decode(binary["text"]) == data, binary
    assert posted[1]["request"]["postData"]["text"] == "name=a&b=c"
    assert all("text" not in e["response"]["content"] for e in posted)  # --request-only
    plain = next(e for e in entries.values() if e["request"]["url"].endswith("/bytes/100"))
    assert "postData" not in plain["request"] and plain["response"]["content"]["comment"] == "bodies are not recorded"
    assert plain["_taskId"] and proxy.task(plain["_taskId"])["bodies"] is None


def test_responses_in_har_and_the_total_bound(start_proxy, origin):
    proxy = start_proxy("--record-max-total", "256K")
    assert ctl(proxy, "record", "127.0.0.1", "--max", "200K").returncode == 0
    for n in range(6):
        assert curl(proxy, origin.url(f"/bytes/{100_000 + n}")).returncode == 0
    tasks = sorted(proxy.tasks(all=True), key=lambda t: t["id"])
    files = Path(proxy.state_dir) / "afproxy/bodies"
    wait_for(lambda: sum(f.stat().st_size for f in files.iterdir()) <= 256 * 1024 and len(list(files.iterdir())) == 2,
             timeout=30, message="the oldest bodies removed")
    # The two newest kept whole, the others removed first: the API says so.
    for task in tasks[-2:]:
        assert body(proxy, task["id"]) == payload(task["download"]["completed"])
    status, answer = proxy.api("GET", f"/v1/tasks/{tasks[0]['id']}/body")
    assert status == 410 and "record-max-total" in answer["error"], answer
    har = json.loads(ctl(proxy, "har", "--all").stdout)
    newest = next(e for e in har["log"]["entries"] if e["_taskId"] == tasks[-1]["id"])
    content = newest["response"]["content"]
    assert content["encoding"] == "base64" and base64.b64decode(content["text"]) == payload(100_005)
    assert "comment" not in content or content["comment"] is None


def test_without_a_rule_nothing_is_kept_and_the_answers_say_why(start_proxy, origin, tmp_path):
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    proxy = start_proxy(env=state)
    curl(proxy, origin.url("/bytes/1000"))
    task = proxy.tasks(all=True)[0]
    assert task["bodies"] is None
    r = ctl(proxy, "body", str(task["id"]))
    assert r.returncode == 1 and "no record rule named it" in r.stderr, r
    bodies = tmp_path / "state/afproxy/bodies"
    assert not bodies.exists() or not list(bodies.iterdir())
    assert "recording" not in ctl(proxy, "status").stdout
    r = ctl(proxy, "body", "999")
    assert r.returncode == 1 and "no task with id 999" in r.stderr, r
    status, answer = proxy.api("GET", f"/v1/tasks/{task['id']}/body?side=both")
    assert status == 400 and "side must be request or response" in answer["error"]

    # Bad rules: refused before anything is sent, or by the daemon with its reason.
    r = ctl(proxy, "record", "bad..host")
    assert r.returncode == 2 and "expected a host name" in r.stderr, r
    r = ctl(proxy, "record", "127.0.0.1", "--max", "100MiB")
    assert r.returncode == 1 and "max must be from 1 byte to" in r.stderr, r
    r = ctl(proxy, "record", "127.0.0.1", "--request-only", "--response-only")
    assert r.returncode == 2, r
    r = ctl(proxy, "record", "--remove", "42")
    assert r.returncode == 1 and "no record rule with id 42" in r.stderr, r

    # A rule is kept across a restart; removed, nothing more is kept.
    rule = ctl(proxy, "record", "127.0.0.1/bytes/").stdout.strip()
    proxy.stop(by_test=True)
    again = start_proxy(control_socket=proxy.control_socket, env=state)
    assert ctl(again, "record", "--list").stdout.split("\n")[1].split()[:3] == [rule, "127.0.0.1", "/bytes/"]
    curl(again, origin.url("/bytes/10"))
    first = again.tasks(all=True)[0]
    assert body(again, first["id"]) == payload(10)
    assert ctl(again, "record", "--remove", rule).returncode == 0
    curl(again, origin.url("/bytes/11"))
    assert [t["bodies"] for t in again.tasks(all=True) if t["url"].endswith("/bytes/11")] == [None]


def test_bodies_inside_an_intercepted_connection_are_kept_as_the_client_saw_them(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    assert ctl(proxy, "record", "127.0.0.1").returncode == 0
    got = curl(proxy, "--cacert", ca, tls_origin.url("/bytes/200000"))
    assert got.returncode == 0 and sha(got.stdout) == payload_sha256(200000), got.stderr
    upload = os.urandom(50_000)
    posted = curl(proxy, "--cacert", ca, "--data-binary", "@-", tls_origin.url("/upload"), input=upload)
    assert json.loads(posted.stdout)["sha256"] == sha(upload)
    tasks = {t["url"]: t for t in proxy.tasks(all=True) if t["kind"] != "stream"}
    fetched = tasks[tls_origin.url("/bytes/200000")]
    assert fetched["parent"] is not None and fetched["bodies"]["response"]["size"] == 200000
    assert body(proxy, fetched["id"]) == got.stdout
    sent = tasks[tls_origin.url("/upload")]
    assert body(proxy, sent["id"], "--request") == upload
    assert body(proxy, sent["id"]) == posted.stdout
    # The connection itself is a stream task: its bytes are TLS, nothing of it is kept.
    assert all(t["bodies"] is None for t in proxy.tasks(all=True) if t["kind"] == "stream")


def test_replay_sends_the_request_again_with_its_recorded_body(proxy, fresh_origin):
    origin = fresh_origin
    assert ctl(proxy, "record", "127.0.0.1").returncode == 0
    upload = os.urandom(120_000)
    posted = curl(proxy, "--data-binary", "@-", "-H", "X-Run: one", origin.url("/upload"), input=upload)
    assert json.loads(posted.stdout)["sha256"] == sha(upload)
    first = next(t for t in proxy.tasks(all=True) if t["url"] == origin.url("/upload"))

    r = ctl(proxy, "replay", str(first["id"]), "--times", "2")
    assert r.returncode == 0, r
    lines = [line.split() for line in r.stdout.splitlines()]
    assert [status for _, status in lines] == ["200", "200"], r.stdout
    for new_id, _ in lines:
        replayed = proxy.task(int(new_id))
        assert replayed["replayOf"] == first["id"] and replayed["client"] == "afproxy replay", replayed
        assert first["clientHTTPVersion"] == "1.1" and replayed["clientHTTPVersion"] is None, replayed
        assert replayed["method"] == "POST" and replayed["upload"]["completed"] == len(upload)
        answer = json.loads(body(proxy, int(new_id)))  # the origin's answer, recorded as any
        assert (answer["length"], answer["sha256"]) == (len(upload), sha(upload)), answer
        assert answer["headers"]["x-run"] == "one"
    uploads = [q for q in origin.requests if q.path == "/upload"]
    assert len(uploads) == 3, [q.path for q in origin.requests]

    # A GET, through the API: 201 with the new task.
    curl(proxy, origin.url("/bytes/500"))
    get = next(t for t in proxy.tasks(all=True) if t["url"] == origin.url("/bytes/500"))
    status, created = proxy.api("POST", f"/v1/tasks/{get['id']}/replay")
    assert status == 201 and created["replayOf"] == get["id"] and created["method"] == "GET", created


def test_replay_refuses_what_it_cannot_send_again(proxy, origin):
    # Not recorded: the body is not there to send.
    curl(proxy, "--data-binary", "x" * 100, origin.url("/upload"))
    upload = next(t for t in proxy.tasks(all=True) if t["kind"] == "upload")
    r = ctl(proxy, "replay", str(upload["id"]))
    assert r.returncode == 1 and "request body was not recorded whole" in r.stderr, r
    # Recorded cut: not whole either.
    assert ctl(proxy, "record", "127.0.0.1", "--max", "10").returncode == 0
    curl(proxy, "--data-binary", "y" * 100, origin.url("/upload"))
    cut = [t for t in proxy.tasks(all=True) if t["kind"] == "upload"][-1]
    assert cut["bodies"]["request"]["cut"] is True
    assert "not recorded whole" in ctl(proxy, "replay", str(cut["id"])).stderr
    r = ctl(proxy, "replay", "999")
    assert r.returncode == 1 and "no task with id 999" in r.stderr, r
    assert ctl(proxy, "replay", "1", "--times", "0").returncode == 2
    assert len([t for t in proxy.tasks(all=True) if t.get("replayOf")]) == 0
