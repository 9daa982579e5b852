"""The dashboard's task page (issue 37): a click on a row opens the task (#task/ID in the address)
with its recorded bodies viewed by type, the request as a curl command line, and a replay button.
A real browser (chromium through selenium, as test_dashboard.py drives it) against the real
daemon, with bodies kept by a record rule from the test origin on 127.0.0.1:

- a JSON answer shows pretty-printed, a gzip-coded one decoded (the text the origin coded), plain
  bytes as a hex dump of their first 64 KiB, a PNG as an image the browser decoded, a deflate-coded
  request decoded, a br-coded one as hex with a note; Download saves the body as stored (still
  coded);
- a task no record rule named says so, and the page asks the daemon for no body;
- the curl command line names the method, the URL, the fields (credentials `<redacted>`) and the
  recorded body, and run as it is it makes the same request at the origin;
- Replay sends a recorded POST again (the origin counts it), and the page links the new task;
  an unrecorded POST's replay shows the daemon's refusal;
- a held request's form: a POST changed in the page (method, a value, a removed and an added
  field, the body; a credential left `<redacted>` keeps its value) reaches the origin exactly so,
  saved once and then sent, with its edits listed; a held GET answered with Respond gets that
  answer and the origin sees nothing; a refused edit (HEAD, Host) shows the daemon's reason and
  the task stays held; Cancel answers 503 and the form goes away;
- a response held at its head (a hold rule with `response`) gets the response's form instead: its
  status changed and saved, a field added and one removed, then sent, reach the client so with the
  origin's body; a body typed there is the client's answer and the task completes; a refused
  edit (a 200 made a 204 without a body, a framing field) shows the daemon's reason, then Cancel.

The page with a JSON body is saved as $AFPROXY_ARTIFACTS (default .build/test-artifacts)/
dashboard-task.png; with AFPROXY_DOCS_SCREENSHOTS=1, as docs/dashboard-task.png too. The held
form, changed and not yet sent, likewise as dashboard-task-edit.png.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
import zlib
from pathlib import Path

import pytest

from helpers import ca_path, clean_env, ctl, curl, start_curl, wait_for
from origin import GZIP_BODY, GZIP_PLAIN, PNG_BODY, payload
from test_dashboard import (FETCH_RECORDER, REPO, artifact_path, browser, daemon, fetched,  # noqa: F401 (fixtures)
                            needs_browser, row, token)
from test_hold import add_rule
from test_rules import fresh_origin  # noqa: F401 (a fixture: an origin whose requests are this test's alone)

try:
    from selenium.webdriver.common.by import By
except ImportError:  # pragma: no cover - install-deps installs it
    By = None


@pytest.fixture
def recording(daemon):
    """A record rule for the test origin's host for the length of one test."""
    r = ctl(daemon, "record", "127.0.0.1")
    assert r.returncode == 0, r.stderr
    rule = r.stdout.strip()
    yield rule
    r = ctl(daemon, "record", "--remove", rule)
    assert r.returncode == 0, r.stderr


def tag() -> str:
    """A query that makes a URL this test's alone."""
    return f"t={uuid.uuid4().hex[:10]}"


def open_dashboard(browser, daemon, token) -> None:
    browser.get(f"http://{daemon.web}/?token={token}")
    wait_for(lambda: browser.find_element(By.ID, "connection").get_attribute("data-state") == "live",
             timeout=20, message="the live feed to connect")


def show_task(browser, task_id: int) -> None:
    """Opens a task's page by its address, as a link to it does."""
    browser.execute_script("location.hash = arguments[0];", f"task/{task_id}")
    wait_task_page(browser, task_id)


def wait_task_page(browser, task_id: int) -> None:
    wait_for(lambda: browser.execute_script(
        "const d = document.getElementById('detail'); return !d.hidden && d.dataset.id === String(arguments[0]);",
        task_id), timeout=10, message=f"task {task_id}'s page")


BODY_VIEW = """
const box = document.getElementById(arguments[0] + '-body');
const content = box.querySelector('pre, img');
const info = box.querySelector('.body-info');
const button = box.querySelector('.body-download');
return {view: box.dataset.view || '', decoded: box.dataset.decoded || null,
        info: info ? info.textContent : '', text: content && content.tagName === 'PRE' ? content.textContent : null,
        notes: [...box.querySelectorAll('.note')].map((p) => p.textContent),
        filename: button ? button.dataset.filename : null};
"""


def body_view(browser, side: str, view: str | tuple[str, ...]) -> dict:
    """The body view of `side` once it shows `view` (json, text, image, hex, unrecorded, none…)."""
    views = (view,) if isinstance(view, str) else view
    seen: list[dict] = []

    def shown():
        seen[:] = [browser.execute_script(BODY_VIEW, side)]
        return seen[0] if seen[0]["view"] in views else None
    return wait_for(shown, timeout=15, message=lambda: f"the {side} body shown as {view}: {seen}")


def hex_line(data: bytes, offset: int) -> str:
    """A line of the page's hex dump, as `hexdump -C` draws it."""
    piece = data[offset:offset + 16]
    cells = [f"{b:02x} " for b in piece] + ["   "] * (16 - len(piece))
    text = "".join(chr(b) if 0x20 <= b < 0x7f else "." for b in piece)
    return f"{offset:08x}  {''.join(cells[:8])} {''.join(cells[8:])} |{text}|"


