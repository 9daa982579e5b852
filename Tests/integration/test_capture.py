"""`afproxyctl run` (issue 36): programs that read no proxy setting, run in a network namespace
whose only way out is afproxy, through the real daemon. curl with `--noproxy '*'`, wget
`--no-proxy`, Node's built-in fetch and Python's urllib with no proxy in their environment:
each request a task with its full URL, status, bytes (SHA-256 of what the program got) and the
capture (name, id, the command's pid). Names the program resolves through the capture's
resolver, which answers them from the daemon's own hosts file (the daemon runs in a mount
namespace of its own) and answers REFUSED, with no lookup, for a name the test did not allow;
UDP other than DNS refused. TLS a stream task named by its SNI, or with --intercept a task per
request inside; a plain TCP echo a stream task named as the program asked for the address.
Exit statuses (the command's, 127 for a missing one, 69 with no daemon and the command not
started), a signal sent to afproxyctl reaching the command, a refusing destination seen as a
reset, and nothing left behind: the capture's sockets close and its connections go."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from echo_server import EchoServer
from helpers import (afproxyctl_path, ca_path, clean_env, closed_port, ctl, file_sha256, live_task,
                     local_resolver_wrapper, wait_for)
from origin import payload_sha256
from page_origin import PageOrigin
from test_metrics import control_metrics

# Names only the daemon resolves (its own /etc/hosts maps them to 127.0.0.1): a captured
# program gets them from the capture's resolver or not at all.
NAMES = ("capture-origin.test", "capture-echo.test")
ALLOW_NAMES = tuple(arg for name in NAMES for arg in ("--allow-hosts", name))


def start(start_proxy, tmp_path: Path, *args: str):
    return start_proxy(*ALLOW_NAMES, *args, wrapper=local_resolver_wrapper(tmp_path, NAMES))


def run(proxy, *command: str, options: tuple[str, ...] = (), timeout: float = 120,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`afproxyctl run OPTIONS -- COMMAND`, its output as bytes."""
    argv = [afproxyctl_path(), "--socket", proxy.control_socket, "run", *options, "--", *command]
    return subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=clean_env(env))


def python(script: str) -> tuple[str, ...]:
    return (sys.executable, "-c", textwrap.dedent(script))


def completed(proxy, count: int, kind: str | None = None) -> list[dict]:
    def done():
        found = [t for t in proxy.tasks(all=True) if t["state"] == "completed" and kind in (None, t["kind"])]
        return found if len(found) >= count else None
    return wait_for(done, timeout=30, message=f"{count} completed tasks")


