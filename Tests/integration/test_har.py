"""HAR 1.2 export (`afproxyctl har`, `GET /v1/har`) of real traffic, read by a real HAR consumer.

One run makes every kind of entry through the daemon: a data GET, a second GET on the same
upstream connection (reused: no dns/connect), an upload POST, a CONNECT tunnel (`curl -p`), a
request to a closed port, and a slow download suspended while the log is taken. The file that
`afproxyctl har --all -o FILE` writes is read with PyPI's haralyzer and checked against the HAR 1.2
field list, the bytes curl sent and received, and the rule that `time` is the sum of the timings.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from haralyzer import HarParser

from helpers import closed_port, ctl, curl, live_task, start_curl, wait_for

# HAR 1.2's required fields and their JSON types (http://www.softwareishard.com/blog/har-12-spec/).
REQUIRED = {
    "log": {"version": str, "creator": dict, "entries": list},
    "creator": {"name": str, "version": str},
    "entry": {"startedDateTime": str, "time": (int, float), "request": dict, "response": dict, "cache": dict,
              "timings": dict},
    "request": {"method": str, "url": str, "httpVersion": str, "cookies": list, "headers": list,
                "queryString": list, "headersSize": int, "bodySize": int},
    "response": {"status": int, "statusText": str, "httpVersion": str, "cookies": list, "headers": list,
                 "content": dict, "redirectURL": str, "headersSize": int, "bodySize": int},
    "content": {"size": int, "mimeType": str},
    "timings": {"send": (int, float), "wait": (int, float), "receive": (int, float)},
    "nameValue": {"name": str, "value": str},
}
OPTIONAL_TIMINGS = ("blocked", "dns", "connect", "ssl")
AFPROXY_FIELDS = ("_taskId", "_kind", "_state", "_resumes", "_client", "_failureCode", "_error", "_file")
STARTED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$")


def has_required(obj: dict, kind: str, where: str) -> None:
    for name, types in REQUIRED[kind].items():
        assert name in obj, f"{where}: required field {name!r} missing: {json.dumps(obj)[:500]}"
        value = obj[name]
        assert isinstance(value, types) and not isinstance(value, bool), f"{where}.{name}: {value!r}"


def check_entry(entry: dict, where: str) -> None:
    has_required(entry, "entry", where)
    has_required(entry["request"], "request", f"{where}.request")
    has_required(entry["response"], "response", f"{where}.response")
    has_required(entry["response"]["content"], "content", f"{where}.response.content")
    has_required(entry["timings"], "timings", f"{where}.timings")
    for part in ("request", "response"):
        for header in entry[part]["headers"]:
            has_required(header, "nameValue", f"{where}.{part}.headers")
    for param in entry["request"]["queryString"]:
        has_required(param, "nameValue", f"{where}.request.queryString")
    assert STARTED.match(entry["startedDateTime"]), entry["startedDateTime"]
    timings = entry["timings"]
    for name in ("send", "wait", "receive"):
        assert timings[name] >= 0, f"{where}.timings.{name} must not be negative: {timings}"
    for name in OPTIONAL_TIMINGS:
        assert timings[name] == -1 or timings[name] >= 0, f"{where}.timings.{name}: {timings}"
    if timings["ssl"] >= 0:
        assert timings["connect"] >= timings["ssl"], f"{where}: ssl is part of connect: {timings}"
    counted = [timings[name] for name in ("blocked", "dns", "connect", "send", "wait", "receive")]
    assert abs(entry["time"] - sum(v for v in counted if v >= 0)) <= 1, f"{where}: time {entry['time']} ≠ {timings}"
    for name in AFPROXY_FIELDS:
        assert name in entry, f"{where}: {name} missing"


def sent_blocks(verbose: str) -> list[int]:
    """The bytes of each request head curl sent, from its `-v` lines (`> ` + the line with its CR)."""
    blocks, size = [], 0
    for line in verbose.split("\n"):
        if not line.startswith("> "):
            continue
        size += len(line[2:].encode()) + 1
        if line[2:] == "\r":
            blocks.append(size)
            size = 0
    return blocks


@pytest.fixture
def har_proxy(start_proxy, origin):
    return start_proxy("--allow-connect-port", str(origin.port))


def test_har_of_real_traffic_reads_in_haralyzer(har_proxy, origin, tmp_path):
    proxy = har_proxy
    n = 5000
    get_url = origin.url(f"/bytes/{n}?a=1&b=x+y")
    reused_url = origin.url("/bytes/200")
    r = curl(proxy, "-o", "/dev/null", "-o", "/dev/null", get_url, reused_url)
    assert r.returncode == 0, r.stderr

    body = tmp_path / "upload.bin"
    body.write_bytes(b"u" * 12345)
    r = curl(proxy, "-o", "/dev/null", "--data-binary", f"@{body}", origin.url("/upload"))
    assert r.returncode == 0, r.stderr

    heads = tmp_path / "tunnel-heads.txt"
    r = curl(proxy, "-v", "-p", "-o", "/dev/null", "-D", str(heads), origin.url(f"/bytes/{n}"))
    assert r.returncode == 0, r.stderr
    # -D has the proxy's 200 first, then the origin's head: the tunnel relayed the latter and the body.
    origin_head = heads.read_bytes().split(b"\r\n\r\n", 1)[1]
    tunnel_down = len(origin_head) + n
    tunnel_up = sent_blocks(r.stderr.decode())[1]

    refused_url = f"http://127.0.0.1:{closed_port()}/"
    r = curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", refused_url)
    assert r.stdout == b"502", r

    slow_url = origin.url("/slowbody/200000")
    client = start_curl(proxy, "--max-time", "60", "-o", "/dev/null", slow_url)
    try:
        slow = live_task(proxy, slow_url, min_download=2048)
        status, suspended = proxy.api("POST", f"/v1/tasks/{slow['id']}/suspend")
        assert status == 200 and suspended["state"] == "suspended", suspended
        frozen = proxy.task(slow["id"])["download"]["completed"]

        out = tmp_path / "run.har"
        out.write_text("stale")  # -o overwrites
        done = ctl(proxy, "har", "--all", "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""
    finally:
        proxy.api("POST", f"/v1/tasks/{slow['id']}/cancel")
        client.kill()
        client.wait(timeout=10)

    raw = json.loads(out.read_text())
    has_required(raw["log"], "log", "log")
    has_required(raw["log"]["creator"], "creator", "log.creator")
    assert raw["log"]["version"] == "1.2"
    assert raw["log"]["creator"]["name"] == "afproxy"
    assert raw["log"]["creator"]["version"] == proxy.stats()["version"]

    har = HarParser(raw)
    assert har.version == "1.2"
    pages = har.pages
    assert len(pages) == 1 and pages[0].page_id == "unknown", "no pages: every entry is on haralyzer's unknown page"
    entries = pages[0].entries
    urls = [e.url for e in entries]
    tunnel_url = f"https://127.0.0.1:{origin.port}"
    assert urls == [get_url, reused_url, origin.url("/upload"), tunnel_url, refused_url, slow_url], urls
    ids = [e.raw_entry["_taskId"] for e in entries]
    assert ids == sorted(ids), "entries are in the order the tasks started"
    for index, entry in enumerate(entries):
        check_entry(entry.raw_entry, f"entries[{index}] ({entry.url})")
        assert entry.raw_entry["response"]["content"]["comment"] == "bodies are not recorded"
    get, reused, upload, tunnel, refused, suspended_entry = entries
    records = {t["id"]: t for t in proxy.tasks(all=True)}

    # The data GET: its query, what came back, the server it came from.
    assert get.request.method == "GET"
    assert get.request.httpVersion == "HTTP/1.1"
    assert get.request.queryString == [{"name": "a", "value": "1"}, {"name": "b", "value": "x y"}]
    assert get.request.bodySize == 0
    assert get.status == 200 and get.response.statusText == "OK"
    assert get.response.bodySize == n
    assert get.response.raw_entry["content"]["size"] == n
    assert get.response.mimeType == "application/octet-stream"
    assert get.response.headersSize == len(origin_head), "the origin's head for /bytes/N, as the tunnel relayed it"
    assert get.serverAddress == "127.0.0.1"
    assert get.port == origin.port
    assert get.raw_entry["_kind"] == "data" and get.raw_entry["_state"] == "completed"
    assert get.raw_entry["_failureCode"] is None and get.raw_entry["_error"] is None
    assert get.raw_entry["_client"] == records[get.raw_entry["_taskId"]]["client"]
    assert get.timings["dns"] >= 0 and get.timings["connect"] >= 0 and get.timings["ssl"] == -1
    assert abs(get.time - records[get.raw_entry["_taskId"]]["metrics"]["totalMs"]) <= 1

    # The second GET went on the same upstream connection: no lookup, no connect.
    assert records[reused.raw_entry["_taskId"]]["metrics"]["reusedConnection"] is True
    assert reused.timings["dns"] == -1 and reused.timings["connect"] == -1 and reused.timings["ssl"] == -1
    assert reused.response.bodySize == 200

    assert upload.request.method == "POST"
    assert upload.request.bodySize == 12345
    assert upload.raw_entry["_kind"] == "upload"
    assert upload.status == 200

    # The tunnel is its CONNECT, with the bytes relayed each way.
    assert tunnel.request.method == "CONNECT"
    assert tunnel.status == 200
    assert tunnel.raw_entry["_kind"] == "stream"
    assert tunnel.request.bodySize == tunnel_up
    assert tunnel.response.bodySize == tunnel_down
    assert tunnel.timings["dns"] == -1, "an address literal needs no lookup"
    assert tunnel.port == origin.port

    assert refused.status == 0
    assert refused.response.bodySize == 0
    assert refused.raw_entry["_failureCode"] == "connection-refused"
    assert refused.raw_entry["_error"]
    assert refused.timings["wait"] == 0 and refused.timings["receive"] == 0

    assert suspended_entry.raw_entry["_state"] == "suspended"
    assert suspended_entry.status == 200
    assert suspended_entry.response.bodySize == frozen
    assert suspended_entry.raw_entry["_resumes"] == []


def test_har_endpoint_selects_by_id(proxy, origin):
    for path in ("/bytes/10", "/bytes/20"):
        assert curl(proxy, "-o", "/dev/null", origin.url(path)).returncode == 0
    wait_for(lambda: len(proxy.tasks(all=True)) == 2 and not proxy.tasks(), message="two completed tasks")
    first, second = (t["id"] for t in proxy.tasks(all=True))

    status, har = proxy.api("GET", f"/v1/har?id={second}")
    assert status == 200
    assert [e["_taskId"] for e in har["log"]["entries"]] == [second]
    status, har = proxy.api("GET", f"/v1/har?id={second}&id={first}")
    assert [e["_taskId"] for e in har["log"]["entries"]] == [first, second]
    status, har = proxy.api("GET", "/v1/har")
    assert status == 200 and har["log"]["entries"] == [], "without all=1, only live tasks"
    status, body = proxy.api("GET", "/v1/har?id=999")
    assert status == 404 and "999" in body["error"]

    printed = ctl(proxy, "har", str(first))
    assert printed.returncode == 0, printed.stderr
    assert [e["_taskId"] for e in json.loads(printed.stdout)["log"]["entries"]] == [first]
    assert ctl(proxy, "har", "999").returncode == 1
    assert ctl(proxy, "har", "--all", "1").returncode == 2


def test_credentials_are_redacted_unless_asked_for(proxy, origin, tmp_path):
    """Authorization and Cookie: the values a HAR would hand anyone it is shared with;
    `--include-secrets` (secrets=1) has them. The headers come from a curl config file, so that
    the command line `_clientProcess` shows carries none of them."""
    config = tmp_path / "curlrc"
    config.write_text('header = "Authorization: Bearer s3cr3t-token"\nheader = "Cookie: session=abc123"\n'
                      'header = "X-Plain: visible"\n')
    r = curl(proxy, "-K", str(config), origin.url("/echo"))
    assert r.returncode == 0
    har = ctl(proxy, "har", "--all")
    assert har.returncode == 0
    assert "s3cr3t-token" not in har.stdout and "abc123" not in har.stdout, har.stdout
    headers = {h["name"].lower(): h["value"] for h in json.loads(har.stdout)["log"]["entries"][0]["request"]["headers"]}
    assert headers["authorization"] == "<redacted>" and headers["cookie"] == "<redacted>", headers
    assert headers["x-plain"] == "visible"
    full = ctl(proxy, "har", "--all", "--include-secrets")
    headers = {h["name"].lower(): h["value"] for h in json.loads(full.stdout)["log"]["entries"][0]["request"]["headers"]}
    assert headers["authorization"] == "Bearer s3cr3t-token" and headers["cookie"] == "session=abc123", headers
    status, body = proxy.api("GET", "/v1/har?all=1&secrets=1")
    assert status == 200 and "s3cr3t-token" in json.dumps(body)
