"""A disk that stops answering pauses only the download writing to it (issue 23, item 7).

The daemon runs with the failpoint `disk-stall` (AFPROXY_FAILPOINTS): a download's write blocks
while a file named `afproxy-disk-stall` exists beside its partial file, as a write to a hung disk
does. The download's bytes are written off the curl session thread, so while its writer is stuck
the download pauses (its unwritten bytes are bounded; the task says it waits for the disk) and
every proxied request keeps being served. When the test removes the file the download completes,
every byte in place. When the bytes were written on the session thread, the first stuck write held
every transfer: the GETs below never completed.

No timed assertion: the GETs must complete at all; every wait polls for state.
"""

from __future__ import annotations

import json

import pytest

from helpers import ctl, curl, wait_for
from range_origin import file_sha256 as expected_sha256, start_range_origin
from test_downloads import (  # noqa: F401 (fixtures)
    MiB, dirs, start_dl, start_download, task_or_none, wait_completed, assert_succeeded, partial_of,
)

GETS = 50


@pytest.fixture
def range_origin():
    o = start_range_origin()
    yield o
    o.stop()


@pytest.fixture
def stalled(start_dl, dirs):
    """A daemon with the failpoint on, and the stall file in place in the test's files directory."""
    marker = dirs["files"] / "afproxy-disk-stall"
    marker.touch()
    proxy = start_dl(env={"AFPROXY_FAILPOINTS": "disk-stall"})
    yield proxy, marker
    marker.unlink(missing_ok=True)


def waiting_on_disk(proxy, tid: int) -> dict:
    seen: list = []

    def find():
        seen[:] = [task_or_none(proxy, tid)]
        t = seen[0]
        return t if t and t["state"] == "running" and "waiting for the disk" in (t.get("waiting") or "") else None

    return wait_for(find, 60, interval=0.05, message=lambda: (
        f"task {tid} waiting for the disk; it is {json.dumps(seen[0] if seen else None)[:3000]}"))


def test_stalled_disk_pauses_only_its_download(stalled, range_origin, dirs):
    proxy, marker = stalled
    size = 24 * MiB
    target = dirs["files"] / "stalled.bin"
    tid = start_download(proxy, range_origin.url(f"/stalled.bin?size={size}"), "-o", str(target))
    # The answer's head arrived: the first body bytes reach the stuck writer next.
    wait_for(lambda: (task_or_none(proxy, tid) or {}).get("status") == 200, 60, interval=0.05,
             message=lambda: f"task {tid} with its head: {task_or_none(proxy, tid)}")

    for i in range(GETS):
        r = curl(proxy, "-o", "-", "-w", "\n%{http_code}", range_origin.url(f"/small-{i}.bin?size=1024"),
                 timeout=60)
        assert r.returncode == 0, f"GET {i} through the proxy while the disk is stalled: {r.stderr!r}"
        assert r.stdout.endswith(b"\n200") and len(r.stdout) == 1024 + 4, (i, r.stdout[-40:])

    task = waiting_on_disk(proxy, tid)
    assert task["download"]["completed"] < size, task["download"]
    shown = ctl(proxy, "show", str(tid))
    assert shown.returncode == 0 and "waiting for the disk" in shown.stdout, shown.stdout

    marker.unlink()
    done = wait_completed(proxy, tid, timeout=120)
    assert_succeeded(done, target, size, expected_sha256(size))


def test_cancel_while_stalled_discards_the_queued_writes(stalled, range_origin, dirs):
    proxy, marker = stalled
    size = 24 * MiB
    target = dirs["files"] / "canceled.bin"
    tid = start_download(proxy, range_origin.url(f"/canceled.bin?size={size}"), "-o", str(target))
    waiting_on_disk(proxy, tid)

    canceled = ctl(proxy, "cancel", str(tid))
    assert canceled.returncode == 0, canceled
    marker.unlink()
    done = wait_completed(proxy, tid, timeout=120)
    assert done["errorCode"] == "canceled", done
    # The one write under way when the disk stalled finished; the queued ones were dropped.
    assert done["download"]["completed"] < size, done["download"]
    assert not target.exists() and not partial_of(target).exists()
    assert proxy.alive()
