"""Prometheus metrics: `GET /metrics` on the control socket passes `promtool check metrics`, the
`--metrics-listen` port serves `GET /metrics` only, and a real Prometheus server scraping that port
answers a PromQL query for the completed-task counter with the number of requests made.

promtool and prometheus come from Debian's `prometheus` package (scripts/install-deps); the tests
that need them are skipped, saying so, where they are missing.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from helpers import UnixHTTPConnection, clean_env, closed_port, curl, wait_for

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SUCCESSES = 5


def control_metrics(proxy) -> tuple[int, str, str]:
    """GET /metrics on the control socket: (status, content type, body)."""
    # The fixtures wait for the proxy port; the control socket is bound a moment later (seconds
    # later under AddressSanitizer).
    proxy.wait_control_ready()
    conn = UnixHTTPConnection(proxy.control_socket)
    try:
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type", ""), resp.read().decode()
    finally:
        conn.close()


def metrics_port(proxy) -> int:
    """The port of --metrics-listen, from the daemon's "metrics at http://HOST:PORT/metrics" line."""
    line = wait_for(lambda: next((l for l in proxy.stderr_lines if "metrics at http://" in l), None),
                    message="the 'metrics at' log line")
    return int(re.search(r"metrics at http://127\.0\.0\.1:(\d+)/metrics", line).group(1))


def make_requests(proxy, origin) -> None:
    """SUCCESSES data tasks that succeed and one refused by the origin's side (connection refused)."""
    for i in range(SUCCESSES):
        out = curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", origin.url(f"/bytes/{1000 + i}"))
        assert out.stdout == b"200", out
    refused = curl(proxy, "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{closed_port()}/")
    assert refused.stdout == b"502", refused
    proxy.wait_idle()


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one series in the text format, or None."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        series, _, value = line.rpartition(" ")
        if series.split("{")[0] != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if found == labels:
            return float(value)
    return None


@needs_promtool
def test_control_socket_metrics_pass_promtool(proxy, origin):
    make_requests(proxy, origin)
    status, content_type, text = control_metrics(proxy)
    assert (status, content_type) == (200, CONTENT_TYPE)
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
    assert check.returncode == 0, (check.stdout + check.stderr).decode() + "\n" + text

    assert sample(text, "afproxy_tasks_started_total", kind="data") == SUCCESSES + 1
    assert sample(text, "afproxy_tasks_completed_total", kind="data", outcome="success") == SUCCESSES
    assert sample(text, "afproxy_tasks_completed_total", kind="data", outcome="connection-refused") == 1
    assert sample(text, "afproxy_transfer_bytes_total", direction="down") == sum(1000 + i for i in range(SUCCESSES))
    assert sample(text, "afproxy_task_duration_seconds_count", kind="data") == SUCCESSES + 1
    assert sample(text, "afproxy_time_to_first_byte_seconds_count", kind="data") == SUCCESSES
    assert sample(text, "afproxy_live_tasks", state="running", kind="data") == 0
    assert sample(text, "process_resident_memory_bytes") > 0
    assert sample(text, "process_open_fds") > 0
    assert sample(text, "afproxy_build_info", version=proxy.stats()["version"]) == 1
    # Every transfer started on one curl session or another.
    sessions = [float(v) for v in re.findall(r'^afproxy_session_transfers_total\{session="\d+"\} (\S+)$', text, re.M)]
    assert sessions and sum(sessions) == SUCCESSES + 1, text
    # No label whose values grow with traffic (`session` counts the event loops, fixed at start).
    names = set(re.findall(r'[{,](\w+)="', text))
    assert names <= {"kind", "outcome", "state", "direction", "version", "le", "session"}, names


def test_metrics_listen_serves_get_metrics_only(start_proxy):
    proxy = start_proxy("--metrics-listen", "127.0.0.1:0")
    base = f"http://127.0.0.1:{metrics_port(proxy)}"
    with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"] == CONTENT_TYPE
        assert "afproxy_tasks_started_total" in resp.read().decode()
    for method, path in [("GET", "/"), ("GET", "/v1/tasks"), ("POST", "/metrics")]:
        request = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 404, (method, path)


def test_metrics_listen_on_a_taken_port_fails_the_start(afproxy_bin, tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        run = subprocess.run(
            [afproxy_bin, "--listen", "127.0.0.1:0", "--control-socket", str(tmp_path / "c.sock"),
             "--state-dir", str(tmp_path / "state"), "--metrics-listen", f"127.0.0.1:{port}"],
            capture_output=True, timeout=30, env=clean_env())
    finally:
        taken.close()
    assert run.returncode == 1
    assert f"metrics-listen: cannot listen on 127.0.0.1:{port}" in run.stderr.decode()


def test_metrics_listen_is_off_by_default(proxy):
    assert not any("metrics at" in line for line in proxy.stderr_lines)
    assert control_metrics(proxy)[0] == 200


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@needs_prometheus
def test_prometheus_scrapes_the_completed_task_counter(start_proxy, origin, tmp_path):
    proxy = start_proxy("--metrics-listen", "127.0.0.1:0")
    target = f"127.0.0.1:{metrics_port(proxy)}"
    make_requests(proxy, origin)

    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: afproxy\n"
        f"    static_configs:\n      - targets: ['{target}']\n")
    web = f"127.0.0.1:{free_port()}"
    log = open(tmp_path / "prometheus.log", "wb")
    server = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address={web}"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp_path)
    try:
        query = 'afproxy_tasks_completed_total{job="afproxy",kind="data",outcome="success"}'
        url = f"http://{web}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        last: list = []

        def answered():
            assert server.poll() is None, "prometheus exited:\n" + (tmp_path / "prometheus.log").read_text()
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    body = json.load(resp)
            except OSError as error:  # not listening yet
                last[:] = [repr(error)]
                return False
            last[:] = [body]
            result = body.get("data", {}).get("result", [])
            return len(result) == 1 and float(result[0]["value"][1]) == SUCCESSES

        wait_for(answered, timeout=90, interval=0.5,
                 message=lambda: f"Prometheus to answer {SUCCESSES} for {query}; last answer {last}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=20)
        log.close()
