#!/usr/bin/env python3
"""Download tasks measured through a running afproxy's control socket, for bench/run.

  downloads.py single SOCK PID URL SOURCE DIR RUNS
      RUNS rounds of: `curl -o DIR/curl.bin URL` (straight from the origin), then a download task
      of the same URL to DIR/task.bin (`POST /v1/downloads` to the daemon PID listening on the
      control socket SOCK). Each is timed from the moment it is started (curl's exec, the POST) to
      the moment it is done (curl's exit, the task's `completed`), then its file is checked
      against SOURCE (length and SHA-256) and removed. The task's file is synced before it is
      renamed into place and curl's is not, so curl's file is then synced too (fsync), timed
      apart: curl_sync_mibps is curl -o plus that fsync, the same durability as the task (on
      tmpfs the sync costs nothing; on a disk it is most of the difference). CPU seconds:
      curl's own (user + system), and the daemon's over the task (its whole process, so its
      idle work counts too). Prints one line per round and, for bench/run, the medians:
        SINGLE runs=N ok=N curl_mibps=F curl_sync_mibps=F task_mibps=F curl_cpu=F task_cpu=F
               curl_runs=F,F,.. task_runs=F,F,..

  downloads.py many SOCK PID URL_PREFIX WWW_DIR NAMES DIR
      Starts one download task per name in NAMES (comma-separated), URL_PREFIX + name to DIR/name,
      all at once, and waits for every one to end. The files are checked against WWW_DIR/name
      (length and SHA-256). Prints the resumes of each task and, for bench/run:
        MANY tasks=N ok=N seconds=F mibps=F bytes=N cpu=F resumes_min=N resumes_max=N
             resumes_total=N restarts_total=N
      mibps is the bytes of all the files over the time from the first POST to the last task's
      end; cpu the daemon's CPU seconds over the same time.

A task's end is heard on `GET /v1/events` (the `completed` event), which comes the moment the file
is renamed into place; `GET /v1/tasks/ID` is polled every POLL_S as well, in case the stream is
cut, and read once more at the end for `state`, `error`, `errorCode`, `resumes`, `file.path`.
Problems go to stderr; the exit status is 1 if any transfer failed or any file is wrong.
"""
import hashlib
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procmon  # noqa: E402

POLL_S = 0.5
TIMEOUT_S = 600.0
MIB = 1 << 20


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=30):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def control(sock, method, path, body=None):
    """One request on the control socket; returns (status, decoded JSON)."""
    conn = UnixConnection(sock)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, {"error": raw.decode(errors="replace")}
    finally:
        conn.close()


class Watcher:
    """Completion times of tasks, from the event stream and, as a backstop, from polling."""

    def __init__(self, sock):
        self.sock = sock
        self.cond = threading.Condition()
        self.ended = {}      # id -> (monotonic time, task JSON)
        self.watched = set()
        self.stream_ok = threading.Event()
        threading.Thread(target=self._stream, daemon=True).start()
        if not self.stream_ok.wait(5):
            print("downloads.py: no event stream; ends are found by polling only", file=sys.stderr)

    def _stream(self):
        conn = UnixConnection(self.sock, timeout=None)
        try:
            conn.request("GET", "/v1/events")
            resp = conn.getresponse()
            if resp.status != 200:
                return
            self.stream_ok.set()
            while True:
                line = resp.readline()
                if not line:
                    return
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "completed":
                    self._ended(event.get("task") or {})
        except OSError:
            return

    def _ended(self, task):
        now = time.monotonic()
        with self.cond:
            tid = task.get("id")
            if tid not in self.ended:
                self.ended[tid] = (now, task)
                self.cond.notify_all()

    def watch(self, tid):
        with self.cond:
            self.watched.add(tid)

    def wait_all(self, ids, timeout=TIMEOUT_S):
        """Waits until every id has ended (or timeout); returns {id: (time, task)}."""
        deadline = time.monotonic() + timeout
        next_poll = time.monotonic() + POLL_S
        while True:
            with self.cond:
                missing = [i for i in ids if i not in self.ended]
                if not missing:
                    return {i: self.ended[i] for i in ids}
                now = time.monotonic()
                if now >= deadline:
                    return {i: self.ended[i] for i in ids if i in self.ended}
                self.cond.wait(min(next_poll, deadline) - now)
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + POLL_S
                for tid in missing:
                    status, task = control(self.sock, "GET", f"/v1/tasks/{tid}")
                    if status == 200 and task.get("state") == "completed":
                        self._ended(task)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * MIB):
            h.update(chunk)
    return h.hexdigest()


def check_file(path, length, digest, what):
    """Length and SHA-256 of path against the source's; problems on stderr."""
    try:
        got = os.stat(path).st_size
    except OSError as e:
        print(f"{what}: {path}: {e}", file=sys.stderr)
        return False
    if got != length:
        print(f"{what}: {path} has {got} bytes, the source {length}", file=sys.stderr)
        return False
    if sha256_file(path) != digest:
        print(f"{what}: {path}: SHA-256 differs from the source's", file=sys.stderr)
        return False
    return True


def start_task(sock, url, path):
    status, task = control(sock, "POST", "/v1/downloads", {"url": url, "path": path})
    if status != 201:
        raise RuntimeError(f"POST /v1/downloads {url} -> {path}: {status} {task.get('error')}")
    return task["id"]