def test_programs_without_proxy_settings_become_tasks_of_the_capture(start_proxy, origin, tmp_path):
    proxy = start(start_proxy, tmp_path)
    size = 2 * 1024 * 1024 + 3
    by_name = f"http://capture-origin.test:{origin.port}/bytes/{size}"
    out = tmp_path / "curl.out"
    result = run(proxy, "curl", "-sS", "--fail", "--noproxy", "*", "-o", str(out), by_name,
                 options=("--name", "fetcher"))
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size == size
    result = run(proxy, "wget", "-q", "--no-proxy", "-O", str(tmp_path / "wget.out"),
                 f"http://127.0.0.1:{origin.port}/bytes/1000")
    assert result.returncode == 0, result.stderr
    node = ("node", "-e", f"fetch('http://capture-origin.test:{origin.port}/bytes/5000')"
            ".then(r => r.arrayBuffer()).then(b => console.log(b.byteLength))")
    result = run(proxy, *node)
    assert (result.returncode, result.stdout.strip()) == (0, b"5000"), result.stderr
    urllib = python(f"""
        import hashlib, urllib.request
        body = urllib.request.urlopen("http://capture-origin.test:{origin.port}/bytes/7777").read()
        print(hashlib.sha256(body).hexdigest())
        """)
    result = run(proxy, *urllib, env={"no_proxy": "*"})
    assert (result.returncode, result.stdout.decode().strip()) == (0, payload_sha256(7777)), result.stderr

    tasks = completed(proxy, 4)
    urls = {t["url"]: t for t in tasks}
    assert set(urls) == {by_name, f"http://127.0.0.1:{origin.port}/bytes/1000",
                         f"http://capture-origin.test:{origin.port}/bytes/5000",
                         f"http://capture-origin.test:{origin.port}/bytes/7777"}, urls
    fetched = urls[by_name]
    assert fetched["kind"] == "data" and fetched["status"] == 200, fetched
    assert fetched["download"]["completed"] == size, fetched
    capture = fetched["clientProcess"]["capture"]
    assert capture["name"] == "fetcher" and capture["id"] >= 1, fetched["clientProcess"]
    assert fetched["clientProcess"]["commandLine"].startswith("curl -sS --fail --noproxy"), fetched["clientProcess"]
    names = {t["clientProcess"]["capture"]["name"] for t in tasks}
    assert names == {"fetcher", "wget", "node", os.path.basename(sys.executable)}, names
    ids = [t["clientProcess"]["capture"]["id"] for t in tasks]
    assert len(set(ids)) == 4, ids  # each run its own capture
    listed = ctl(proxy, "list", "--all", "--capture", "fetcher")
    assert listed.returncode == 0 and by_name in listed.stdout, listed
    assert f"/bytes/1000" not in listed.stdout, listed.stdout
    listed = ctl(proxy, "list", "--all", "--json", "--capture", str(capture["id"]))
    assert [t["url"] for t in json.loads(listed.stdout)["tasks"]] == [by_name], listed.stdout
    shown = ctl(proxy, "show", str(fetched["id"]))
    assert f"capture    fetcher (afproxyctl run, #{capture['id']})" in shown.stdout, shown.stdout


def test_names_come_from_the_daemon_and_only_the_allowed_ones(start_proxy, tmp_path):
    proxy = start(start_proxy, tmp_path)
    script = python("""
        import socket, struct
        def ask(name, qtype):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(10)
            labels = b"".join(bytes([len(l)]) + l.encode() for l in name.split("."))
            s.sendto(struct.pack("!6H", 7, 0x0100, 1, 0, 0, 0) + labels + b"\\0" + struct.pack("!2H", qtype, 1),
                     ("192.0.2.53", 53))  # any resolver: the capture's answers
            data = s.recv(512)
            answers = struct.unpack("!H", data[6:8])[0]
            return data[3] & 0xF, answers, data[-4:] if answers else b""
        print(ask("capture-origin.test", 1))
        print(ask("update.unexpected.example", 1))
        print(ask("capture-origin.test", 16))
        print(socket.gethostbyname("capture-echo.test"))
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect(("127.0.0.1", 443))
        try:
            u.send(b"quic?")
            print("udp sent")
        except OSError as error:
            print("udp refused", error.errno)
        """)
    result = run(proxy, *script)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "(0, 1, b'\\x7f\\x00\\x00\\x01')", lines  # the daemon's hosts file
    assert lines[1] == "(5, 0, b'')", lines  # REFUSED: not allowed, so never looked up
    assert lines[2] == "(0, 0, b'')", lines  # TXT: no such data
    assert lines[3] == "127.0.0.1", lines
    assert lines[4].startswith("udp refused"), lines
    assert "update.unexpected.example" not in proxy.log()


