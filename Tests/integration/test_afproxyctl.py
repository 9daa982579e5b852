"""The afproxyctl CLI against a running daemon: list, show, suspend, resume, cancel, watch, stats,
its exit codes (0 done, 1 refused, 2 usage, 69 unreachable) and its help."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from helpers import afproxyctl_path, clean_env, ctl, curl, live_task, short_socket_dir, start_curl, wait_for

MiB = 1024 * 1024
HEADER = ["ID", "KIND", "STATE", "METHOD", "URL", "STATUS", "PROGRESS", "RATE", "ETA", "AGE"]
ANSI = re.compile(r"\x1b[\[\]()#;?]*")
SUBCOMMANDS = ("list", "show", "suspend", "resume", "cancel", "watch", "stats")


@pytest.fixture(autouse=True)
def _needs_afproxyctl(afproxyctl_bin):
    """Every test here needs the CLI binary (fails clearly when it is not built)."""


def ok(r: subprocess.CompletedProcess, what: str) -> str:
    assert r.returncode == 0, f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def slow_download(proxy, origin, n: int = 60 * MiB, rate: str = "2M", tag: str = ""):
    """A download that stays mid-body for a while: (curl process, url, live task id)."""
    url = origin.url(f"/bytes/{n}{tag}")
    client = start_curl(proxy, "--limit-rate", rate, "--max-time", "60", "-o", "/dev/null", url)
    try:
        tid = live_task(proxy, url, min_download=1)["id"]
    except BaseException:
        client.kill()
        client.wait(timeout=10)
        raise
    return client, url, tid


def finish(client: subprocess.Popen) -> None:
    if client.poll() is None:
        client.kill()
    client.wait(timeout=10)


class LineReader:
    """Collects a subprocess's stdout lines in a background thread."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            with self._lock:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._thread.join(timeout=5)
        self.proc.stdout.close()


