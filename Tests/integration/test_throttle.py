"""Throttling through the real daemon: a global, host or task rule limits proxied downloads and
uploads, tunnels and download tasks, as measured by the client (curl's own figures, or the size of
the file it writes over time); a rule changed mid-transfer takes effect within a couple of
seconds; one global rule is shared by two transfers; host and global rules survive a restart.

Rates are checked against the rule's ceiling (+20%), not how close to it a transfer gets on a busy
machine (the bench, bench/throttle.py, measures the ±10% over 10 s). Every transfer's bytes are checked whole (length and SHA-256).
Every daemon has its own --state-dir: rules are kept there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import clean_env, ctl, curl_argv, file_sha256, live_task, wait_for
from origin import payload, payload_sha256

RATE = 1_000_000  # 1M, bytes per second


@pytest.fixture
def tproxy(start_proxy, tmp_path, origin):
    """start(*args): a daemon with this test's state directory, CONNECT allowed to the origin."""

    def start(*args: str):
        return start_proxy("--state-dir", str(tmp_path / "state"), "--download-dir", str(tmp_path / "dl"),
                           "--allow-connect-port", str(origin.port), *args)

    return start


def ok(result: subprocess.CompletedProcess, what: str) -> str:
    assert result.returncode == 0, f"{what}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def timed_curl(proxy, out: Path, *args: str, timeout: float = 120) -> tuple[int, float]:
    """curl through the proxy into `out`: (bytes, seconds) as curl measured them."""
    argv = curl_argv(proxy, ("-o", str(out), "-w", "%{size_download} %{size_upload} %{time_total}", *args))
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=clean_env())
    assert result.returncode == 0, f"curl failed: {result.stderr}"
    down, up, seconds = result.stdout.split()
    return max(int(float(down)), int(float(up))), float(seconds)


def assert_rate(measured: float, target: float, what: str, tolerance: float = 0.2, floor: float = 0) -> None:
    """A throttle promises a ceiling: the rate is checked against it (+ tolerance), never against
    how close to it a transfer got, which a busy machine decides (a clean-clone run measured 0.78
    of 1 MB/s with the machine's two cores taken); bench/throttle.py measures that. `floor`, when a
    change must show (a rule raised), is set well below the new rate, above the old ceiling."""
    assert floor <= measured <= (1 + tolerance) * target, (
        f"{what}: {measured / 1e6:.3f} MB/s, expected at most {target / 1e6:.3f} MB/s +{tolerance:.0%}"
        + (f" and more than {floor / 1e6:.3f}" if floor else ""))


def assert_payload(path: Path, n: int) -> None:
    assert file_sha256(path) == (n, payload_sha256(n)), f"{path}: not the {n} bytes the origin sent"


def growth(path: Path, seconds: float) -> float:
    """Bytes per second the file at `path` grew by over `seconds`."""
    start_size, start = path.stat().st_size if path.exists() else 0, time.monotonic()
    time.sleep(seconds)
    return (path.stat().st_size - start_size) / (time.monotonic() - start)


# ----------------------------------------------------------------------------------------------


def test_global_rule_limits_a_download_and_shows_where_tasks_are_shown(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "1M"), "throttle --global")
    n = 4 * RATE
    url = origin.url(f"/bytes/{n}")
    out = tmp_path / "body"
    argv = curl_argv(proxy, ("-o", str(out), "-w", "%{size_download} %{time_total}", url))
    client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    task = live_task(proxy, url)
    assert task["limit"] == {"down": {"bytesPerSecond": RATE, "rule": "global"},
                             "up": {"bytesPerSecond": RATE, "rule": "global"}}, task["limit"]
    listing = ok(ctl(proxy, "list"), "list")
    assert listing.splitlines()[0].split()[-1] == "LIMIT" and "1M/s" in listing, listing
    shown = ok(ctl(proxy, "show", str(task["id"])), "show")
    assert "down 1M/s (global), up 1M/s (global)" in shown, shown
    stdout, stderr = client.communicate(timeout=60)
    assert client.returncode == 0, stderr
    size, seconds = stdout.split()
    assert int(size) == n
    assert_payload(out, n)
    assert_rate(n / float(seconds), RATE, "download under a 1M global rule")
    assert task["state"] == "running"


