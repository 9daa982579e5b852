"""The kernel relay of plain CONNECT tunnels (splice(2) through a pipe per direction), and the NIO
relay it falls back to, which `tunnel-splice = no` forces (here as its flag; a diagnostic setting).

Splicing shows from outside as the task's `relay` ("splice" or "nio") and as the daemon's pipes:
each spliced tunnel holds two (four descriptors) while it is open, a tunnel on NIO none. Both
relays carry a download byte-exact, stop at a suspend and carry on intact at resume, keep to a
throttle rule and close both sides at a cancel (the cancel test lives only here, for both relays);
test_connect.py, test_throttle.py and the others run with splicing on, as the daemon does by
default."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from helpers import ctl, curl_sha256, live_task, start_curl, wait_for
from origin import payload_sha256

MiB = 1024 * 1024
# The daemon's flags for each relay: splicing is the default.
RELAYS = {"splice": (), "nio": ("--tunnel-splice", "no")}


@pytest.fixture(params=sorted(RELAYS))
def relay(request) -> str:
    return request.param


@pytest.fixture
def tunnel_proxy(start_proxy, tls_origin, relay, tmp_path):
    return start_proxy("--allow-connect-port", str(tls_origin.port), "--state-dir", str(tmp_path / "state"),
                       *RELAYS[relay])


def pipes(pid: int) -> int:
    """How many of the process's descriptors are pipes."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:"):
                count += 1
        except FileNotFoundError:
            pass
    return count


def steer(proxy, verb: str, task_id: int) -> dict:
    status, body = proxy.api("POST", f"/v1/tasks/{task_id}/{verb}")
    assert status == 200, f"POST /v1/tasks/{task_id}/{verb}: {status} {body!r}"
    return body


def slow_download(proxy, tls_origin, tls_files, n: int) -> subprocess.Popen:
    return start_curl(proxy, "--cacert", tls_files.ca_cert, "--limit-rate", "10M", "--max-time", "120",
                      "-o", "/dev/null", tls_origin.url(f"/bytes/{n}"))


def exact_download(proxy, tls_origin, tls_files, n: int, max_time: int) -> dict:
    """n payload bytes through the tunnel, checked by length and SHA-256; the tunnel's record."""
    out = curl_sha256(proxy, "--cacert", tls_files.ca_cert, "--max-time", str(max_time),
                      tls_origin.url(f"/bytes/{n}"), timeout=max_time + 30)
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))
    return proxy.history_record(tls_origin.host)


def stop(client: subprocess.Popen) -> None:
    if client.poll() is None:
        client.kill()
        client.wait(timeout=10)


def test_a_plain_tunnel_is_spliced_unless_turned_off(tunnel_proxy, tls_origin, tls_files, relay):
    """While a tunnel is open, the daemon holds its two pipes, and frees them when it ends; with
    --tunnel-splice no it holds none. The task says which relay it is on, live and after."""
    before = pipes(tunnel_proxy.pid)
    client = slow_download(tunnel_proxy, tls_origin, tls_files, 100 * MiB)
    try:
        tid = live_task(tunnel_proxy, tls_origin.host, min_download=2 * MiB)["id"]
        if relay == "splice":
            wait_for(lambda: pipes(tunnel_proxy.pid) == before + 4, timeout=10,
                     message=lambda: f"pipes: {before} before the tunnel, {pipes(tunnel_proxy.pid)} with it")
            wait_for(lambda: tunnel_proxy.task(tid)["relay"] == "splice", timeout=10,
                     message=lambda: f"the live task's relay: {tunnel_proxy.task(tid)}")
        else:
            # The tunnel moved 2 MiB: a relay that splices has its pipes by now.
            assert pipes(tunnel_proxy.pid) == before, "a tunnel on the NIO relay made pipes"
            assert tunnel_proxy.task(tid)["relay"] == "nio"
        steer(tunnel_proxy, "cancel", tid)
        client.communicate(timeout=15)
    finally:
        stop(client)
    assert tunnel_proxy.history_record(tls_origin.host)["relay"] == relay
    wait_for(lambda: pipes(tunnel_proxy.pid) == before, timeout=10,
             message=lambda: f"pipes: {before} before the tunnel, {pipes(tunnel_proxy.pid)} after it")


def test_a_download_is_byte_exact(tunnel_proxy, tls_origin, tls_files):
    n = 50 * MiB
    rec = exact_download(tunnel_proxy, tls_origin, tls_files, n, max_time=120)
    assert rec["error"] is None and rec["download"]["completed"] > n, rec


def test_suspend_stops_both_directions_and_resume_carries_on_intact(tunnel_proxy, tls_origin, tls_files):
    """Suspended mid-transfer, the byte counts stay put; resumed, every byte arrives in order."""
    n = 50 * MiB
    result: list = []
    download = threading.Thread(daemon=True, target=lambda: result.append(curl_sha256(
        tunnel_proxy, "--cacert", tls_files.ca_cert, "--limit-rate", "10M", "--max-time", "120",
        tls_origin.url(f"/bytes/{n}"), timeout=150)))
    download.start()
    tid = live_task(tunnel_proxy, tls_origin.host, min_download=4 * MiB)["id"]
    assert steer(tunnel_proxy, "suspend", tid)["state"] == "suspended"
    first = tunnel_proxy.task(tid)
    frozen = (first["upload"]["completed"], first["download"]["completed"])
    for _ in range(4):
        time.sleep(0.25)
        rec = tunnel_proxy.task(tid)
        assert (rec["upload"]["completed"], rec["download"]["completed"]) == frozen, "counts moved while suspended"
    assert frozen[1] < n, f"not mid-transfer when suspended: {frozen}"
    assert steer(tunnel_proxy, "resume", tid)["state"] == "running"
    download.join(timeout=160)
    assert not download.is_alive() and result, "curl did not finish"
    out = result[0]
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))
    rec = tunnel_proxy.history_record(tls_origin.host)
    assert rec["id"] == tid and rec["error"] is None and rec["download"]["completed"] > frozen[1], rec


def test_a_throttle_rule_limits_the_tunnel(tunnel_proxy, tls_origin, tls_files):
    """Under a 1M global rule, the tunnel moves 1 MB/s ±20% over its life and the 4 MB arrive intact."""
    rate = 1_000_000
    assert ctl(tunnel_proxy, "throttle", "--global", "1M").returncode == 0
    n = 4 * rate
    rec = exact_download(tunnel_proxy, tls_origin, tls_files, n, max_time=60)
    seconds = rec["metrics"]["totalMs"] / 1000
    # The tunnel carries TLS records on top of the payload: the rule applies to what it moved.
    moved = rec["download"]["completed"]
    assert abs(moved / seconds - rate) <= 0.2 * rate, f"{moved / seconds / 1e6:.3f} MB/s under a 1M rule"


def test_cancel_closes_both_sides(tunnel_proxy, tls_origin, tls_files):
    n = 100 * MiB
    client = slow_download(tunnel_proxy, tls_origin, tls_files, n)
    try:
        tid = live_task(tunnel_proxy, tls_origin.host, min_download=4 * MiB)["id"]
        steer(tunnel_proxy, "cancel", tid)
        try:
            client.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("curl still running 15 s after its tunnel was canceled")
        assert client.returncode != 0, "curl succeeded although its tunnel was canceled"
    finally:
        stop(client)
    rec = tunnel_proxy.history_record(tls_origin.host)
    assert rec["id"] == tid and rec["error"] == "canceled" and rec["endReason"] == "canceled", rec
    assert rec["download"]["completed"] < n
