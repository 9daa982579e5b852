"""HTTPS interception with real clients: wget, Python requests and httpx, pip installing from a
local HTTPS index, git cloning and pushing over smart HTTP, and headless Chromium trusting
afproxy's CA through an NSS database. Each client goes through a real daemon that intercepts
127.0.0.1; every body is checked byte for byte and every request the origin served must be a task
of its own with its https:// URL, method, status and byte count, its parent a stream task.
Bad origins (expired, self-signed, wrong name) are a 502 with tls-verify-failed and no byte of
theirs relayed; a CA key that cannot be read at start leaves the daemon serving plain tunnels."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from client_origins import GitOrigin, StaticOrigin, git_env, make_bad_cert
from helpers import ca_path, clean_env, curl, curl_sha256, start_chromium, wait_for
from origin import payload, payload_sha256, start_origin

MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# fixtures and checks


@pytest.fixture
def intercepting(start_proxy, tls_files):
    """Factory: a daemon that intercepts 127.0.0.1, trusts the test CA for origins and allows
    CONNECT to `ports`."""

    def start(*ports: int, extra: tuple[str, ...] = ()):
        args = ["--intercept-hosts", "127.0.0.1", "--tls-ca-file", tls_files.ca_cert]
        for port in ports:
            args += ["--allow-connect-port", str(port)]
        return start_proxy(*args, *extra)

    return start


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def request_tasks(proxy, count: int, prefix: str = "https://", timeout: float = 30.0) -> list[dict]:
    """The completed data and upload tasks whose URL starts with `prefix`, once there are
    `count` of them."""
    def done():
        tasks = [t for t in proxy.tasks(all=True) if t["kind"] in ("data", "upload") and t["url"].startswith(prefix)]
        finished = [t for t in tasks if t["state"] == "completed"]
        return finished if len(finished) >= count and len(finished) == len(tasks) else None
    return wait_for(done, timeout=timeout, message=lambda: f"{count} completed request tasks; have "
                    f"{[(t['url'], t['state']) for t in proxy.tasks(all=True)]}")


def streams_by_id(proxy) -> dict[int, dict]:
    return {t["id"]: t for t in proxy.tasks(all=True) if t["kind"] == "stream"}


def check_tasks_match(proxy, origin) -> list[dict]:
    """Every request `origin` served is one task with its URL, method, status and bytes, its
    parent an intercepted stream task; no other request task for this origin exists (a browser
    also asks for hosts of its own). Returns the tasks."""
    served = origin.requests
    assert served
    tasks = request_tasks(proxy, len(served), prefix=origin.url("/"))
    assert len(tasks) == len(served), ([(t["method"], t["url"]) for t in tasks], served)
    streams = streams_by_id(proxy)
    left = list(tasks)
    for s in served:
        match = [t for t in left if t["url"] == origin.url(s.path) and t["method"] == s.method
                 and t["status"] == s.status and t["download"]["completed"] == s.length]
        assert match, (s, [(t["method"], t["url"], t["status"], t["download"]) for t in left])
        left.remove(match[0])
    for t in tasks:
        assert t["errorCode"] is None, t
        assert t["parent"] in streams, t
        assert streams[t["parent"]]["url"] == f"127.0.0.1:{origin.port}"
    return tasks


def static_origin(tls_files, files) -> StaticOrigin:
    return StaticOrigin(files, tls_files.server_context())


# ----------------------------------------------------------------------------------------------
# wget


def test_wget_downloads_through_interception(intercepting, tls_files, tmp_path):
    sizes = (MiB + 5, 70_001, 3)
    origin = static_origin(tls_files, {f"/f/{n}": (payload(n), "application/octet-stream") for n in sizes})
    try:
        proxy = intercepting(origin.port)
        ca = ca_path(proxy)
        env = clean_env({"https_proxy": f"http://127.0.0.1:{proxy.port}", "HOME": str(tmp_path)})
        result = subprocess.run(["wget", "-q", "--no-config", f"--ca-certificate={ca}", "-P", str(tmp_path / "out"),
                                 *[origin.url(f"/f/{n}") for n in sizes]],
                                capture_output=True, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        for n in sizes:
            assert sha256((tmp_path / "out" / str(n)).read_bytes()) == payload_sha256(n)
        check_tasks_match(proxy, origin)
    finally:
        origin.stop()


# ----------------------------------------------------------------------------------------------
# Python requests and httpx: several requests on one keep-alive connection


def python_client_requests(client: str, proxy_url: str, ca: str, urls: list[str]) -> list[tuple[int, str]]:
    """Runs `client` in a fresh interpreter (no proxy variables) and returns (status, sha256)
    per URL, all on one session."""
    script = {
        "requests": (
            "import hashlib, json, sys, requests\n"
            "s = requests.Session()\n"
            "s.trust_env = False\n"
            "out = []\n"
            "for u in sys.argv[3:]:\n"
            "    r = s.get(u, proxies={'https': sys.argv[1]}, verify=sys.argv[2], timeout=60)\n"
            "    out.append((r.status_code, hashlib.sha256(r.content).hexdigest()))\n"
            "print(json.dumps(out))\n"),
        "httpx": (
            "import hashlib, json, ssl, sys, httpx\n"
            "ctx = ssl.create_default_context(cafile=sys.argv[2])\n"
            "out = []\n"
            "with httpx.Client(proxy=sys.argv[1], verify=ctx, trust_env=False, timeout=60) as c:\n"
            "    for u in sys.argv[3:]:\n"
            "        r = c.get(u)\n"
            "        out.append((r.status_code, hashlib.sha256(r.content).hexdigest()))\n"
            "print(json.dumps(out))\n"),
    }[client]
    result = subprocess.run([sys.executable, "-c", script, proxy_url, ca, *urls], capture_output=True,
                            env=clean_env(), timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return [tuple(x) for x in json.loads(result.stdout)]


@pytest.mark.parametrize("client", ["requests", "httpx"])
def test_python_clients_keep_one_intercepted_connection(intercepting, tls_origin, client):
    proxy = intercepting(tls_origin.port)
    sizes = (2 * MiB + 1, 10, 300_000, 4097)
    urls = [tls_origin.url(f"/bytes/{n}") for n in sizes]
    answers = python_client_requests(client, f"http://127.0.0.1:{proxy.port}", ca_path(proxy), urls)
    assert answers == [(200, payload_sha256(n)) for n in sizes]
    tasks = request_tasks(proxy, len(sizes))
    assert sorted((t["url"], t["status"], t["download"]["completed"]) for t in tasks) == \
        sorted((u, 200, n) for u, n in zip(urls, sizes))
    streams = list(streams_by_id(proxy).values())
    assert len(streams) == 1, streams
    assert streams[0]["requests"] == len(sizes)
    assert {t["parent"] for t in tasks} == {streams[0]["id"]}


# ----------------------------------------------------------------------------------------------
# pip from a local HTTPS simple index


def make_wheel(name: str, version: str, module_text: bytes) -> tuple[str, bytes]:
    """A pure-Python wheel written by hand (no network, no build backend)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module_text,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: afproxy-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(path, data)
    return f"{name}-{version}-py3-none-any.whl", buffer.getvalue()


