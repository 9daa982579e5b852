"""`afproxyctl rules` and `/v1/rules`: every rule kind a person edits at runtime through one command
and one endpoint, shown on the hold rules: rules added, listed and removed with afproxyctl and with
curl on the control socket are the rules `/v1/holds` and `afproxyctl hold` see, a rule added that way
catches a task, it survives a restart, and unknown kinds, bad bodies and unknown ids are refused with
the reason and the documented exit codes.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from helpers import clean_env, ctl, short_socket_dir, start_curl, wait_for
from origin import start_origin

HOLD_FIELDS = ["host", "method", "url", "kind", "all", "once", "response"]


@pytest.fixture
def fresh_origin():
    o = start_origin()
    yield o
    o.stop()


def socket_curl(proxy, method: str, path: str, body: str | None = None) -> tuple[int, dict]:
    """The real curl on the control socket: (status, JSON answer)."""
    argv = ["curl", "-sS", "--max-time", "10", "--unix-socket", proxy.control_socket, "-X", method,
            "-w", "\n%{http_code}"]
    if body is not None:
        argv += ["-H", "Content-Type: application/json", "--data-binary", body]
    r = subprocess.run(argv + [f"http://localhost{path}"], capture_output=True, timeout=30, env=clean_env())
    assert r.returncode == 0, r.stderr
    text, _, code = r.stdout.decode().rpartition("\n")
    return int(code), json.loads(text)


def ok(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    return r.stdout


def test_hold_rules_through_rules_are_the_hold_rules(start_proxy, tmp_path, fresh_origin):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    kinds = json.loads(ok(ctl(proxy, "rules", "--json")))
    assert kinds == {"kinds": [
        {"kind": "holds", "rule": "hold rule", "fields": HOLD_FIELDS, "count": 0},
        {"kind": "records", "rule": "record rule", "fields": ["host", "path", "max", "request", "response"],
         "count": 0},
        {"kind": "map-remote", "rule": "map-remote rule", "fields": ["host", "path", "to"], "count": 0},
        {"kind": "map-local", "rule": "map-local rule", "fields": ["host", "path", "file"], "count": 0},
    ]}
    table = ok(ctl(proxy, "rules")).splitlines()
    assert table[0].split() == ["KIND", "RULES", "FIELDS"] and table[1].split() == ["holds", "0", *HOLD_FIELDS]
    assert ok(ctl(proxy, "rules", "holds")).strip() == "no rules of kind holds"

    # Added with afproxyctl (values typed from the text) and with curl.
    first = int(ok(ctl(proxy, "rules", "holds", "--add", "host=127.0.0.1", "url=/bytes/")).strip())
    status, second = socket_curl(proxy, "POST", "/v1/rules/holds", '{"kind": "upload", "once": true}')
    assert status == 201 and second["id"] == first + 1 and second["once"] is True and second["kind"] == "upload"
    added = json.loads(ok(ctl(proxy, "rules", "holds", "--add", "method=PUT", "once=true", "--json")))
    assert added["method"] == "PUT" and added["once"] is True

    # Listed the same everywhere: the generic list, /v1/holds, `hold list`.
    status, listed = socket_curl(proxy, "GET", "/v1/rules/holds")
    assert status == 200 and listed["kind"] == "holds" and listed["fields"] == HOLD_FIELDS
    assert [r["id"] for r in listed["rules"]] == [first, second["id"], added["id"]]
    assert json.loads(ok(ctl(proxy, "rules", "holds", "--json"))) == listed
    assert proxy.api("GET", "/v1/holds") == (200, {"holds": listed["rules"]})
    assert json.loads(ok(ctl(proxy, "hold", "list", "--json")))["holds"] == listed["rules"]
    table = ok(ctl(proxy, "rules", "holds")).splitlines()
    assert table[0].split() == ["ID", "HOST", "METHOD", "URL", "KIND", "ALL", "ONCE", "RESPONSE", "CAUGHT"], table
    assert table[1].split() == [str(first), "127.0.0.1", "-", "/bytes/", "-", "false", "false", "false", "0"], table
    assert json.loads(ok(ctl(proxy, "rules", "--json")))["kinds"][0]["count"] == 3

    # The rule added through `rules` catches a task.
    client = start_curl(proxy, fresh_origin.url("/bytes/1000"), stdout=subprocess.PIPE)
    [task] = wait_for(lambda: [t for t in proxy.tasks() if t.get("heldBy") is not None] or None, 20,
                      message="a held task")
    assert task["heldBy"] == first and task["state"] == "suspended"
    assert fresh_origin.connections == 0
    ok(ctl(proxy, "resume", str(task["id"])))
    out, err = client.communicate(timeout=60)
    assert client.returncode == 0 and len(out) == 1000, err
    caught = json.loads(ok(ctl(proxy, "rules", "holds", "--json")))["rules"][0]
    assert caught["id"] == first and caught["caught"] == 1

    # Removed with afproxyctl, with curl, and through /v1/holds: the same rules.
    assert ok(ctl(proxy, "rules", "holds", "--remove", str(added["id"]))).strip() == \
        f"removed rule {added['id']} of holds"
    status, removed = socket_curl(proxy, "DELETE", f"/v1/rules/holds/{second['id']}")
    assert status == 200 and removed == second
    assert [h["id"] for h in proxy.api("GET", "/v1/holds")[1]["holds"]] == [first]

    # Kept in holds.json across a restart, like any hold rule.
    proxy.stop(by_test=True)
    again = start_proxy("--state-dir", str(state))
    [kept] = json.loads(ok(ctl(again, "rules", "holds", "--json")))["rules"]
    assert kept["id"] == first and kept["caught"] == 1
    ok(ctl(again, "hold", "rm", str(first)))
    assert ok(ctl(again, "rules", "holds")).strip() == "no rules of kind holds"


def test_refusals_say_why_with_the_exit_codes(start_proxy, tmp_path):
    proxy = start_proxy("--state-dir", str(tmp_path / "state"))
    # An unknown kind: 404, exit 1.
    r = ctl(proxy, "rules", "blocks")
    assert r.returncode == 1 and "no such rule kind: blocks (kinds: holds, records, map-remote, map-local)" in r.stderr, r
    assert socket_curl(proxy, "GET", "/v1/rules/blocks") == (404, {"error": "no such rule kind: blocks (kinds: holds, records, map-remote, map-local)"})
    r = ctl(proxy, "rules", "blocks", "--add", "host=x")
    assert r.returncode == 1 and "no such rule kind" in r.stderr, r

    # A body that is not the kind's: 400 naming the fields it takes, exit 1.
    expected = 'expected a JSON object {"host": …, "method": …, "url": …, "kind": …, "all": …, "once": …, "response": …}'
    assert socket_curl(proxy, "POST", "/v1/rules/holds", "not json") == (400, {"error": expected})
    assert socket_curl(proxy, "POST", "/v1/rules/holds", '{"once": "yes"}') == (400, {"error": expected})
    r = ctl(proxy, "rules", "holds", "--add", "hots=127.0.0.1")
    assert r.returncode == 1 and "unknown field hots: holds rules take host, method, url, kind, all, once" in r.stderr
    r = ctl(proxy, "rules", "holds", "--add", "once=true")
    assert r.returncode == 1 and "needs a condition" in r.stderr, r
    r = ctl(proxy, "rules", "holds", "--add", "url=(a+)+b")
    assert r.returncode == 1 and "exponential" in r.stderr, r
    r = ctl(proxy, "rules", "holds", "--add", "all=yes")  # not a boolean: the type is the daemon's to check
    assert r.returncode == 1 and expected in r.stderr, r

    # An unknown id: 404, exit 1; a bad one: 400.
    r = ctl(proxy, "rules", "holds", "--remove", "99")
    assert r.returncode == 1 and "no hold rule with id 99" in r.stderr, r
    assert socket_curl(proxy, "DELETE", "/v1/rules/holds/99") == (404, {"error": "no hold rule with id 99"})
    assert socket_curl(proxy, "DELETE", "/v1/rules/holds/x") == \
        (400, {"error": "hold rule id must be a positive integer, not x"})
    # Wrong methods: 405.
    assert socket_curl(proxy, "PUT", "/v1/rules/holds")[0] == 405
    assert socket_curl(proxy, "POST", "/v1/rules")[0] == 405

    # Usage errors never reach the daemon: exit 2.
    for args in (("rules", "--add", "host=x"), ("rules", "holds", "host=x"), ("rules", "holds", "--add", "host"),
                 ("rules", "holds", "--remove", "0"), ("rules", "holds/1")):
        r = ctl(proxy, *args)
        assert r.returncode == 2 and r.stderr, (args, r)
    assert proxy.api("GET", "/v1/holds") == (200, {"holds": []})

    # No daemon: 69.
    r = ctl(str(short_socket_dir(tmp_path) / "absent.sock"), "rules")
    assert r.returncode == 69 and "afproxy is not reachable" in r.stderr, r
