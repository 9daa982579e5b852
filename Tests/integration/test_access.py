"""Who may use the proxy, through the real daemon: `allow-clients` (a client on 127.0.0.2 outside
it gets 403 and the connection closes; a non-loopback listen without it refuses to start),
`proxy-auth-file` (407 with a Basic challenge; wrong and right credentials, for requests and
CONNECT; the credentials reach neither the origin, nor the log, nor a task, nor HAR), and the
destination rules (`deny-hosts`, `allow-hosts`, `deny-private-destinations`) for requests,
tunnels and download tasks, with a name that resolves to 127.0.0.1 through a hosts file
bind-mounted in the daemon's own mount namespace.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from helpers import clean_env, ctl, curl, local_resolver_wrapper, wait_for
from origin import payload

PASSWORD = "s3cret-Pa55word"


def status_of(result: subprocess.CompletedProcess) -> int:
    return int(result.stdout.decode().rsplit("\n", 1)[-1])


def fetch(proxy, *args: str) -> tuple[int, str]:
    """curl through the proxy: (status, body); the status is curl's %{http_code}."""
    result = curl(proxy, "-w", "\n%{http_code}", *args)
    body, _, code = result.stdout.decode("utf-8", "replace").rpartition("\n")
    return int(code), body


def proxied_tasks(proxy) -> list[dict]:
    """The proxied tasks (requests and tunnels), without download tasks restored from a state
    directory other tests left behind."""
    return [t for t in proxy.tasks(all=True) if t["kind"] != "download"]


def hash_file(tmp_path: Path, lines: list[str], mode: int = 0o600) -> Path:
    path = tmp_path / "users"
    path.write_text("# afproxy users\n" + "\n".join(lines) + "\n")
    path.chmod(mode)
    return path


def sha512crypt(password: str) -> str:
    return subprocess.run(["openssl", "passwd", "-6", "-salt", "afproxytest", password], check=True,
                          capture_output=True, text=True).stdout.strip()


def yescrypt(password: str) -> str | None:
    """A yescrypt hash through the system's crypt (Python's crypt module, where it still exists)."""
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import crypt  # noqa: PLC0415
    except ImportError:
        return None
    hashed = crypt.crypt(password, "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$")
    return hashed if hashed and hashed.startswith("$y$") else None


# ----------------------------------------------------------------------------------------------
# allow-clients


def read_all_from(port: int, source: str, send: bytes = b"") -> bytes:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        if send:
            s.sendall(send)
        out = bytearray()
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
        return bytes(out)


def test_client_outside_allow_clients_gets_403(start_proxy, origin):
    proxy = start_proxy("--allow-clients", "127.0.0.1/32")
    before = origin.connections

    # Without sending a byte: the answer comes, then the end of the connection.
    answer = read_all_from(proxy.port, "127.0.0.2")
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n"), answer
    assert b"allow-clients" in answer

    # curl from 127.0.0.2 sees the 403; the origin sees nothing.
    result = curl(proxy, "--interface", "127.0.0.2", "-w", "\n%{http_code}", origin.url("/bytes/100"))
    assert status_of(result) == 403, result
    assert origin.connections == before
    assert proxied_tasks(proxy) == []

    # 127.0.0.1 is served as usual.
    result = curl(proxy, "-o", "/dev/null", "-w", "%{http_code} %{size_download}", origin.url("/bytes/100"))
    assert result.stdout == b"200 100", result


def test_default_allows_every_loopback_address(proxy, origin):
    code, _ = fetch(proxy, "--interface", "127.0.0.2", origin.url("/bytes/10"))
    assert code == 200


