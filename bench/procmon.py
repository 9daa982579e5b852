#!/usr/bin/env python3
"""Process metrics for bench/run, read from /proc.

Every figure covers the process *and its descendants*: a proxy that forks
helpers (squid can) must not look smaller than it is. For a single-process
proxy this is just the process itself.

  procmon.py cpu PID              utime+stime in seconds (ticks / CLK_TCK)
  procmon.py switches PID         context switches so far, voluntary and not, summed over
                                  every thread (/proc/P/task/T/status)
  procmon.py rss PID              VmRSS in KiB
  procmon.py hwm PID              VmHWM (kernel-tracked peak RSS) in KiB
  procmon.py sample PID OUT [S]   poll VmRSS every S seconds (default 0.1) and
                                  keep the maximum seen in file OUT, until PID
                                  exits or this sampler is killed
"""
import os
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")  # same value as `getconf CLK_TCK`


def children_of(pid):
    """Direct children, via /proc/PID/task/*/children (all threads)."""
    kids = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return kids


def tree(pid):
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(children_of(p))
    return seen


def cpu_seconds(pid):
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm (field 2) may contain spaces and ')'; fields after the last ')'
        # start at field 3 (state), so utime (14) and stime (15) are [11], [12].
        fields = stat[stat.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def context_switches(pid):
    """Each thread counts its own: a process's status holds its first thread's only."""
    total = 0
    for p in tree(pid):
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{p}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                            total += int(line.split()[1])
            except OSError:
                continue
    return total


def status_kib(pid, key):
    total, found = 0, False
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        total += int(line.split()[1])
                        found = True
                        break
        except OSError:
            continue
    return total if found else None


def sample(pid, out, interval):
    peak = 0
    while os.path.exists(f"/proc/{pid}"):
        rss = status_kib(pid, "VmRSS")
        if rss is not None and rss > peak:
            peak = rss
            tmp = out + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"{peak}\n")
            os.replace(tmp, out)  # readers never see a half-written file
        time.sleep(interval)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, pid = argv[1], int(argv[2])
    if cmd == "cpu":
        print(f"{cpu_seconds(pid):.2f}")
    elif cmd == "switches":
        print(context_switches(pid))
    elif cmd in ("rss", "hwm"):
        v = status_kib(pid, "VmRSS" if cmd == "rss" else "VmHWM")
        if v is None:
            sys.exit(f"procmon: no such process {pid}")
        print(v)
    elif cmd == "sample":
        sample(pid, argv[3], float(argv[4]) if len(argv) > 4 else 0.1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
