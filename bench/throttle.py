#!/usr/bin/env python3
"""Throttling accuracy, for bench/run (BENCH_ONLY=throttle) or alone:

  AFPROXY_BIN=.build-rel/release/afproxy bench/throttle.py [SECONDS]

Starts its own daemon (a fresh --state-dir in a temp dir) and origin (Tests/integration/origin.py
on 127.0.0.1), sets a global rule through the control API and measures, with curl as the client:

  - a proxied download at 100K, 1M, 10M and 100M bytes per second: RATE x SECONDS bytes (10 s by
    default), timed by curl (time_total), so the figure is the rate over the whole transfer;
  - a download task (afproxy's own) at 1M and 10M: from POST /v1/downloads to `completed`;
  - an upload at 1M and 10M, and a CONNECT tunnel at 1M, 10M and 100M (curl --proxytunnel);
  - fairness: two downloads under one 10M global rule for SECONDS, each one's bytes as curl wrote
    them over the same window, and their shares.

Prints one line per case, `KIND target=R achieved=R error=+E%`, and writes the table to
bench/results/throttle.md. Every body is checked (length and SHA-256).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "Tests" / "integration"))
from helpers import UnixHTTPConnection, launch_afproxy  # noqa: E402
from origin import payload, payload_sha256, start_origin  # noqa: E402

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
BIN = os.environ.get("AFPROXY_BIN") or str(REPO / ".build-rel" / "release" / "afproxy")
RATES = {"100K": 100_000, "1M": 1_000_000, "10M": 10_000_000, "100M": 100_000_000}
rows: list[tuple[str, str, float, float]] = []


def api(sock: str, method: str, path: str, body=None):
    conn = UnixHTTPConnection(sock, timeout=30)
    conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                 headers={"Content-Type": "application/json"} if body is not None else {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert 200 <= resp.status < 300, f"{method} {path}: {resp.status} {data!r}"
    return json.loads(data) if data else None


def report(kind: str, label: str, target: float, achieved: float) -> None:
    rows.append((kind, label, target, achieved))
    print(f"{kind:10} target={label:5} achieved={achieved / 1e6:9.4f} MB/s "
          f"error={(achieved - target) / target * 100:+6.2f}%", flush=True)


def curl(proxy_url: str, *args: str) -> tuple[float, float, float]:
    """(bytes down, bytes up, seconds) as curl measured them."""
    out = subprocess.run(["curl", "-sS", "-x", proxy_url, "-w", "%{size_download} %{size_upload} %{time_total}",
                          *args], capture_output=True, text=True, timeout=SECONDS * 5 + 60, check=True)
    down, up, seconds = out.stdout.split()[-3:]
    return float(down), float(up), float(seconds)


def check(path: Path, n: int) -> None:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    assert (size, h.hexdigest()) == (n, payload_sha256(n)), f"{path}: wrong body"
    path.unlink()


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="afproxy-throttle-"))
    origin = start_origin()
    proxy = launch_afproxy(BIN, str(tmp / "control.sock"),
                           ("--state-dir", str(tmp / "state"), "--allow-connect-port", str(origin.port)))
    sock = proxy.control_socket
    time.sleep(0.5)
    try:
        for label, rate in RATES.items():
            api(sock, "PUT", "/v1/throttle/global", {"down": rate, "up": rate})
            n = int(rate * SECONDS)
            out = tmp / "body"
            size, _, seconds = curl(proxy.proxy_url, "-o", str(out), origin.url(f"/bytes/{n}"))
            check(out, n)
            report("download", label, rate, size / seconds)
        for label in ("1M", "10M", "100M"):
            rate = RATES[label]
            api(sock, "PUT", "/v1/throttle/global", {"down": rate, "up": rate})
            n = int(rate * SECONDS)
            out = tmp / "body"
            size, _, seconds = curl(proxy.proxy_url, "--proxytunnel", "-o", str(out), origin.url(f"/bytes/{n}"))
            check(out, n)
            report("tunnel", label, rate, size / seconds)
        for label in ("1M", "10M"):
            rate = RATES[label]
            api(sock, "PUT", "/v1/throttle/global", {"down": rate, "up": rate})
            n = int(rate * SECONDS)
            body = tmp / "up.bin"
            body.write_bytes(payload(n))
            answer = tmp / "answer"
            _, sent, seconds = curl(proxy.proxy_url, "--data-binary", f"@{body}", "-o", str(answer),
                                    origin.url("/upload"))
            echoed = json.loads(answer.read_text())
            assert echoed["length"] == n and echoed["sha256"] == payload_sha256(n), echoed
            report("upload", label, rate, sent / seconds)
        for label in ("1M", "10M"):
            rate = RATES[label]
            api(sock, "PUT", "/v1/throttle/global", {"down": rate, "up": rate})
            n = int(rate * SECONDS)
            path = tmp / f"task-{label}.bin"
            started = time.monotonic()
            task = api(sock, "POST", "/v1/downloads", {"url": origin.url(f"/bytes/{n}"), "path": str(path)})
            while (record := api(sock, "GET", f"/v1/tasks/{task['id']}"))["state"] != "completed":
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            assert record["error"] is None, record
            check(path, n)
            report("task", label, rate, n / elapsed)
        fairness(sock, proxy.proxy_url, origin, tmp)
    finally:
        proxy.stop()
        origin.stop()
    write_table()


def fairness(sock: str, proxy_url: str, origin, tmp: Path) -> None:
    rate = 10_000_000
    api(sock, "PUT", "/v1/throttle/global", {"down": rate, "up": rate})
    n = int(rate * SECONDS)  # each could take it all: both still run at the end of the window
    outs = [tmp / "fair-a", tmp / "fair-b"]
    clients = [subprocess.Popen(["curl", "-sS", "-x", proxy_url, "-o", str(out), origin.url(f"/bytes/{n}?{i}")])
               for i, out in enumerate(outs)]
    while not all(out.exists() and out.stat().st_size > 0 for out in outs):
        time.sleep(0.01)
    time.sleep(0.5)
    start = [out.stat().st_size for out in outs]
    began = time.monotonic()
    time.sleep(SECONDS / 2)
    moved = [out.stat().st_size - s for out, s in zip(outs, start)]
    window = time.monotonic() - began
    api(sock, "DELETE", "/v1/throttle/global")
    for client in clients:
        client.wait(timeout=120)
    for out in outs:
        check(out, n)
    total = sum(moved) / window
    report("shared", "10M", rate, total)
    for name, m in zip("ab", moved):
        share = m / sum(moved)
        print(f"shared     transfer {name}: {m / window / 1e6:.4f} MB/s, share {share * 100:.1f}%", flush=True)
        rows.append((f"shared {name}", "5M", rate / 2, m / window))


def write_table() -> None:
    lines = [f"# Throttling accuracy ({SECONDS:g} s per case)", "",
             "| case | target | achieved MB/s | error |", "|---|---|---|---|"]
    for kind, label, target, achieved in rows:
        lines.append(f"| {kind} | {label} | {achieved / 1e6:.4f} | {(achieved - target) / target * 100:+.2f}% |")
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "throttle.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
