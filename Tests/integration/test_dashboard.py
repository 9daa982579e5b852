"""The web dashboard (`--web HOST:PORT`, `web-listen`): a real browser (Debian's chromium, driven
by chromedriver through PyPI's selenium) against the real daemon, with slow transfers from the
test origin through the proxy. The page lists a running transfer whose bar and byte count move;
its suspend button freezes the counter (the API agrees); resume finishes it with the right SHA-256
at the client; cancel ends another; a completed task's waterfall is drawn; a tunnel's detail
names its relay; a download starts from the page's form; without the token the page is refused. The access rules (token, Host, Origin)
and `afproxyctl web` are checked over plain HTTP and the CLI.

One daemon and one browser serve the whole module (the browser takes seconds to start here).
A screenshot of the dashboard with live tasks is written to $AFPROXY_ARTIFACTS (default
.build/test-artifacts)/dashboard.png and its path printed, for a person to look at.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers import (CHROMIUM_QUIET, clean_env, ctl, curl, curl_sha256, launch_afproxy, live_task,
                     short_socket_dir, wait_for)
from origin import payload_sha256

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:  # pragma: no cover - install-deps installs it
    webdriver = None

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
needs_browser = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or not os.path.exists(CHROMEDRIVER),
    reason="needs chromium and chromium-driver (apt) and selenium (pip): scripts/install-deps")

WEB_RE = re.compile(r"web dashboard at http://(127\.0\.0\.1:\d+)/")
OPEN_RE = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64})$")
# A slow body: 16 KiB every 0.1 s, about 160 KiB/s, so the browser sees it move for a while.
SLOW = 2 * 1024 * 1024
SLOW_QUERY = "?chunk=16384&interval=0.1"


@pytest.fixture(scope="module")
def daemon(afproxy_bin, tmp_path_factory, tls_origin, tls_files):
    tmp = tmp_path_factory.mktemp("dash")
    sock_dir = short_socket_dir(tmp)
    # HTTPS to localhost is intercepted (a stream's requests as tasks); to 127.0.0.1 it is a tunnel.
    p = launch_afproxy(afproxy_bin, str(sock_dir / "control.sock"),
                       ("--web", "127.0.0.1:0", "--state-dir", str(tmp / "state"), "--history-size", "2000",
                        "--allow-connect-port", str(tls_origin.port), "--intercept-hosts", "localhost",
                        "--tls-ca-file", tls_files.ca_cert))
    line = wait_for(lambda: next((l for l in p.stderr_lines if WEB_RE.search(l)), None),
                    message="the 'web dashboard at' log line")
    p.web = WEB_RE.search(line).group(1)
    p.tmp = tmp
    p.wait_control_ready()
    yield p
    rc = p.proc.poll()
    p.stop()
    assert rc is None, f"afproxy exited with status {rc} during the dashboard tests:\n" + "\n".join(p.stderr_lines[-200:])


@pytest.fixture(scope="module")
def token(daemon) -> str:
    out = ctl(daemon, "web")
    assert out.returncode == 0, out.stderr
    m = OPEN_RE.match(out.stdout.strip())
    assert m, out.stdout
    assert f"127.0.0.1:{m.group(1)}" == daemon.web
    return m.group(2)


def web_request(daemon, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None,
                host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    host_port = daemon.web.split(":")
    conn = http.client.HTTPConnection(host_port[0], int(host_port[1]), timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or daemon.web)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------
# afproxyctl web and the access rules, without a browser


def test_afproxyctl_web_prints_the_address_and_the_token_file_is_private(daemon, token):
    out = ctl(daemon, "web", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["url"] == f"http://{daemon.web}/"
    assert answer["token"] == token
    path = Path(answer["tokenFile"])
    assert path.parent == Path(daemon.control_socket).parent
    assert path.read_text().strip() == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_afproxyctl_web_without_web_listen_says_how_to_turn_it_on(proxy):
    out = ctl(proxy, "web")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout == ""
    assert "web dashboard is off" in out.stderr and "--web" in out.stderr, out.stderr


def test_without_the_token_the_page_and_the_api_answer_401(daemon, token):
    for path in ("/", "/favicon.svg", "/v1/tasks", "/v1/live", "/v1/events", "/v1/status"):
        status, _, body = web_request(daemon, "GET", path)
        assert status == 401, (path, status, body)
    status, _, _ = web_request(daemon, "GET", "/?token=" + "0" * 64)
    assert status == 401
    status, _, _ = web_request(daemon, "GET", "/v1/tasks", {"Authorization": "Bearer " + token[:-1] + "x"})
    assert status == 401
    cookie = f"afproxy-token-{daemon.web.split(':')[1]}={'1' * 64}"
    status, _, _ = web_request(daemon, "GET", "/v1/tasks", {"Cookie": cookie})
    assert status == 401


def test_the_token_opens_the_page_and_leaves_the_address_bar(daemon, token):
    status, headers, _ = web_request(daemon, "GET", "/?token=" + token)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    status, headers, body = web_request(daemon, "GET", "/", {"Cookie": pair})
    assert status == 200 and b'id="task-rows"' in body
    assert headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
    status, _, body = web_request(daemon, "GET", "/v1/tasks", {"Authorization": "Bearer " + token})
    assert status == 200 and "tasks" in json.loads(body)


def test_another_host_or_origin_is_refused(daemon, token):
    bearer = {"Authorization": "Bearer " + token}
    port = daemon.web.split(":")[1]
    # DNS rebinding: the attacker's name resolves to 127.0.0.1, and the Host says so.
    status, _, _ = web_request(daemon, "GET", "/v1/tasks", bearer, host=f"attacker.example:{port}")
    assert status == 421
    status, _, _ = web_request(daemon, "GET", "/", host=f"attacker.example:{port}")
    assert status == 421
    status, _, _ = web_request(daemon, "GET", "/v1/tasks", bearer, host="127.0.0.1:1")
    assert status == 421
    status, _, _ = web_request(daemon, "GET", "/v1/tasks", bearer, host=f"localhost:{port}")
    assert status == 200
    # Cross-site: another page's request carries its Origin.
    status, _, _ = web_request(daemon, "POST", "/v1/tasks/suspend?all=1",
                               {**bearer, "Origin": "http://attacker.example"}, body=b"")
    assert status == 403
    cookie = {"Cookie": f"afproxy-token-{port}={token}"}
    status, _, _ = web_request(daemon, "POST", "/v1/tasks/suspend?all=1", cookie, body=b"")
    assert status == 403, "a change by cookie needs the page's Origin"
    status, _, body = web_request(daemon, "POST", "/v1/tasks/resume?all=1",
                                  {**cookie, "Origin": f"http://{daemon.web}"}, body=b"")
    assert status == 200, body


def run_daemon(afproxy_bin, tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [afproxy_bin, "--listen", "127.0.0.1:0", "--control-socket", str(tmp_path / "c.sock"),
         "--state-dir", str(tmp_path / "state"), *args],
        capture_output=True, text=True, timeout=30, env=clean_env())


def test_web_listen_on_a_taken_port_or_a_wildcard_fails_the_start(afproxy_bin, tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        run = run_daemon(afproxy_bin, tmp_path, "--web", f"127.0.0.1:{port}")
    finally:
        taken.close()
    assert run.returncode == 1
    assert f"web-listen: cannot listen on 127.0.0.1:{port}" in run.stderr
    assert not (tmp_path / "web.token").exists()
    # The Host of each request is checked against the address: a wildcard names none.
    run = run_daemon(afproxy_bin, tmp_path, "--web", "0.0.0.0:0")
    assert run.returncode == 1
    assert "not the wildcard" in run.stderr and "127.0.0.1:0" in run.stderr, run.stderr


def test_the_token_file_goes_with_the_daemon(afproxy_bin, tmp_path):
    p = launch_afproxy(afproxy_bin, str(short_socket_dir(tmp_path) / "c.sock"),
                       ("--web", "127.0.0.1:0", "--state-dir", str(tmp_path / "state")))
    try:
        p.wait_control_ready()
        first = json.loads(ctl(p, "web", "--json").stdout)
        assert Path(first["tokenFile"]).exists()
    finally:
        p.stop()
    assert not Path(first["tokenFile"]).exists()


# ---------------------------------------------------------------------------------------------
# the page in a real browser


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # CHROMIUM_QUIET: --disable-background-networking and the rest, and a resolver that looks up
    # nothing but loopback (this browser uses no proxy: its lookups would be its own).
    for argument in (*CHROMIUM_QUIET, "--window-size=1600,1000", "--no-proxy-server"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def artifact_path(name: str) -> Path:
    directory = Path(os.environ.get("AFPROXY_ARTIFACTS") or REPO / ".build" / "test-artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    return directory / name


def row(driver, task_id: int):
    found = driver.find_elements(By.CSS_SELECTOR, f'#task-rows .row[data-id="{task_id}"]')
    return found[0] if found else None


def click_verb(driver, task_id: int, verb: str) -> None:
    """Clicks a row's verb button once it can be clicked: the feed redraws rows every 250 ms, so a
    button found a moment ago may be replaced, or not laid out yet, when the click comes (a busy
    clean-clone run met `element not interactable` there)."""
    from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException

    def clicked() -> bool:
        try:
            found = row(driver, task_id)
            button = found and found.find_element(By.CSS_SELECTOR, f'button[data-verb="{verb}"]')
            if not button or not button.is_displayed() or not button.is_enabled():
                return False
            button.click()
            return True
        except (ElementNotInteractableException, StaleElementReferenceException):
            return False
    wait_for(clicked, timeout=15, message=f"row {task_id}'s {verb} button, clickable")


def row_attribute(driver, task_id: int, name: str) -> str | None:
    return driver.execute_script(
        "const tr = document.querySelector(`#task-rows .row[data-id=\"${arguments[0]}\"]`);"
        "return tr ? tr.getAttribute(arguments[1]) : null;", task_id, name)


def fill_width(driver, task_id: int) -> float:
    return driver.execute_script(
        "const f = document.querySelector(`#task-rows .row[data-id=\"${arguments[0]}\"] .fill`);"
        "return f ? f.getBoundingClientRect().width : -1;", task_id)


FETCH_RECORDER = """
window.__fetched = [];
const originalFetch = window.fetch;
window.fetch = function (resource, init) {
  window.__fetched.push(String(resource));
  return originalFetch.call(this, resource, init);
};
"""


def fetched(driver) -> list[str]:
    return driver.execute_script("return window.__fetched || [];")


class Transfer:
    """curl through the proxy in a thread, its body hashed as it arrives."""

    def __init__(self, daemon, url: str):
        self.url = url
        self.result = None
        self.thread = threading.Thread(target=self._run, args=(daemon,), daemon=True)
        self.thread.start()

    def _run(self, daemon):
        self.result = curl_sha256(daemon, "-sS", "--no-buffer", self.url, timeout=180)

    def wait(self, timeout: float = 120):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"curl for {self.url} did not finish"
        return self.result


@needs_browser
def test_without_the_token_the_browser_gets_no_dashboard(daemon, browser):
    browser.get(f"http://{daemon.web}/")
    assert "needs its token" in browser.find_element(By.TAG_NAME, "body").text
    assert not browser.find_elements(By.ID, "task-rows")


@needs_browser
def test_the_page_carries_its_first_list_and_breaks_no_policy(daemon, token, browser, origin):
    url = origin.url(f"/slowbody/{SLOW}{SLOW_QUERY}&n=first")
    transfer = Transfer(daemon, url)
    task_id = live_task(daemon, url)["id"]
    browser.get_log("browser")  # what earlier tests left
    browser.get(f"http://{daemon.web}/?token={token}")
    # The page's own data has the task, and its row is drawn from it: the page's script, style and
    # first list came in the one answer, nothing else was loaded before the list was drawn.
    first = json.loads(browser.execute_script("return document.getElementById('first-snapshot').textContent"))
    assert first["event"] == "snapshot" and task_id in first["live"], first["live"]
    assert task_id in [t["id"] for t in first["tasks"]]
    wait_for(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-first-render"),
             timeout=10, message="the first list")
    assert row(browser, task_id) is not None, "the first list was drawn without the task in the page's data"
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname);")
    assert not [p for p in loaded if p.endswith((".js", ".css"))], loaded
    # The inline script and style run under the nonce: the browser reports no policy violation.
    wait_for(lambda: browser.find_element(By.ID, "connection").get_attribute("data-state") == "live",
             timeout=20, message="the live feed to connect")
    refused = [entry for entry in browser.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert not refused, refused
    assert browser.execute_script("return getComputedStyle(document.querySelector('header')).display") == "flex"
    result = transfer.wait()
    assert (result.size, result.sha256) == (SLOW, payload_sha256(SLOW))


ROWS_MADE = """
window.__rowsMade = [];
new MutationObserver((changes) => {
  for (const change of changes) for (const node of change.addedNodes) {
    if (node.dataset && node.dataset.id) window.__rowsMade.push(Number(node.dataset.id));
  }
}).observe(document.getElementById("task-rows"), { childList: true });
// Every line of the feed the page handles, as its ids of live tasks (the page's own `handle`,
// a global function, is wrapped: its calls go through the global).
window.__lines = [];
const handled = window.handle;
window.handle = function (line) {
  if (line.event === "snapshot") window.__lines.push(line.live);
  return handled(line);
};
"""


@needs_browser
def test_tasks_that_start_and_end_between_two_lines_are_counted_not_drawn(daemon, token, browser, origin):
    browser.get(f"http://{daemon.web}/?token={token}")
    wait_for(lambda: browser.find_element(By.ID, "connection").get_attribute("data-state") == "live",
             timeout=20, message="the live feed to connect")
    browser.execute_script(ROWS_MADE)
    slow_url = origin.url(f"/slowbody/{SLOW}{SLOW_QUERY}&n=settle")
    slow = Transfer(daemon, slow_url)
    # Short requests one after another for a few seconds: one of them is live at almost every
    # line the page gets, but none is live in two lines running.
    quick = origin.url("/bytes/1000")
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    sent = 0
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and sent < 1500:  # all of them stay in the history
        conn.request("GET", f"{quick}?i={sent}")
        answer = conn.getresponse()
        assert answer.status == 200 and len(answer.read()) == 1000
        sent += 1
    conn.close()
    slow_id = live_task(daemon, slow_url)["id"]
    wait_for(lambda: row(browser, slow_id) is not None, timeout=15, message=f"row {slow_id}")
    short = {t["id"]: t for t in daemon.tasks(all=True) if t.get("url", "").startswith(quick + "?i=")}
    assert len(short) == sent, (len(short), sent)
    made = browser.execute_script("return window.__rowsMade;")
    lines = [set(ids) for ids in browser.execute_script("return window.__lines;")]
    assert len(lines) >= 4, f"the page handled {len(lines)} lines in 3 s"
    # A short task may be drawn only when it was live in two lines running (one that stalled past
    # a line's interval in the daemon); one live in a single line never.
    twice = {i for before, after in zip(lines, lines[1:]) for i in before & after}
    drawn = [i for i in made if i in short and i not in twice]
    assert not drawn, f"{len(drawn)} of {sent} short tasks were drawn though live in one line only: {drawn}"
    assert slow_id in made
    # They are counted: the page's served total has them all.
    served = daemon.api("GET", "/v1/stats")[1]["served"]
    wait_for(lambda: int(browser.find_element(By.ID, "total-served").text) >= served, timeout=10,
             message="the served total")
    result = slow.wait()
    assert (result.size, result.sha256) == (SLOW, payload_sha256(SLOW))


@needs_browser
def test_dashboard_follows_suspends_resumes_cancels_and_draws_the_waterfall(daemon, token, browser, origin):
    # A finished task for the waterfall.
    quick = origin.url("/bytes/300000")
    out = curl(daemon, "-sS", "-o", "/dev/null", "-w", "%{http_code}", quick)
    assert out.stdout == b"200", out
    done = daemon.history_record(quick)

    # What the page asks the daemon for, recorded as it asks.
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FETCH_RECORDER})
    browser.get(f"http://{daemon.web}/?token={token}")
    assert browser.current_url == f"http://{daemon.web}/", "the token stays out of the address bar"
    wait_for(lambda: browser.find_element(By.ID, "connection").get_attribute("data-state") == "live",
             timeout=20, message="the live feed to connect")
    wait_for(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-first-render"),
             timeout=10, message="the first list")
    # The live list and the totals come from the feed alone: no task list, no event stream.
    asked = fetched(browser)
    assert "/v1/live" in asked, asked
    assert not [p for p in asked if p.startswith(("/v1/tasks", "/v1/events"))], asked

    kept = origin.url(f"/slowbody/{SLOW}{SLOW_QUERY}&n=kept")
    dropped = origin.url(f"/slowbody/{SLOW}{SLOW_QUERY}&n=dropped")
    # Still running at the screenshot and at "cancel shown", near the end of the test, however
    # slow the machine: 32 MiB at 160 KiB/s is over three minutes (8 MiB ended first under load).
    extra = [origin.url(f"/slowbody/{16 * SLOW}{SLOW_QUERY}&n=extra{i}") for i in range(3)]
    a = Transfer(daemon, kept)
    b = Transfer(daemon, dropped)
    others = [Transfer(daemon, url) for url in extra]
    a_id = live_task(daemon, kept)["id"]
    b_id = live_task(daemon, dropped)["id"]

    # The row appears, and its byte count and bar move.
    wait_for(lambda: row(browser, a_id) is not None, timeout=15, message=f"row {a_id}")
    first = int(wait_for(lambda: row_attribute(browser, a_id, "data-bytes"), timeout=10))
    first_width = fill_width(browser, a_id)
    wait_for(lambda: int(row_attribute(browser, a_id, "data-bytes")) > first + 32768, timeout=20,
             message="the byte count to move")
    wait_for(lambda: fill_width(browser, a_id) > first_width, timeout=10, message="the bar to grow")
    assert row_attribute(browser, a_id, "data-state") == "running"
    cells = row(browser, a_id).text
    assert "KiB" in cells or "MiB" in cells, cells
    assert "GET" in cells and "/slowbody/" in cells

    # Totals from the feed's stats.
    wait_for(lambda: int(browser.find_element(By.ID, "total-live").text) >= 5, timeout=10,
             message="the live total")
    assert int(browser.find_element(By.ID, "total-served").text) >= 1

    # Suspend from the row: the state turns, and the counter stops (page and API).
    click_verb(browser, a_id, "suspend")
    wait_for(lambda: row_attribute(browser, a_id, "data-state") == "suspended", timeout=10,
             message="the row to show suspended")
    assert daemon.task(a_id)["state"] == "suspended"
    time.sleep(1.0)  # what was in flight when it was suspended lands
    frozen_api = daemon.task(a_id)["download"]["completed"]
    frozen_page = int(row_attribute(browser, a_id, "data-bytes"))
    time.sleep(2.0)
    assert daemon.task(a_id)["download"]["completed"] == frozen_api
    assert int(row_attribute(browser, a_id, "data-bytes")) == frozen_page
    assert frozen_page < SLOW

    # Cancel another from its row.
    wait_for(lambda: row(browser, b_id) is not None, timeout=10, message=f"row {b_id}")
    click_verb(browser, b_id, "cancel")
    wait_for(lambda: row_attribute(browser, b_id, "data-state") in ("completed", None), timeout=15,
             message="the canceled row to end")
    record = daemon.history_record(dropped)
    assert record["state"] == "completed" and record["errorCode"] == "canceled", record
    assert b.wait().size < SLOW

    # A completed task's detail: headers and the waterfall of its phases.
    browser.find_element(By.ID, "history").click()
    wait_for(lambda: row(browser, done["id"]) is not None, timeout=10, message="the history rows")
    assert [p for p in fetched(browser) if p.startswith("/v1/tasks?")] == ["/v1/tasks?all=1"]
    row(browser, done["id"]).find_element(By.CSS_SELECTOR, ".url").click()
    waterfall = browser.find_element(By.ID, "waterfall")
    wait_for(lambda: waterfall.get_attribute("data-drawn") == "1", timeout=10, message="the waterfall")
    phases = {p.get_attribute("data-phase"): p for p in waterfall.find_elements(By.CSS_SELECTOR, ".phase")}
    assert {"wait", "receive"} <= set(phases), phases.keys()
    assert all(p.size["width"] > 0 for p in phases.values())
    track = waterfall.find_element(By.CSS_SELECTOR, ".track").size["width"]
    assert sum(p.size["width"] for p in phases.values()) <= track + 2 * len(phases)
    assert float(waterfall.get_attribute("data-total")) == pytest.approx(done["metrics"]["totalMs"], abs=0.01)
    detail = browser.find_element(By.ID, "detail").text
    assert "Content-Length" in detail and "300000" in detail and "HTTP 200" in detail

    # Filters: text, then state.
    search = browser.find_element(By.ID, "filter-text")
    search.send_keys("n=kept")
    wait_for(lambda: [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "#task-rows .row")
                      if r.is_displayed()] == [str(a_id)], timeout=5, message="the text filter")
    search.clear()
    search.send_keys(" ")  # an input event with an empty filter
    browser.find_element(By.CSS_SELECTOR, '#filter-state option[value="suspended"]').click()
    wait_for(lambda: [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "#task-rows .row")
                      if r.is_displayed()] == [str(a_id)], timeout=5, message="the state filter")
    browser.find_element(By.CSS_SELECTOR, '#filter-state option[value=""]').click()

    # The screenshot, with live tasks running and one suspended, the waterfall open.
    time.sleep(1.5)  # let rates and ETAs settle
    shot = artifact_path("dashboard.png")
    browser.save_screenshot(str(shot))
    print(f"\ndashboard screenshot: {shot}")

    # Resume from the row: the transfer finishes, whole, at the client.
    click_verb(browser, a_id, "resume")
    result = a.wait()
    assert result.returncode == 0, result.stderr
    assert (result.size, result.sha256) == (SLOW, payload_sha256(SLOW))
    wait_for(lambda: row_attribute(browser, a_id, "data-state") == "completed", timeout=10,
             message="the resumed row to complete")

    # Cancel all shown: the extra transfers end.
    browser.find_element(By.ID, "filter-text").send_keys("n=extra")
    browser.find_element(By.ID, "cancel-all").click()
    for transfer in others:
        assert transfer.wait().size < 16 * SLOW
    wait_for(lambda: not [t for t in daemon.tasks() if "n=extra" in t["url"]], timeout=10,
             message="the extra tasks to end")


@needs_browser
def test_a_tunnels_detail_says_which_relay_carried_it(daemon, token, browser, tls_origin, tls_files):
    # A tunnel splices once it carries bulk (about 1 MiB of reads that fill NIO's buffer): 32 MiB
    # does on any machine, where 3 MiB was near the line.
    n = 32 * 1024 * 1024
    out = curl_sha256(daemon, "--cacert", tls_files.ca_cert, tls_origin.url(f"/bytes/{n}"))
    assert (out.returncode, out.size, out.sha256) == (0, n, payload_sha256(n)), out.stderr
    tunnel = daemon.history_record(tls_origin.host)
    assert tunnel["relay"] == "splice", tunnel
    browser.get(f"http://{daemon.web}/?token={token}")
    browser.find_element(By.ID, "history").click()
    wait_for(lambda: row(browser, tunnel["id"]) is not None, timeout=10, message="the tunnel's history row")
    row(browser, tunnel["id"]).find_element(By.CSS_SELECTOR, ".url").click()
    wait_for(lambda: "splice (in the kernel)" in browser.find_element(By.ID, "detail-facts").text, timeout=10,
             message=lambda: f"the relay in the detail: {browser.find_element(By.ID, 'detail-facts').text!r}")


@needs_browser
def test_a_captured_requests_detail_names_its_process_and_capture(daemon, token, browser, origin):
    url = origin.url("/bytes/4321?captured=1")
    result = ctl(daemon, "run", "--name", "from-the-dashboard", "--", "curl", "-sS", "--fail", "--noproxy", "*",
                 "-o", "/dev/null", url)
    assert result.returncode == 0, result.stderr
    task = daemon.history_record(url)
    browser.get(f"http://{daemon.web}/?token={token}")
    browser.find_element(By.ID, "history").click()
    wait_for(lambda: row(browser, task["id"]) is not None, timeout=10, message="the captured task's history row")
    row(browser, task["id"]).find_element(By.CSS_SELECTOR, ".url").click()
    capture = task["clientProcess"]["capture"]
    wait_for(lambda: f"from-the-dashboard (afproxyctl run #{capture['id']})"
             in browser.find_element(By.ID, "detail-facts").text, timeout=10,
             message=lambda: f"the capture in the detail: {browser.find_element(By.ID, 'detail-facts').text!r}")
    assert f"curl[{task['clientProcess']['pid']}]" in browser.find_element(By.ID, "detail-facts").text


@needs_browser
def test_a_download_starts_from_the_page(daemon, token, browser, origin):
    browser.get(f"http://{daemon.web}/?token={token}")
    target = daemon.tmp / "from-the-page.bin"
    size = 500_000
    browser.find_element(By.ID, "download-url").send_keys(origin.url(f"/bytes/{size}"))
    browser.find_element(By.ID, "download-path").send_keys(str(target))
    browser.find_element(By.CSS_SELECTOR, "#download-form button").click()
    message = wait_for(lambda: (lambda t: t if "download started" in t else None)(
        browser.find_element(By.ID, "message").text), timeout=10, message="the download's confirmation")
    task_id = int(re.search(r"task (\d+)", message).group(1))
    record = wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(task_id)),
                      timeout=30, message="the download to complete")
    assert record["kind"] == "download" and record["error"] is None, record
    assert record["client"] == "web"
    assert target.stat().st_size == size
    import hashlib
    assert hashlib.sha256(target.read_bytes()).hexdigest() == payload_sha256(size)