def test_no_rule_no_limit_column(tproxy, origin):
    proxy = tproxy()
    assert ok(ctl(proxy, "throttle", "--list"), "throttle --list").strip() == "no throttle rules"
    url = origin.url("/slowbody/2000000")
    argv = curl_argv(proxy, ("-o", "/dev/null", url))
    client = subprocess.Popen(argv, stderr=subprocess.PIPE, env=clean_env())
    try:
        task = live_task(proxy, url)
        assert task["limit"] is None
        assert "LIMIT" not in ok(ctl(proxy, "list"), "list")
    finally:
        client.kill()
        client.wait()


def test_host_rule_limits_an_upload(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--host", "127.0.0.1", "500K", "--up"), "throttle --host --up")
    rules = json.loads(ok(ctl(proxy, "throttle", "--list", "--json"), "throttle --list --json"))["rules"]
    assert rules == [{"scope": "host", "host": "127.0.0.1", "task": None, "down": None, "up": 500_000,
                      "rule": "host 127.0.0.1"}], rules
    n = 2_500_000
    body = tmp_path / "upload"
    body.write_bytes(payload(n))
    answer = tmp_path / "answer"
    size, seconds = timed_curl(proxy, answer, "--data-binary", f"@{body}", origin.url("/upload"))
    echoed = json.loads(answer.read_text())
    assert echoed["length"] == n and echoed["sha256"] == payload_sha256(n), echoed
    assert_rate(n / seconds, 500_000, "upload under a 500K host rule")


def test_tunnel_is_limited(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "1M"), "throttle --global")
    n = 4 * RATE
    out = tmp_path / "body"
    size, seconds = timed_curl(proxy, out, "--proxytunnel", origin.url(f"/bytes/{n}"))
    assert size == n
    assert_payload(out, n)
    assert_rate(n / seconds, RATE, "tunnel under a 1M global rule")
    record = [t for t in proxy.tasks(all=True) if t["kind"] == "stream"][-1]
    assert record["download"]["completed"] >= n


def test_download_task_is_limited(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "1M", "--down"), "throttle --global --down")
    n = 4 * RATE
    path = tmp_path / "file"
    started = time.monotonic()
    tid = int(ok(ctl(proxy, "download", origin.url(f"/bytes/{n}"), "-o", str(path)), "download").strip())
    record = wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(proxy.task(tid)), 60,
                      interval=0.05, message="the download task completed")
    elapsed = time.monotonic() - started
    assert record["error"] is None, record
    assert_payload(path, n)
    assert_rate(n / elapsed, RATE, "download task under a 1M global rule")


def test_a_rule_changed_mid_transfer_takes_effect(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "500K"), "throttle --global")
    # About 15 MB go by the last measure; the rest must outlast the unthrottle commands, however
    # slowly they start (an ASan afproxyctl on a busy machine took the last 1 MB of 16 before
    # `unthrottle ID`, which then found no task). Unthrottled, the rest takes no time.
    n = 48_000_000
    url = origin.url(f"/bytes/{n}")
    out = tmp_path / "body"
    client = subprocess.Popen(curl_argv(proxy, ("-o", str(out), url)), stderr=subprocess.PIPE, env=clean_env())
    try:
        task = live_task(proxy, url)
        assert_rate(growth(out, 3), 500_000, "at 500K")
        ok(ctl(proxy, "throttle", "--global", "2M"), "throttle --global again")
        time.sleep(1.5)  # the change reaches the transfer within a second; then measure
        assert_rate(growth(out, 3), 2_000_000, "after the change to 2M", floor=1.2 * 500_000)
        # A task rule tighter than the global one limits the task, and says so.
        ok(ctl(proxy, "throttle", str(task["id"]), "1M"), "throttle ID")
        time.sleep(1.5)
        assert_rate(growth(out, 2), 1_000_000, "under a 1M task rule")
        assert proxy.task(task["id"])["limit"]["down"] == {"bytesPerSecond": 1_000_000, "rule": f"task {task['id']}"}
        ok(ctl(proxy, "unthrottle", str(task["id"])), "unthrottle ID")
        ok(ctl(proxy, "unthrottle", "--global"), "unthrottle --global")
        assert client.wait(timeout=60) == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert_payload(out, n)
    assert ok(ctl(proxy, "throttle", "--list"), "list").strip() == "no throttle rules"