def completed(daemon, url: str) -> dict:
    return daemon.history_record(url)


@needs_browser
def test_recorded_bodies_show_by_type_and_download_as_stored(daemon, token, browser, origin, recording, tmp_path):
    t = tag()
    json_url = origin.url(f"/upload?{t}&view=json")
    order = {"order": 1042, "items": [{"sku": "A-17", "qty": 2}, {"sku": "B-3", "qty": 1}], "gift": False,
             "note": "leave at the door"}
    got = curl(daemon, "-sS", "-H", "X-Shown: on the page", "-H", "Content-Type: application/json",
               "--data-binary", json.dumps(order, separators=(",", ":")), json_url)
    assert got.returncode == 0, got.stderr
    answer = json.loads(got.stdout)
    gzip_url = origin.url(f"/gzip?{t}")
    assert curl(daemon, "-sS", gzip_url).stdout == GZIP_BODY  # the client gets it coded, as sent
    n = 100_000
    bytes_url = origin.url(f"/bytes/{n}?{t}")
    assert len(curl(daemon, "-sS", bytes_url).stdout) == n
    png_url = origin.url(f"/png?{t}")
    assert curl(daemon, "-sS", png_url).stdout == PNG_BODY
    json_task, gzip_task, bytes_task, png_task = (completed(daemon, u) for u in (json_url, gzip_url, bytes_url, png_url))
    assert json_task["bodies"]["response"]["size"] == len(got.stdout), json_task["bodies"]

    # A click on the task's history row opens its page: the JSON as JSON, indented.
    open_dashboard(browser, daemon, token)
    browser.find_element(By.ID, "history").click()
    wait_for(lambda: row(browser, json_task["id"]) is not None, timeout=10, message="the JSON task's history row")
    row(browser, json_task["id"]).find_element(By.CSS_SELECTOR, ".url").click()
    wait_task_page(browser, json_task["id"])
    assert browser.execute_script("return location.hash;") == f"#task/{json_task['id']}"
    shown = body_view(browser, "response", "json")
    assert shown["text"] == json.dumps(answer, indent=2), shown["text"][:500]
    assert "application/json" in shown["info"] and f"recorded {len(got.stdout)} B" in shown["info"], shown["info"]
    assert shown["filename"] == f"task-{json_task['id']}-response.json"
    request = body_view(browser, "request", "json")
    assert request["text"] == json.dumps(order, indent=2), request["text"]
    headers = browser.find_element(By.ID, "request-headers").text
    assert "X-Shown" in headers and "on the page" in headers
    waterfall = browser.find_element(By.ID, "waterfall")
    wait_for(lambda: waterfall.get_attribute("data-drawn") == "1", timeout=10, message="the waterfall")
    screenshot(browser)

    # Gzip: shown decoded, as the text the origin coded; Download gives the bytes as stored.
    show_task(browser, gzip_task["id"])
    assert "had no body" in body_view(browser, "request", "none")["info"]
    shown = body_view(browser, "response", "text")
    assert shown["decoded"] == "gzip" and "decoded from gzip" in shown["info"], shown
    assert shown["text"] == GZIP_PLAIN.decode()
    assert shown["filename"] == f"task-{gzip_task['id']}-response.txt.gz"
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    browser.find_element(By.CSS_SELECTOR, "#response-body .body-download").click()
    saved = tmp_path / shown["filename"]
    wait_for(lambda: saved.exists() and saved.read_bytes() == GZIP_BODY, timeout=15,
             message=lambda: f"the download in {tmp_path}: {sorted(p.name for p in tmp_path.iterdir())}")

    # Bytes of no text type: a hex dump of the first 64 KiB, and a note that says so.
    show_task(browser, bytes_task["id"])
    shown = body_view(browser, "response", "hex")
    lines = shown["text"].split("\n")
    data = payload(n)
    assert len(lines) == 64 * 1024 // 16
    assert lines[0] == hex_line(data, 0) and lines[-1] == hex_line(data, 64 * 1024 - 16), lines[:2]
    assert any("first 64.0 KiB of 97.7 KiB" in note for note in shown["notes"]), shown["notes"]

    # An image: drawn from a blob: address the page's policy allows, decoded by the browser.
    show_task(browser, png_task["id"])
    body_view(browser, "response", "image")
    size = wait_for(lambda: browser.execute_script(
        "const img = document.querySelector('#response-body img');"
        "return img && img.complete && img.naturalWidth > 0 ? [img.naturalWidth, img.naturalHeight] : null;"),
        timeout=10, message="the image to load")
    assert size == [48, 32]
    assert browser.execute_script("return document.querySelector('#response-body img').src;").startswith("blob:")
    refused = [e for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    assert not refused, refused


@needs_browser
def test_deflate_is_decoded_and_a_coding_the_page_cannot_undo_shows_as_hex(daemon, token, browser, origin,
                                                                          recording):
    # Request bodies, whose coding the request's own Content-Encoding names.
    t = tag()
    document = {"deflated": True, "words": ["zlib"] * 50}
    deflated_url = origin.url(f"/upload?{t}&coding=deflate")
    curl(daemon, "-sS", "-H", "Content-Type: application/json", "-H", "Content-Encoding: deflate",
         "--data-binary", "@-", deflated_url, input=zlib.compress(json.dumps(document).encode()))
    coded = os.urandom(3000)
    br_url = origin.url(f"/upload?{t}&coding=br")
    curl(daemon, "-sS", "-H", "Content-Type: text/plain", "-H", "Content-Encoding: br", "--data-binary", "@-", br_url,
         input=coded)
    deflated, br = completed(daemon, deflated_url), completed(daemon, br_url)
    open_dashboard(browser, daemon, token)
    show_task(browser, deflated["id"])
    shown = body_view(browser, "request", "json")
    assert shown["decoded"] == "deflate" and json.loads(shown["text"]) == document, shown
    show_task(browser, br["id"])
    shown = body_view(browser, "request", "hex")
    assert shown["decoded"] is None and "coded with br" in shown["info"], shown
    assert any("br cannot be decoded in the page" in note for note in shown["notes"]), shown["notes"]
    assert shown["text"].split("\n")[0] == hex_line(coded, 0)
    assert shown["filename"] == f"task-{br['id']}-request.txt.br"


def screenshot(browser) -> None:
    """The task page with its JSON bodies in view, for a person (and for the docs when asked): in a
    taller window, so that the page shows from its title to the response body."""
    size = browser.get_window_size()
    browser.set_window_size(1600, 1480)
    try:
        browser.execute_script("document.getElementById('detail').scrollTop = 0;")
        shot = artifact_path("dashboard-task.png")
        browser.save_screenshot(str(shot))
    finally:
        browser.set_window_size(size["width"], size["height"])
    print(f"\ntask page screenshot: {shot}")
    if os.environ.get("AFPROXY_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(shot, REPO / "docs" / "dashboard-task.png")


@needs_browser
def test_a_task_without_a_record_rule_says_its_bodies_are_not_recorded(daemon, token, browser, origin):
    t = tag()
    url = origin.url(f"/upload?{t}")
    posted = curl(daemon, "-sS", "--data-binary", "not kept", url)
    assert json.loads(posted.stdout)["length"] == 8
    task = completed(daemon, url)
    assert task["bodies"] is None
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FETCH_RECORDER})
    # The address with the token and the task: the token leaves it, the task stays and opens.
    browser.get(f"http://{daemon.web}/?token={token}#task/{task['id']}")
    wait_task_page(browser, task["id"])
    assert browser.current_url == f"http://{daemon.web}/#task/{task['id']}"
    for side in ("request", "response"):
        shown = body_view(browser, side, "unrecorded")
        assert "not recorded: no record rule named this task" in shown["info"], shown
        assert "afproxyctl record HOST" in shown["info"]
        assert shown["text"] is None and shown["filename"] is None
    # The curl command line says the body must come from a file.
    note = browser.find_element(By.ID, "curl-note").text
    assert f"not recorded: put it in task-{task['id']}-request.txt" in note, note
    assert not [p for p in fetched(browser) if "/body" in p], fetched(browser)


