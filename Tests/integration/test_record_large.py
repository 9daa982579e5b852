"""Recorded bodies at size (issue 37's tests the first part left): a recorded 1 GiB download keeps
the daemon's RSS flat (the body is streamed to its file, never held: 64 MiB kept, cut by `limit`,
the client's bytes exact); `record-max-total` holds while 1 GiB of recorded bodies flows (the
bodies/ directory sampled every few ms never passes it, and the oldest bodies go first: 410 for
them, 200 for the newest); a full disk under bodies/ (a 4 MiB tmpfs) cuts the body (`disk`) while
the client still gets every byte and the daemon keeps serving.

No assertion on time: the waits poll, the bounds are on bytes (memory, disk). About 40 s on the
shared 2-core machine with the debug build: the 1 GiB download 5-7 s, the 128 bodies of 1 GiB
about 25 s (each transfer's first 8 MiB go at the smallest receive window, see ReceiveWindow).

Two tests here found bugs, fixed since: a removed body's completed task still said it was kept
(its record now shows the removal), and a write a full disk cut short left its part in the file
(the file is cut back to what was whole)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from helpers import SANITIZER, assert_serves, ctl, curl, curl_sha256, file_sha256, skip_under_sanitizer, wait_for
from origin import payload, payload_sha256

MiB = 1024 * 1024


def bodies_dir(proxy) -> Path:
    return Path(proxy.state_dir) / "afproxy/bodies"


def files_and_sizes(directory: Path) -> dict[str, int]:
    """Each file's size in the directory now (a file removed while listed is left out)."""
    sizes = {}
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return {}
    for entry in entries:
        try:
            sizes[entry.name] = entry.stat().st_size
        except FileNotFoundError:
            pass
    return sizes


def show(proxy, task_id: int) -> dict:
    r = ctl(proxy, "show", "--json", str(task_id))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@skip_under_sanitizer("RSS says nothing there: shadow memory, and ASan's quarantine of freed blocks")
def test_a_recorded_1gib_download_keeps_rss_flat(proxy, origin):
    """1 GiB through a record rule of --max 64MiB: the client gets every byte (SHA-256), the daemon's
    VmRSS sampled through the transfer stays under 64 MiB (what may be kept) + 200 MiB (a generous
    allowance for the daemon itself: about 20 MiB idle), and the kept body is the first 64 MiB,
    cut by `limit`, `seen` the whole 1 GiB (or, when the writer fell 8 MiB behind on a busy
    machine, fewer bytes cut by `disk`: the file then holds exactly those)."""
    n = 1024 * MiB
    kept = 64 * MiB
    r = ctl(proxy, "record", "127.0.0.1", "--max", "64MiB")
    assert r.returncode == 0, r.stderr
    rule = int(r.stdout)
    idle_kib = proxy.rss_kib()

    samples: list[int] = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            try:
                samples.append(proxy.rss_kib())
            except (OSError, AssertionError):
                return
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out = curl_sha256(proxy, origin.url(f"/bytes/{n}"), timeout=600)
    finally:
        stop.set()
        sampler.join(timeout=5)
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))
    assert len(samples) >= 10, f"too few RSS samples: {samples}"
    peak = max(samples)
    assert peak < 264 * 1024, f"peak RSS {peak} KiB ≥ 264 MiB (idle {idle_kib} KiB); samples (KiB): {samples}"

    task = proxy.history_record(origin.url(f"/bytes/{n}"))
    recorded = show(proxy, task["id"])["bodies"]["response"]
    if recorded["cutBy"] == "disk":
        # The writer fell 8 MiB behind the transfer (a machine busy with other work): the body is
        # cut there rather than the transfer slowed or the bytes held. Seen on this machine with a
        # release build running beside the test; the bench (bench/record) reports which it was.
        assert 0 < recorded["size"] < kept, recorded
        kept = recorded["size"]
    assert recorded == {"rule": rule, "size": kept, "seen": n, "cut": True, "cutBy": recorded["cutBy"]}
    assert recorded["cutBy"] in ("limit", "disk"), recorded
    path = bodies_dir(proxy) / f"{task['id']}-response.body"
    wait_for(lambda: path.exists() and path.stat().st_size >= kept, timeout=60, message=f"{kept} bytes in {path}")
    assert file_sha256(path) == (kept, payload_sha256(kept))