def test_a_global_rule_is_shared_by_two_transfers(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "2M"), "throttle --global")
    n = 8_000_000
    outs = [tmp_path / "a", tmp_path / "b"]
    clients = [subprocess.Popen(curl_argv(proxy, ("-o", str(out), origin.url(f"/bytes/{n}?{i}"))),
                                stderr=subprocess.PIPE, env=clean_env()) for i, out in enumerate(outs)]
    try:
        wait_for(lambda: all(out.exists() and out.stat().st_size > 0 for out in outs), 20, message="both started")
        time.sleep(0.5)
        sizes = [out.stat().st_size for out in outs]
        start = time.monotonic()
        time.sleep(3)
        rates = [(out.stat().st_size - size) / (time.monotonic() - start) for out, size in zip(outs, sizes)]
        assert_rate(sum(rates), 2_000_000, "the two together")
        for rate in rates:  # each about half: none starved
            assert_rate(rate, 1_000_000, f"one of two sharing 2M (both: {rates})", tolerance=0.3)
        for client in clients:
            assert client.wait(timeout=60) == 0
    finally:
        for client in clients:
            if client.poll() is None:
                client.kill()
                client.wait()
    for out in outs:
        assert_payload(out, n)


def test_rules_survive_a_restart_and_config_defaults_combine(start_proxy, tmp_path, origin):
    state = str(tmp_path / "state")
    proxy = start_proxy("--state-dir", state, "--throttle-global", "10M", "--throttle-host", "*.example.org 3M down")
    assert ok(ctl(proxy, "throttle", "--list"), "list").split() == [
        "RULE", "DOWN", "UP", "global", "10M/s", "10M/s", "host", "*.example.org", "3M/s", "-"]
    ok(ctl(proxy, "throttle", "--host", "10.0.0.0/8", "1.5MiB"), "throttle --host CIDR")
    ok(ctl(proxy, "unthrottle", "--global"), "unthrottle --global")  # lifts the configured default
    ok(ctl(proxy, "throttle", "--host", "*.example.org", "250K", "--up"), "add up to a configured rule")
    before = json.loads(ok(ctl(proxy, "throttle", "--list", "--json"), "list"))
    assert [r["rule"] for r in before["rules"]] == ["host *.example.org", "host 10.0.0.0/8"], before
    # The file is written off the control socket's thread, soon after the change.
    lifted = [{"scope": "global", "task": None, "host": None}]
    saved = tmp_path / "state" / "throttle.json"
    wait_for(lambda: saved.exists() and json.loads(saved.read_text())["lifted"] == lifted,
             message="throttle.json with the lifted default")
    proxy.stop(by_test=True)
    again = start_proxy("--state-dir", state, "--throttle-global", "10M", "--throttle-host", "*.example.org 3M down")
    after = json.loads(ok(ctl(again, "throttle", "--list", "--json"), "list"))
    assert after == before
    assert ok(ctl(again, "throttle", "--list"), "list").split() == [
        "RULE", "DOWN", "UP", "host", "*.example.org", "3M/s", "250K/s", "host", "10.0.0.0/8", "1.5MiB/s",
        "1.5MiB/s"]
    # A rule set for a lifted scope starts afresh (the lifted default does not come back with it);
    # removing a rule set only at runtime removes it.
    ok(ctl(again, "throttle", "--global", "5M", "--up"), "throttle --global --up")
    ok(ctl(again, "unthrottle", "--host", "10.0.0.0/8"), "unthrottle --host")
    rules = json.loads(ok(ctl(again, "throttle", "--list", "--json"), "list"))["rules"]
    assert [(r["rule"], r["down"], r["up"]) for r in rules] == [
        ("global", None, 5_000_000), ("host *.example.org", 3_000_000, 250_000)], rules