@needs_browser
def test_copy_as_curl_makes_the_same_request(daemon, token, browser, origin, recording):
    t = tag()
    url = origin.url(f"/upload?{t}")
    form = "name=value&note=it's here"
    posted = curl(daemon, "-sS", "-H", "Authorization: Bearer s3cret-token", "-H", "Cookie: session=s3cret-cookie",
                  "-H", "X-Trace: trace-42", "-H", "Content-Type: application/x-www-form-urlencoded",
                  "--data-binary", form, url)
    assert json.loads(posted.stdout)["length"] == len(form)
    task = completed(daemon, url)
    deleted_url = origin.url(f"/echo?{t}&method=delete")
    assert curl(daemon, "-sS", "-X", "DELETE", deleted_url).returncode == 0
    deleted = completed(daemon, deleted_url)

    open_dashboard(browser, daemon, token)
    show_task(browser, task["id"])
    body_view(browser, "request", "text")
    # The body inline once it was read (a recorded short text), quoted for the shell.
    command = wait_for(lambda: (lambda c: c if "--data-binary" in c else None)(
        browser.execute_script("return document.getElementById('curl-command').textContent;")),
        timeout=10, message="the curl command line with its body")
    assert command.startswith(f"curl '{url}'"), command  # a POST with a body: no -X
    assert "-H 'X-Trace: trace-42'" in command
    assert "-H 'Authorization: <redacted>'" in command and "-H 'Cookie: <redacted>'" in command
    assert "s3cret" not in command
    assert "--data-binary 'name=value&note=it'\\''s here'" in command, command
    note = browser.find_element(By.ID, "curl-note").text
    assert "Authorization, Cookie: the values are <redacted>" in note, note
    browser.find_element(By.ID, "task-curl").click()
    said = wait_for(lambda: browser.find_element(By.ID, "task-action-result").text, timeout=10,
                    message="what the copy button says")
    assert said in ("copied the curl command line",
                    "the clipboard refused: the command is selected below, copy it from there"), said

    # Run as it is (straight to the origin): the origin gets the same method, field and body.
    before = origin.received
    run = subprocess.run(["bash", "-c", command.replace("curl ", "curl -sS --noproxy '*' ", 1)],
                         capture_output=True, timeout=30, env=clean_env())
    assert run.returncode == 0, run.stderr
    again = json.loads(run.stdout)
    assert again["method"] == "POST" and again["length"] == len(form)
    assert again["sha256"] == hashlib.sha256(form.encode()).hexdigest()
    assert again["headers"]["x-trace"] == "trace-42" and again["headers"]["authorization"] == "<redacted>"
    got = origin.last_request
    assert origin.received > before and got.method == "POST" and url.endswith(got.target), got

    show_task(browser, deleted["id"])
    command = wait_for(lambda: (lambda c: c if deleted_url in c else None)(
        browser.execute_script("return document.getElementById('curl-command').textContent;")),
        timeout=10, message="the DELETE's command line")
    assert command.startswith(f"curl -X DELETE '{deleted_url}'") and "--data-binary" not in command, command