def test_the_total_bound_holds_while_1gib_flows(start_proxy, origin, tmp_path):
    """`--record-max-total 32M`, a rule of --max 8MiB and 128 recorded 8 MiB downloads one after
    the other (1 GiB, one curl on one connection, every byte checked by SHA-256), while a thread
    sums the sizes of bodies/'s files every 10 ms: no sample passes 32 MiB (a sample counts only when the directory listed the same names before and after it: a file
    removed and another grown in between would otherwise be counted both), and the oldest bodies
    were removed first: the earliest tasks' bodies answer 410 naming record-max-total, the newest
    four 200 with their bytes."""
    total = 32 * MiB
    size = 8 * MiB
    # 1 GiB; under a sanitizer 320 MiB, enough to walk the removals many times over at a third of the time.
    count = 40 if SANITIZER else 128
    proxy = start_proxy("--record-max-total", "32M")
    assert ctl(proxy, "record", "127.0.0.1", "--max", "8MiB").returncode == 0
    directory = bodies_dir(proxy)

    samples: list[int] = []
    torn = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            before = set(files_and_sizes(directory))
            sizes = files_and_sizes(directory)
            after = files_and_sizes(directory)
            if before == set(sizes) == set(after):
                # Files only grow between removals, so this sum is at most the total at its end.
                samples.append(sum(sizes.values()))
            else:
                torn[0] += 1
            stop.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        urls = [origin.url(f"/bytes/{size}?n={n}") for n in range(count)]
        # At the pace the writer of bodies/ keeps up with in a debug build: faster, a body whose
        # writes fall 8 MiB behind is cut (`disk`) rather than the transfer slowed, and never
        # reaches the total this test is about. Windows that open early made these 8 MiB
        # downloads run at about 200 MB/s where they had run at 48.
        out = curl_sha256(proxy, "--limit-rate", "48M", *urls, timeout=600)
        assert out.returncode == 0, out.stderr
        whole = hashlib.sha256()
        one = payload(size)
        for _ in range(count):
            whole.update(one)
        assert (out.size, out.sha256) == (size * count, whole.hexdigest())
        wait_for(lambda: len(files_and_sizes(directory)) == 4 and sum(files_and_sizes(directory).values()) == total,
                 timeout=60, message=lambda: f"the newest 4 bodies on disk; have {files_and_sizes(directory)}")
    finally:
        stop.set()
        sampler.join(timeout=5)
    assert len(samples) >= 100, f"too few samples of bodies/ ({len(samples)}, {torn[0]} torn)"
    assert max(samples) <= total, f"bodies/ held {max(samples)} bytes > {total}"
    assert max(samples) > total - size, f"the samples never saw the directory near full: {max(samples)}"

    tasks = sorted((t for t in proxy.tasks(all=True) if t["url"].startswith(origin.url(f"/bytes/{size}?n="))),
                   key=lambda t: t["id"])
    assert len(tasks) == count
    for task in tasks[-4:]:
        got = tmp_path / f"body-{task['id']}"
        r = ctl(proxy, "body", str(task["id"]), "-o", str(got), timeout=60)
        assert r.returncode == 0 and r.stderr == "", (task["id"], r.stderr)
        assert file_sha256(got) == (size, payload_sha256(size)), task["id"]
    for task in tasks[:-4]:
        status, answer = proxy.api("GET", f"/v1/tasks/{task['id']}/body")
        assert status == 410 and "removed to keep record-max-total" in answer["error"], (task["id"], status, answer)
    status = ctl(proxy, "status").stdout
    assert "4 bodies kept (32.0 MiB of 32.0 MiB)" in status, status


