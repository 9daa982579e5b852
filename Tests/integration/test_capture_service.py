"""`afproxyctl capture SERVICE` (issue 36): a systemd service's connections through afproxy, with
nothing in the service changed. There is no systemd as PID 1 here, so the parts are tested the way
systemd would use them: `afproxyctl capture-hold NAME` (what afproxy-capture@NAME.service runs, as
root) makes the namespace, mounts it at a path, says READY=1 on a NOTIFY_SOCKET the test owns only
once it is there, and hands its sockets to the real daemon; a "service" joins it as systemd's
NetworkNamespacePath= does, with `nsenter --net=PATH`, and its requests are tasks of the unit
(SHA-256 of what it got). The holder hands the sockets again to a daemon that restarted, and a
connection made while no daemon ran waits and is served; started before the daemon it waits for
it; stopped it unmounts; killed, the next one replaces what it left. The drop-in `capture` writes
is checked by `systemd-analyze verify` with the template unit beside it; --list, --remove and bad
input each get their answer."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from helpers import (NotifySocket, afproxyctl_path, clean_env, ctl, file_sha256, local_resolver_wrapper,
                     short_socket_dir, wait_for)
from origin import payload_sha256
from test_capture import ALLOW_NAMES, NAMES, completed, start

REPO = Path(__file__).resolve().parents[2]


class Holder:
    """`afproxyctl capture-hold NAME --namespace-directory DIR`, its messages in a file."""

    def __init__(self, control_socket: str, tmp_path: Path, name: str = "demo", notify: NotifySocket | None = None):
        self.directory = tmp_path / "netns"
        self.path = self.directory / f"afproxy-{name}"
        self.log = tmp_path / f"hold-{name}-{os.urandom(3).hex()}.log"
        env = clean_env()
        env.pop("NOTIFY_SOCKET", None)
        if notify:
            env["NOTIFY_SOCKET"] = notify.path
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [afproxyctl_path(), "--socket", control_socket, "capture-hold", name,
                 "--namespace-directory", str(self.directory)],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def messages(self) -> str:
        return self.log.read_text()

    def mounted(self) -> bool:
        return self.path.exists() and os.stat(self.path).st_dev != os.stat(self.directory).st_dev

    def wait_until_served(self, count: int = 1) -> None:
        wait_for(lambda: self.messages().count("serves demo.service") >= count, timeout=30,
                 message=lambda: f"the holder handing its sockets over ({count}); said:\n{self.messages()}")

    def inside(self, *argv: str, **kwargs) -> subprocess.CompletedProcess:
        """A command in the namespace, joined as systemd joins it."""
        return subprocess.run(["nsenter", f"--net={self.path}", *argv], capture_output=True, timeout=120,
                              stdin=subprocess.DEVNULL, env=clean_env(), **kwargs)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)


@pytest.fixture
def holders():
    started: list[Holder] = []
    yield started
    for holder in started:
        if holder.proc.poll() is None:
            holder.proc.kill()
            holder.proc.wait()
        if holder.mounted():
            subprocess.run(["umount", "-l", str(holder.path)], check=False)


def curl_inside(holder: Holder, url: str, out: Path) -> subprocess.CompletedProcess:
    return holder.inside("curl", "-sS", "--fail", "--noproxy", "*", "-o", str(out), url)


def test_a_service_in_the_namespace_makes_tasks_of_its_unit(start_proxy, origin, tmp_path, holders):
    proxy = start(start_proxy, tmp_path)
    notify = NotifySocket(short_socket_dir(tmp_path) / "notify")
    holder = Holder(proxy.control_socket, tmp_path, notify=notify)
    holders.append(holder)
    notify.wait_for("READY", "1", timeout=30)
    # systemd starts the service once READY=1 came: the namespace is there by then.
    assert holder.mounted(), holder.messages()
    holder.wait_until_served()

    size = 1024 * 1024 + 7
    url = f"http://capture-origin.test:{origin.port}/bytes/{size}"
    out = tmp_path / "got"
    result = curl_inside(holder, url, out)
    assert result.returncode == 0, result.stderr
    assert file_sha256(out) == (size, payload_sha256(size))
    # A loopback service of the host is reached through afproxy as well.
    result = curl_inside(holder, f"http://127.0.0.1:{origin.port}/bytes/100", tmp_path / "local")
    assert result.returncode == 0, result.stderr

    tasks = completed(proxy, 2)
    task = next(t for t in tasks if t["url"] == url)
    assert task["status"] == 200 and task["download"]["completed"] == size, task
    process = task["clientProcess"]
    assert process["unit"] == "demo.service" and process["pid"] is None, process
    capture = process["capture"]
    assert capture["name"] == "demo.service", process
    for filter_args in (("--capture", "demo"), ("--capture", "demo.service"), ("--unit", "demo")):
        listed = ctl(proxy, "list", "--all", *filter_args)
        assert listed.returncode == 0 and url in listed.stdout, (filter_args, listed)
    shown = ctl(proxy, "show", str(task["id"]))
    assert f"capture    demo.service (afproxyctl capture, #{capture['id']})" in shown.stdout, shown.stdout
    status = ctl(proxy, "status")
    assert (f"captures  #{capture['id']} demo.service, pid {holder.proc.pid}: systemd service demo.service"
            in status.stdout), status.stdout

    assert holder.stop() == 0
    assert not holder.path.exists(), "the namespace stayed mounted"
    wait_for(lambda: "captures" not in ctl(proxy, "status").stdout, timeout=30,
             message="the capture gone from status")


def test_the_sockets_go_to_a_restarted_daemon_and_a_waiting_connection_is_served(
        start_proxy, origin, tmp_path, holders):
    proxy = start(start_proxy, tmp_path)
    holder = Holder(proxy.control_socket, tmp_path)
    holders.append(holder)
    holder.wait_until_served()
    assert curl_inside(holder, f"http://127.0.0.1:{origin.port}/bytes/10", tmp_path / "first").returncode == 0

    proxy.stop(by_test=True)
    wait_for(lambda: "afproxy went away" in holder.messages(), timeout=30, message="the holder seeing the end")
    # No daemon now: the connection waits in the listening socket the holder keeps.
    size = 3 * 1024 * 1024
    out = tmp_path / "waited"
    waiting = subprocess.Popen(
        ["nsenter", f"--net={holder.path}", "curl", "-sS", "--fail", "--noproxy", "*", "-o", str(out),
         f"http://127.0.0.1:{origin.port}/bytes/{size}"],
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
    try:
        again = start_proxy(*ALLOW_NAMES, control_socket=proxy.control_socket,
                            wrapper=local_resolver_wrapper(tmp_path, NAMES))
        holder.wait_until_served(count=2)
        assert waiting.wait(timeout=60) == 0, waiting.stderr.read()
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert file_sha256(out) == (size, payload_sha256(size))
    task = completed(again, 1)[0]
    assert task["clientProcess"]["unit"] == "demo.service", task
    assert holder.stop() == 0


def test_a_holder_before_the_daemon_waits_and_a_killed_one_is_replaced(start_proxy, origin, tmp_path, holders):
    control = str(short_socket_dir(tmp_path) / "control.sock")
    notify = NotifySocket(short_socket_dir(tmp_path) / "notify")
    first = Holder(control, tmp_path, notify=notify)
    holders.append(first)
    notify.wait_for("READY", "1", timeout=30)
    wait_for(lambda: "trying again every second" in first.messages(), timeout=30,
             message="the holder waiting for the daemon")
    proxy = start_proxy(*ALLOW_NAMES, control_socket=control, wrapper=local_resolver_wrapper(tmp_path, NAMES))
    first.wait_until_served()
    assert curl_inside(first, f"http://127.0.0.1:{origin.port}/bytes/10", tmp_path / "a").returncode == 0

    # Killed without a word (SIGKILL): the namespace stays mounted; the next holder replaces it.
    first.proc.kill()
    first.proc.wait()
    assert first.mounted()
    second = Holder(control, tmp_path)
    holders.append(second)
    second.wait_until_served()
    out = tmp_path / "b"
    result = curl_inside(second, f"http://capture-origin.test:{origin.port}/bytes/2000", out)
    assert result.returncode == 0, result.stderr
    assert file_sha256(out) == (2000, payload_sha256(2000))
    assert [t["clientProcess"]["unit"] for t in proxy.tasks(all=True)] == ["demo.service"] * 2
    assert second.stop() == 0
    assert not second.path.exists()


def test_the_holder_refuses_a_bad_name_and_a_user_that_is_not_root(tmp_path):
    control = str(short_socket_dir(tmp_path) / "control.sock")
    for name, said in (("getty@tty1", "instance of a template"), ("../x", "not a service's name"),
                       ("afproxy", "cannot be captured")):
        r = subprocess.run([afproxyctl_path(), "--socket", control, "capture-hold", name, "--namespace-directory",
                            str(tmp_path / "netns")], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert (r.returncode, said in r.stderr) == (1, True), (name, r.stderr)
    assert not (tmp_path / "netns").exists()
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", afproxyctl_path(),
                        "--socket", control, "capture-hold", "demo", "--namespace-directory", "/tmp"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "runs as root" in r.stderr, r.stderr


def unit_directory(tmp_path: Path) -> Path:
    """The template unit as installed (ExecStart naming the afproxyctl under test) and a service."""
    units = tmp_path / "units"
    units.mkdir()
    template = (REPO / "systemd/afproxy-capture@.service").read_text()
    assert "ExecStart=/usr/local/bin/afproxyctl " in template
    (units / "afproxy-capture@.service").write_text(
        template.replace("/usr/local/bin/afproxyctl", afproxyctl_path()))
    (units / "demo.service").write_text("[Unit]\nDescription=demo\n\n[Service]\nExecStart=/bin/sleep infinity\n")
    return units


def capture(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([afproxyctl_path(), "capture", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def verify(units: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "verify", "demo.service"], capture_output=True, text=True,
                          timeout=120, cwd=units, stdin=subprocess.DEVNULL,
                          env={**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:"})


def test_the_drop_in_is_written_verified_listed_and_removed(tmp_path):
    units = unit_directory(tmp_path)
    r = capture("demo", "--unit-directory", str(units))
    drop_in = units / "demo.service.d/afproxy-capture.conf"
    assert r.returncode == 0 and f"wrote {drop_in}" in r.stdout, r
    assert "demo.service is captured from its next start" in r.stdout, r.stdout
    text = drop_in.read_text()
    assert "Requires=afproxy-capture@demo.service\n" in text and "After=afproxy-capture@demo.service\n" in text
    assert "NetworkNamespacePath=/run/netns/afproxy-demo\n" in text
    assert drop_in.stat().st_mode & 0o777 == 0o644
    v = verify(units)
    assert (v.returncode, v.stdout, v.stderr) == (0, "", "")
    # The check is a real one: without the template the service cannot start.
    (units / "afproxy-capture@.service").rename(tmp_path / "aside")
    v = verify(units)
    assert v.returncode != 0 and "afproxy-capture@demo.service" in v.stderr, v.stderr
    (tmp_path / "aside").rename(units / "afproxy-capture@.service")

    assert capture("demo.service", "--unit-directory", str(units)).returncode == 0  # again: the same file
    assert drop_in.read_text() == text
    listed = capture("--list", "--unit-directory", str(units))
    assert listed.returncode == 0 and listed.stdout.split() == [
        "demo.service", "namespace", "/run/netns/afproxy-demo", "not", "up", "(the", "service", "is", "not",
        "running)"], listed.stdout

    (units / "demo.service.d/limits.conf").write_text("[Service]\nLimitNOFILE=1024\n")
    r = capture("--remove", "demo", "--unit-directory", str(units))
    assert r.returncode == 0 and f"removed {drop_in}" in r.stdout, r
    assert not drop_in.exists() and (units / "demo.service.d/limits.conf").exists()  # the other one stays
    r = capture("--remove", "demo", "--unit-directory", str(units))
    assert r.returncode == 1 and "demo.service is not captured" in r.stderr, r
    listed = capture("--list", "--unit-directory", str(units))
    assert listed.stdout.startswith("no service is captured"), listed.stdout


def test_capture_answers_bad_input_precisely(tmp_path):
    r = capture("demo", "--unit-directory", str(tmp_path / "missing"))
    assert r.returncode == 1 and "No such file or directory" in r.stderr, r.stderr
    r = capture("afproxy", "--unit-directory", str(tmp_path))
    assert r.returncode == 1 and "captured connections go to afproxy" in r.stderr, r.stderr
    r = capture("--unit-directory", str(tmp_path))
    assert r.returncode == 2 and "name the service" in r.stderr, r.stderr
    r = capture("--list", "demo", "--unit-directory", str(tmp_path))
    assert r.returncode == 2 and "--list takes no service" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []
