"""Every failure a task records carries a stable `errorCode` beside its `error` text (docs/control-api.md,
"A task"), for HTTP tasks and tunnels alike, and the client's status follows from it."""

from __future__ import annotations

import threading

from helpers import RawConn, closed_port, curl, live_task, local_resolver_wrapper, wait_for


def status_of(result) -> int:
    return int(result.stdout.rpartition(b"\n")[2])


def test_http_failures_have_their_codes(start_proxy, origin, tmp_path):
    # The lookup of no-such-host.invalid fails on this machine (local_resolver_wrapper).
    proxy = start_proxy("--upstream-timeout", "1", "--allow-hosts", "no-such-host.invalid",
                        wrapper=local_resolver_wrapper(tmp_path))
    cases = [
        (f"http://127.0.0.1:{closed_port()}/", 502, "connection-refused"),
        ("http://no-such-host.invalid/", 502, "dns-failure"),
        (origin.url("/hang"), 504, "upstream-timeout"),
        (origin.url("/abort/100000"), None, "upstream-broken"),
    ]
    for url, status, code in cases:
        r = curl(proxy, "--max-time", "20", "-s", "-o", "/dev/null", "-w", "\n%{http_code}", url, timeout=40)
        if status is not None:
            assert status_of(r) == status, (url, r.stdout, r.stderr)
        rec = proxy.history_record(url)
        assert rec["errorCode"] == code, (url, rec)
        assert rec["error"], rec
    ok = origin.url("/bytes/10")
    assert curl(proxy, "--max-time", "20", "-s", "-o", "/dev/null", ok).returncode == 0
    rec = proxy.history_record(ok)
    assert (rec["error"], rec["errorCode"]) == (None, None), rec


def test_tunnel_failures_have_their_codes(start_proxy, tmp_path):
    port = closed_port()
    proxy = start_proxy("--allow-connect-port", str(port), "--allow-hosts", "no-such-host.invalid",
                        wrapper=local_resolver_wrapper(tmp_path))
    for target, status, code in [
        (f"127.0.0.1:{port}", 502, "connection-refused"),
        ("no-such-host.invalid:443", 502, "dns-failure"),
    ]:
        with RawConn(proxy.port) as conn:
            conn.send(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            resp = conn.read_response()
        assert resp.status == status, (target, resp.status)
        rec = proxy.history_record(target)
        assert (rec["kind"], rec["errorCode"]) == ("stream", code), rec


def test_cancels_are_told_apart_from_failures(proxy, origin):
    """A person's cancel is `canceled`, a client that leaves is `client-closed`: neither logged
    as a failure."""
    url = origin.url("/slowbody/1000000")
    gone = origin.url("/slowbody/1000001")
    # A client that reads its head and leaves.
    with RawConn(proxy.port) as conn:
        conn.send(f"GET {gone} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        live_task(proxy, gone)
    rec = proxy.history_record(gone)
    assert (rec["errorCode"], rec["error"]) == ("client-closed", "canceled: client closed the connection"), rec

    done = threading.Event()

    def fetch():
        curl(proxy, "--max-time", "30", "-s", "-o", "/dev/null", url, timeout=40)
        done.set()

    threading.Thread(target=fetch, daemon=True).start()
    tid = live_task(proxy, url)["id"]
    status, body = proxy.api("POST", f"/v1/tasks/{tid}/cancel")
    assert status == 200 and body["state"] in ("canceling", "completed"), body
    rec = proxy.history_record(url)
    assert (rec["errorCode"], rec["error"]) == ("canceled", "canceled"), rec
    wait_for(done.is_set, 30, message="curl ended after the cancel")

    def levels() -> list[str]:
        lines = [line for line in proxy.log().splitlines() if " failed: canceled" in line]
        return [line.split()[1] for line in lines]

    assert wait_for(lambda: len(levels()) == 2 and levels(), 10, message=lambda: proxy.log()) == ["info", "info"]
