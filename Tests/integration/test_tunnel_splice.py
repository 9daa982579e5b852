"""The kernel relay of plain CONNECT tunnels (splice(2) through a pipe per direction), and the NIO
relay it falls back to, which `tunnel-splice = no` forces (here as its flag; a diagnostic setting).

Splicing shows from outside as the task's `relay` ("splice" or "nio") and as the daemon's pipes:
each spliced tunnel holds two (four descriptors) while it is open, a tunnel on NIO none. Both
relays carry a download byte-exact, stop at a suspend and carry on intact at resume, keep to a
throttle rule and close both sides at a cancel (the cancel test lives only here, for both relays);
test_connect.py, test_throttle.py and the others run with splicing on, as the daemon does by
default.

A tunnel starts on the NIO relay and is spliced only once one direction carries bulk (reads that
fill NIO's buffer, a run of them): request-sized exchanges stay on NIO, where they cost less; when
the bulk is over (small splices in a row) it goes back to NIO. The switches happen mid-stream, so
the tests of them count and checksum every byte both ways across them, and suspend and resume on
either side."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import threading
import time

import pytest

from echo_server import EchoServer
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


# ----------------------------------------------------------------------------------------------
# The switch from NIO to splice, mid-stream, through a raw tunnel to an echo server: what the
# client sends comes back, so both directions carry the same bytes, checked as they pass.


@pytest.fixture
def echo():
    server = EchoServer()
    yield server
    server.close()


@pytest.fixture
def echo_proxy(start_proxy, echo, tmp_path):
    return start_proxy("--allow-connect-port", str(echo.port), "--state-dir", str(tmp_path / "state"))


class EchoTunnel:
    """A CONNECT tunnel to the echo server that sends pseudo-random bytes and checks that what
    comes back is the same stream: counted and hashed both ways."""

    def __init__(self, proxy, echo: EchoServer):
        self.target = f"127.0.0.1:{echo.port}"
        self.sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=60)
        self.sock.sendall(f"CONNECT {self.target} HTTP/1.1\r\nHost: {self.target}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            assert chunk, f"no answer to CONNECT: {head!r}"
            head += chunk
        assert head.startswith(b"HTTP/1.1 200"), head
        self.sent = hashlib.sha256()
        self.received = hashlib.sha256()
        self.sent_bytes = 0
        self.received_bytes = 0
        self.seed = 0

    def block(self, n: int) -> bytes:
        """n bytes that differ from every other block, so a byte out of place changes the hash."""
        self.seed += 1
        return hashlib.shake_256(self.seed.to_bytes(8, "little")).digest(n)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)
        self.sent.update(data)
        self.sent_bytes += len(data)

    def receive(self, n: int) -> bytes:
        """Exactly n bytes back."""
        got = bytearray()
        while len(got) < n:
            chunk = self.sock.recv(min(n - len(got), 1 << 20))
            assert chunk, f"the tunnel closed after {self.received_bytes + len(got)} of {self.sent_bytes} bytes"
            got += chunk
        self.received.update(got)
        self.received_bytes += n
        return bytes(got)

    def exchanges(self, count: int, size: int = 1024) -> None:
        """Request-sized round trips, each checked on its own."""
        for _ in range(count):
            data = self.block(size)
            self.send(data)
            assert self.receive(size) == data

    def bulk(self, n: int, chunk: int = 1 << 20) -> None:
        """n bytes sent from a thread while the echo is read here: both directions at full speed."""
        blocks = [self.block(min(chunk, n - i)) for i in range(0, n, chunk)]
        sender = threading.Thread(daemon=True, target=lambda: [self.send(b) for b in blocks])
        sender.start()
        self.receive(n)
        sender.join(timeout=60)
        assert not sender.is_alive()

    def close_and_check(self) -> None:
        """Half-closes, reads the echo's end of input, and compares the two streams."""
        self.sock.shutdown(socket.SHUT_WR)
        assert self.sock.recv(1) == b"", "bytes came back beyond what was sent"
        self.sock.close()
        assert self.received_bytes == self.sent_bytes
        assert self.received.hexdigest() == self.sent.hexdigest(), "the echo differs from what was sent"


def wait_for_splice(proxy, tunnel: EchoTunnel, task_id: int, limit: int = 512 * MiB) -> None:
    """Bulk both ways until the task says it is spliced (at most `limit` bytes)."""
    while proxy.task(task_id)["relay"] != "splice":
        assert tunnel.sent_bytes < limit, f"no switch to splice after {tunnel.sent_bytes} bytes: {proxy.task(task_id)}"
        tunnel.bulk(8 * MiB)


def exchanges_until(tunnel: EchoTunnel, predicate, what: str, limit: int = 5000) -> None:
    """Small round trips until `predicate` holds (at most `limit` of them)."""
    count = 0
    while not predicate():
        assert count < limit, f"{what}: not after {count} small exchanges"
        tunnel.exchanges(10)
        count += 10


def frozen_while_suspended(proxy, task_id: int) -> tuple[int, int]:
    """Suspends the task and checks that its byte counts stay put over a few readings."""
    assert steer(proxy, "suspend", task_id)["state"] == "suspended"
    first = proxy.task(task_id)
    frozen = (first["upload"]["completed"], first["download"]["completed"])
    for _ in range(4):
        time.sleep(0.2)
        rec = proxy.task(task_id)
        assert (rec["upload"]["completed"], rec["download"]["completed"]) == frozen, "counts moved while suspended"
    return frozen