def test_pip_installs_from_an_https_index(intercepting, tls_files, tmp_path):
    module_text = b"VALUE = 'through afproxy'\n" + b"# padding\n" * 5000
    wheel_name, wheel = make_wheel("afpdemo", "1.0", module_text)
    index = (f'<!DOCTYPE html><html><body><a href="/files/{wheel_name}#sha256={sha256(wheel)}">'
             f'{wheel_name}</a></body></html>').encode()
    origin = static_origin(tls_files, {"/simple/afpdemo/": (index, "text/html"),
                                       f"/files/{wheel_name}": (wheel, "application/octet-stream")})
    try:
        proxy = intercepting(origin.port)
        target = tmp_path / "site"
        # requests (inside pip) lets REQUESTS_CA_BUNDLE win over the session's --cert, and
        # PIP_FIND_LINKS would offer wheels from elsewhere.
        env = {k: v for k, v in clean_env({"PIP_CONFIG_FILE": os.devnull, "HOME": str(tmp_path)}).items()
               if k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "PIP_FIND_LINKS",
                            "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX")}
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
             "--index-url", origin.url("/simple/"), "--proxy", f"http://127.0.0.1:{proxy.port}",
             "--cert", ca_path(proxy), "--target", str(target), "afpdemo"],
            capture_output=True, env=env, timeout=300)
        assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
        assert (target / "afpdemo" / "__init__.py").read_bytes() == module_text
        assert (target / "afpdemo-1.0.dist-info" / "METADATA").exists()
        assert {s.path for s in origin.requests} == {"/simple/afpdemo/", f"/files/{wheel_name}"}
        check_tasks_match(proxy, origin)
    finally:
        origin.stop()


