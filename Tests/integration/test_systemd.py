"""afproxy as a systemd service, tested without systemd as PID 1: the units (systemd-analyze verify
and security on the files `make install-files` puts in place), socket activation through
systemd-socket-activate, the notify protocol on a NOTIFY_SOCKET the test owns (READY, STATUS,
WATCHDOG, RELOADING, STOPPING), reload and graceful stop, and the journal entries written to a
journal socket the test owns in a private mount namespace."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers import (
    JournalSocket, NotifySocket, RawConn, closed_port, curl, request_bytes, short_socket_dir,
    socket_activate, start_curl, wait_for,
)
from origin import payload, payload_sha256

REPO = Path(__file__).resolve().parents[2]
UNITS = ("afproxy.service", "afproxy.socket", "afproxy-control.socket", "afproxy-capture@.service")


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, **kwargs)


def install_files(afproxy_bin: str, **variables: str) -> subprocess.CompletedProcess:
    """`make install-files VAR=value…` with the binaries next to afproxy_bin (no release build)."""
    argv = ["make", "-s", "-C", str(REPO), "install-files", f"BUILDDIR={Path(afproxy_bin).parent}"]
    argv += [f"{k}={v}" for k, v in variables.items()]
    r = run(argv)
    assert r.returncode == 0, f"make install-files failed:\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture
def installed(afproxy_bin, tmp_path) -> Path:
    """Everything installed under a temporary PREFIX and SYSCONFDIR, so that ExecStart= names a
    binary that exists and the units can be verified exactly as installed."""
    install_files(afproxy_bin, PREFIX=str(tmp_path / "usr"), SYSCONFDIR=str(tmp_path / "etc"))
    return tmp_path


# ----------------------------------------------------------------------------------------------
# the units


def test_units_verify_with_nothing_printed(installed):
    unit_dir = installed / "usr/lib/systemd/system"
    service = (unit_dir / "afproxy.service").read_text()
    assert f"ExecStart={installed}/usr/bin/afproxy --config {installed}/etc/afproxy/afproxy.conf\n" in service
    r = run(["systemd-analyze", "verify", *UNITS], cwd=unit_dir)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")

    user_dir = installed / "usr/lib/systemd/user"
    runtime = installed / "run-user"
    runtime.mkdir(mode=0o700)
    r = run(["systemd-analyze", "--user", "verify", "afproxy.service"], cwd=user_dir,
            env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_service_exposure_at_most_3(installed):
    unit = installed / "usr/lib/systemd/system/afproxy.service"
    r = run(["systemd-analyze", "security", "--offline=yes", "--threshold=30", str(unit)])
    m = re.search(r"Overall exposure level for afproxy\.service: (\d+\.\d)", r.stdout)
    assert m, f"no exposure level in:\n{r.stdout}\n{r.stderr}"
    assert float(m.group(1)) <= 3.0, r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


def test_units_name_the_documented_paths():
    service = (REPO / "systemd/afproxy.service").read_text()
    assert "\nExecStart=/usr/local/bin/afproxy --config /etc/afproxy/afproxy.conf\n" in service
    for line in ("Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure", "DynamicUser=yes",
                 "RuntimeDirectory=afproxy", "StateDirectory=afproxy", "CapabilityBoundingSet=\n",
                 "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "SystemCallFilter=@system-service"):
        assert line in service
    assert re.search(r"\nWatchdogSec=\d+", service)
    proxy = (REPO / "systemd/afproxy.socket").read_text()
    assert "ListenStream=127.0.0.1:3128\n" in proxy and "FileDescriptorName=proxy\n" in proxy
    control = (REPO / "systemd/afproxy-control.socket").read_text()
    assert "ListenStream=/run/afproxy/control.sock\n" in control
    assert "FileDescriptorName=control\n" in control and "SocketMode=0660\n" in control
    user = (REPO / "systemd/user/afproxy.service").read_text()
    assert "Type=notify" in user and "RuntimeDirectory=afproxy" in user
    # A captured service's namespace: ready once mounted, and mounted where every unit sees it.
    hold = (REPO / "systemd/afproxy-capture@.service").read_text()
    assert ("\nExecStart=/usr/local/bin/afproxyctl --socket /run/afproxy/control.sock capture-hold %i\n"
            in hold)
    for line in ("Type=notify", "StopWhenUnneeded=yes", "CapabilityBoundingSet=CAP_SYS_ADMIN CAP_NET_ADMIN"):
        assert line in hold
    settings = [line.split("=")[0] for line in hold.splitlines() if "=" in line and not line.startswith("#")]
    mount_namespace = {"ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "PrivateMounts",
                       "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
                       "ProtectProc", "ProcSubset", "ReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem",
                       "RestrictNamespaces", "PrivateNetwork", "DynamicUser"}
    assert not mount_namespace & set(settings), mount_namespace & set(settings)


def test_install_into_destdir(afproxy_bin, tmp_path):
    dest = tmp_path / "dest"
    install_files(afproxy_bin, DESTDIR=str(dest))
    for path in ("usr/local/bin/afproxy", "usr/local/bin/afproxyctl"):
        assert os.access(dest / path, os.X_OK), path
    for unit in UNITS:
        text = (dest / "usr/local/lib/systemd/system" / unit).read_text()
        assert str(dest) not in text, f"{unit} names the staging directory"
    assert "ExecStart=/usr/local/bin/afproxy --config /etc/afproxy/afproxy.conf\n" in \
        (dest / "usr/local/lib/systemd/system/afproxy.service").read_text()
    assert (dest / "usr/local/lib/systemd/user/afproxy.service").is_file()
    conf = dest / "etc/afproxy/afproxy.conf"
    assert conf.read_text() == (REPO / "config/afproxy.conf").read_text()
    assert (dest / "usr/local/share/doc/afproxy/afproxy.conf.example").is_file()
    r = run([afproxy_bin, "--check-config", str(conf)])
    assert r.returncode == 0, r.stderr

    conf.write_text("max-connections = 10\n")  # a second install keeps the admin's config
    install_files(afproxy_bin, DESTDIR=str(dest))
    assert conf.read_text() == "max-connections = 10\n"


# ----------------------------------------------------------------------------------------------
# socket activation


def activate_when_listening(port: int) -> threading.Thread:
    """systemd-socket-activate execs afproxy on the first connection: this thread makes one as
    soon as the port listens (and leaves it open a moment: afproxy accepts it once started)."""
    def poke():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    time.sleep(0.2)
                return
            except OSError:
                time.sleep(0.05)
    thread = threading.Thread(target=poke, daemon=True)
    thread.start()
    return thread


def test_socket_activation_with_named_descriptors(start_proxy, origin, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    port = closed_port()
    control = str(sock_dir / "activated.sock")
    with NotifySocket(sock_dir / "notify.sock") as notify:
        activate_when_listening(port)
        wrapper = socket_activate("-l", f"127.0.0.1:{port}", "-l", control, "--fdname=proxy:control",
                                  "-E", "NOTIFY_SOCKET")
        p = start_proxy(wrapper=wrapper, default_flags=False, env={"NOTIFY_SOCKET": notify.path})
        assert p.port == port
        r = curl(p, "--max-time", "30", origin.url("/bytes/5000"))
        assert r.returncode == 0 and r.stdout == payload(5000), r.stderr
        assert any(f"listening on 127.0.0.1:{port} (socket from systemd)" in l for l in p.stderr_lines)
        # The control socket is a service of its own, ready a moment after the proxy port.
        wait_for(lambda: any(f"control socket at {control} (socket from systemd)" in l for l in p.stderr_lines),
                 message=lambda: "the control socket from systemd in the log:\n" + p.log())
        # It bound nothing itself: no other listening line, no control socket of its own.
        assert len([l for l in p.stderr_lines if "listening on" in l]) == 1
        assert len([l for l in p.stderr_lines if "control socket at" in l]) == 1

        p.control_socket = control
        # The task completes a moment after curl has its last byte: wait for the count.
        wait_for(lambda: p.stats()["served"] >= 1, message="the request counted as served")
        r = curl(p, "--max-time", "30", origin.url("/bytes/1234"))
        assert r.returncode == 0 and r.stdout == payload(1234)
        _, pid, _ = notify.wait_for("READY", "1")
        assert pid == p.pid
    assert p.stop(by_test=True) == 0


def test_single_unnamed_descriptor_is_the_proxy_port(start_proxy, origin, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    port = closed_port()
    control = str(sock_dir / "own.sock")
    activate_when_listening(port)
    p = start_proxy("--control-socket", control, "--listen", "127.0.0.1:1", control_socket=control,
                    wrapper=socket_activate("-l", f"127.0.0.1:{port}"), default_flags=False)
    assert p.port == port
    r = curl(p, "--max-time", "30", origin.url("/bytes/100"))
    assert r.returncode == 0 and r.stdout == payload(100), r.stderr
    assert any("named unknown taken as the proxy socket" in l for l in p.stderr_lines)
    # The control socket was not handed over: it binds that one, and only that one.
    assert len([l for l in p.stderr_lines if "listening on" in l]) == 1
    p.wait_control_ready()
    wait_for(lambda: p.stats()["served"] >= 1, message="the request counted as served")


# ----------------------------------------------------------------------------------------------
# the notify protocol


def connects(family, address) -> bool:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(address)
        return True
    except OSError:
        return False
    finally:
        s.close()


def test_ready_only_once_every_socket_accepts_then_status_and_watchdog(start_proxy, origin, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    port = closed_port()
    control = str(sock_dir / "ready.sock")
    probes: list[tuple[bool, bool]] = []
    with NotifySocket(sock_dir / "notify.sock") as notify:
        def on_datagram(d):
            if b"READY=1" in d.data and not probes:
                # At the moment READY=1 arrives, both listeners and the control socket accept.
                probes.append((connects(socket.AF_INET, ("127.0.0.1", port)), connects(socket.AF_UNIX, control)))
        notify.callbacks.append(on_datagram)
        p = start_proxy("--listen", f"127.0.0.1:{port}", control_socket=control,
                        env={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        ready_at, pid, ready = notify.wait_for("READY", "1")
        assert pid == p.pid
        assert probes == [(True, True)]
        assert ready.get("STATUS") == "0 running, 0 suspended, 0 served"

        # WATCHDOG=1 every half interval (0.5 s) while the session thread moves.
        notify.wait_for("WATCHDOG", "1", count=6, timeout=10)
        pings = [m[0] for m in notify.with_key("WATCHDOG", "1")]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        assert all(0.4 <= g <= 1.5 for g in gaps) and sum(gaps) / len(gaps) <= 0.8, gaps

        # STATUS= follows what runs and what was served.
        slow = start_curl(p, "--max-time", "60", origin.url("/slowbody/60000?chunk=1000&interval=0.05"))
        notify.wait_for("STATUS", "1 running, 0 suspended, 0 served", timeout=10)
        assert slow.wait(timeout=60) == 0
        notify.wait_for("STATUS", "0 running, 0 suspended, 1 served", timeout=10)
        # At most once a second.
        times = [m[0] for m in notify.with_key("STATUS") if "READY" not in m[2]]
        assert all(b - a >= 0.9 for a, b in zip(times, times[1:])), times
        assert not notify.with_key("RELOADING") and not notify.with_key("STOPPING")
    assert p.stop(by_test=True) == 0


def test_no_watchdog_pings_unless_asked(start_proxy, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    with NotifySocket(sock_dir / "notify.sock") as notify:
        p = start_proxy(env={"NOTIFY_SOCKET": notify.path})
        notify.wait_for("READY", "1")
        time.sleep(1.5)
        assert not notify.with_key("WATCHDOG")
    assert p.stop(by_test=True) == 0


def big_header_status(port: int, origin, size: int) -> int:
    with RawConn(port) as conn:
        conn.send(request_bytes("GET", origin.url("/bytes/10"), [("X-Big", "a" * size)]))
        return conn.read_response().status


def monotonic_usec() -> int:
    return int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1_000_000)


def test_reload_applies_a_valid_config_and_refuses_a_broken_one(start_proxy, origin, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    conf = tmp_path / "afproxy.conf"
    conf.write_text("max-header-bytes = 65536\n")
    with NotifySocket(sock_dir / "notify.sock") as notify:
        p = start_proxy("--config", str(conf), env={"NOTIFY_SOCKET": notify.path})
        notify.wait_for("READY", "1")
        assert big_header_status(p.port, origin, 4000) == 200

        # A download running across the reload finishes intact.
        n = 80_000
        slow = start_curl(p, "--max-time", "60", origin.url(f"/slowbody/{n}?chunk=1000&interval=0.04"),
                          stdout=subprocess.PIPE)
        wait_for(lambda: p.tasks(), message="the download to start")
        conf.write_text("# smaller heads\nmax-header-bytes = 2048\n")
        before = monotonic_usec()
        os.kill(p.pid, signal.SIGHUP)
        reloading_at, pid, reloading = notify.wait_for("RELOADING", "1")
        assert pid == p.pid
        assert before <= int(reloading["MONOTONIC_USEC"]) <= monotonic_usec()
        ready_at, _, _ = notify.wait_for("READY", "1", after=reloading_at)
        assert big_header_status(p.port, origin, 4000) == 431  # a new connection: the new limit
        out, err = slow.communicate(timeout=60)
        assert slow.returncode == 0, err
        assert out == payload(n)

        # A broken file is refused, with its reason and place; the previous settings keep serving.
        conf.write_text("max-header-bytes = 2048\ncolour = blue\n")
        os.kill(p.pid, signal.SIGHUP)
        second_at, _, _ = notify.wait_for("RELOADING", "1", count=2)
        refused_ready_at, _, ready = notify.wait_for("READY", "1", after=second_at)
        note = f"configuration refused: {conf}:2: unknown key colour; "
        assert ready.get("STATUS", "").startswith(note), ready
        wait_for(lambda: any("configuration refused" in l and "unknown key colour" in l for l in p.stderr_lines),
                 message="the refusal's log line")
        assert big_header_status(p.port, origin, 4000) == 431
        assert big_header_status(p.port, origin, 1000) == 200
        # The request served changes the count, so a periodic STATUS= follows: a datagram of its
        # own, after the READY=1 whose STATUS= carried the note first. It keeps the note.
        _, _, periodic = wait_for(
            lambda: next((m for m in notify.with_key("STATUS")
                          if m[0] > refused_ready_at and "READY" not in m[2]), None),
            timeout=10, message=lambda: f"a periodic STATUS= after READY=1; got {[m[2] for m in notify.messages()]}")
        assert set(periodic) == {"STATUS"} and periodic["STATUS"].startswith(note), periodic

        # Fixed: the note goes away.
        conf.write_text("max-header-bytes = 65536\n")
        os.kill(p.pid, signal.SIGHUP)
        third_at, _, _ = notify.wait_for("RELOADING", "1", count=3)
        _, _, ready = notify.wait_for("READY", "1", after=third_at)
        assert ready["STATUS"] == f"0 running, 0 suspended, {p.stats()['served']} served"
        assert big_header_status(p.port, origin, 4000) == 200
    assert p.stop(by_test=True) == 0


def test_sigterm_lets_a_running_download_finish(start_proxy, origin, tmp_path):
    sock_dir = short_socket_dir(tmp_path)
    n = 100_000
    with NotifySocket(sock_dir / "notify.sock") as notify:
        p = start_proxy(env={"NOTIFY_SOCKET": notify.path})
        notify.wait_for("READY", "1")
        slow = start_curl(p, "--max-time", "60", origin.url(f"/slowbody/{n}?chunk=2000&interval=0.04"),
                          stdout=subprocess.PIPE)
        wait_for(lambda: p.tasks(), message="the download to start")
        os.kill(p.pid, signal.SIGTERM)
        stopping_at, pid, stopping = notify.wait_for("STOPPING", "1")
        assert pid == p.pid
        assert stopping["STATUS"].startswith("stopping: 1 running")
        # No new connection is accepted; the control socket still shows the task draining.
        wait_for(lambda: not connects(socket.AF_INET, ("127.0.0.1", p.port)), 5,
                 message="the proxy port to close")
        assert len(p.tasks()) == 1
        out, err = slow.communicate(timeout=60)
        assert slow.returncode == 0, err
        assert out == payload(n)
        assert p.proc.wait(timeout=30) == 0
        assert not any("grace period over" in l for l in p.stderr_lines), "it waited for the grace period"
        # No line computed before SIGTERM (by the once-a-second reporter) is sent after STOPPING=1's.
        statuses = [m[2]["STATUS"] for m in notify.with_key("STATUS")]
        assert all(s.startswith("stopping: ") for s in statuses[statuses.index(stopping["STATUS"]):]), statuses
    p.stopped_by_test = True
    wait_for(lambda: any(l.endswith("afproxy: stopped") for l in p.stderr_lines), 5, message="the last log line")


def test_grace_period_over_cancels_what_runs(start_proxy, origin, tmp_path):
    p = start_proxy("--grace-period", "1")
    hung = start_curl(p, "-f", "--max-time", "60", origin.url("/hang"))
    wait_for(lambda: p.tasks(), message="the request to reach the origin")
    started = time.monotonic()
    os.kill(p.pid, signal.SIGTERM)
    assert p.proc.wait(timeout=30) == 0
    elapsed = time.monotonic() - started
    assert elapsed >= 0.9, f"stopped {elapsed:.1f} s after SIGTERM, before its 1 s grace period"
    assert hung.wait(timeout=10) != 0  # its client got no answer
    p.stopped_by_test = True
    wait_for(lambda: any("grace period over: canceling 1 task" in l for l in p.stderr_lines),
             message="the grace period's log line")


# ----------------------------------------------------------------------------------------------
# the journal


def namespace_wrapper(journal_dir: Path) -> tuple[str, ...]:
    """Runs afproxy in a private mount namespace whose /run/systemd/journal is `journal_dir`."""
    script = ("mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && "
              f"mount --bind '{journal_dir}' /run/systemd/journal && exec \"$@\"")
    return ("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh")


@pytest.fixture
def journal(tmp_path):
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private mount namespace")
    directory = short_socket_dir(tmp_path) / "journal"
    directory.mkdir()
    with JournalSocket(directory / "socket") as socket_:
        yield socket_


def test_journal_entry_of_a_completed_task_carries_its_fields(start_proxy, origin, journal):
    p = start_proxy(wrapper=namespace_wrapper(Path(journal.path).parent))
    r = curl(p, "--max-time", "30", origin.url("/bytes/3000"))
    assert r.returncode == 0
    url = origin.url("/bytes/3000")
    entry = journal.wait_entry(lambda e: e.get("AFPROXY_URL") == url)
    assert entry["PRIORITY"] == "6"
    assert entry["SYSLOG_IDENTIFIER"] == "afproxy"
    assert entry["AFPROXY_METHOD"] == "GET"
    assert entry["AFPROXY_STATUS"] == "200"
    assert entry["AFPROXY_BYTES_DOWN"] == "3000"
    assert entry["AFPROXY_BYTES_UP"] == "0"
    assert int(entry["AFPROXY_DURATION_MS"]) >= 0
    task_id = int(entry["AFPROXY_TASK_ID"])
    assert p.task(task_id)["url"] == url
    assert url in entry["MESSAGE"]
    # Readable lines still go to stderr (a foreground run with journald present).
    assert any("listening on" in e.get("MESSAGE", "") for e in journal.entries())
    wait_for(lambda: any(url in l for l in p.stderr_lines), message="the task's line on stderr")

    # A failure is logged at error level, with why.
    bad = f"http://127.0.0.1:{closed_port()}/x"
    curl(p, "--max-time", "30", bad)
    entry = journal.wait_entry(lambda e: e.get("AFPROXY_URL") == bad)
    assert entry["PRIORITY"] == "3"
    assert "AFPROXY_STATUS" not in entry
    assert entry["AFPROXY_ERROR"]


def test_completed_task_entries_can_be_turned_off(start_proxy, origin, journal):
    p = start_proxy("--log-completed-tasks", "no", wrapper=namespace_wrapper(Path(journal.path).parent))
    assert curl(p, "--max-time", "30", origin.url("/bytes/10")).returncode == 0
    bad = f"http://127.0.0.1:{closed_port()}/x"
    curl(p, "--max-time", "30", bad)
    journal.wait_entry(lambda e: e.get("AFPROXY_URL") == bad)  # failures still are
    assert not [e for e in journal.entries() if e.get("AFPROXY_URL") == origin.url("/bytes/10")]


def test_log_target_stderr_writes_nothing_to_the_journal(start_proxy, origin, journal):
    p = start_proxy("--log-target", "stderr", wrapper=namespace_wrapper(Path(journal.path).parent))
    assert curl(p, "--max-time", "30", origin.url("/bytes/10")).returncode == 0
    wait_for(lambda: any(origin.url("/bytes/10") in l for l in p.stderr_lines), message="the task's log line")
    time.sleep(0.3)
    assert journal.entries() == []


def test_completed_task_lines_on_stderr_one_per_task(start_proxy, origin):
    """300 requests, 16 at a time: each gets exactly one whole line on stderr (they are written in
    batches), with its status and byte count."""
    p = start_proxy("--log-target", "stderr")
    sizes = list(range(1000, 1300))
    args = [a for n in sizes for a in ("-o", "/dev/null", origin.url(f"/bytes/{n}"))]
    r = curl(p, "--max-time", "60", "-Z", "--parallel-max", "16", *args, timeout=90)
    assert r.returncode == 0, r.stderr
    line = re.compile(r"^\S+ info afproxy: task \d+: GET (\S+) 200, (\d+) bytes down, 0 up, \d+ ms$")

    def logged() -> dict[str, list[int]]:
        seen: dict[str, list[int]] = {}
        for text in list(p.stderr_lines):
            m = line.match(text)
            if m:
                seen.setdefault(m.group(1), []).append(int(m.group(2)))
        return seen

    wait_for(lambda: len(logged()) == len(sizes), timeout=10, message="a line for each of the 300 tasks")
    seen = logged()
    for n in sizes:
        assert seen.get(origin.url(f"/bytes/{n}")) == [n], (n, seen.get(origin.url(f"/bytes/{n}")))


def test_under_journald_stderr_stays_quiet(afproxy_bin, origin, journal, tmp_path):
    """What systemd does: stderr connected to the journal, named by JOURNAL_STREAM=DEV:INODE. The
    entries then go to the journal only, with their fields, and nothing is written to stderr."""
    port = closed_port()
    control = str(Path(journal.path).parent.parent / "quiet.sock")
    script = ("mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && "
              f"mount --bind '{Path(journal.path).parent}' /run/systemd/journal && "
              "JOURNAL_STREAM=$(stat -L -c '%d:%i' /proc/self/fd/2) && export JOURNAL_STREAM && exec \"$@\"")
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
            afproxy_bin, "--listen", f"127.0.0.1:{port}", "--control-socket", control]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        journal.wait_entry(lambda e: f"listening on 127.0.0.1:{port}" in e.get("MESSAGE", ""))
        journal.wait_entry(lambda e: e.get("MESSAGE", "").startswith("ready"))
        r = subprocess.run(["curl", "-sS", "-x", f"http://127.0.0.1:{port}", "--max-time", "30",
                            origin.url("/bytes/77")], capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stdout == payload(77)
        entry = journal.wait_entry(lambda e: e.get("AFPROXY_URL") == origin.url("/bytes/77"))
        assert entry["AFPROXY_BYTES_DOWN"] == "77"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert (out, err) == (b"", b"")
    journal.wait_entry(lambda e: e.get("MESSAGE") == "stopped")