@pytest.fixture
def small_bodies_dir(tmp_path):
    """An XDG_STATE_HOME whose afproxy/bodies is a 4 MiB tmpfs (root only), unmounted after."""
    state = tmp_path / "state"
    bodies = state / "afproxy/bodies"
    bodies.mkdir(parents=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(bodies)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a 4 MiB tmpfs for bodies/ (needs root): {r.stderr.strip()}")
    try:
        yield state
    finally:
        subprocess.run(["umount", "-l", str(bodies)], capture_output=True, timeout=30)


def test_a_full_disk_cuts_the_body_not_the_transfer(start_proxy, origin, small_bodies_dir):
    """bodies/ on a 4 MiB tmpfs, a 16 MiB download under a --max 64MiB rule: the client gets all
    16 MiB byte-exact, the body is kept cut by `disk` (what the file holds is the start of what
    passed, as long as `size` says), `afproxyctl body` says it was cut, and the daemon goes on
    serving, recorded requests too."""
    n = 16 * MiB
    proxy = start_proxy(env={"XDG_STATE_HOME": str(small_bodies_dir)})
    assert ctl(proxy, "record", "127.0.0.1", "--max", "64MiB").returncode == 0
    out = curl_sha256(proxy, origin.url(f"/bytes/{n}"), timeout=120)
    assert out.returncode == 0, out.stderr
    assert (out.size, out.sha256) == (n, payload_sha256(n))

    task = proxy.history_record(origin.url(f"/bytes/{n}"))
    wait_for(lambda: show(proxy, task["id"])["bodies"]["response"], message="the task's body")
    # The body is read after every write queued for it: from then on its record does not move.
    r = ctl(proxy, "body", str(task["id"]), "-o", "/dev/null")
    recorded = show(proxy, task["id"])["bodies"]["response"]
    assert recorded["cut"] is True and recorded["cutBy"] == "disk" and recorded["seen"] == n, recorded
    assert 0 < recorded["size"] <= 4 * MiB, recorded
    assert r.returncode == 0 and f"kept cut: {recorded['size']} of {n} bytes (disk)" in r.stderr, r.stderr
    path = small_bodies_dir / "afproxy/bodies" / f"{task['id']}-response.body"
    kept = path.read_bytes()
    assert kept == payload(len(kept)), "the file holds bytes that are not the start of the body"
    assert len(kept) == recorded["size"], f"the file holds {len(kept)} bytes, the task says {recorded['size']}"

    assert_serves(proxy, origin)
    small = curl(proxy, origin.url("/bytes/5000"))
    assert small.returncode == 0 and small.stdout == payload(5000)
    assert proxy.alive()


def test_a_full_disk_keeps_exactly_what_the_task_says(start_proxy, origin, small_bodies_dir, tmp_path):
    """The body a full disk cut: `afproxyctl body` gives exactly `size` bytes, the start of what passed."""
    n = 16 * MiB
    proxy = start_proxy(env={"XDG_STATE_HOME": str(small_bodies_dir)})
    assert ctl(proxy, "record", "127.0.0.1", "--max", "64MiB").returncode == 0
    out = curl_sha256(proxy, origin.url(f"/bytes/{n}"), timeout=120)
    assert out.returncode == 0 and (out.size, out.sha256) == (n, payload_sha256(n)), out.stderr
    task = proxy.history_record(origin.url(f"/bytes/{n}"))
    got = tmp_path / "body"
    assert ctl(proxy, "body", str(task["id"]), "-o", str(got)).returncode == 0
    recorded = show(proxy, task["id"])["bodies"]["response"]  # after its writes (above)
    assert recorded["cutBy"] == "disk", recorded
    assert file_sha256(got) == (recorded["size"], payload_sha256(recorded["size"]))


def test_a_body_removed_for_the_total_says_so_in_its_task(start_proxy, origin):
    """The oldest body removed to keep record-max-total: its task's `bodies.response` says cut by
    `total`, size 0 (docs/control-api.md), as its 410 does."""
    proxy = start_proxy("--record-max-total", "64K")
    assert ctl(proxy, "record", "127.0.0.1", "--max", "40K").returncode == 0
    for n in (40_000, 40_001):
        assert curl(proxy, origin.url(f"/bytes/{n}")).stdout == payload(n)
    first = proxy.history_record(origin.url("/bytes/40000"))
    wait_for(lambda: proxy.api("GET", f"/v1/tasks/{first['id']}/body")[0] == 410, timeout=30,
             message="the first body removed (410)")
    recorded = show(proxy, first["id"])["bodies"]["response"]
    assert recorded["cut"] is True and recorded["cutBy"] == "total" and recorded["size"] == 0, recorded
