"""Reachability (issue 12) through the real daemon, in network namespaces the test makes: a namespace
for the daemon and one for the origin, joined by a veth pair with addresses the test assigns and a
default route in the daemon's namespace over its end of the pair. Taking that end down is losing
the network; bringing it up (and the default route back, which the kernel drops with the link) is
its return.

The daemon runs in its namespace (`ip netns exec`, which execs it, so the pid is afproxy's); its
control socket is on the shared file system, so afproxyctl and the API work from here. Needs root
and iproute2; skipped, saying why, where namespaces cannot be made.

    test_status_*              afproxyctl status, the events, the log (this branch)
    network_policy tests       what a loss does to the tasks (`-m network_policy` runs them alone)
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import AfproxyProcess, EventStream, clean_env, ctl, file_sha256, wait_for
from range_origin import file_sha256 as expected_sha256

HERE = Path(__file__).resolve().parent
MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# the namespaces


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20, check=check)


@dataclass
class Namespaces:
    """Two namespaces joined by a veth pair: `daemon_if` (in `daemon_ns`, `daemon_addr`) and
    `origin_if` (in `origin_ns`, `origin_addr`, the daemon's default gateway)."""

    daemon_ns: str
    origin_ns: str
    daemon_if: str
    origin_if: str
    daemon_addr: str
    origin_addr: str

    @property
    def wrapper(self) -> tuple[str, ...]:
        """Put before afproxy (or curl) to run it in the daemon's namespace."""
        return ("ip", "netns", "exec", self.daemon_ns)

    def in_daemon_ns(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return ip("netns", "exec", self.daemon_ns, *args, check=check)

    def link_down(self) -> None:
        self.in_daemon_ns("ip", "link", "set", "dev", self.daemon_if, "down")

    def link_up(self) -> None:
        """The link up, and the default route again: the kernel removed it with the link."""
        self.in_daemon_ns("ip", "link", "set", "dev", self.daemon_if, "up")
        self.in_daemon_ns("ip", "route", "replace", "default", "via", self.origin_addr, "dev", self.daemon_if)


# How long a wait for the daemon to notice a link change may take before the test fails: the
# waits poll for state, so this only bounds a failure; 5 s was too short under ThreadSanitizer
# on three workers (the network-lost event came later).
SETTLE = 30


@pytest.fixture
def netns() -> Namespaces:
    if sys.platform != "linux":
        pytest.skip("network namespaces are a Linux feature")
    if shutil.which("ip") is None:
        pytest.skip("iproute2's `ip` is not installed (scripts/install-deps installs it)")
    if os.geteuid() != 0:
        pytest.skip("making network namespaces needs root (CI runs these tests as root)")
    n = os.getpid() % 200 + 20
    names = Namespaces(
        daemon_ns=f"afp-d{os.getpid()}", origin_ns=f"afp-o{os.getpid()}",
        daemon_if=f"afpd{n}", origin_if=f"afpo{n}",
        daemon_addr=f"10.213.{n}.2", origin_addr=f"10.213.{n}.1")
    made = ip("netns", "add", names.daemon_ns, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {made.stderr.strip()}")
    try:
        ip("netns", "add", names.origin_ns)
        ip("link", "add", names.daemon_if, "netns", names.daemon_ns, "type", "veth",
           "peer", "name", names.origin_if, "netns", names.origin_ns)
        for ns, dev, addr in ((names.daemon_ns, names.daemon_if, names.daemon_addr),
                              (names.origin_ns, names.origin_if, names.origin_addr)):
            ip("-n", ns, "link", "set", "dev", "lo", "up")
            ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            ip("-n", ns, "link", "set", "dev", dev, "up")
        ip("-n", names.daemon_ns, "route", "add", "default", "via", names.origin_addr, "dev", names.daemon_if)
    except subprocess.CalledProcessError as error:
        for ns in (names.daemon_ns, names.origin_ns):
            ip("netns", "del", ns, check=False)
        pytest.skip(f"cannot set up the veth pair between namespaces: {error.stderr.strip()}")
    yield names
    for ns in (names.daemon_ns, names.origin_ns):  # deleting a namespace deletes its end of the pair
        ip("netns", "del", ns, check=False)


@pytest.fixture
def start_in_ns(start_proxy, netns, tmp_path):
    """start_in_ns(*args): a daemon in the daemon's namespace with its own state and download dirs."""
    for name in ("state", "downloads"):
        (tmp_path / name).mkdir(exist_ok=True)

    def start(*args: str) -> AfproxyProcess:
        # The origin's namespace is a destination of this test's own (beside helpers.TEST_DESTINATIONS).
        return start_proxy("--state-dir", str(tmp_path / "state"), "--download-dir", str(tmp_path / "downloads"),
                           "--allow-hosts", netns.origin_addr, *args, wrapper=netns.wrapper)
    return start


def status(proxy: AfproxyProcess) -> dict:
    result = ctl(proxy, "status", "--json")
    assert result.returncode == 0, f"afproxyctl status --json: {result.returncode} {result.stderr}"
    return json.loads(result.stdout)


def wait_network(proxy: AfproxyProcess, wanted: str, timeout: float) -> dict:
    seen: list = []

    def check():
        seen[:] = [status(proxy)]
        return seen[0] if seen[0]["network"]["status"] == wanted else None

    return wait_for(check, timeout, interval=0.05,
                    message=lambda: f"network {wanted}; status says {json.dumps(seen[-1] if seen else None)}")


def network_events(ev: EventStream) -> list[dict]:
    return [e for e in ev.snapshot() if e.get("event", "").startswith("network-")]


# ----------------------------------------------------------------------------------------------
# status, events, log


def test_status_follows_the_link_down_and_up(start_in_ns, netns):
    proxy = start_in_ns()
    up = wait_network(proxy, "reachable", 5)
    assert up["network"]["interface"] == netns.daemon_if, up
    assert up["network"]["interfaceKind"] == "other", up  # a veth has no bus device
    assert up["network"]["changedAt"], up
    assert up["version"] and up["uptimeSeconds"] >= 0, up
    assert up["tasks"]["live"] == 0 and "byState" in up["tasks"], up

    human = ctl(proxy, "status")
    assert human.returncode == 0, human.stderr
    assert f"network   reachable via {netns.daemon_if} (other)" in human.stdout, human.stdout
    assert human.stdout.startswith("afproxy "), human.stdout

    with EventStream(proxy.control_socket) as ev:
        netns.link_down()
        down = wait_network(proxy, "unreachable", 2)
        assert down["network"]["interface"] is None and down["network"]["changedAt"], down
        wait_for(lambda: network_events(ev), SETTLE, message=lambda: f"a network-lost event; have {ev.snapshot()}")
        lost = network_events(ev)[0]
        assert lost["event"] == "network-lost" and "task" not in lost, lost
        assert lost["network"]["status"] == "unreachable", lost

        netns.link_up()
        back = wait_network(proxy, "reachable", 5)
        assert back["network"]["interface"] == netns.daemon_if, back
        wait_for(lambda: len(network_events(ev)) >= 2, SETTLE, message=lambda: f"network-restored; have {ev.snapshot()}")
        restored = network_events(ev)[1]
        assert restored["event"] == "network-restored" and restored["network"]["status"] == "reachable", restored
        assert len(network_events(ev)) == 2, network_events(ev)

    log = proxy.log()
    assert "network unreachable" in log, log
    assert f"network reachable via {netns.daemon_if} (other)" in log, log


def test_watch_shows_network_events(start_in_ns, netns, afproxyctl_bin):
    """`afproxyctl watch --json` prints the event lines as they come; without --json, a sentence."""
    proxy = start_in_ns()
    wait_network(proxy, "reachable", 5)
    outputs: dict[str, list[str]] = {"json": [], "text": []}
    procs = {}
    for mode, extra in (("json", ["--json"]), ("text", [])):
        procs[mode] = subprocess.Popen(
            [afproxyctl_bin, "--socket", proxy.control_socket, "watch", *extra], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=clean_env())
        threading.Thread(target=lambda p=procs[mode], out=outputs[mode]: out.extend(iter(p.stdout.readline, "")),
                         daemon=True).start()
    try:
        # Both streams are open before the link goes down: downloads (to a port nobody listens
        # on) make tasks, whose events both must print first; a probe made before a stream
        # subscribed is not seen by it, so one is made each round until both have printed. A
        # fixed sleep here was too short for an ASan afproxyctl on a busy machine. Each probe has
        # a file of its own: the one before may still be retrying its refused connection, and a
        # second download to its path is refused.
        probes = itertools.count()

        def probed() -> bool:
            if outputs["json"] and outputs["text"]:
                return True
            r = subprocess.run([afproxyctl_bin, "--socket", proxy.control_socket, "download",
                                f"http://127.0.0.1:9/probe-{next(probes)}"], capture_output=True, text=True,
                               timeout=60, stdin=subprocess.DEVNULL, env=clean_env())
            assert r.returncode == 0, r.stderr
            return False
        wait_for(probed, SETTLE, interval=1.0, message=lambda: f"a probe's events in both streams; have {outputs}")
        netns.link_down()
        wait_for(lambda: any('"network-lost"' in line for line in outputs["json"]), SETTLE,
                 message=lambda: f"network-lost from watch --json; have {outputs['json']}")
        netns.link_up()
        wait_for(lambda: any('"network-restored"' in line for line in outputs["json"]), SETTLE,
                 message=lambda: f"network-restored from watch --json; have {outputs['json']}")
        wait_for(lambda: any("network-restored network reachable via" in line for line in outputs["text"]), SETTLE,
                 message=lambda: f"network-restored from watch; have {outputs['text']}")
    finally:
        for p in procs.values():
            p.kill()
            p.wait(timeout=10)
    lost = json.loads(next(line for line in outputs["json"] if '"network-lost"' in line))
    assert set(lost) == {"event", "network"}, lost
    assert any("network-lost network unreachable" in line for line in outputs["text"]), outputs["text"]


# ----------------------------------------------------------------------------------------------
# what a loss does to the tasks (the manager's part; `-m network_policy`)


@pytest.fixture
def origin_in_ns(netns):
    """The range origin in the origin's namespace, on its end of the pair: (process, base URL)."""
    port = 20000 + os.getpid() % 10000
    proc = subprocess.Popen(
        ["ip", "netns", "exec", netns.origin_ns, sys.executable, str(HERE / "range_origin.py"), str(port),
         netns.origin_addr],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if "range origin on" not in line:
        proc.kill()
        pytest.fail(f"the range origin did not start in {netns.origin_ns}: {line!r} {proc.stderr.read()}")
    yield proc, f"http://{netns.origin_addr}:{port}"
    proc.kill()
    proc.wait(timeout=10)


def task(proxy: AfproxyProcess, tid: int) -> dict:
    return proxy.task(tid)



@pytest.mark.network_policy
def test_a_download_waits_for_the_network_and_continues_at_its_offset(start_in_ns, netns, origin_in_ns, tmp_path):
    _, base = origin_in_ns
    proxy = start_in_ns()
    wait_network(proxy, "reachable", 5)
    size = 4 * MiB
    url = f"{base}/wait.bin?size={size}&trickle={MiB}"
    target = tmp_path / "wait.bin"
    out = ctl(proxy, "download", url, "-o", str(target))
    assert out.returncode == 0 and out.stdout.strip().isdigit(), out
    tid = int(out.stdout.strip())
    wait_for(lambda: task(proxy, tid)["download"]["completed"] >= MiB // 2, 30, message="half a MiB")

    netns.link_down()
    wait_network(proxy, "unreachable", 2)
    waiting = wait_for(lambda: (t := task(proxy, tid))["waiting"] == "waiting for network" and t, SETTLE,
                       message=lambda: f"waiting for network; task is {task(proxy, tid)}")
    attempt = waiting["file"]["attempt"]
    offset = waiting["download"]["completed"]
    time.sleep(3)  # longer than the first retry delays: no attempt may be spent meanwhile
    still = task(proxy, tid)
    assert still["waiting"] == "waiting for network" and still["file"]["attempt"] == attempt, still
    assert still["state"] == "running", still

    netns.link_up()
    wait_network(proxy, "reachable", 5)
    done = wait_for(lambda: (t := task(proxy, tid))["state"] == "completed" and t, 60, message="the download's end")
    assert done["error"] is None, done
    assert done["resumes"] and done["resumes"][-1]["offset"] >= offset // 2, done["resumes"]
    assert file_sha256(target) == (size, expected_sha256(size))


@pytest.mark.network_policy
def test_suspend_all_suspends_proxied_transfers_and_resumes_only_those(start_in_ns, netns, origin_in_ns):
    _, base = origin_in_ns
    proxy = start_in_ns("--network-loss", "suspend-all")
    wait_network(proxy, "reachable", 5)
    urls = [f"{base}/proxied-{n}.bin?size={4 * MiB}&trickle={256 * 1024}" for n in (1, 2)]
    curls = [subprocess.Popen([*netns.wrapper, "curl", "-sS", "-o", "/dev/null", "-x", proxy.proxy_url, url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              env=clean_env()) for url in urls]
    try:
        def live(url):
            return next((t for t in proxy.tasks() if t["url"] == url and t["download"]["completed"] > 0), None)
        ids = [wait_for(lambda u=url: live(u), 20, message=f"a live task for {url}")["id"] for url in urls]
        by_person = ctl(proxy, "suspend", str(ids[1]))
        assert by_person.returncode == 0, by_person.stderr

        netns.link_down()
        wait_network(proxy, "unreachable", 2)
        wait_for(lambda: task(proxy, ids[0])["state"] == "suspended", SETTLE, message="the transfer suspended by the loss")

        netns.link_up()
        wait_network(proxy, "reachable", 5)
        wait_for(lambda: task(proxy, ids[0])["state"] == "running", SETTLE, message="the transfer resumed")
        time.sleep(1)
        assert task(proxy, ids[1])["state"] == "suspended", "the task a person suspended was resumed"
        assert curls[0].wait(timeout=60) == 0, curls[0].stderr.read()
    finally:
        for c in curls:
            if c.poll() is None:
                c.kill()
                c.wait(timeout=10)


@pytest.mark.network_policy
def test_a_reload_applies_network_loss_while_the_network_is_gone(start_in_ns, netns, origin_in_ns, tmp_path):
    """`network-loss` from ignore to suspend-all by SIGHUP while the network is gone (issue 22): the
    running proxied transfer is suspended at once, as if suspend-all had been in force at the loss,
    and resumed when the network returns."""
    _, base = origin_in_ns
    conf = tmp_path / "afproxy.conf"
    conf.write_text("network-loss = ignore\n")
    proxy = start_in_ns("--config", str(conf))
    wait_network(proxy, "reachable", 5)
    url = f"{base}/reloaded.bin?size={4 * MiB}&trickle={256 * 1024}"
    fetch = subprocess.Popen([*netns.wrapper, "curl", "-sS", "-o", "/dev/null", "-x", proxy.proxy_url, url],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             env=clean_env())
    try:
        tid = wait_for(lambda: next((t for t in proxy.tasks() if t["url"] == url and t["download"]["completed"] > 0),
                                    None), 20, message="the transfer moving")["id"]
        netns.link_down()
        wait_network(proxy, "unreachable", 2)
        assert task(proxy, tid)["state"] == "running"  # ignore: the loss changes nothing

        conf.write_text("network-loss = suspend-all\n")
        os.kill(proxy.pid, signal.SIGHUP)
        wait_for(lambda: any("configuration reloaded" in line for line in proxy.stderr_lines), SETTLE,
                 message="the reload")
        wait_for(lambda: task(proxy, tid)["state"] == "suspended", SETTLE, message="the transfer suspended by the reload")

        netns.link_up()
        wait_network(proxy, "reachable", 5)
        wait_for(lambda: task(proxy, tid)["state"] == "running", SETTLE, message="the transfer resumed")
        assert fetch.wait(timeout=60) == 0, fetch.stderr.read()
    finally:
        if fetch.poll() is None:
            fetch.kill()
            fetch.wait(timeout=10)
