"""The state files (throttle.json, holds.json, downloads.json) through the real daemon: a write that fails is said
in the log and shown by `afproxyctl status` and `GET /v1/status` until a later write succeeds; a
file that cannot be read at start is kept aside, said in the log, and the daemon starts without
its rules.

The tests may run as root, which ignores mode bits: a write is made to fail by putting a
directory where the file goes (the rename cannot replace it) or a file where the directory goes."""

from __future__ import annotations

import json
import shutil
import subprocess

from helpers import ctl, wait_for


def ok(result: subprocess.CompletedProcess, what: str) -> str:
    assert result.returncode == 0, f"{what}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def state_files(proxy) -> dict[str, str]:
    status, body = proxy.api("GET", "/v1/status")
    assert status == 200, body
    return body["tasks"].get("stateFiles") or {}


def status_lines(proxy) -> list[str]:
    return ok(ctl(proxy, "status"), "status").splitlines()


def test_a_failed_write_is_reported_until_a_later_write_succeeds(start_proxy, tmp_path):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    ok(ctl(proxy, "throttle", "--global", "1M"), "throttle --global")
    wait_for(lambda: (state / "throttle.json").exists(), message="throttle.json written")
    assert len(status_lines(proxy)) == 3 and "stateFiles" not in proxy.api("GET", "/v1/status")[1]["tasks"]

    # throttle.json becomes a directory with something in it: the rename onto it fails.
    (state / "throttle.json").unlink()
    (state / "throttle.json").mkdir()
    (state / "throttle.json" / "inside").write_text("x")
    ok(ctl(proxy, "throttle", "--global", "2M"), "throttle --global")
    problem = wait_for(lambda: state_files(proxy).get("throttle.json"), message="throttle.json reported")
    assert problem.startswith("write failed: cannot rename") and problem.endswith("Is a directory"), problem
    lines = status_lines(proxy)
    assert lines[3] == f"state files throttle.json {problem}", lines
    assert json.loads(ok(ctl(proxy, "status", "--json"), "status --json"))["tasks"]["stateFiles"] == {
        "throttle.json": problem}
    # The log line goes out as the report does; the reader thread may not have it yet.
    wait_for(lambda: any("state file throttle.json not written" in line for line in proxy.stderr_lines),
             message=lambda: f"the log line; have {proxy.log()}")
    # The rule is in force all the same.
    rules = json.loads(ok(ctl(proxy, "throttle", "--list", "--json"), "list"))["rules"]
    assert [(r["rule"], r["down"]) for r in rules] == [("global", 2_000_000)], rules

    # Holds go to their own file, which is written meanwhile.
    ok(ctl(proxy, "hold", "add", "--host", "*.example.org"), "hold add")
    wait_for(lambda: (state / "holds.json").exists(), message="holds.json written")
    assert set(state_files(proxy)) == {"throttle.json"}

    # Once the way is clear, the next change is written and the report goes away.
    shutil.rmtree(state / "throttle.json")
    ok(ctl(proxy, "throttle", "--global", "3M"), "throttle --global")
    wait_for(lambda: not state_files(proxy), message="no state file reported")
    assert len(status_lines(proxy)) == 3
    saved = json.loads((state / "throttle.json").read_text())
    assert saved["rules"][0]["down"] == 3_000_000, saved
    wait_for(lambda: any("state file " in line and "throttle.json written again" in line
                         for line in proxy.stderr_lines), message=lambda: f"the log line; have {proxy.log()}")


def test_a_state_directory_that_became_a_file_reports_every_file(start_proxy, tmp_path):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    ok(ctl(proxy, "hold", "add", "--method", "PUT"), "hold add")
    wait_for(lambda: (state / "holds.json").exists(), message="holds.json written")
    state.rename(tmp_path / "state.away")
    state.write_text("not a directory")
    ok(ctl(proxy, "hold", "add", "--method", "POST"), "hold add")
    ok(ctl(proxy, "throttle", "--global", "1M"), "throttle --global")
    problems = wait_for(lambda: (lambda p: p if len(p) == 2 else None)(state_files(proxy)),
                        message="both files reported")
    assert all(p.startswith("write failed: ") and p.endswith("File exists") for p in problems.values()), problems
    lines = status_lines(proxy)[3:]
    assert lines[0].startswith("state files holds.json write failed: ") and lines[1].startswith(
        "            throttle.json write failed: "), lines


def test_an_unreadable_file_is_kept_aside_and_the_daemon_starts_without_its_rules(start_proxy, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "throttle.json").write_text('{"rules": [{"scope": "nowhere"}]}')
    (state / "holds.json").write_text("{")
    (state / "downloads.json").write_text('[{"id": "one"}]')
    proxy = start_proxy("--state-dir", str(state))
    assert ok(ctl(proxy, "throttle", "--list"), "list").strip() == "no throttle rules"
    assert json.loads(ok(ctl(proxy, "hold", "list", "--json"), "hold list"))["holds"] == []
    assert (state / "throttle.json.unreadable").read_text() == '{"rules": [{"scope": "nowhere"}]}'
    assert (state / "holds.json.unreadable").read_text() == "{"
    assert (state / "downloads.json.unreadable").read_text() == '[{"id": "one"}]'
    for name in ("throttle.json", "holds.json", "downloads.json"):
        assert any(f"{name} unreadable" in line and "starting without its contents" in line for line in proxy.stderr_lines), proxy.log()
    problems = state_files(proxy)
    assert problems["holds.json"].endswith("kept as holds.json.unreadable"), problems
    assert problems["downloads.json"].endswith("kept as downloads.json.unreadable"), problems
    # The next change writes what is in force; the aside copy stays for a person.
    ok(ctl(proxy, "hold", "add", "--method", "PUT"), "hold add")
    wait_for(lambda: set(state_files(proxy)) == {"throttle.json", "downloads.json"},
             message="holds.json no longer reported")
    assert (state / "holds.json.unreadable").exists()
