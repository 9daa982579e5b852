"""Sessions per core: one curl session per event loop (`threads`), each paired with its loop.

A client connection's requests all run on its loop's session, so a keep-alive connection's
transfers land on one session only; connections are spread over the loops in turn, so the
sessions share the work. Read through `afproxy_session_transfers_total{session}` and the
threads' names (`afproxy-curl-N`), on the real daemon with real curl clients.
"""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path

from helpers import curl, start_curl, wait_for
from test_metrics import control_metrics, sample


def session_transfers(proxy, sessions: int) -> list[int]:
    status, _, text = control_metrics(proxy)
    assert status == 200
    counts = [sample(text, "afproxy_session_transfers_total", session=str(i)) for i in range(sessions)]
    assert None not in counts, text
    assert sample(text, "afproxy_session_transfers_total", session=str(sessions)) is None, text
    return [int(c) for c in counts]


def curl_threads(proxy) -> list[str]:
    names = []
    for task in Path(f"/proc/{proxy.pid}/task").iterdir():
        name = (task / "comm").read_text().strip()
        if name.startswith("afproxy-curl"):
            names.append(name)
    return sorted(names)


def test_one_session_thread_per_event_loop(start_proxy):
    proxy = start_proxy("--threads", "3")
    assert curl_threads(proxy) == ["afproxy-curl-0", "afproxy-curl-1", "afproxy-curl-2"]
    assert session_transfers(proxy, 3) == [0, 0, 0]


def test_a_connections_requests_stay_on_its_session(start_proxy, origin):
    proxy = start_proxy("--threads", "2")
    before = session_transfers(proxy, 2)
    # Ten requests over one keep-alive connection (curl reuses it for the URLs it is given).
    urls = [origin.url(f"/bytes/{1000 + i}") for i in range(10)]
    out = curl(proxy, "-s", "-o", "/dev/null", "-w", "%{num_connects} %{http_code}\\n",
               *[arg for url in urls for arg in ("-o", "/dev/null", url)])
    lines = out.stdout.decode().split()
    assert out.returncode == 0 and lines.count("200") == 10, out
    proxy.wait_idle()
    after = session_transfers(proxy, 2)
    grown = sorted(a - b for a, b in zip(after, before))
    assert grown == [0, 10], (before, after)


def test_connections_are_shared_among_the_sessions(start_proxy, origin):
    proxy = start_proxy("--threads", "2")
    before = session_transfers(proxy, 2)
    # Each curl run is a connection of its own; the loops take new connections in turn.
    total = 0
    for i in range(8):
        out = curl(proxy, "-s", "-o", "/dev/null", "-w", "%{http_code}", origin.url(f"/bytes/{2000 + i}"))
        assert out.stdout == b"200", out
        total += 1
    proxy.wait_idle()
    wait_for(lambda: sum(session_transfers(proxy, 2)) - sum(before) == total,
             message="every transfer counted")
    grown = [a - b for a, b in zip(session_transfers(proxy, 2), before)]
    assert all(g > 0 for g in grown), grown
    assert sum(grown) == total


def test_connections_busy_beyond_the_idle_cache_do_not_close_those_that_go_idle(start_proxy, origin):
    """curl 7.88 counts busy connections against its cache's size (256 idle ones): with more
    than that open, an exchange that ended closed its own connection, and the next exchange
    opened a new one. 200 requests kept busy at the origin, then 200 clients asking twice in a
    row (the first requests held until all 200 have come): each second request finds an idle
    connection, so the origin sees 400 connections, not 400 plus the ones closed."""
    proxy = start_proxy("--threads", "1")
    n = 200
    before = origin.connections
    busy = [start_curl(proxy, "-s", "-o", "/dev/null", "-w", "%{http_code}", origin.url(f"/gather/busy/{n + 1}"),
                       stdout=subprocess.PIPE) for _ in range(n)]
    wait_for(lambda: origin.gathered("busy") == n, timeout=60, message="the busy requests at the origin")
    clients = [start_curl(proxy, "-s", "-w", "%{http_code}\\n", "-o", "/dev/null", origin.url(f"/gather/twice/{n}"),
                          "-o", "/dev/null", origin.url(f"/bytes/{1000 + i}"), stdout=subprocess.PIPE)
               for i in range(n)]
    codes = [client.communicate(timeout=120)[0] for client in clients]
    assert codes == [b"200\n200\n"] * n
    assert origin.connections - before == 2 * n, "a second request opened a connection"
    # The last of the busy ones releases them (straight to the origin, not through the proxy).
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(origin.url(f"/gather/busy/{n + 1}"), timeout=30) as answer:
        assert answer.status == 200
    assert [client.communicate(timeout=120)[0] for client in busy] == [b"200"] * n
    proxy.wait_idle()
