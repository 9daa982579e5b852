"""Map rules (issue 37): `afproxyctl map HOST[/PATH] URL` (map-remote) sends matching requests to
another origin, what followed the prefix appended and the Host field following it; `afproxyctl
map HOST[/PATH] PATH` (map-local) answers them from a file or a directory with a content type
from the file name, and the origin never sees them. Through curl, Python's requests and Chromium,
the names made up (`api.test`, `app.test`) never resolved: the proxy maps them before any lookup.
Both show on the task (`edits`); rules are kept across a restart; bad targets are refused (400,
exit 2 or 1 with the reason)."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import requests

from helpers import ca_path, clean_env, ctl, curl, start_chromium, wait_for
from origin import PNG_BODY, payload, payload_sha256
from test_intercept import intercepting  # noqa: F401 (a fixture)
from test_rules import fresh_origin  # noqa: F401 (a fixture: an origin whose requests are this test's alone)


def add(proxy, *args: str) -> int:
    r = ctl(proxy, "map", *args)
    assert r.returncode == 0 and r.stdout.strip().isdigit(), r
    return int(r.stdout)


def test_map_remote_sends_requests_to_another_origin(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    rule = add(proxy, "api.test/v1/", fresh_origin.url("/"))
    n = 300_000
    got = curl(proxy, "-sS", "-o", str(tmp_path / "out"), "-w", "%{http_code}", f"http://api.test/v1/bytes/{n}?x=1")
    assert got.stdout == b"200", got
    data = (tmp_path / "out").read_bytes()
    assert len(data) == n and hashlib.sha256(data).hexdigest() == payload_sha256(n)
    assert fresh_origin.last_request.target == f"/bytes/{n}?x=1"
    assert fresh_origin.last_request.header("host") == fresh_origin.host  # the Host field follows the URL

    # Python's requests, through the proxy: the echo shows what the origin got.
    proxies = {"http": f"http://127.0.0.1:{proxy.port}"}
    answer = requests.get("http://api.test/v1/echo", proxies=proxies, headers={"X-From": "requests"}, timeout=30)
    assert answer.status_code == 200
    echoed = answer.json()
    headers = {name.lower(): value for name, value in echoed["headers"]}
    assert echoed["path"] == "/echo" and headers["x-from"] == "requests", echoed
    assert headers["host"] == fresh_origin.host

    # Requests the rule does not name go where they went.
    other = curl(proxy, "-sS", "-o", "/dev/null", "-w", "%{http_code}", fresh_origin.url("/bytes/10"))
    assert other.stdout == b"200"

    record = proxy.history_record(f"{fresh_origin.url('/bytes/')}{n}?x=1")
    assert [e["change"] for e in record["edits"]] == [
        f"map-remote rule {rule}: http://api.test/v1/bytes/{n}?x=1 → {fresh_origin.url('/bytes/')}{n}?x=1"]
    listed = ctl(proxy, "map", "--list")
    assert listed.returncode == 0 and f"{rule}" in listed.stdout and "remote" in listed.stdout, listed


def test_map_local_answers_from_a_directory_and_a_file(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    site = tmp_path / "site"
    (site / "img").mkdir(parents=True)
    (site / "index.html").write_text("<!DOCTYPE html><title>mapped</title><h1>from a file</h1>"
                                     '<img id="logo" src="/img/logo.png">')
    (site / "img" / "logo.png").write_bytes(PNG_BODY)
    big = os.urandom(3 * 1024 * 1024)
    (site / "data.bin").write_bytes(big)
    fixture = tmp_path / "fixture.json"
    fixture.write_text('{"items": [1, 2, 3]}')
    add(proxy, "app.test", str(site))  # a directory: the trailing / is added
    add(proxy, "api.test/v1/items", str(fixture))

    page = curl(proxy, "-sS", "-D", "-", "http://app.test/")
    head, _, body = page.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"Content-Type: text/html; charset=utf-8" in head, head
    assert body == (site / "index.html").read_bytes()
    got = curl(proxy, "-sS", "-o", str(tmp_path / "out.bin"), "-w", "%{http_code} %{content_type}",
               "http://app.test/data.bin")
    assert got.stdout == b"200 application/octet-stream" and (tmp_path / "out.bin").read_bytes() == big
    item = requests.get("http://api.test/v1/items?page=2", proxies={"http": f"http://127.0.0.1:{proxy.port}"},
                        timeout=30)
    assert item.status_code == 200 and item.json() == {"items": [1, 2, 3]}
    assert item.headers["Content-Type"] == "application/json"

    missing = curl(proxy, "-sS", "-w", "%{http_code}", "http://app.test/nothing.css")
    assert missing.stdout.endswith(b"404") and b"No such file or directory" in missing.stdout, missing
    escape = curl(proxy, "-sS", "--path-as-is", "-w", "%{http_code}", "http://app.test/img/%2e%2e/%2e%2e/etc/passwd")
    assert escape.stdout.endswith(b"403"), escape
    assert not fresh_origin.requests and fresh_origin.connections == 0

    record = proxy.history_record("http://app.test/data.bin")
    assert record["status"] == 200 and record["download"]["completed"] == len(big)
    assert record["edits"][0]["change"].endswith(f"{site}/data.bin"), record["edits"]

    # A HEAD gets the head a GET would (the file's length) and no body: the next request on the
    # same connection reads its own answer.
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    try:
        connection.request("HEAD", "http://app.test/data.bin")
        head = connection.getresponse()
        assert head.status == 200 and head.getheader("Content-Length") == str(len(big)) and head.read() == b""
        connection.request("GET", "http://api.test/v1/items")
        after = connection.getresponse()
        assert after.status == 200 and after.read() == fixture.read_bytes()
    finally:
        connection.close()


def test_chromium_loads_a_mapped_page(start_proxy, tmp_path, fresh_origin):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<!DOCTYPE html><html><head><title>loading</title><link rel="icon" href="data:,"></head><body>'
        '<img id="logo" src="/logo.png"><script src="http://api.test/app.js"></script></body></html>')
    (site / "logo.png").write_bytes(PNG_BODY)
    add(proxy, "app.test", str(site))
    # The script comes from the test origin, mapped from a name that does not exist.
    (tmp_path / "app.js").write_text("")  # unused: the remote rule below serves it
    add(proxy, "api.test", fresh_origin.url("/js/"))
    driver = start_chromium(proxy.port, tmp_path / "profile", tmp_path)
    try:
        driver.get("http://app.test/")
        wait_for(lambda: driver.execute_script(
            "const i = document.getElementById('logo'); return i && i.complete && i.naturalWidth > 0"), 30,
            message="the mapped image")
        assert driver.title == "loading" or driver.title
    finally:
        driver.quit()
    assert any(r.target.startswith("/js/app.js") for r in fresh_origin.requests), list(fresh_origin.requests)


def test_rules_survive_a_restart_and_bad_targets_are_refused(start_proxy, tmp_path, fresh_origin):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    remote = add(proxy, "api.test/v2/*", fresh_origin.url("/"))
    (tmp_path / "f.txt").write_text("local")
    local = add(proxy, "files.test", str(tmp_path / "f.txt"))
    proxy.stop(by_test=True)
    proxy = start_proxy("--state-dir", str(state))
    got = curl(proxy, "-sS", "http://api.test/v2/bytes/20")
    assert got.stdout == payload(20)
    assert curl(proxy, "-sS", "http://files.test/anything").stdout == b"local"

    for args, code, reason in [
        (["api.test", "ftp://example.test/"], 2, "must be an http:// or https:// URL"),
        (["bad host!", "http://127.0.0.1:1/"], 2, ""),
        (["api.test"], 2, "give the TARGET"),
    ]:
        r = ctl(proxy, "map", *args)
        assert r.returncode == code and reason in r.stderr, (args, r)
    for kind, body, reason in [
        ("map-remote", {"host": "api.test", "to": "not a url"}, "to must be an http:// or https:// URL"),
        ("map-remote", {"host": "api.test", "to": "http://u:p@h.test/"}, "to must be"),
        ("map-remote", {"host": "api.test", "to": "http://h.test/?q=1"}, "to must be"),
        ("map-local", {"host": "api.test", "file": "relative/path"}, "file must be an absolute path"),
        ("map-local", {"host": "api.test", "path": "nope", "file": "/tmp/x"}, "path must start with /"),
    ]:
        status, answer = proxy.api("POST", f"/v1/rules/{kind}", body)
        assert status == 400 and reason in answer["error"], (kind, body, answer)

    assert ctl(proxy, "map", "--remove", str(local), "--local").returncode == 0
    assert ctl(proxy, "map", "--remove", str(remote)).returncode == 0
    gone = ctl(proxy, "map", "--remove", str(remote))
    assert gone.returncode == 1 and f"no map-remote rule with id {remote}" in gone.stderr, gone
    assert ctl(proxy, "map", "--list").stdout.strip() == "no map rule"


def test_map_rules_apply_inside_an_intercepted_connection(intercepting, tls_origin, tmp_path, fresh_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    add(proxy, "127.0.0.1/mapped/", fresh_origin.url("/"))
    (tmp_path / "local.txt").write_text("answered locally")
    add(proxy, "127.0.0.1/local", str(tmp_path / "local.txt"))
    got = curl(proxy, "--cacert", ca, tls_origin.url("/mapped/bytes/1000"))
    assert got.returncode == 0 and got.stdout == payload(1000), got.stderr
    assert fresh_origin.last_request.target == "/bytes/1000"
    local = curl(proxy, "--cacert", ca, tls_origin.url("/local"))
    assert local.returncode == 0 and local.stdout == b"answered locally", local.stderr
    mapped = [t for t in proxy.tasks(all=True) if t["kind"] != "stream" and t["edits"]]
    assert len(mapped) == 2 and all(t["parent"] is not None for t in mapped), mapped


def _as(uid: str, gid: str, argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *argv]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to act as another user")
def test_map_local_serves_only_what_its_author_could_read(start_proxy, tmp_path):
    """A map-local rule's file is read with its author's rights: a caller of the control socket's
    group who is not the daemon's user (nobody, in the daemon's group root), or a holder of the
    dashboard's token (no user at all), cannot have the daemon serve a file only the daemon's user
    may read, directly or through a link; what they can read themselves is served; the daemon's own
    user (root here) is served anything."""
    base = Path(tempfile.mkdtemp(prefix="afp-map-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        state = base / "state"  # the daemon's: private, as its CA key is
        state.mkdir(mode=0o700)
        (state / "ca.key").write_text("PRIVATE KEY")
        os.chmod(state / "ca.key", 0o600)
        site = base / "site"
        site.mkdir(mode=0o755)
        (site / "open.txt").write_text("for everyone")
        os.chmod(site / "open.txt", 0o644)
        (site / "private.txt").write_text("PRIVATE NOTE")
        os.chmod(site / "private.txt", 0o600)
        os.symlink(state / "ca.key", site / "logo.png")
        sock = str(base / "control.sock")
        proxy = start_proxy("--web", "127.0.0.1:0", control_socket=sock)
        proxy.wait_control_ready()
        os.chmod(sock, 0o666)  # the group's members reach it; the daemon checks who they are

        def add_as_nobody(host: str, file: Path) -> dict:
            body = json.dumps({"host": host, "file": str(file)})
            r = subprocess.run(_as("nobody", "root", [
                "curl", "-sS", "--max-time", "10", "--unix-socket", sock, "-H", "Content-Type: application/json",
                "--data-binary", body, "http://localhost/v1/rules/map-local"]),
                capture_output=True, timeout=30, env=clean_env())
            assert r.returncode == 0, r.stderr
            return json.loads(r.stdout)

        nobody = pwd.getpwnam("nobody").pw_uid
        key = add_as_nobody("key.test", state / "ca.key")
        assert key["readAs"]["uid"] == nobody and 0 in key["readAs"]["groups"], key
        add_as_nobody("link.test", site / "logo.png")
        add_as_nobody("private.test", site / "private.txt")
        add_as_nobody("open.test", site / "open.txt")
        for host, reason in [("key.test", "may not reach it"), ("private.test", "may not read it"),
                             ("link.test", "may not reach it")]:
            got = curl(proxy, "-sS", "-w", "\n%{http_code}", f"http://{host}/")
            text, _, code = got.stdout.decode().rpartition("\n")
            assert code == "403" and f"uid {nobody} {reason}" in text and "PRIVATE" not in text, (host, text)
        assert curl(proxy, "-sS", "http://open.test/").stdout == b"for everyone"

        # The dashboard's token names no one: only what every user may read.
        web = json.loads(ctl(proxy, "web", "--json").stdout)
        for name, file in [("web-key.test", state / "ca.key"), ("web-open.test", site / "open.txt")]:
            answer = requests.post(f"{web['url']}v1/rules/map-local", json={"host": name, "file": str(file)},
                                   headers={"Authorization": f"Bearer {web['token']}"}, timeout=10)
            assert answer.status_code == 201 and answer.json()["readAs"] == "anyone", answer.text
        got = curl(proxy, "-sS", "-w", "\n%{http_code}", "http://web-key.test/")
        assert got.stdout.decode().endswith("\n403") and b"anyone may not" in got.stdout, got.stdout
        assert curl(proxy, "-sS", "http://web-open.test/").stdout == b"for everyone"

        # The daemon's own user (root): anything the daemon reads.
        add(proxy, "root.test", str(state / "ca.key"))
        assert curl(proxy, "-sS", "http://root.test/").stdout == b"PRIVATE KEY"
        listed = ctl(proxy, "map", "--list")
        assert f"uid {nobody}" in listed.stdout and "anyone" in listed.stdout, listed.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)