def test_tls_and_raw_streams_are_named_as_the_program_asked(start_proxy, tls_origin, tls_files, tmp_path):
    proxy = start(start_proxy, tmp_path, "--tls-ca-file", tls_files.ca_cert)
    echo = EchoServer()
    try:
        size = 300_001
        result = run(proxy, "curl", "-sS", "--fail", "--noproxy", "*", "--cacert", tls_files.ca_cert, "-o",
                     str(tmp_path / "tls.out"), f"https://localhost:{tls_origin.port}/bytes/{size}")
        assert result.returncode == 0, result.stderr
        assert (tmp_path / "tls.out").stat().st_size == size
        sent = bytes(range(256)) * 1000
        script = python(f"""
            import socket
            sent = bytes(range(256)) * 1000
            c = socket.create_connection(("capture-echo.test", {echo.port}))
            c.sendall(sent)
            c.shutdown(socket.SHUT_WR)
            got = b""
            while data := c.recv(65536):
                got += data
            print(len(got), got == sent)
            """)
        result = run(proxy, *script)
        assert (result.returncode, result.stdout.strip()) == (0, f"{len(sent)} True".encode()), result.stderr
    finally:
        echo.close()
    streams = {t["url"]: t for t in completed(proxy, 2, kind="stream")}
    assert set(streams) == {f"localhost:{tls_origin.port}", f"capture-echo.test:{echo.port}"}, streams
    tls = streams[f"localhost:{tls_origin.port}"]
    assert tls["download"]["completed"] > size, tls
    raw = streams[f"capture-echo.test:{echo.port}"]
    assert raw["upload"]["completed"] == len(sent) and raw["download"]["completed"] == len(sent), raw
    assert raw["clientProcess"]["capture"]["name"] == os.path.basename(sys.executable), raw


def test_intercept_makes_a_task_of_each_request_inside_tls(start_proxy, tls_origin, tls_files, tmp_path):
    proxy = start(start_proxy, tmp_path, "--tls-ca-file", tls_files.ca_cert)
    ca = ca_path(proxy)
    urls = [f"https://localhost:{tls_origin.port}/bytes/{n}" for n in (1000, 2000)]
    result = run(proxy, "curl", "-sS", "--fail", "--noproxy", "*", "--cacert", ca, "-o", "/dev/null", urls[0],
                 "-o", "/dev/null", urls[1], options=("--intercept",))
    assert result.returncode == 0, result.stderr
    data = {t["url"]: t for t in completed(proxy, 2, kind="data")}
    assert set(data) == set(urls), data
    parents = {t["parent"] for t in data.values()}
    assert len(parents) == 1 and None not in parents, data  # one connection, its stream task the parent
    assert all(t["clientProcess"]["capture"]["name"] == "curl" for t in data.values())


def test_exit_statuses_and_signals_pass_through(start_proxy, tmp_path, afproxy_bin):
    proxy = start(start_proxy, tmp_path)
    assert run(proxy, "false").returncode == 1
    assert run(proxy, "sh", "-c", "exit 42").returncode == 42
    missing = run(proxy, "no-such-program-in-path")
    assert missing.returncode == 127, missing.stderr
    # A signal sent to afproxyctl reaches the command, whose status comes back; while it runs,
    # status lists the capture.
    marker = tmp_path / "started"
    argv = [afproxyctl_path(), "--socket", proxy.control_socket, "run", "--", "sh", "-c",
            f'trap "exit 7" TERM; touch {marker}; while :; do sleep 0.1; done']
    child = subprocess.Popen(argv, env=clean_env(), stdin=subprocess.DEVNULL)
    wait_for(marker.exists, timeout=30, message="the command to start")
    [capture] = proxy.api("GET", "/v1/status")[1]["captures"]
    assert capture["name"] == "sh" and capture["pid"] > 0 and capture["intercept"] is False, capture
    assert f"captures  #{capture['id']} sh, pid {capture['pid']}: sh -c" in ctl(proxy, "status").stdout
    assert "\nafproxy_captures 1.0\n" in control_metrics(proxy)[2]
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == 7
    wait_for(lambda: proxy.api("GET", "/v1/status")[1]["captures"] == [], timeout=10, message="the capture to end")
    assert "\nafproxy_captures 0.0\n" in control_metrics(proxy)[2]
    # No daemon: 69, and the command never ran.
    never = tmp_path / "never"
    result = subprocess.run([afproxyctl_path(), "--socket", str(tmp_path / "none.sock"), "run", "--", "touch",
                             str(never)], capture_output=True, env=clean_env(), timeout=60)
    assert result.returncode == 69 and not never.exists(), result.stderr