def requests_to(origin, target: str) -> int:
    return sum(1 for q in list(origin.requests) if q.target == target)


@needs_browser
def test_replay_sends_a_recorded_post_again_and_links_the_new_task(daemon, token, browser, origin, recording):
    t = tag()
    target = f"/upload?{t}"
    upload = os.urandom(20_000)
    posted = curl(daemon, "-sS", "--data-binary", "@-", "-H", "Content-Type: application/octet-stream",
                  origin.url(target), input=upload)
    assert json.loads(posted.stdout)["sha256"] == hashlib.sha256(upload).hexdigest()
    task = completed(daemon, origin.url(target))
    assert requests_to(origin, target) == 1

    open_dashboard(browser, daemon, token)
    show_task(browser, task["id"])
    shown = body_view(browser, "request", "hex")  # bytes of no text type
    assert shown["text"].split("\n")[0] == hex_line(upload, 0)
    browser.find_element(By.ID, "task-replay").click()
    new_id = int(wait_for(lambda: browser.find_element(By.ID, "task-action-result").get_attribute("data-new-id"),
                          timeout=15, message=lambda: browser.find_element(By.ID, "task-action-result").text))
    assert browser.find_element(By.ID, "task-action-result").text == f"replayed as task {new_id}"
    wait_for(lambda: requests_to(origin, target) == 2, timeout=15, message="the origin to get the request again")
    replayed = wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(new_id)),
                        timeout=15, message="the replay to complete")
    assert replayed["replayOf"] == task["id"] and replayed["method"] == "POST", replayed

    # The link opens the new task's page, which links back, and shows the origin's answer.
    browser.find_element(By.CSS_SELECTOR, "#task-action-result a").click()
    wait_task_page(browser, new_id)
    facts = browser.find_element(By.ID, "detail-facts")
    wait_for(lambda: f"task {task['id']}" in facts.text, timeout=10, message="the replay-of link")
    assert facts.find_element(By.CSS_SELECTOR, "a").get_attribute("href").endswith(f"#task/{task['id']}")
    answer = json.loads(body_view(browser, "response", "json")["text"])
    assert answer["sha256"] == hashlib.sha256(upload).hexdigest() and answer["length"] == len(upload)
    # Back: the first task's page again.
    browser.back()
    wait_task_page(browser, task["id"])


def facts_shown(browser) -> dict[str, str]:
    """The task page's facts, name to value."""
    items = [x.text for x in browser.find_elements(By.CSS_SELECTOR, "#detail-facts dt, #detail-facts dd")]
    return dict(zip(items[0::2], items[1::2]))


@needs_browser
def test_an_http2_request_shows_both_versions_and_links_its_connection(daemon, token, browser, tls_origin):
    """An intercepted request that came as an HTTP/2 stream: its page says the client spoke 2 and
    the origin 1.1, and links the connection's stream task, whose page counts its requests."""
    url = tls_origin.url(f"/bytes/5000?{tag()}").replace("://127.0.0.1:", "://localhost:")
    got = curl(daemon, "-sS", "--http2", "--cacert", ca_path(daemon), "-w", "%{http_version}", "-o", "/dev/null", url)
    assert got.returncode == 0 and got.stdout == b"2", got.stderr
    task = completed(daemon, url)
    assert task["clientHTTPVersion"] == "2" and task["parent"] is not None, task

    open_dashboard(browser, daemon, token)
    show_task(browser, task["id"])
    facts = browser.find_element(By.ID, "detail-facts")
    wait_for(lambda: f"task {task['parent']}" in facts.text, timeout=10,
             message=lambda: f"the connection's link in {facts.text!r}")
    shown = facts_shown(browser)
    assert shown["client HTTP"] == "2" and shown["origin HTTP"] == "1.1", shown
    facts.find_element(By.LINK_TEXT, f"task {task['parent']}").click()
    wait_task_page(browser, task["parent"])
    wait_for(lambda: "requests" in browser.find_element(By.ID, "detail-facts").text, timeout=10,
             message="the stream task's request count")
    shown = facts_shown(browser)
    assert shown["requests"] == "1", shown


