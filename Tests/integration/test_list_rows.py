"""`afproxyctl list` and `watch` on a terminal read only a row's fields of each task out of
`GET /v1/tasks`: every row must say what the task's whole record (`list --json`) says, piped, on a
terminal, with the history, and in watch's refreshing table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

from helpers import afproxyctl_path, closed_port, ctl, curl, live_task, start_curl, wait_for

MiB = 1024 * 1024
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def ok(r: subprocess.CompletedProcess, what: str) -> str:
    assert r.returncode == 0, f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def expected_cells(task: dict) -> list[str]:
    """ID KIND STATE METHOD URL STATUS PROGRESS of a record, as the table writes them piped (a
    progress is checked when its total is known: a percentage)."""
    status = str(task["status"]) if task["status"] is not None else ("-" if task["error"] is None else "ERR")
    kind = task["kind"] + ("!" if task["file"] and task["file"]["insecure"] else "")
    cells = [str(task["id"]), kind, task["state"], task["method"], task["url"], status]
    progress = task["download"]
    if progress["total"]:
        cells.append(f"{int(min(1.0, progress['completed'] / progress['total']) * 100)}%")
    return cells


def rows_by_id(table: str) -> dict[str, list[str]]:
    lines = [ANSI.sub("", line) for line in table.splitlines() if line.strip()]
    assert lines[0].split()[:6] == ["ID", "KIND", "STATE", "METHOD", "URL", "STATUS"], lines[:1]
    return {line.split()[0]: line.split() for line in lines[1:]}


def test_rows_say_what_the_records_say(proxy, origin):
    """Two suspended downloads (their progress stands still), one running, and in the history a
    completed one and a failed one: each row matches its record, piped and on a terminal."""
    clients = []
    try:
        ids = []
        for n in range(3):
            url = origin.url(f"/bytes/{40 * MiB}?row={n}")
            clients.append(start_curl(proxy, "--limit-rate", "1M", "--max-time", "60", "-o", "/dev/null", url))
            ids.append(live_task(proxy, url, min_download=1)["id"])
        ok(ctl(proxy, "suspend", str(ids[0]), str(ids[1])), "suspend")
        time.sleep(0.5)  # bytes already on their way still count
        done = origin.url("/bytes/1234?row=done")
        assert curl(proxy, "--max-time", "30", "-o", "/dev/null", done).returncode == 0
        failed = f"http://127.0.0.1:{closed_port()}/row-failed"
        curl(proxy, "--max-time", "30", "-o", "/dev/null", failed)
        proxy.history_record(done)
        proxy.history_record(failed)

        for args in (["list"], ["list", "--all"]):
            table = ok(ctl(proxy, *args), " ".join(args))
            records = json.loads(ok(ctl(proxy, *args, "--json"), " ".join(args) + " --json"))["tasks"]
            rows = rows_by_id(table)
            assert sorted(rows) == sorted(str(t["id"]) for t in records), f"{args}: {table}"
            for task in records:
                want = expected_cells(task)
                row = rows[str(task["id"])]
                if task["state"] == "running":
                    want, row = want[:6], row[:6]  # its progress moves between the two calls
                assert row[: len(want)] == want, f"{args}: row {row} for {task}"
        history = {t["url"]: t for t in json.loads(ok(ctl(proxy, "list", "--all", "--json"), "--json"))["tasks"]}
        assert history[failed]["error"] is not None, history[failed]
        assert rows_by_id(ok(ctl(proxy, "list", "--all"), "list --all"))[str(history[failed]["id"])][5] in (
            "ERR", str(history[failed]["status"]))

        # On a terminal: the same rows, the state coloured, progress a bar.
        out = subprocess.run(
            ["script", "-qfc", f"stty cols 250; {afproxyctl_path()} --socket {proxy.control_socket} list",
             "/dev/null"], capture_output=True, text=True, timeout=60).stdout
        assert "\x1b[33msuspended" in out, out
        tty_rows = rows_by_id(out.replace("\r", ""))
        for tid in ids[:2]:
            record = next(t for t in json.loads(ok(ctl(proxy, "list", "--json"), "--json"))["tasks"] if t["id"] == tid)
            row, want = tty_rows[str(tid)], expected_cells(record)
            assert row[:6] == want[:6] and row[7] == want[6], row
            assert re.fullmatch(r"\[#*\.*\]", row[6]) and len(row[6]) == 14, row
    finally:
        for client in clients:
            client.kill()
            client.wait(timeout=10)


def test_watch_on_a_terminal_shows_the_rows(proxy, origin):
    """watch on a terminal redraws a table of the live tasks: a suspended download's row is there,
    as its record says, with the count of live tasks above it."""
    url = origin.url(f"/bytes/{40 * MiB}?row=watch")
    client = start_curl(proxy, "--limit-rate", "1M", "--max-time", "60", "-o", "/dev/null", url)
    watch = None
    try:
        tid = live_task(proxy, url, min_download=1)["id"]
        ok(ctl(proxy, "suspend", str(tid)), "suspend")
        time.sleep(0.5)
        record = next(t for t in json.loads(ok(ctl(proxy, "list", "--json"), "--json"))["tasks"] if t["id"] == tid)
        watch = subprocess.Popen(
            ["script", "-qfc",
             f"stty cols 250; {afproxyctl_path()} --socket {proxy.control_socket} watch --interval 0.2",
             "/dev/null"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seen = b""
        deadline = time.monotonic() + 30
        os.set_blocking(watch.stdout.fileno(), False)

        def drawn() -> bool:
            nonlocal seen
            chunk = watch.stdout.read()
            if chunk:
                seen += chunk
            # A whole frame: from its clear-screen to the next one.
            frames = seen.split(b"\x1b[2J")
            return len(frames) >= 3 and f"\n{tid} ".encode() in b"\n" + frames[-2]

        wait_for(drawn, timeout=max(1, deadline - time.monotonic()),
                 message=lambda: f"no watch frame with task {tid}: {seen[-2000:]!r}")
        frame = seen.split(b"\x1b[2J")[-2].decode(errors="replace").replace("\r", "")
        assert "1 live task(s)" in frame, frame
        table = frame[frame.index("ID "):]
        row, want = rows_by_id(table)[str(tid)], expected_cells(record)
        assert row[:6] == want[:6] and row[7] == want[6], frame
        assert re.fullmatch(r"\[#*\.*\]", row[6]), frame
    finally:
        if watch is not None:
            watch.kill()
            watch.wait(timeout=10)
        client.kill()
        client.wait(timeout=10)