def start_watch(proxy, *args: str) -> LineReader:
    proc = subprocess.Popen([afproxyctl_path(), "--socket", proxy.control_socket, "watch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=clean_env())
    return LineReader(proc)


PROBE = "watch-probe="


def until_watching(proxy, origin, *watches: LineReader, timeout: float = 30.0) -> None:
    """Sends probe requests until every watch has printed a line about one. A watch prints nothing
    before its first event, and the daemon only sends it events once it is subscribed: a printed
    probe is the proof that no later event will be missed. (A probe sent before the subscription
    is simply not seen; the next one is.)"""
    deadline = time.monotonic() + timeout

    def all_saw_a_probe() -> bool:
        return all(any(PROBE in line for line in w.snapshot()) for w in watches)

    probe = 0
    while not all_saw_a_probe():
        for w in watches:
            assert w.proc.poll() is None, \
                f"watch exited with {w.proc.returncode}: {w.proc.stderr.read().decode(errors='replace')}"
        assert time.monotonic() < deadline, \
            f"no watch printed any of {probe} probe requests; lines: {[w.snapshot()[:5] for w in watches]}"
        probe += 1
        r = curl(proxy, "--max-time", "10", "-o", "/dev/null", origin.url(f"/bytes/1?{PROBE}{probe}"))
        assert r.returncode == 0, r.stderr
        # Poll a moment for this probe's events before sending the next one.
        settle = time.monotonic() + 1.0
        while time.monotonic() < settle and not all_saw_a_probe():
            time.sleep(0.02)


# ----------------------------------------------------------------------------------------------


def test_list_plain_and_json(proxy, origin):
    """list prints the header and the task's row as plain text when piped; --json is the API's JSON;
    --socket works after the subcommand too; list --all shows the completed task."""
    client, url, tid = slow_download(proxy, origin)
    try:
        out = ok(ctl(proxy, "list"), "list")
        assert not ANSI.search(out), f"ANSI escapes in piped output: {out!r}"
        lines = [l for l in out.splitlines() if l.strip()]
        assert lines and lines[0].split() == HEADER, f"header: {lines[:1]!r}"
        rows = [l.split() for l in lines[1:]]
        row = next((r for r in rows if r and r[0] == str(tid)), None)
        assert row is not None, f"no row for task {tid} in:\n{out}"
        assert row[1:5] == ["data", "running", "GET", url], row

        data = json.loads(ok(ctl(proxy, "list", "--json"), "list --json"))
        assert any(t["id"] == tid and t["url"] == url for t in data["tasks"]), data

        r = subprocess.run([afproxyctl_path(), "list", "--socket", proxy.control_socket],
                           capture_output=True, text=True, timeout=30, env=clean_env())
        assert str(tid) in ok(r, "list --socket PATH (after the subcommand)")
        assert url in r.stdout
    finally:
        finish(client)

    proxy.history_record(url)
    out = ok(ctl(proxy, "list"), "list")
    assert url not in out, f"a finished task still listed as live:\n{out}"
    out = ok(ctl(proxy, "list", "--all"), "list --all")
    row = next((l.split() for l in out.splitlines() if l.split()[:1] == [str(tid)]), None)
    assert row is not None and "completed" in row and url in row, f"no completed row for {tid}:\n{out}"
    data = json.loads(ok(ctl(proxy, "list", "--all", "--json"), "list --all --json"))
    assert any(t["id"] == tid and t["state"] == "completed" for t in data["tasks"]), data


def test_show(proxy, origin):
    """show ID prints the task's URL and a timeline; show ID --json is the task's JSON."""
    url = origin.url("/bytes/12345")
    assert curl(proxy, "--max-time", "30", "-o", "/dev/null", url).returncode == 0
    tid = proxy.history_record(url)["id"]

    out = ok(ctl(proxy, "show", str(tid)), "show")
    assert not ANSI.search(out), f"ANSI escapes in piped output: {out!r}"
    assert url in out, out
    assert "timeline" in out.lower(), out
    assert "completed" in out, out

    data = json.loads(ok(ctl(proxy, "show", str(tid), "--json"), "show --json"))
    assert data == proxy.task(tid)


def test_suspend_resume_cancel_by_id(proxy, origin):
    """suspend/resume/cancel ID print the new state and exit 0, and the daemon agrees; several ids
    in one call work."""
    a, url_a, ta = slow_download(proxy, origin, tag="?a")
    b, url_b, tb = slow_download(proxy, origin, tag="?b")
    try:
        out = ok(ctl(proxy, "suspend", str(ta)), "suspend")
        assert str(ta) in out and "suspended" in out, out
        assert proxy.task(ta)["state"] == "suspended"
        assert proxy.task(tb)["state"] == "running"

        out = ok(ctl(proxy, "resume", str(ta)), "resume")
        assert str(ta) in out and "running" in out, out
        assert proxy.task(ta)["state"] == "running"

        out = ok(ctl(proxy, "suspend", str(ta), str(tb)), "suspend A B")
        assert str(ta) in out and str(tb) in out, out
        assert [proxy.task(t)["state"] for t in (ta, tb)] == ["suspended", "suspended"]
        out = ok(ctl(proxy, "resume", str(ta), str(tb)), "resume A B")
        assert [proxy.task(t)["state"] for t in (ta, tb)] == ["running", "running"]

        out = ok(ctl(proxy, "cancel", str(ta)), "cancel")
        # the new state: canceling while the abort is under way, or already completed
        assert str(ta) in out and ("canceling" in out or "completed" in out), out
        a.wait(timeout=15)
        assert a.returncode != 0, "curl succeeded although its task was canceled"
        rec = proxy.history_record(url_a)
        assert (rec["id"], rec["state"], rec["error"]) == (ta, "completed", "canceled"), rec
        assert proxy.task(tb)["state"] == "running", "cancel of one task touched another"

        out = ok(ctl(proxy, "suspend", str(tb), "--json"), "suspend --json")
        assert "suspended" in out and str(tb) in out
    finally:
        finish(a)
        finish(b)


def test_suspend_all_resume_all(proxy, origin):
    """suspend --all and resume --all act on every live task."""
    a, _, ta = slow_download(proxy, origin, tag="?a")
    b, _, tb = slow_download(proxy, origin, tag="?b")
    try:
        out = ok(ctl(proxy, "suspend", "--all"), "suspend --all")
        assert str(ta) in out and str(tb) in out, out
        assert [proxy.task(t)["state"] for t in (ta, tb)] == ["suspended", "suspended"]
        out = ok(ctl(proxy, "resume", "--all"), "resume --all")
        assert str(ta) in out and str(tb) in out, out
        assert [proxy.task(t)["state"] for t in (ta, tb)] == ["running", "running"]
    finally:
        finish(a)
        finish(b)


def test_refusals_exit_1(proxy, origin):
    """What the daemon refuses (unknown id, illegal transition) exits 1 with its message on stderr."""
    for args in (["show", "987654"], ["suspend", "987654"], ["resume", "987654"], ["cancel", "987654"]):
        r = ctl(proxy, *args)
        assert r.returncode == 1, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert "987654" in r.stderr, f"{args}: stderr {r.stderr!r}"
        assert r.stdout.strip() == "", f"{args}: stdout {r.stdout!r}"

    client, url, tid = slow_download(proxy, origin)
    try:
        r = ctl(proxy, "resume", str(tid))
        assert r.returncode == 1, f"resume a running task: exit {r.returncode}, {r.stdout!r} {r.stderr!r}"
        assert str(tid) in r.stderr and "running" in r.stderr, r.stderr
        ok(ctl(proxy, "suspend", str(tid)), "suspend")
        r = ctl(proxy, "suspend", str(tid))
        assert r.returncode == 1, f"suspend a suspended task: exit {r.returncode}"
        assert "suspended" in r.stderr, r.stderr
    finally:
        finish(client)


def test_stats(proxy, origin):
    """stats prints a summary; stats --json is the API's stats."""
    assert curl(proxy, "--max-time", "30", "-o", "/dev/null", origin.url("/bytes/5000")).returncode == 0
    proxy.wait_idle()
    out = ok(ctl(proxy, "stats"), "stats")
    assert out.strip() and not ANSI.search(out), out
    data = json.loads(ok(ctl(proxy, "stats", "--json"), "stats --json"))
    for key in ("served", "live", "bytesUp", "bytesDown", "uptimeSeconds"):
        assert key in data, f"stats --json lacks {key}: {data}"
    assert data["served"] >= 1 and data["bytesDown"] >= 5000


def test_watch_json_and_plain(proxy, origin):
    """watch --json (not a terminal) prints the API's JSON event lines for a request; plain watch
    prints one line per event. Both are known to be subscribed before the request is sent, so
    that its `created` event cannot be missed."""
    watch_json = start_watch(proxy, "--json")
    watch_plain = start_watch(proxy)
    try:
        until_watching(proxy, origin, watch_json, watch_plain)
        url = origin.url("/bytes/4321")
        assert curl(proxy, "--max-time", "30", "-o", "/dev/null", url).returncode == 0
        tid = proxy.history_record(url)["id"]

        def parsed():
            out = []
            for line in watch_json.snapshot():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    out.append({"unparsable": line})
            return out

        wait_for(lambda: any(e.get("event") == "completed" and e.get("task", {}).get("id") == tid
                             for e in parsed()),
                 timeout=10, message=lambda: f"a completed event for task {tid} from watch --json; "
                                             f"lines: {watch_json.snapshot()[:20]}")
        events = parsed()
        assert all("unparsable" not in e for e in events), f"non-JSON lines: {events[:10]}"
        kinds = [e["event"] for e in events if e["task"]["id"] == tid and e["event"] != "progress"]
        assert kinds == ["created", "completed"], kinds
        assert all(e["task"]["url"] == url for e in events if e["task"]["id"] == tid)

        wait_for(lambda: sum(url in l for l in watch_plain.snapshot()) >= 2, timeout=10,
                 message=lambda: f"two lines about {url} from watch; got {watch_plain.snapshot()[:20]}")
        plain = [l for l in watch_plain.snapshot() if url in l]
        assert not any(ANSI.search(l) for l in watch_plain.snapshot()), watch_plain.snapshot()
        assert "created" in plain[0] and any("completed" in l for l in plain[1:]), plain
        assert watch_json.proc.poll() is None and watch_plain.proc.poll() is None, "watch exited by itself"
    finally:
        watch_json.stop()
        watch_plain.stop()


def test_daemon_not_reachable_exit_69(tmp_path):
    """With no daemon behind the socket (missing file, or a stale one) afproxyctl exits 69 naming the
    socket it tried and how to start afproxy; the default path honours $AFPROXY_CONTROL_SOCKET."""
    missing = str(short_socket_dir(tmp_path) / "nobody-home.sock")
    for args in (["list"], ["show", "1"], ["suspend", "1"], ["stats"], ["watch"]):
        r = ctl(missing, *args)
        assert r.returncode == 69, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert missing in r.stderr, f"{args}: socket path not in {r.stderr!r}"
        assert "afproxy" in r.stderr and "start" in r.stderr.lower(), f"{args}: no hint to start afproxy: {r.stderr!r}"

    stale = str(short_socket_dir(tmp_path) / "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)  # a socket file with nobody listening: connection refused
    s.close()
    r = ctl(stale, "list")
    assert r.returncode == 69 and stale in r.stderr, (r.returncode, r.stderr)

    r = ctl(None, "list", env={"AFPROXY_CONTROL_SOCKET": missing})
    assert r.returncode == 69 and missing in r.stderr, (r.returncode, r.stderr)


def test_default_socket_falls_back_to_the_system_service(start_proxy, origin):
    """With no --socket, no $AFPROXY_CONTROL_SOCKET and no daemon at the per-user default path,
    afproxyctl reaches the system service's /run/afproxy/control.sock."""
    system = "/run/afproxy/control.sock"
    user_default = f"/tmp/afproxy-{os.getuid()}/control.sock"
    if os.path.exists(system) or os.path.exists(user_default):
        pytest.skip("a daemon's control socket is already at one of the default paths")
    if not os.access("/run", os.W_OK):
        pytest.skip("/run is not writable here")
    made_directory = not os.path.isdir("/run/afproxy")
    os.makedirs("/run/afproxy", exist_ok=True)
    try:
        proxy = start_proxy(control_socket=system)
        url = origin.url("/bytes/10")
        assert curl(proxy, "-o", "/dev/null", url).returncode == 0
        env = {k: v for k, v in clean_env().items()
               if k not in ("AFPROXY_CONTROL_SOCKET", "RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR")}
        wait_for(lambda: os.path.exists(system), timeout=10, message=system)
        r = subprocess.run([afproxyctl_path(), "list", "--all", "--json"], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL, env=env)
        assert r.returncode == 0, r.stderr
        assert url in [t["url"] for t in json.loads(r.stdout)["tasks"]], r.stdout
        proxy.stop(by_test=True)
        # Gone again: the per-user default is what the error names.
        r = subprocess.run([afproxyctl_path(), "list"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL, env=env)
        assert r.returncode == 69 and user_default in r.stderr, (r.returncode, r.stderr)
    finally:
        if made_directory:
            shutil.rmtree("/run/afproxy", ignore_errors=True)


def test_usage_errors_exit_2(tmp_path):
    """Usage errors exit 2 before contacting any daemon."""
    missing = str(short_socket_dir(tmp_path) / "nobody-home.sock")
    for args in (["suspend"], ["resume"], ["cancel"], ["show"], ["show", "abc"], ["list", "--bogus"],
                 ["--bogus"], ["frobnicate"], ["suspend", "1", "--all"]):
        r = ctl(missing, *args)
        assert r.returncode == 2, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert r.stderr.strip(), f"{args}: no message on stderr"


def test_help():
    """--help of the root and of every subcommand exits 0 and prints a usage line."""
    for args in (["--help"], *[[sub, "--help"] for sub in SUBCOMMANDS], *[["help", sub] for sub in SUBCOMMANDS]):
        r = subprocess.run([afproxyctl_path(), *args], capture_output=True, text=True, timeout=30,
                           env=clean_env())
        assert r.returncode == 0, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert "usage" in r.stdout.lower(), f"{args}: no usage in {r.stdout!r}"
    root = subprocess.run([afproxyctl_path(), "--help"], capture_output=True, text=True, timeout=30,
                          env=clean_env()).stdout
    for sub in SUBCOMMANDS:
        assert sub in root, f"root help does not mention {sub}"