@needs_browser
def test_replay_of_an_unrecorded_post_shows_the_refusal(daemon, token, browser, origin):
    t = tag()
    target = f"/upload?{t}"
    curl(daemon, "-sS", "--data-binary", "x" * 100, origin.url(target))
    task = completed(daemon, origin.url(target))
    open_dashboard(browser, daemon, token)
    show_task(browser, task["id"])
    wait_for(lambda: browser.find_element(By.ID, "task-replay").is_enabled(), timeout=10, message="the replay button")
    browser.find_element(By.ID, "task-replay").click()
    result = browser.find_element(By.ID, "task-action-result")
    wait_for(lambda: "replay refused" in result.text, timeout=10, message=lambda: f"the refusal: {result.text!r}")
    assert "request body was not recorded whole" in result.text, result.text
    assert result.get_attribute("class") == "error" and result.get_attribute("data-new-id") is None
    assert requests_to(origin, target) == 1
    assert not [x for x in daemon.tasks(all=True) if x.get("replayOf") == task["id"]]


# ---------- a held request's form ----------

EDIT_FORM = """
const section = document.getElementById('task-edit');
const rows = [...document.querySelectorAll('#edit-headers tbody tr')].map((tr) => ({
  name: tr.dataset.name || null, value: tr.querySelector('.edit-value').value, fixed: tr.classList.contains('fixed')}));
return {shown: !section.hidden, method: document.getElementById('edit-method').value,
        path: document.getElementById('edit-path').value, rows,
        body: document.getElementById('edit-body').value,
        note: document.getElementById('edit-body-note').textContent,
        result: document.getElementById('edit-result').textContent,
        resultClass: document.getElementById('edit-result').className,
        edits: [...document.querySelectorAll('#detail-edits li')].map((li) => li.textContent),
        editsShown: !document.getElementById('detail-edits').hidden};
"""


def edit_form(browser) -> dict:
    return browser.execute_script(EDIT_FORM)


def wait_form(browser, what: str, predicate) -> dict:
    seen: list[dict] = []

    def check():
        seen[:] = [edit_form(browser)]
        return seen[0] if predicate(seen[0]) else None
    return wait_for(check, timeout=15, message=lambda: f"{what}: {seen}")


def header_input(browser, name: str):
    return browser.find_element(By.CSS_SELECTOR, f'#edit-headers tr[data-name="{name}"] .edit-value')


def header_remove(browser, name: str):
    return browser.find_element(By.CSS_SELECTOR, f'#edit-headers tr[data-name="{name}"] .edit-remove button')


def replace_text(element, text: str) -> None:
    element.clear()
    element.send_keys(text)


def hold_once(daemon, t: str) -> int:
    """A hold rule for this test's URL alone (`t`, its tag, has no character special in a regular
    expression), gone once it caught the request."""
    return add_rule(daemon, "--host", "127.0.0.1", "--url", t, "--once")


def held(daemon, url: str) -> dict:
    return wait_for(lambda: next((t for t in daemon.tasks() if t["url"] == url and t.get("heldBy") is not None), None),
                    timeout=20, message=lambda: f"{url} held; live: {daemon.tasks()}")


@needs_browser
def test_a_held_request_edited_in_the_page_reaches_the_origin_as_edited(daemon, token, browser, origin, recording):
    t = tag()
    target = f"/upload?{t}"
    url = origin.url(target)
    hold_once(daemon, t)
    client = start_curl(daemon, "-H", "Content-Type: text/plain; charset=utf-8", "-H", "X-Change: before",
                        "-H", "X-Drop: goes", "-H", "X-Keep: stays", "-H", "Authorization: Bearer s3cret-kept",
                        "--data-binary", "the client's own body", url, stdout=subprocess.PIPE)
    try:
        task = held(daemon, url)
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        # The form starts as the request is: the body the record rule kept while it was held.
        form = wait_form(browser, "the form with the recorded body", lambda f: f["shown"] and f["body"])
        assert form["method"] == "POST" and form["path"] == target, form
        assert form["body"] == "the client's own body", form
        rows = {r["name"]: r for r in form["rows"]}
        assert rows["Authorization"]["value"] == "<redacted>" and "s3cret" not in json.dumps(form)
        assert rows["X-Change"]["value"] == "before" and rows["Host"]["fixed"], rows
        assert not form["editsShown"] and form["result"] == ""

        # Save one change: the task stays held, the page lists the edit.
        replace_text(browser.find_element(By.ID, "edit-method"), "PUT")
        browser.find_element(By.ID, "edit-save").click()
        form = wait_form(browser, "the saved method", lambda f: f["edits"] == ["method POST → PUT"])
        assert form["editsShown"] and "saved: 1 change" in form["result"], form
        assert form["method"] == "PUT" and form["body"] == "the client's own body", form
        record = daemon.task(task["id"])
        assert record["state"] == "suspended" and record["heldBy"] is not None and record["method"] == "PUT"

        # The rest, sent with Send (saved first, then released): a value, a removal, a new field,
        # a new body; Authorization left <redacted> keeps its value.
        replace_text(header_input(browser, "X-Change"), "after")
        header_remove(browser, "X-Drop").click()
        browser.find_element(By.ID, "edit-add-header").click()
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-name").send_keys("X-Added")
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-value").send_keys("from the page")
        new_body = '{"edited": "in the page", "ü": 1}'
        replace_text(browser.find_element(By.ID, "edit-body"), new_body)
        edit_screenshot(browser)
        browser.find_element(By.ID, "edit-send").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    got = json.loads(out)
    assert got["method"] == "PUT", got
    assert got["sha256"] == hashlib.sha256(new_body.encode()).hexdigest() and got["length"] == len(new_body.encode())
    headers = got["headers"]
    assert headers["x-change"] == "after" and headers["x-added"] == "from the page" and "x-drop" not in headers
    assert headers["x-keep"] == "stays" and headers["authorization"] == "Bearer s3cret-kept", headers

    # The form went away with the hold; the edits stay listed, in order, the credential's value never.
    wait_form(browser, "the form gone", lambda f: not f["shown"])
    form = wait_form(browser, "every edit listed", lambda f: len(f["edits"]) == 5)
    assert form["edits"] == ["method POST → PUT", "removed header X-Drop", "set header X-Change: after",
                             "set header X-Added: from the page",
                             f"body replaced ({len(new_body.encode())} bytes)"], form["edits"]
    assert browser.find_element(By.ID, "task-action-result").text == "sent upstream as edited"
    record = wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(task["id"])), 15,
                      message="the task to complete")
    assert record["status"] == 200 and [e["change"] for e in record["edits"]] == form["edits"]