# ----------------------------------------------------------------------------------------------
# git over smart HTTP


def git(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env, timeout=120)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr.decode()}"
    return result


def test_git_clones_and_pushes_over_https(intercepting, tls_files, tmp_path):
    env = git_env(tmp_path)
    seed = tmp_path / "seed"
    seed.mkdir()
    git("init", "-q", "-b", "main", cwd=seed, env=env)
    (seed / "big.bin").write_bytes(payload(300_000))
    (seed / "README").write_text("first\n")
    git("add", ".", cwd=seed, env=env)
    git("commit", "-q", "-m", "first", cwd=seed, env=env)
    root = tmp_path / "served"
    root.mkdir()
    git("clone", "-q", "--bare", str(seed), str(root / "repo.git"), cwd=tmp_path, env=env)
    git("config", "http.receivepack", "true", cwd=root / "repo.git", env=env)

    origin = GitOrigin(root, tls_files.server_context())
    try:
        proxy = intercepting(origin.port)
        via = ["-c", f"http.proxy=http://127.0.0.1:{proxy.port}", "-c", f"http.sslCAInfo={ca_path(proxy)}"]
        git(*via, "clone", "-q", origin.url("/repo.git"), "work", cwd=tmp_path, env=env)
        work = tmp_path / "work"
        assert sha256((work / "big.bin").read_bytes()) == payload_sha256(300_000)
        (work / "README").write_text("second\n")
        git("commit", "-q", "-am", "second", cwd=work, env=env)
        pushed = git("rev-parse", "HEAD", cwd=work, env=env).stdout.strip()
        git(*via, "push", "-q", "origin", "main", cwd=work, env=env)
        arrived = git("rev-parse", "main", cwd=root / "repo.git", env=env).stdout.strip()
        assert arrived == pushed

        paths = [s.path for s in origin.requests]
        for wanted in ("/repo.git/info/refs?service=git-upload-pack", "/repo.git/git-upload-pack",
                       "/repo.git/info/refs?service=git-receive-pack", "/repo.git/git-receive-pack"):
            assert wanted in paths, paths
        tasks = check_tasks_match(proxy, origin)
        receive = [t for t in tasks if t["url"].endswith("/git-receive-pack")]
        assert receive[0]["method"] == "POST" and receive[0]["upload"]["completed"] > 0
    finally:
        origin.stop()


# ----------------------------------------------------------------------------------------------
# headless Chromium, the CA in an NSS database


SCRIPTS = 20


def browser_page() -> dict[str, tuple[bytes, str]]:
    """A page that pulls SCRIPTS scripts of different sizes; each script adds its number, and
    the page's title says how many ran once everything loaded."""
    files = {}
    tags = ""
    for i in range(SCRIPTS):
        body = f"window.ran.push({i});\n".encode() + b"//" + b"x" * (1000 * i + 17) + b"\n"
        files[f"/s/{i}.js"] = (body, "application/javascript")
        tags += f'<script src="/s/{i}.js"></script>\n'
    page = ("<!DOCTYPE html><html><head><title>loading</title><link rel=\"icon\" href=\"data:,\">"
            "<script>window.ran = [];</script>\n" + tags +
            "<script>window.addEventListener('load', () => {"
            "document.title = 'loaded ' + window.ran.length; });</script>"
            "</head><body>page</body></html>").encode()
    files["/page.html"] = (page, "text/html")
    return files