def run_afproxy(afproxy_bin: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([afproxy_bin, *args], capture_output=True, text=True, timeout=timeout,
                          env=clean_env(), stdin=subprocess.DEVNULL)


def test_non_loopback_listen_without_allow_clients_refuses_to_start(afproxy_bin, tmp_path):
    result = run_afproxy(afproxy_bin, "--listen", "0.0.0.0:0", "--control-socket", str(tmp_path / "c.sock"))
    assert result.returncode == 1, result
    assert "listen address 0.0.0.0 is not loopback: set allow-clients" in result.stderr, result.stderr
    assert not (tmp_path / "c.sock").exists()

    conf = tmp_path / "afproxy.conf"
    conf.write_text("listen = [::]:0\n")
    result = run_afproxy(afproxy_bin, "--config", str(conf), "--control-socket", str(tmp_path / "c.sock"))
    assert result.returncode == 1 and "allow-clients" in result.stderr, result


def test_non_loopback_listen_with_allow_clients_starts(start_proxy, origin):
    proxy = start_proxy("--listen", "0.0.0.0:0", "--allow-clients", "127.0.0.0/8")
    wait_for(lambda: "listening on 0.0.0.0:" in proxy.log(), message="the 0.0.0.0 listener")
    code, _ = fetch(proxy, origin.url("/bytes/10"))
    assert code == 200


@pytest.mark.parametrize("value", ["10.0.0.0/33", "not-an-address", "10.0.0.0/8,, x"])
def test_bad_allow_clients_is_a_configuration_error(afproxy_bin, tmp_path, value):
    result = run_afproxy(afproxy_bin, "--allow-clients", value, "--control-socket", str(tmp_path / "c.sock"))
    assert result.returncode == 1 and "--allow-clients" in result.stderr, result


def test_allow_clients_is_reloaded(start_proxy, origin, tmp_path):
    conf = tmp_path / "afproxy.conf"
    conf.write_text("allow-clients = 127.0.0.1\n")
    proxy = start_proxy("--config", str(conf))
    assert read_all_from(proxy.port, "127.0.0.2").startswith(b"HTTP/1.1 403")
    conf.write_text("allow-clients = 127.0.0.1, 127.0.0.2\n")
    os.kill(proxy.pid, signal.SIGHUP)
    wait_for(lambda: "configuration reloaded" in proxy.log(), message="the reload")
    code, _ = fetch(proxy, "--interface", "127.0.0.2", origin.url("/bytes/10"))
    assert code == 200


# ----------------------------------------------------------------------------------------------
# proxy authentication


@pytest.fixture
def auth_proxy(start_proxy, origin, tmp_path):
    users = hash_file(tmp_path, [f"alice:{sha512crypt(PASSWORD)}"])
    return start_proxy("--proxy-auth-file", str(users), "--log-level", "debug",
                       "--allow-connect-port", str(origin.port))


def test_requests_without_or_with_wrong_credentials_get_407(auth_proxy, origin):
    before = origin.received
    for extra in ([], ["--proxy-user", "alice:wrong"], ["--proxy-user", "mallory:" + PASSWORD]):
        result = curl(auth_proxy, "-i", *extra, origin.url("/echo"))
        head = result.stdout.decode("utf-8", "replace")
        assert head.startswith("HTTP/1.1 407 Proxy Authentication Required\r\n"), (extra, head)
        assert 'Proxy-Authenticate: Basic realm="afproxy"' in head, head
    assert origin.received == before


def test_right_credentials_are_served_and_not_forwarded(auth_proxy, origin):
    result = curl(auth_proxy, "--proxy-user", f"alice:{PASSWORD}", "-w", "\n%{http_code}", origin.url("/echo"))
    body, _, code = result.stdout.decode().rpartition("\n")
    assert code == "200", result
    echoed = json.loads(body)
    names = [name.lower() for name, _ in echoed["headers"]]
    assert "proxy-authorization" not in names, echoed
    # Repeated requests on one connection and on new ones are served too (the cache).
    url = origin.url("/bytes/1000")
    result = curl(auth_proxy, "--proxy-user", f"alice:{PASSWORD}", "-w", "%{http_code} ", url, url, url)
    assert result.stdout.count(b"200 ") == 3, result


def test_connect_needs_credentials(auth_proxy, origin):
    result = curl(auth_proxy, "-p", "-w", "\n%{http_code}", origin.url("/bytes/10"))
    assert b"407" in result.stderr or result.stdout.endswith(b"407"), result
    result = curl(auth_proxy, "-p", "--proxy-user", "alice:wrong", origin.url("/bytes/10"))
    assert result.returncode != 0 and b"407" in result.stderr, result
    result = curl(auth_proxy, "-p", "--proxy-user", f"alice:{PASSWORD}", "-w", "\n%{http_code}",
                  origin.url("/bytes/10"))
    assert result.returncode == 0 and result.stdout.endswith(b"\n200"), result


def test_credentials_appear_nowhere(auth_proxy, origin):
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    curl(auth_proxy, "--proxy-user", f"alice:{PASSWORD}", origin.url("/echo"))
    curl(auth_proxy, "--proxy-user", "alice:wrong-" + PASSWORD, origin.url("/echo"))
    curl(auth_proxy, "-p", "--proxy-user", f"alice:{PASSWORD}", origin.url("/bytes/10"))
    auth_proxy.wait_control_ready()
    auth_proxy.wait_idle()
    tasks = proxied_tasks(auth_proxy)
    assert len(tasks) == 2, tasks
    assert [t["proxyUser"] for t in tasks] == ["alice", "alice"], tasks
    status, har = auth_proxy.api("GET", "/v1/har")
    assert status == 200
    shown = [ctl(auth_proxy, "show", str(t["id"]), "--json").stdout for t in tasks]
    listing = ctl(auth_proxy, "list", "--all").stdout
    assert all("  user       alice\n" in text for text in [ctl(auth_proxy, "show", str(t["id"])).stdout for t in tasks])
    for text in [json.dumps(tasks), json.dumps(har), *shown, listing, auth_proxy.log()]:
        assert PASSWORD not in text
        assert token not in text
    for text in [json.dumps(tasks), json.dumps(har), *shown]:
        assert "proxy-authorization" not in text.lower()


def test_yescrypt_hash(start_proxy, origin, tmp_path):
    hashed = yescrypt(PASSWORD)
    if hashed is None:
        pytest.skip("no yescrypt through Python's crypt module here")
    proxy = start_proxy("--proxy-auth-file", str(hash_file(tmp_path, [f"bob:{hashed}"])))
    assert fetch(proxy, "--proxy-user", f"bob:{PASSWORD}", origin.url("/bytes/10"))[0] == 200
    assert fetch(proxy, "--proxy-user", "bob:nope", origin.url("/bytes/10"))[0] == 407


def test_weak_hashes_and_bad_files_refuse_to_start(afproxy_bin, tmp_path):
    control = str(tmp_path / "c.sock")
    md5 = subprocess.run(["openssl", "passwd", "-1", "-salt", "abc", PASSWORD], check=True, capture_output=True,
                         text=True).stdout.strip()
    result = run_afproxy(afproxy_bin, "--proxy-auth-file", str(hash_file(tmp_path, [f"alice:{md5}"])),
                         "--control-socket", control)
    assert result.returncode == 1, result
    assert "line 2: MD5-crypt ($1$) is not taken" in result.stderr, result.stderr
    result = run_afproxy(afproxy_bin, "--proxy-auth-file", str(tmp_path / "missing"), "--control-socket", control)
    assert result.returncode == 1 and "No such file" in result.stderr, result


def test_world_readable_file_warns_and_reload_replaces_users(start_proxy, origin, tmp_path):
    users = hash_file(tmp_path, [f"alice:{sha512crypt(PASSWORD)}"], mode=0o644)
    proxy = start_proxy("--proxy-auth-file", str(users))
    assert "is readable by every user" in proxy.log()
    assert fetch(proxy, "--proxy-user", f"alice:{PASSWORD}", origin.url("/bytes/10"))[0] == 200
    hash_file(tmp_path, [f"carol:{sha512crypt('other-pw')}"])
    os.kill(proxy.pid, signal.SIGHUP)
    wait_for(lambda: "configuration reloaded" in proxy.log(), message="the reload")
    assert fetch(proxy, "--proxy-user", f"alice:{PASSWORD}", origin.url("/bytes/10"))[0] == 407
    assert fetch(proxy, "--proxy-user", "carol:other-pw", origin.url("/bytes/10"))[0] == 200


def test_a_reload_that_turns_authentication_off_leaves_open_connections_as_they_were(start_proxy, origin, tmp_path):
    users = hash_file(tmp_path, [f"alice:{sha512crypt(PASSWORD)}"])
    conf = tmp_path / "afproxy.conf"
    conf.write_text(f"proxy-auth-file = {users}\n")
    proxy = start_proxy("--config", str(conf))
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    url = origin.url("/bytes/10")
    request = f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\nProxy-Authorization: Basic {token}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as connection:
        reader = connection.makefile("rb")

        def status_line() -> bytes:
            connection.sendall(request.encode())
            first = reader.readline()
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            reader.read(length)
            return first.strip()

        assert status_line() == b"HTTP/1.1 200 OK"
        conf.write_text("")
        os.kill(proxy.pid, signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in proxy.log(), message="the reload")
        # The connection opened with authentication keeps its gate and its verified credentials.
        assert status_line() == b"HTTP/1.1 200 OK"
    assert fetch(proxy, url)[0] == 200  # a new one goes without


# ----------------------------------------------------------------------------------------------
# destination rules


def test_denied_host_gets_403_naming_the_rule(start_proxy, origin):
    proxy = start_proxy("--deny-hosts", "*.denied.test", "--deny-hosts", "10.0.0.0/8",
                        "--allow-connect-port", "8443")
    code, body = fetch(proxy, "http://www.denied.test/x")
    assert code == 403
    assert "www.denied.test is denied by deny-hosts *.denied.test" in body, body
    code, body = fetch(proxy, "http://10.1.2.3/")
    assert code == 403 and "deny-hosts 10.0.0.0/8" in body, body
    result = curl(proxy, "-p", "https://api.denied.test:8443/")
    assert result.returncode != 0 and b"403" in result.stderr, result
    proxy.wait_control_ready()
    records = proxied_tasks(proxy)
    assert [r["errorCode"] for r in records] == ["destination-denied"] * 3, records
    assert fetch(proxy, origin.url("/bytes/10"))[0] == 200


def test_allow_hosts_allows_only_what_it_lists(start_proxy, origin):
    proxy = start_proxy("--allow-hosts", "127.0.0.1", "--allow-hosts", "*.allowed.test")
    assert fetch(proxy, origin.url("/bytes/10"))[0] == 200
    code, body = fetch(proxy, "http://192.0.2.1/")
    assert code == 403 and "192.0.2.1 (192.0.2.1) is denied by allow-hosts (not listed)" in body, body
    names_only = start_proxy("--allow-hosts", "*.allowed.test")
    code, body = fetch(names_only, "http://elsewhere.test/")
    assert code == 403 and "elsewhere.test is denied by allow-hosts (not listed)" in body, body


def test_literal_private_destinations_refused(start_proxy, origin):
    before = origin.connections
    proxy = start_proxy("--deny-private-destinations", "yes", "--allow-connect-port", str(origin.port))
    code, body = fetch(proxy, origin.url("/bytes/10"))
    assert code == 403 and "deny-private-destinations (loopback address)" in body, body
    result = curl(proxy, "-p", origin.url("/bytes/10"))
    assert result.returncode != 0 and b"403" in result.stderr, result
    assert origin.connections == before


# The names hosts_wrapper's daemons resolve, which they are allowed to reach (a test's daemon
# reaches only this machine and the names its test adds: helpers.TEST_DESTINATIONS).
HOSTS_NAMES = ("private.test", "denied.test")
ALLOW_HOSTS_NAMES = tuple(arg for name in HOSTS_NAMES for arg in ("--allow-hosts", name))


def hosts_wrapper(tmp_path: Path) -> tuple[str, ...]:
    """The daemon in its own mount namespace, where /etc/hosts maps private.test and denied.test
    to 127.0.0.1 and nothing else resolves (no lookup leaves the machine)."""
    return local_resolver_wrapper(tmp_path, HOSTS_NAMES)


def test_name_resolving_to_a_private_address(start_proxy, origin, tmp_path):
    wrapper = hosts_wrapper(tmp_path)
    url = f"http://private.test:{origin.port}/bytes/100"

    # Without the rule the name is served: the hosts file does apply to the daemon.
    open_proxy = start_proxy(*ALLOW_HOSTS_NAMES, wrapper=wrapper)
    served = curl(open_proxy, url)
    assert served.returncode == 0 and served.stdout == payload(100), served.stderr

    # Its own state directory: a download task is kept in its journal, to be restored by the next
    # daemon that shares it.
    proxy = start_proxy("--deny-private-destinations", "yes", "--allow-connect-port", str(origin.port),
                        "--state-dir", str(tmp_path / "state"), *ALLOW_HOSTS_NAMES, wrapper=wrapper)
    before = origin.connections
    code, body = fetch(proxy, url)
    assert code == 403, body
    assert "private.test (127.0.0.1) is denied by deny-private-destinations (loopback address)" in body, body
    result = curl(proxy, "-p", url)
    assert result.returncode != 0 and b"403" in result.stderr, result
    assert origin.connections == before
    proxy.wait_control_ready()
    assert {r["errorCode"] for r in proxied_tasks(proxy)} == {"destination-denied"}

    # A download task obeys the same rules.
    status, body = proxy.api("POST", "/v1/downloads", {"url": url, "path": str(tmp_path / "dl.bin")})
    assert status == 201, (status, body)
    done = wait_for(lambda: next((t for t in proxy.tasks(all=True) if t["id"] == body["id"]
                                  and t["state"] == "completed"), None), message="the download's end")
    assert done["errorCode"] == "destination-denied", done
    assert origin.connections == before


def test_a_name_resolving_into_a_denied_block(start_proxy, origin, tmp_path):
    proxy = start_proxy("--deny-hosts", "127.0.0.0/8", *ALLOW_HOSTS_NAMES, wrapper=hosts_wrapper(tmp_path))
    code, body = fetch(proxy, f"http://private.test:{origin.port}/bytes/10")
    assert code == 403 and "private.test (127.0.0.1) is denied by deny-hosts 127.0.0.0/8" in body, body


def test_destination_rules_are_reloaded(start_proxy, origin, tmp_path):
    conf = tmp_path / "afproxy.conf"
    conf.write_text("")
    proxy = start_proxy("--config", str(conf), *ALLOW_HOSTS_NAMES, wrapper=hosts_wrapper(tmp_path))
    url = f"http://private.test:{origin.port}/bytes/10"
    assert fetch(proxy, url)[0] == 200
    conf.write_text("deny-hosts = 127.0.0.0/8\n")
    os.kill(proxy.pid, signal.SIGHUP)
    wait_for(lambda: "configuration reloaded" in proxy.log(), message="the reload")
    # curl kept the connection to 127.0.0.1 for reuse, and opens no socket for this request:
    # the address is checked again before the request goes out on it.
    requests = origin.received
    code, body = fetch(proxy, url)
    assert code == 403 and "deny-hosts 127.0.0.0/8" in body, body
    assert origin.received == requests


def test_a_redirect_a_download_follows_is_checked(start_proxy, origin, tmp_path):
    proxy = start_proxy("--deny-hosts", "denied.test", "--state-dir", str(tmp_path / "state"),
                        *ALLOW_HOSTS_NAMES, wrapper=hosts_wrapper(tmp_path))
    proxy.wait_control_ready()
    start = f"http://private.test:{origin.port}/redirect/denied.test"
    status, body = proxy.api("POST", "/v1/downloads", {"url": start, "path": str(tmp_path / "r.bin")})
    assert status == 201, (status, body)
    done = wait_for(lambda: next((t for t in proxy.tasks(all=True) if t["id"] == body["id"]
                                  and t["state"] == "completed"), None), message="the download's end")
    assert done["errorCode"] == "destination-denied", done
    # By name, or by name and address where an address rule (the suite's allow list) has the
    # address checked as the connection opens: either way the rule that refused is named.
    assert done["error"].startswith("denied.test ") and "is denied by deny-hosts denied.test" in done["error"], done
    paths = [r.path for r in origin.requests]
    assert "/redirect/denied.test" in paths and "/bytes/10" not in paths[paths.index("/redirect/denied.test"):]