def task_problem(task):
    if task.get("state") != "completed" or task.get("error") is not None:
        return f"state {task.get('state')}, error {task.get('errorCode')}: {task.get('error')}"
    return None


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def single(sock, pid, url, source, directory, runs):
    length, digest = os.stat(source).st_size, sha256_file(source)
    watcher = Watcher(sock)
    curl_speeds, sync_speeds, task_speeds, curl_cpus, task_cpus, ok = [], [], [], [], [], 0
    for i in range(1, runs + 1):
        good = True
        out = os.path.join(directory, "curl.bin")
        cpu0, t0 = children_cpu(), time.monotonic()
        rc = subprocess.run(["curl", "-s", "--noproxy", "*", "--max-time", "300", "-o", out, url]).returncode
        t_curl = time.monotonic() - t0
        curl_cpus.append(children_cpu() - cpu0)
        t_sync = 0.0
        if os.path.exists(out):
            t1 = time.monotonic()
            fd = os.open(out, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            t_sync = time.monotonic() - t1
        if rc != 0:
            print(f"round {i}: curl -o exited {rc}", file=sys.stderr)
            good = False
        good = check_file(out, length, digest, f"round {i} curl -o") and good
        if os.path.exists(out):
            os.unlink(out)

        out = os.path.join(directory, "task.bin")
        cpu0, t0 = procmon.cpu_seconds(pid), time.monotonic()
        tid = start_task(sock, url, out)
        watcher.watch(tid)
        ended = watcher.wait_all([tid])
        if tid not in ended:
            print(f"round {i}: task {tid} did not end within {TIMEOUT_S:.0f} s", file=sys.stderr)
            return 1
        t_task = ended[tid][0] - t0
        task_cpus.append(procmon.cpu_seconds(pid) - cpu0)
        _, task = control(sock, "GET", f"/v1/tasks/{tid}")
        problem = task_problem(task)
        if problem:
            print(f"round {i}: task {tid}: {problem}", file=sys.stderr)
            good = False
        good = check_file(out, length, digest, f"round {i} task {tid}") and good
        if os.path.exists(out):
            os.unlink(out)

        curl_speeds.append(length / MIB / t_curl)
        sync_speeds.append(length / MIB / (t_curl + t_sync))
        task_speeds.append(length / MIB / t_task)
        ok += good
        print(f"round {i}: curl -o {t_curl:.3f} s = {curl_speeds[-1]:.0f} MiB/s, "
              f"CPU {curl_cpus[-1]:.2f} s, then fsync {t_sync:.3f} s; task {tid} {t_task:.3f} s = {task_speeds[-1]:.0f} MiB/s, "
              f"daemon CPU {task_cpus[-1]:.2f} s ({len(task.get('resumes') or [])} resumes); "
              f"files {'exact' if good else 'WRONG'}")
    print(f"SINGLE runs={runs} ok={ok} curl_mibps={statistics.median(curl_speeds):.0f} "
          f"curl_sync_mibps={statistics.median(sync_speeds):.0f} "
          f"task_mibps={statistics.median(task_speeds):.0f} "
          f"curl_cpu={statistics.median(curl_cpus):.2f} task_cpu={statistics.median(task_cpus):.2f} "
          f"curl_runs={','.join(f'{s:.0f}' for s in curl_speeds)} "
          f"task_runs={','.join(f'{s:.0f}' for s in task_speeds)}")
    return 0 if ok == runs else 1


def many(sock, pid, url_prefix, www, names, directory):
    sources = {}
    for name in names:
        path = os.path.join(www, name)
        sources[name] = (os.stat(path).st_size, sha256_file(path))
    watcher = Watcher(sock)
    ids = {}
    cpu0, t0 = procmon.cpu_seconds(pid), time.monotonic()
    for name in names:
        tid = start_task(sock, url_prefix + name, os.path.join(directory, name))
        watcher.watch(tid)
        ids[tid] = name
    ended = watcher.wait_all(list(ids))
    t_end = max((t for t, _ in ended.values()), default=time.monotonic())
    seconds = t_end - t0
    cpu = procmon.cpu_seconds(pid) - cpu0   # a little after the last end: the checks come later
    ok, resumes, restarts = 0, [], 0
    total = sum(length for length, _ in sources.values())
    for tid, name in ids.items():
        if tid not in ended:
            print(f"task {tid} ({name}) did not end within {TIMEOUT_S:.0f} s", file=sys.stderr)
            resumes.append(0)
            continue
        _, task = control(sock, "GET", f"/v1/tasks/{tid}")
        n = len(task.get("resumes") or [])
        resumes.append(n)
        restarts += len((task.get("file") or {}).get("restarts") or [])
        length, digest = sources[name]
        problem = task_problem(task)
        path = (task.get("file") or {}).get("path") or os.path.join(directory, name)
        good = problem is None and check_file(path, length, digest, f"task {tid} ({name})")
        if problem:
            print(f"task {tid} ({name}): {problem}", file=sys.stderr)
        ok += good
        print(f"task {tid} {name}: {ended[tid][0] - t0:.2f} s, {n} resumes at "
              f"{', '.join(str(r.get('offset')) for r in task.get('resumes') or []) or '-'}, "
              f"file {'exact' if good else 'WRONG'}")
        if os.path.exists(path):
            os.unlink(path)
    print(f"resumes per task: {' '.join(str(r) for r in resumes)}")
    print(f"MANY tasks={len(ids)} ok={ok} seconds={seconds:.2f} "
          f"mibps={total / MIB / seconds:.0f} bytes={total} cpu={cpu:.2f} resumes_min={min(resumes)} "
          f"resumes_max={max(resumes)} resumes_total={sum(resumes)} restarts_total={restarts}")
    return 0 if ok == len(ids) else 1


def main(argv):
    if len(argv) == 8 and argv[1] == "single":
        return single(argv[2], int(argv[3]), argv[4], argv[5], argv[6], int(argv[7]))
    if len(argv) == 8 and argv[1] == "many":
        return many(argv[2], int(argv[3]), argv[4], argv[5], argv[6].split(","), argv[7])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