def edit_screenshot(browser) -> None:
    """The form on a held task, changed and not yet sent, for a person (and for the docs when asked)."""
    size = browser.get_window_size()
    browser.set_window_size(1600, 1200)
    try:
        browser.execute_script("document.getElementById('detail').scrollTop = 0;")
        shot = artifact_path("dashboard-task-edit.png")
        browser.save_screenshot(str(shot))
    finally:
        browser.set_window_size(size["width"], size["height"])
    print(f"\ntask edit screenshot: {shot}")
    if os.environ.get("AFPROXY_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(shot, REPO / "docs" / "dashboard-task-edit.png")


@needs_browser
def test_respond_answers_a_held_request_from_the_page(daemon, token, browser, fresh_origin):
    t = tag()
    url = fresh_origin.url(f"/bytes/100?{t}")
    hold_once(daemon, t)
    client = start_curl(daemon, "-D", "-", url, stdout=subprocess.PIPE)
    try:
        task = held(daemon, url)
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        form = wait_form(browser, "the form", lambda f: f["shown"])
        assert form["body"] == "" and "no body" in form["note"], form
        browser.find_element(By.ID, "edit-respond").click()
        assert browser.find_element(By.ID, "respond-status").get_attribute("value") == "503"
        browser.find_element(By.ID, "respond-headers").send_keys("Content-Type: text/plain; charset=utf-8\nRetry-After: 60")
        answer = "down for maintenance, back at 10:00 ✓"
        browser.find_element(By.ID, "respond-body").send_keys(answer)
        browser.find_element(By.ID, "respond-send").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 "), head
    assert b"Retry-After: 60" in head and body == answer.encode(), out
    assert not fresh_origin.requests and fresh_origin.connections == 0, "the origin saw the answered request"

    form = wait_form(browser, "the form gone and the answer listed", lambda f: not f["shown"] and f["edits"])
    assert form["edits"] == ["response: answered by afproxy: 503"], form["edits"]
    assert browser.find_element(By.ID, "task-action-result").text.startswith("answered 503 by afproxy")
    record = wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(task["id"])), 15,
                      message="the task to complete")
    assert record["status"] == 503 and record["download"]["completed"] == len(answer.encode()), record


@needs_browser
def test_a_refused_edit_shows_the_daemons_reason_and_the_task_stays_held(daemon, token, browser, fresh_origin):
    t = tag()
    url = fresh_origin.url(f"/upload?{t}")
    hold_once(daemon, t)
    client = start_curl(daemon, "--data-binary", "kept as it is", url, stdout=subprocess.PIPE)
    try:
        task = held(daemon, url)
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        form = wait_form(browser, "the form", lambda f: f["shown"])
        # No record rule: the body is not shown, and an empty box keeps it.
        assert form["body"] == "" and "no record rule kept it" in form["note"] and "leave this empty" in form["note"]

        # A POST cannot become a HEAD: the daemon's reason, inline; nothing changed.
        method = browser.find_element(By.ID, "edit-method")
        replace_text(method, "HEAD")
        browser.find_element(By.ID, "edit-save").click()
        form = wait_form(browser, "the HEAD refusal", lambda f: f["result"].startswith("refused"))
        assert "a HEAD stays a HEAD and another method cannot become one" in form["result"], form["result"]
        assert form["resultClass"] == "error" and form["shown"] and not form["editsShown"]

        # Host is the proxy's: refused too, with its reason (the row for it is not editable, a new
        # one is sent and refused).
        replace_text(method, "POST")
        browser.find_element(By.ID, "edit-add-header").click()
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-name").send_keys("Host")
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-value").send_keys("example.com")
        browser.find_element(By.ID, "edit-send").click()
        form = wait_form(browser, "the Host refusal", lambda f: "Host is written by the proxy" in f["result"])
        assert form["resultClass"] == "error" and form["shown"], form
        record = daemon.task(task["id"])
        assert record["state"] == "suspended" and record["heldBy"] is not None and record["edits"] == [], record
        assert client.poll() is None and not fresh_origin.requests

        # A credential typed as <redacted> is not sent: the page says what to do.
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-remove button").click()
        browser.find_element(By.ID, "edit-add-header").click()
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-name").send_keys("Cookie")
        browser.find_element(By.CSS_SELECTOR, "#edit-headers tr[data-added] .edit-value").send_keys("<redacted>")
        browser.find_element(By.ID, "edit-save").click()
        form = wait_form(browser, "the page's own refusal", lambda f: "stands for a value not shown" in f["result"])
        assert daemon.task(task["id"])["edits"] == []

        # Cancel: the client is answered 503, the form goes away, the origin never saw it.
        browser.find_element(By.ID, "edit-cancel").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    record = wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(task["id"])), 15,
                      message="the task to complete")
    assert record["errorCode"] == "canceled" and record["edits"] == [], record
    wait_form(browser, "the form gone", lambda f: not f["shown"])
    assert browser.find_element(By.ID, "task-action-result").text == "canceled: its client was answered 503"
    assert not fresh_origin.requests


