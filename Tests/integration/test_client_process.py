"""Which program made each request: a task's `clientProcess` (pid, executable, command line, user,
unit), found from the client connection's socket, through the real daemon, the real curl binary
and Python's own http.client; `afproxyctl list --process/--unit`, `show`, and the history."""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import pty
import pwd
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios

import pytest

from helpers import afproxyctl_path, ctl, start_curl, wait_for
from test_systemd import journal  # noqa: F401  (the fixture)

SLOW = "/slowbody/204800?interval=0.05"  # 200 KiB at 1 KiB per 50 ms: about 10 s


def curl_path() -> str:
    return os.path.realpath(shutil.which("curl"))


def user_name(uid: int) -> str:
    return pwd.getpwuid(uid).pw_name


def on_terminal(proxy, columns: int, *args: str) -> list[str]:
    """afproxyctl's output on a terminal `columns` wide (a pseudo-terminal), escapes removed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    try:
        r = subprocess.run([afproxyctl_path(), "--socket", proxy.control_socket, *args], stdin=subprocess.DEVNULL,
                           stdout=follower, stderr=subprocess.PIPE, timeout=30)
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other end closed
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert r.returncode == 0, r.stderr
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode()).replace("\r", "")
    return [line for line in text.splitlines() if line.strip()]


def wait_process(proxy, url: str) -> dict:
    """The live task of `url` once its client process is known (the lookup runs beside the request)."""
    def found():
        for t in proxy.tasks():
            if t["url"] == url and t["clientProcess"] is not None:
                return t
        return None
    return wait_for(found, 20, message=f"a live task of {url} with its client process")


def test_curl_through_the_proxy_is_its_client_process(proxy, origin):
    url = origin.url(SLOW)
    client = start_curl(proxy, "-o", "/dev/null", url)
    try:
        task = wait_process(proxy, url)
        process = task["clientProcess"]
        assert process["pid"] == client.pid, task
        assert process["executable"] == curl_path(), process
        assert process["uid"] == os.geteuid() and process["user"] == user_name(os.geteuid()), process
        assert process["commandLine"].startswith("curl -sS -x " + proxy.proxy_url), process
        assert url in process["commandLine"], process
        assert set(process) == {"pid", "executable", "commandLine", "user", "uid", "unit", "capture"}, process

        lines = on_terminal(proxy, 200, "list", "--process", "curl")
        assert lines[0].split()[-1] == "PROCESS", lines
        row = [line for line in lines[1:] if line.split()[0] == str(task["id"])]
        assert row and row[0].split()[-1] == f"curl[{client.pid}]", lines
        # A terminal too narrow for it, and piped output (what scripts read), go without it.
        assert on_terminal(proxy, 80, "list")[0].split()[-1] == "AGE"
        piped = ctl(proxy, "list", "--process", "curl")
        assert piped.returncode == 0 and piped.stdout.splitlines()[0].split()[-1] == "AGE", piped
        assert [line.split()[0] for line in piped.stdout.splitlines()[1:]] == [str(task["id"])], piped.stdout

        none = ctl(proxy, "list", "--process", "nosuch")
        assert none.returncode == 0, none.stderr
        assert none.stdout.splitlines()[1:] == [], none.stdout
        as_json = json.loads(ctl(proxy, "list", "--json", "--process", "curl").stdout)
        assert [t["id"] for t in as_json["tasks"]] == [task["id"]], as_json
        assert json.loads(ctl(proxy, "list", "--json", "--unit", "nosuch.service").stdout) == {"tasks": []}

        shown = ctl(proxy, "show", str(task["id"]))
        assert f"process    curl[{client.pid}] {curl_path()}" in shown.stdout, shown.stdout
        assert "command    curl -sS" in shown.stdout, shown.stdout
    finally:
        client.kill()
        client.wait(10)

    # The history keeps it once the task completed (curl was killed: the client closed).
    def completed():
        r = proxy.api("GET", "/v1/tasks?all=1")[1]
        return next((t for t in r["tasks"] if t["id"] == task["id"] and t["state"] == "completed"), None)
    done = wait_for(completed, 20, message="the completed record")
    assert done["clientProcess"]["pid"] == client.pid, done
    status, har = proxy.api("GET", f"/v1/har?id={task['id']}")
    assert status == 200, har
    assert har["log"]["entries"][0]["_clientProcess"] == done["clientProcess"], har
    assert json.loads(ctl(proxy, "list", "--all", "--json", "--process", "curl").stdout)["tasks"][-1]["id"] \
        == task["id"]


def test_a_quick_request_keeps_its_process_in_the_history(proxy, origin):
    """A request can end before the lookup did (it never waits for it): its history record gets
    the process all the same. curl makes a quick request, then a slow one on the same connection,
    so it is still there to be found."""
    quick, slow = origin.url("/bytes/10"), origin.url(SLOW)
    client = start_curl(proxy, "-o", "/dev/null", quick, "-o", "/dev/null", slow)
    try:
        wait_process(proxy, slow)

        def recorded():
            return next((t for t in proxy.tasks(all=True)
                         if t["url"] == quick and t["state"] == "completed" and t["clientProcess"]), None)
        task = wait_for(recorded, 20, message="the quick request's history record with its client process")
        assert task["clientProcess"]["pid"] == client.pid, task
        assert task["clientProcess"]["executable"] == curl_path(), task
    finally:
        client.kill()
        client.wait(10)


def test_credentials_on_the_command_line_are_not_kept(proxy, origin):
    """A client's command line carries what was typed on it: its credentials (`-u`, an
    Authorization or Cookie field, a URL's user:password) are `<redacted>` in the task, the HAR and
    the log, the rest as it was."""
    url = origin.url(SLOW)
    client = start_curl(proxy, "-o", "/dev/null", "-u", "alice:s3cret-pw", "-H", "Authorization: Bearer s3cret-token",
                        "-H", "X-Trace: visible", "-b", "sid=s3cret-cookie", url)
    try:
        task = wait_process(proxy, url)
        line = task["clientProcess"]["commandLine"]
        assert "s3cret" not in line, line
        assert "-u <redacted>" in line and "Authorization: <redacted>" in line and "X-Trace: visible" in line, line
        status, har = proxy.api("GET", f"/v1/har?id={task['id']}")
        assert status == 200 and "s3cret" not in json.dumps(har), har
    finally:
        client.kill()
        client.wait(10)
    wait_for(lambda: proxy.task(task["id"])["state"] == "completed", message="the task to end")
    assert "s3cret" not in proxy.log()


def test_python_client_and_a_tunnel(start_proxy, origin):
    """The test's own process through http.client: a proxied GET and a CONNECT tunnel."""
    proxy = start_proxy("--allow-connect-port", str(origin.port))
    host, port = "127.0.0.1", proxy.port
    conn = http.client.HTTPConnection(host, port, timeout=30)
    url = origin.url(SLOW)
    conn.request("GET", url)
    try:
        task = wait_process(proxy, url)
        process = task["clientProcess"]
        assert process["pid"] == os.getpid(), process
        assert process["executable"] == os.path.realpath(sys.executable), process
    finally:
        conn.close()

    # The tunnel stays open until its task has the process: a client that closes its socket
    # before the lookup read the kernel's tables is not found (the socket is gone by then), and
    # a busy machine can delay the lookup past a quick tunnel's end.
    tunnel = http.client.HTTPConnection(host, port, timeout=30)
    tunnel.set_tunnel(origin.host)
    tunnel.request("GET", "/bytes/10")
    try:
        assert tunnel.getresponse().read() == bytes(origin_payload(10))

        def live_tunnel():
            return next((t for t in proxy.tasks()
                         if t["kind"] == "stream" and t["url"] == origin.host and t["clientProcess"]), None)
        live = wait_for(live_tunnel, 20, message="the live tunnel's task with its client process")
        assert live["clientProcess"]["pid"] == os.getpid(), live
    finally:
        tunnel.close()

    def connect_record():
        return next((t for t in proxy.tasks(all=True)
                     if t["id"] == live["id"] and t["state"] == "completed"), None)
    record = wait_for(connect_record, 20, message="the tunnel's completed record")
    assert record["clientProcess"] == live["clientProcess"], record