def test_small_exchanges_stay_on_nio_and_bulk_switches_to_splice_and_back_keeping_every_byte(echo_proxy, echo):
    """Small round trips, then bulk both ways until the tunnel is spliced, then small round trips
    until it is back on NIO (its pipes closed), then bulk until it is spliced again: every byte
    comes back in order, and the task counts each byte once, in each direction."""
    before = pipes(echo_proxy.pid)
    tunnel = EchoTunnel(echo_proxy, echo)
    tunnel.exchanges(300)
    tid = live_task(echo_proxy, tunnel.target, min_download=300 * 1024)["id"]
    assert echo_proxy.task(tid)["relay"] == "nio", "request-sized exchanges were spliced"
    assert pipes(echo_proxy.pid) == before, "a tunnel on the NIO relay made pipes"
    wait_for_splice(echo_proxy, tunnel, tid)
    wait_for(lambda: pipes(echo_proxy.pid) == before + 4, timeout=10,
             message=lambda: f"pipes: {before} before the tunnel, {pipes(echo_proxy.pid)} with it")
    tunnel.bulk(32 * MiB)
    exchanges_until(tunnel, lambda: pipes(echo_proxy.pid) == before, "the tunnel back on NIO (its pipes closed)")
    # Back on NIO, the task still says it was spliced.
    assert echo_proxy.task(tid)["relay"] == "splice"
    sent = tunnel.sent_bytes
    while pipes(echo_proxy.pid) != before + 4:
        assert tunnel.sent_bytes - sent < 512 * MiB, "no second switch to splice"
        tunnel.bulk(8 * MiB)
    tunnel.exchanges(100)
    tunnel.close_and_check()
    rec = echo_proxy.history_record(tunnel.target)
    assert rec["relay"] == "splice" and rec["error"] is None, rec
    assert (rec["upload"]["completed"], rec["download"]["completed"]) == (tunnel.sent_bytes, tunnel.sent_bytes), rec
    wait_for(lambda: pipes(echo_proxy.pid) == before, timeout=10,
             message=lambda: f"pipes: {before} before the tunnel, {pipes(echo_proxy.pid)} after it")


def test_a_download_switches_mid_answer_and_arrives_whole(start_proxy, tls_origin, tls_files, tmp_path):
    """One direction only: a small request, then a long answer (an HTTPS download through the
    tunnel) is switched mid-answer and arrives whole."""
    proxy = start_proxy("--allow-connect-port", str(tls_origin.port), "--state-dir", str(tmp_path / "state"))
    n = 64 * MiB
    rec = exact_download(proxy, tls_origin, tls_files, n, max_time=120)
    assert rec["relay"] == "splice" and rec["error"] is None, rec


def test_suspend_and_resume_on_both_sides_of_the_switch(echo_proxy, echo):
    """Suspended on NIO, then on splice: the counts stay put each time, and after each resume every
    byte comes back in order, counted once."""
    tunnel = EchoTunnel(echo_proxy, echo)
    tunnel.exchanges(100)
    tid = live_task(echo_proxy, tunnel.target, min_download=100 * 1024)["id"]
    assert echo_proxy.task(tid)["relay"] == "nio"

    # On NIO: what the client sends while suspended waits, and comes back after the resume.
    frozen = frozen_while_suspended(echo_proxy, tid)
    assert frozen == (tunnel.sent_bytes, tunnel.sent_bytes)
    pending = tunnel.block(64 * 1024)
    tunnel.send(pending)
    rec = echo_proxy.task(tid)
    assert (rec["upload"]["completed"], rec["download"]["completed"]) == frozen, "counts moved while suspended"
    assert steer(echo_proxy, "resume", tid)["state"] == "running"
    assert tunnel.receive(len(pending)) == pending

    # The switch, then a suspend in the middle of bulk both ways.
    wait_for_splice(echo_proxy, tunnel, tid)
    n = 64 * MiB
    base = tunnel.sent_bytes
    blocks = [tunnel.block(MiB) for _ in range(n // MiB)]
    sender = threading.Thread(daemon=True, target=lambda: [tunnel.send(b) for b in blocks])
    sender.start()
    got = bytearray()
    while len(got) < 8 * MiB:
        got += tunnel.sock.recv(1 << 20)
    frozen = frozen_while_suspended(echo_proxy, tid)
    assert frozen[1] < base + n, f"not mid-transfer when suspended: {frozen}"
    assert steer(echo_proxy, "resume", tid)["state"] == "running"
    while len(got) < n:
        chunk = tunnel.sock.recv(1 << 20)
        assert chunk, "the tunnel closed mid-transfer"
        got += chunk
    sender.join(timeout=60)
    tunnel.received.update(got)
    tunnel.received_bytes += len(got)
    assert echo_proxy.task(tid)["relay"] == "splice"
    tunnel.exchanges(50)
    tunnel.close_and_check()
    rec = echo_proxy.history_record(tunnel.target)
    assert rec["id"] == tid and rec["error"] is None, rec
    assert (rec["upload"]["completed"], rec["download"]["completed"]) == (tunnel.sent_bytes, tunnel.sent_bytes), rec