def test_a_refusing_destination_is_a_reset_and_nothing_is_left_behind(start_proxy, tmp_path):
    proxy = start(start_proxy, tmp_path)
    port = closed_port()
    script = python(f"""
        import socket
        c = socket.create_connection(("127.0.0.1", {port}))
        c.sendall(b"hello")
        try:
            print("read", c.recv(10))
        except ConnectionResetError:
            print("reset")
        """)
    result = run(proxy, *script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in (b"reset", b"read b''"), result.stdout
    [task] = completed(proxy, 1)
    assert task["url"] == f"127.0.0.1:{port}" and task["errorCode"] == "connection-refused", task
    # Ten thousand short connections, each a stream task, then everything is back to idle: no
    # task live, the captures ended, none of their descriptors left in the daemon.
    echo = EchoServer()
    many = python(f"""
        import socket
        for _ in range(10_000):
            c = socket.create_connection(("capture-echo.test", {echo.port}))
            c.sendall(b"x")
            assert c.recv(1) == b"x"
            c.close()
        """)
    try:
        result = run(proxy, *many, timeout=600)
        assert result.returncode == 0, result.stderr
    finally:
        echo.close()
    wait_for(lambda: proxy.log().count(") ended") >= 2, timeout=30, message="both captures to end")
    wait_for(lambda: proxy.tasks() == [], timeout=60, message="every task of the captures to end")
    stats = proxy.stats()
    assert stats["served"] >= 10_000 and stats["live"] == 0 and stats["openConnections"] == 0, stats
    assert len(sockets_of(proxy.pid)) < 40  # the daemon's own few sockets, not 10 000 connections


def sockets_of(pid: int) -> list[str]:
    """The socket descriptors process `pid` holds now."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                found.append(fd)
        except FileNotFoundError:
            pass  # closed while listed
    return found


def test_without_user_namespaces_it_says_which_setting_and_starts_nothing(start_proxy, tmp_path):
    """The limit of user namespaces is per namespace: set to 0 inside one of the test's own, it
    refuses afproxyctl's there as a kernel with them off would."""
    proxy = start(start_proxy, tmp_path)
    never = tmp_path / "never"
    script = (f"echo 0 > /proc/sys/user/max_user_namespaces && exec {afproxyctl_path()} "
              f"--socket {proxy.control_socket} run -- touch {never}")
    result = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", script], capture_output=True,
                            env=clean_env(), timeout=60)
    assert result.returncode == 1, result
    assert b"user.max_user_namespaces=0" in result.stderr, result.stderr
    assert not never.exists()