def origin_payload(n: int) -> bytes:
    from origin import payload
    return payload(n)


def test_another_users_client_shows_its_user_only(start_proxy, origin, tmp_path, request):
    """A daemon that may not look into the client's process (it runs as another user, as the
    system service does) still tells whose socket it was: pid, executable and unit are null."""
    # Under /tmp, which nobody can reach (tmp_path is root's alone); removed with the test.
    sock_dir = tempfile.mkdtemp(prefix="afp-cp-", dir="/tmp")
    request.addfinalizer(lambda: shutil.rmtree(sock_dir, ignore_errors=True))
    os.chmod(sock_dir, 0o777)
    nobody = pwd.getpwnam("nobody")
    proxy = start_proxy("--listen", "127.0.0.1:0", "--control-socket", f"{sock_dir}/control.sock",
                        wrapper=("setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                                 "--clear-groups"),
                        control_socket=f"{sock_dir}/control.sock", default_flags=False,
                        env={"XDG_STATE_HOME": sock_dir, "HOME": sock_dir})
    url = origin.url(SLOW)
    client = start_curl(proxy, "-o", "/dev/null", url)
    try:
        task = wait_process(proxy, url)
        assert task["clientProcess"] == {
            "pid": None, "executable": None, "commandLine": None, "unit": None, "capture": None,
            "uid": os.geteuid(), "user": user_name(os.geteuid()),
        }, task
        lines = on_terminal(proxy, 200, "list")
        row = [line for line in lines[1:] if line.split()[0] == str(task["id"])]
        assert row and row[0].split()[-1] == user_name(os.geteuid()), lines
        assert str(task["id"]) not in [line.split()[0] for line in
                                       ctl(proxy, "list", "--process", "curl").stdout.splitlines()[1:]]
    finally:
        client.kill()
        client.wait(10)


def test_a_task_with_no_client_connection_has_null(start_proxy, origin, tmp_path):
    """A download task is started by afproxyctl through the control socket, not by a proxy client."""
    proxy = start_proxy("--state-dir", str(tmp_path / "state"), "--download-dir", str(tmp_path))
    r = ctl(proxy, "download", origin.url("/bytes/10"), "-o", str(tmp_path / "f.bin"), "--json")
    assert r.returncode == 0, r.stderr
    task = json.loads(r.stdout)
    assert "clientProcess" in task and task["clientProcess"] is None, task


def test_the_journal_entry_names_the_client_process(start_proxy, origin, journal):
    """The entry of a task whose client process was known when it completed has its fields. The
    upload's body is held back until the live task has the process: the lookup runs beside the
    request, and an entry written before it ended (a quick request on a busy machine) could not
    have them."""
    from test_systemd import namespace_wrapper
    from pathlib import Path

    p = start_proxy(wrapper=namespace_wrapper(Path(journal.path).parent))
    url = origin.url("/upload")
    conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
    try:
        conn.putrequest("POST", url, skip_accept_encoding=True)
        conn.putheader("Content-Length", "5")
        conn.endheaders()
        wait_process(p, url)
        conn.send(b"hello")
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["length"] == 5
    finally:
        conn.close()
    entry = journal.wait_entry(lambda e: e.get("AFPROXY_URL") == url)
    assert entry["AFPROXY_CLIENT_PID"] == str(os.getpid()), entry
    assert entry["AFPROXY_CLIENT_EXE"] == os.path.realpath(sys.executable), entry
    assert entry["AFPROXY_CLIENT_UID"] == str(os.geteuid()), entry
    assert entry["AFPROXY_CLIENT_USER"] == user_name(os.geteuid()), entry