# ---------- a response held at its head ----------

RESPONSE_FORM = """
const section = document.getElementById('response-edit');
const rows = [...document.querySelectorAll('#redit-headers tbody tr')].map((tr) => ({
  name: tr.dataset.name || null, value: tr.querySelector('.edit-value').value, fixed: tr.classList.contains('fixed'),
  removable: tr.querySelector('.edit-remove button') !== null}));
return {shown: !section.hidden, requestShown: !document.getElementById('task-edit').hidden,
        status: document.getElementById('redit-status').value, rows,
        body: document.getElementById('redit-body').value,
        note: document.getElementById('redit-body-note').textContent,
        result: document.getElementById('redit-result').textContent,
        resultClass: document.getElementById('redit-result').className,
        edits: [...document.querySelectorAll('#detail-edits li')].map((li) => li.textContent)};
"""


def wait_response_form(browser, what: str, predicate) -> dict:
    seen: list[dict] = []

    def check():
        seen[:] = [browser.execute_script(RESPONSE_FORM)]
        return seen[0] if predicate(seen[0]) else None
    return wait_for(check, timeout=15, message=lambda: f"{what}: {seen}")


def response_row(browser, name: str, part: str):
    return browser.find_element(By.CSS_SELECTOR, f'#redit-headers tr[data-name="{name}"] {part}')


def add_response_header(browser, name: str, value: str) -> None:
    browser.find_element(By.ID, "redit-add-header").click()
    browser.find_element(By.CSS_SELECTOR, "#redit-headers tr[data-added]:last-child .edit-name").send_keys(name)
    browser.find_element(By.CSS_SELECTOR, "#redit-headers tr[data-added]:last-child .edit-value").send_keys(value)


@pytest.fixture
def response_hold(daemon):
    """Adds a hold rule at the response for a URL with this text (a test's tag), removed when the test ends."""
    rules: list[int] = []

    def add(t: str) -> int:
        rules.append(add_rule(daemon, "--host", "127.0.0.1", "--url", t, "--response"))
        return rules[-1]
    yield add
    for rule in rules:
        r = ctl(daemon, "hold", "rm", str(rule))
        assert r.returncode == 0, r.stderr


def held_response(daemon, url: str) -> dict:
    """The task of `url` once it is held at its response (the origin's head came)."""
    return wait_for(lambda: next((t for t in daemon.tasks() if t["url"] == url and t.get("heldBy") is not None
                                  and t["state"] == "suspended" and t.get("status") is not None), None),
                    timeout=20, message=lambda: f"{url} held at its response; live: {daemon.tasks()}")


def completed_task(daemon, task_id: int) -> dict:
    return wait_for(lambda: (lambda r: r if r["state"] == "completed" else None)(daemon.task(task_id)), 15,
                    message="the task to complete")


@needs_browser
def test_a_held_response_edited_in_the_page_reaches_the_client_as_edited(daemon, token, browser, origin,
                                                                         response_hold):
    t = tag()
    n = 60_000
    url = origin.url(f"/bytes/{n}?{t}")
    response_hold(t)
    client = start_curl(daemon, "-sS", "-D", "-", url, stdout=subprocess.PIPE)
    try:
        task = held_response(daemon, url)
        assert task["status"] == 200 and task["download"]["completed"] == 0, task
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        # The response's form, not the request's: the origin's status and fields as held.
        form = wait_response_form(browser, "the response form", lambda f: f["shown"])
        assert not form["requestShown"] and form["status"] == "200" and form["body"] == "", form
        assert "origin's body" in form["note"] and form["result"] == "" and form["edits"] == [], form
        rows = {r["name"]: r for r in form["rows"]}
        assert rows["Content-Type"]["value"] == "application/octet-stream" and not rows["Content-Type"]["fixed"]
        assert rows["Server"]["value"] == "afproxy-test-origin" and rows["Server"]["removable"], rows
        assert rows["Content-Length"]["value"] == str(n) and rows["Content-Length"]["fixed"], rows
        assert not rows["Content-Length"]["removable"], rows
        assert response_row(browser, "Content-Length", ".edit-value").get_attribute("readonly") is not None

        # Save the status alone: still held, the edit listed, the form made again from the record.
        replace_text(browser.find_element(By.ID, "redit-status"), "203")
        browser.find_element(By.ID, "redit-save").click()
        form = wait_response_form(browser, "the saved status", lambda f: f["edits"] == ["response: status 200 → 203"])
        assert form["shown"] and form["status"] == "203" and "saved: 1 change" in form["result"], form
        record = daemon.task(task["id"])
        assert record["state"] == "suspended" and record["status"] == 203 and record["heldBy"] is not None, record
        assert client.poll() is None

        # A field added, one removed, then Send: saved, then let go.
        add_response_header(browser, "X-Held", "yes")
        response_row(browser, "Content-Type", ".edit-remove button").click()
        browser.find_element(By.ID, "redit-send").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 203"), head
    assert b"\r\nX-Held: yes" in head and b"Content-Type" not in head, head
    assert body == payload(n)

    wait_response_form(browser, "the form gone", lambda f: not f["shown"] and not f["requestShown"])
    changes = ["status 200 → 203", "removed header Content-Type", "set header X-Held: yes"]
    form = wait_response_form(browser, "every edit listed", lambda f: len(f["edits"]) == 3)
    assert form["edits"] == [f"response: {c}" for c in changes], form["edits"]
    assert browser.find_element(By.ID, "task-action-result").text == "sent on to the client as edited"
    record = completed_task(daemon, task["id"])
    assert record["status"] == 203 and record["download"]["completed"] == n, record
    assert [e["change"] for e in record["edits"]] == changes and {e["side"] for e in record["edits"]} == {"response"}


