"""No test sends anything off this machine, a DNS query included (issue 34): every daemon a test
starts may reach only this machine and the names its test adds (helpers.TEST_DESTINATIONS), so a
name nobody expected is refused as it is written, before any lookup; and Chromium, as every test
starts it (helpers.start_chromium), asks the proxy for nothing but the
test's hosts, and its own resolver answers every other name "not found" without a query."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from helpers import TEST_DESTINATIONS, curl, start_chromium, wait_for

# How long Chromium idles through the proxy: its background work (component updates, variations,
# safe browsing lists) starts within seconds of a new profile's first page.
IDLE_SECONDS = 30


def test_a_name_nobody_expected_is_refused_before_any_lookup(proxy):
    """The 403 names the host alone: a host refused after its lookup would show the address it
    resolved to (`name (192.0.2.1) is denied`)."""
    r = curl(proxy, "-s", "-w", "\n%{http_code}", "http://update.unexpected.example/check")
    body, _, status = r.stdout.decode().rpartition("\n")
    assert status == "403", (status, body)
    assert "update.unexpected.example is denied by allow-hosts (not listed)" in body, body
    record = proxy.history_record("http://update.unexpected.example/check")
    assert record["errorCode"] == "destination-denied", record
    # The same for a tunnel.
    r = curl(proxy, "-s", "-p", "https://tunnel.unexpected.example/")
    assert r.returncode != 0 and b"403" in r.stderr, r.stderr


def test_chromium_idle_through_the_proxy_asks_for_nothing_beyond_the_tests_hosts(proxy, origin, tmp_path):
    driver = start_chromium(proxy.port, tmp_path / "profile", tmp_path)
    page = origin.url("/echo")
    try:
        driver.get(page)
        # The page went through the proxy: the browser does use it.
        wait_for(lambda: any(t["url"] == page for t in proxy.tasks(all=True)), 30,
                 message="the page's task")
        time.sleep(IDLE_SECONDS)  # idle: what it asks for now is its own doing
    finally:
        driver.quit()
    asked = sorted({host_of(t) for t in proxy.tasks(all=True)})
    allowed = {h for h in TEST_DESTINATIONS if "/" not in h} | {"127.0.0.1"}
    assert set(asked) <= allowed, f"Chromium asked the proxy for {asked}"
    assert "denied by allow-hosts" not in proxy.log(), proxy.log()


def host_of(task: dict) -> str:
    """The host a task went to: its URL's, or a tunnel's `host:port`."""
    url = task["url"]
    if "://" in url:
        return urlsplit(url).hostname or url
    return url.rsplit(":", 1)[0].strip("[]")