def test_a_captured_download_suspended_mid_body_ends_byte_exact(start_proxy, origin, tmp_path):
    """Suspend holds a captured transfer as it holds a proxied one (a global throttle keeps it
    running long enough to catch it mid-body), resume lets it finish, nothing lost."""
    proxy = start(start_proxy, tmp_path, "--throttle-global", "1M")
    size = 3_000_000
    url = f"http://capture-origin.test:{origin.port}/bytes/{size}"
    out = tmp_path / "body"
    argv = [afproxyctl_path(), "--socket", proxy.control_socket, "run", "--", "curl", "-sS", "--fail",
            "--noproxy", "*", "-o", str(out), url]
    client = subprocess.Popen(argv, env=clean_env(), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        task = live_task(proxy, url, timeout=30, min_download=300_000)
        assert ctl(proxy, "suspend", str(task["id"])).returncode == 0
        frozen = proxy.task(task["id"])
        assert frozen["state"] == "suspended" and frozen["download"]["completed"] < size, frozen
        assert ctl(proxy, "resume", str(task["id"])).returncode == 0
        assert client.wait(timeout=60) == 0, client.stderr.read()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert (out.stat().st_size, file_sha256(out)[1]) == (size, payload_sha256(size))
    assert proxy.task(task["id"])["clientProcess"]["capture"]["name"] == "curl"


def test_ipv6_destinations_are_captured_too(start_proxy, origin_v6, tmp_path):
    proxy = start(start_proxy, tmp_path)
    url = f"http://[::1]:{origin_v6.port}/bytes/4321"
    result = run(proxy, "curl", "-sS", "--fail", "--noproxy", "*", "-o", "/dev/null", "-w", "%{size_download}", url)
    assert (result.returncode, result.stdout) == (0, b"4321"), result.stderr
    [task] = completed(proxy, 1)
    assert task["url"] == url and task["clientProcess"]["capture"]["name"] == "curl", task


def test_chromium_without_proxy_flags_loads_a_page_of_many_requests(start_proxy, tmp_path):
    """Headless Chromium, no --proxy-server and no resolver rule of its own: the page and its 20
    images are 21 tasks, byte counts exact; Chromium's own hosts (it asks for some whatever its
    flags say) are answered REFUSED by the capture's resolver and never become a connection."""
    import shutil

    chromium = shutil.which("chromium")
    assert chromium, "needs chromium (scripts/install-deps)"
    page = PageOrigin(tmp_path / "site")
    proxy = start(start_proxy, tmp_path)
    base = f"http://capture-origin.test:{page.port}"
    try:
        result = run(proxy, chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                     "--dump-dom", f"{base}/index.html", env={"HOME": str(tmp_path)})
    finally:
        page.stop()
    assert result.returncode == 0 and b"<h1>many requests</h1>" in result.stdout, result.stderr[-2000:]
    expected = page.urls(base)
    # The favicon Chromium may ask for besides (a 404 here) is the only other request allowed.
    allowed = expected | {f"{base}/favicon.ico"}
    wait_for(lambda: expected <= {t["url"] for t in proxy.tasks(all=True) if t["state"] == "completed"},
             timeout=30, message="a completed task for the page and each image")
    tasks = {t["url"]: t for t in proxy.tasks(all=True)}
    assert expected <= set(tasks) <= allowed, sorted(set(tasks) - expected)
    for path, body in page.images.items():
        task = tasks[base + path]
        assert task["status"] == 200 and task["download"]["completed"] == len(body), task
    assert {t["clientProcess"]["capture"]["name"] for t in tasks.values()} == {"chromium"}


def test_aiohttp_with_its_defaults_and_git_over_intercepted_https(start_proxy, origin, tls_files, tmp_path):
    """aiohttp ignores the proxy variables by default (trust_env=False); git clones over HTTPS
    from a smart-HTTP origin, intercepted: each of its requests a task inside the TLS
    connection, the clone byte-exact."""
    from client_origins import GitOrigin, git_env
    from origin import payload

    proxy = start(start_proxy, tmp_path, "--tls-ca-file", tls_files.ca_cert)
    fetch = python(f"""
        import asyncio, hashlib, aiohttp
        async def main():
            async with aiohttp.ClientSession() as session:
                async with session.get("http://capture-origin.test:{origin.port}/bytes/65537") as response:
                    print(response.status, hashlib.sha256(await response.read()).hexdigest())
        asyncio.run(main())
        """)
    result = run(proxy, *fetch, env={"http_proxy": "http://127.0.0.1:9"})  # ignored, as it would be
    assert (result.returncode, result.stdout.decode().split()) == (0, ["200", payload_sha256(65537)]), result.stderr

    env = git_env(tmp_path)
    seed = tmp_path / "seed"
    seed.mkdir()
    for args in (("init", "-q", "-b", "main"), ("add", "."), ("commit", "-q", "-m", "first")):
        if args[0] == "add":
            (seed / "big.bin").write_bytes(payload(300_000))
        subprocess.run(["git", *args], cwd=seed, env=env, check=True, capture_output=True)
    served = tmp_path / "served"
    served.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(served / "repo.git")], env=env, check=True,
                   capture_output=True)
    git_origin = GitOrigin(served, tls_files.server_context())
    try:
        work = tmp_path / "work"
        # Not run(): its clean_env would bring back a GIT_SSL_CAINFO of this machine's.
        clone = subprocess.run(
            [afproxyctl_path(), "--socket", proxy.control_socket, "run", "--intercept", "--", "git", "-c",
             f"http.sslCAInfo={ca_path(proxy)}", "clone", "-q", git_origin.url("/repo.git"), str(work)],
            capture_output=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
        assert clone.returncode == 0, clone.stderr
    finally:
        git_origin.stop()
    assert (work / "big.bin").read_bytes() == payload(300_000)
    git_tasks = [t for t in proxy.tasks(all=True) if "/repo.git/" in t["url"]]
    assert any(t["url"].endswith("/repo.git/git-upload-pack") and t["method"] == "POST" for t in git_tasks), git_tasks
    assert all(t["url"].startswith("https://127.0.0.1:") and t["parent"] for t in git_tasks), git_tasks
    assert {t["clientProcess"]["capture"]["name"] for t in git_tasks} == {"git"}


def test_a_restarted_daemon_leaves_a_running_capture_refused(start_proxy, origin, tmp_path):
    """The capture's sockets go with the daemon that held them: once it stops, the captured
    program's new connections are refused at once (docs/capture.md), also after a new daemon
    started on the same control socket; the program itself runs on and its status comes back."""
    proxy = start(start_proxy, tmp_path)
    first, go, outcome = tmp_path / "first", tmp_path / "go", tmp_path / "outcome"
    script = python(f"""
        import os, socket, time
        socket.create_connection(("127.0.0.1", {origin.port})).close()
        open({str(first)!r}, "w").close()
        while not os.path.exists({str(go)!r}):
            time.sleep(0.05)
        try:
            socket.create_connection(("127.0.0.1", {origin.port}), timeout=10).close()
            result = "connected"
        except ConnectionRefusedError:
            result = "refused"
        except OSError as error:
            result = f"other {{error}}"
        open({str(outcome)!r}, "w").write(result)
        """)
    argv = [afproxyctl_path(), "--socket", proxy.control_socket, "run", "--", *script]
    child = subprocess.Popen(argv, env=clean_env(), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(first.exists, timeout=30, message="the first captured connection")
        proxy.stop(by_test=True)
        again = start_proxy(*ALLOW_NAMES, control_socket=proxy.control_socket,
                            wrapper=local_resolver_wrapper(tmp_path, NAMES))
        again.wait_control_ready()
        go.touch()
        assert child.wait(timeout=60) == 0, child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert outcome.read_text() == "refused"
    assert again.tasks(all=True) == []


def test_garbage_after_a_client_hello_ends_that_connection_alone(start_proxy, tls_origin, tls_files, origin,
                                                                tmp_path):
    """A ClientHello (Python's own, for localhost) followed by bytes no TLS record starts with,
    intercepted: the connection's task fails with its code, the program sees the connection end,
    and the next connection of the same capture is served."""
    proxy = start(start_proxy, tmp_path, "--tls-ca-file", tls_files.ca_cert)
    script = python(f"""
        import socket, ssl, urllib.request
        bio_in, bio_out = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ssl.create_default_context().wrap_bio(bio_in, bio_out, server_hostname="localhost")
        try:
            tls.do_handshake()
        except ssl.SSLWantReadError:
            pass
        c = socket.create_connection(("localhost", {tls_origin.port}))
        c.sendall(bio_out.read() + b"\\x00\\xffnot a record at all" * 50)
        c.settimeout(30)
        try:
            while c.recv(65536):
                pass
            print("closed")
        except ConnectionResetError:
            print("reset")
        body = urllib.request.urlopen("http://127.0.0.1:{origin.port}/bytes/10").read()
        print(len(body))
        """)
    result = run(proxy, *script, options=("--intercept",), env={"no_proxy": "*"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().split() in (["closed", "10"], ["reset", "10"]), result.stdout
    tasks = completed(proxy, 2)
    stream = next(t for t in tasks if t["kind"] == "stream")
    assert stream["url"] == f"localhost:{tls_origin.port}" and stream["errorCode"], stream
    assert proxy.alive()