def test_chromium_loads_a_page_with_many_subresources(intercepting, tls_files, tmp_path):
    if shutil.which("certutil") is None:
        pytest.fail("needs certutil (libnss3-tools): scripts/install-deps")

    files = browser_page()
    origin = static_origin(tls_files, files)
    try:
        proxy = intercepting(origin.port)
        home = tmp_path / "home"
        nssdb = home / ".pki" / "nssdb"
        nssdb.mkdir(parents=True)
        for args in (["-N", "--empty-password"], ["-A", "-t", "C,,", "-n", "afproxy", "-i", ca_path(proxy)]):
            made = subprocess.run(["certutil", "-d", f"sql:{nssdb}", *args], capture_output=True, timeout=60)
            assert made.returncode == 0, made.stderr
        driver = start_chromium(proxy.port, tmp_path / "profile", home)
        try:
            driver.get(origin.url("/page.html"))
            wait_for(lambda: driver.title == f"loaded {SCRIPTS}", timeout=60,
                     message=lambda: f"the page's title; it is {driver.title!r}")
            assert driver.execute_script("return window.ran") == list(range(SCRIPTS))
        finally:
            driver.quit()
        tasks = check_tasks_match(proxy, origin)
        by_url = {t["url"]: t for t in tasks}
        for path, (body, _) in files.items():
            task = by_url[origin.url(path)]
            assert task["status"] == 200 and task["download"]["completed"] == len(body), task
        # Chromium offers h2 and gets it: every request is a stream of the one intercepted
        # connection it keeps to the origin (its parent), not one of six HTTP/1.1 connections.
        page_tasks = [by_url[origin.url(path)] for path in files]
        assert all(t["clientHTTPVersion"] == "2" for t in page_tasks), page_tasks
        parents = {t["parent"] for t in page_tasks}
        assert len(parents) == 1 and None not in parents, parents
    finally:
        origin.stop()


# ----------------------------------------------------------------------------------------------
# bad origins


@pytest.mark.parametrize("kind", ["expired", "self-signed", "wrong-name"])
def test_an_origin_whose_certificate_does_not_verify_is_a_502(intercepting, tls_files, tmp_path, kind):
    pair = make_bad_cert(kind, tmp_path / "bad", tls_files.ca_cert, tls_files.ca_key)
    origin = start_origin(tls=pair.server_context())
    try:
        proxy = intercepting(origin.port)
        size = 50_000
        result = curl(proxy, "--cacert", ca_path(proxy), "-w", "\n%{http_code}", origin.url(f"/bytes/{size}"))
        assert result.returncode == 0, result.stderr
        body, _, code = result.stdout.rpartition(b"\n")
        assert code == b"502", result.stdout[:300]
        assert b"certificate" in body.lower(), body
        assert payload(size)[:64] not in body
        assert len(body) < size
        assert not origin.requests  # the handshake failed before any request reached it
        task = wait_for(lambda: (lambda ts: ts[0] if ts and ts[0]["state"] == "completed" else None)(
            [t for t in proxy.tasks(all=True) if t["kind"] == "data"]))
        assert task["errorCode"] == "tls-verify-failed", task
        assert task["download"]["completed"] == 0
        assert task["url"] == origin.url(f"/bytes/{size}")
    finally:
        origin.stop()


# ----------------------------------------------------------------------------------------------
# the CA key unreadable at start


def test_an_unreadable_ca_key_at_start_leaves_plain_tunnels(start_proxy, tls_origin, tls_files, tmp_path):
    """A CA made by an earlier run whose key file was since overwritten with garbage: the daemon
    starts, says in its log that the key cannot be used, and relays CONNECTs as plain tunnels."""
    ca_dir = tmp_path / "ca"
    args = ("--ca-dir", str(ca_dir), "--intercept-hosts", "127.0.0.1",
            "--allow-connect-port", str(tls_origin.port), "--tls-ca-file", tls_files.ca_cert)
    first = start_proxy(*args)
    assert Path(ca_path(first)).exists()
    first.stop(by_test=True)
    key = ca_dir / "ca-key.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n")
    key.chmod(0o600)

    proxy = start_proxy(*args)
    logged = wait_for(lambda: [line for line in proxy.log().splitlines() if "ca-key.pem" in line], timeout=20,
                      message=lambda: f"a log line naming ca-key.pem; log:\n{proxy.log()}")
    assert any(" error " in line and "intercept" in line for line in logged), logged
    size = 123_457
    result = curl_sha256(proxy, "--cacert", tls_files.ca_cert, tls_origin.url(f"/bytes/{size}"))
    assert result.returncode == 0 and result.sha256 == payload_sha256(size), result.stderr
    stream = wait_for(lambda: [t for t in proxy.tasks(all=True) if t["kind"] == "stream"])[0]
    assert stream["requests"] is None, stream
    assert not [t for t in proxy.tasks(all=True) if t["kind"] == "data"]
    # The daemon does not replace a key it could not read (afproxyctl ca --regenerate does).
    assert "bm90IGEga2V5IGF0IGFsbA==" in key.read_text()