@needs_browser
def test_a_body_typed_in_the_response_form_replaces_the_origins(daemon, token, browser, origin, response_hold):
    t = tag()
    url = origin.url(f"/bytes/50000?{t}")
    response_hold(t)
    client = start_curl(daemon, "-sS", "-D", "-", url, stdout=subprocess.PIPE)
    try:
        task = held_response(daemon, url)
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        wait_response_form(browser, "the response form", lambda f: f["shown"] and f["status"] == "200")
        replace_text(response_row(browser, "Content-Type", ".edit-value"), "text/plain; charset=utf-8")
        answer = "answered from the page ✓\n"
        browser.find_element(By.ID, "redit-body").send_keys(answer)
        browser.find_element(By.ID, "redit-save").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert body == answer.encode(), out[:300]
    assert b"\r\nContent-Type: text/plain; charset=utf-8" in head and f"Content-Length: {len(body)}".encode() in head

    record = completed_task(daemon, task["id"])
    assert record["status"] == 200 and not record.get("errorCode") and record["download"]["completed"] == len(body)
    changes = ["set header Content-Type: text/plain; charset=utf-8", f"body replaced ({len(body)} bytes)"]
    assert [e["change"] for e in record["edits"]] == changes, record["edits"]
    form = wait_response_form(browser, "the form gone, the edits listed", lambda f: not f["shown"] and len(f["edits"]) == 2)
    assert form["edits"] == [f"response: {c}" for c in changes] and not form["requestShown"], form
    assert browser.find_element(By.ID, "task-action-result").text.startswith("answered 200 with the body typed here")


@needs_browser
def test_a_refused_response_edit_shows_the_daemons_reason_then_cancel(daemon, token, browser, origin, response_hold):
    t = tag()
    url = origin.url(f"/bytes/1000?{t}")
    response_hold(t)
    client = start_curl(daemon, "-sS", "-w", "%{http_code}", url, stdout=subprocess.PIPE)
    try:
        task = held_response(daemon, url)
        open_dashboard(browser, daemon, token)
        show_task(browser, task["id"])
        wait_response_form(browser, "the response form", lambda f: f["shown"] and f["status"] == "200")

        # Nothing changed: nothing sent.
        browser.find_element(By.ID, "redit-save").click()
        wait_response_form(browser, "nothing to save", lambda f: f["result"].startswith("nothing to save"))

        # A 200 cannot become a 204 with the origin's body: the daemon's 400, inline; nothing changed.
        status = browser.find_element(By.ID, "redit-status")
        replace_text(status, "204")
        browser.find_element(By.ID, "redit-save").click()
        form = wait_response_form(browser, "the 204 refusal", lambda f: f["result"].startswith("refused"))
        assert "a 200 cannot become a 204 with the origin's body: give the body too" in form["result"], form
        assert form["resultClass"] == "error" and form["shown"] and form["status"] == "204", form

        # A framing field is the proxy's: a new Transfer-Encoding row is sent and refused with its reason.
        replace_text(status, "200")
        add_response_header(browser, "Transfer-Encoding", "chunked")
        browser.find_element(By.ID, "redit-send").click()
        form = wait_response_form(browser, "the framing refusal",
                                  lambda f: "Transfer-Encoding is written by the proxy" in f["result"])
        assert form["resultClass"] == "error" and form["shown"], form
        record = daemon.task(task["id"])
        assert record["state"] == "suspended" and record["heldBy"] is not None and record["edits"] == [], record
        assert record["status"] == 200 and client.poll() is None

        # Cancel: the client is answered 503, never the held head; the form goes away.
        browser.find_element(By.ID, "redit-cancel").click()
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 0, err
    assert out.endswith(b"503"), out
    record = completed_task(daemon, task["id"])
    assert record["errorCode"] == "canceled" and record["edits"] == [], record
    wait_response_form(browser, "the form gone", lambda f: not f["shown"] and not f["requestShown"])
    assert browser.find_element(By.ID, "task-action-result").text == "canceled: its client was answered 503"