def test_bad_input_is_refused_precisely(tproxy, origin):
    proxy = tproxy()
    bad = ctl(proxy, "throttle", "--global", "fast")
    assert bad.returncode == 2 and "expected a rate in bytes per second" in bad.stderr, bad.stderr
    zero = ctl(proxy, "throttle", "--global", "0")
    assert zero.returncode == 2 and "at least 1 byte" in zero.stderr, zero.stderr
    missing = ctl(proxy, "throttle", "--global")
    assert missing.returncode == 2 and "missing the rate" in missing.stderr, missing.stderr
    unknown = ctl(proxy, "throttle", "999", "1M")
    assert unknown.returncode == 1 and "no task with id 999" in unknown.stderr, unknown.stderr
    norule = ctl(proxy, "unthrottle", "--host", "*.nowhere.test")
    assert norule.returncode == 1 and "no throttle rule for host *.nowhere.test" in norule.stderr, norule.stderr
    pattern = ctl(proxy, "throttle", "--host", "bad host", "1M")
    assert pattern.returncode == 2 and "expected a host name" in pattern.stderr, pattern.stderr
    status, body = proxy.api("PUT", "/v1/throttle/global", {"down": "lots"})
    assert status == 400 and "expected a rate" in body["error"], body
    status, body = proxy.api("PUT", "/v1/throttle/global", {})
    assert status == 400, body
    status, body = proxy.api("PUT", "/v1/throttle/elsewhere", {"down": "1M"})
    assert status == 404, body
    status, body = proxy.api("PUT", "/v1/throttle/global", {"down": 250000})
    assert status == 200 and body["down"] == 250000 and body["up"] is None, body
    status, body = proxy.api("DELETE", "/v1/throttle/global?direction=down")
    assert status == 200 and body == {"rules": []}, body


def test_suspend_and_resume_work_under_a_rule(tproxy, origin, tmp_path):
    proxy = tproxy()
    ok(ctl(proxy, "throttle", "--global", "1M"), "throttle --global")
    n = 5_000_000
    url = origin.url(f"/bytes/{n}")
    out = tmp_path / "body"
    client = subprocess.Popen(curl_argv(proxy, ("-o", str(out), url)), stderr=subprocess.PIPE, env=clean_env())
    try:
        task = live_task(proxy, url, min_download=500_000)
        assert task["state"] == "running"  # a throttle pause is not a suspend
        ok(ctl(proxy, "suspend", str(task["id"])), "suspend")
        frozen = proxy.task(task["id"])
        assert frozen["state"] == "suspended"
        time.sleep(1.5)
        assert proxy.task(task["id"])["download"]["completed"] == frozen["download"]["completed"]
        ok(ctl(proxy, "resume", str(task["id"])), "resume")
        assert proxy.task(task["id"])["state"] == "running"
        assert_rate(growth(out, 2), RATE, "after the resume, still under the rule")
        assert client.wait(timeout=60) == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert_payload(out, n)


def test_a_reload_applies_new_defaults_and_keeps_runtime_rules(start_proxy, tmp_path):
    conf = tmp_path / "afproxy.conf"
    conf.write_text("throttle-global = 1M\n")
    proxy = start_proxy("--config", str(conf), "--state-dir", str(tmp_path / "state"))
    ok(ctl(proxy, "throttle", "--host", "example.org", "300K"), "throttle --host")
    conf.write_text("throttle-global = 2M down\nthrottle-host = *.example.net 1M\n")
    os.kill(proxy.pid, signal.SIGHUP)
    expected = ["RULE", "DOWN", "UP", "global", "2M/s", "-", "host", "*.example.net", "1M/s", "1M/s",
                "host", "example.org", "300K/s", "300K/s"]
    wait_for(lambda: ok(ctl(proxy, "throttle", "--list"), "list").split() == expected, 10,
             message="the reloaded defaults beside the runtime rule")
