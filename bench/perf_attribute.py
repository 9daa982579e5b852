#!/usr/bin/env python3
"""bench/perf_attribute.py — a perf profile of afproxy, charged to afproxy's own functions.

Why: perf's flat report charges most of a Swift daemon's time to the runtime (swift_retain,
malloc, memmove) and its inclusive report to NIO's event loop frames; neither says which of
afproxy's functions to change. Here every sample is charged to the innermost frame of an AFProxy
module on its stack (mangled Swift names carry the module, e.g. `15AFProxyListener`), so
"retain/release under ProxyConnectionHandler.deliver" counts against `deliver`. Samples with no
such frame (NIO's socket I/O, curl, the kernel) are grouped by thread and the library of the leaf.

Usage: perf script -F comm,ip,sym,dso -i perf.data | perf_attribute.py [LIMIT]
Prints two tables (all samples; only samples whose leaf is the allocator or reference
counting), with mangled names; bench/profile passes them through `swift demangle`.

       heaptrack_print --print-flamegraph FILE --flamegraph-cost-type allocations …;
       perf_attribute.py --allocations REQUESTS LIMIT <FILE
The same charging for heaptrack's allocation stacks (root first, `a;b;c COUNT` a line):
allocations per request by the innermost afproxy frame.
"""

import collections
import re
import sys

RUNTIME_LEAVES = re.compile(
    r"^(malloc|free|cfree|calloc|realloc|_int_malloc|_int_free|_int_realloc|malloc_consolidate|"
    r"tcache_\w+|__libc_\w+|swift_(retain|release|allocObject|deallocObject|bridgeObjectRetain|"
    r"bridgeObjectRelease|slowAlloc|slowDealloc|allocBox|deallocClassInstance|retain_n|release_n|"
    r"unknownObjectRetain|unknownObjectRelease|isUniquelyReferenced\w*)|_swift_release_dealloc)$"
)


def samples(lines):
    """Yields (thread name, [(symbol, dso)], leaf first) per sample of `perf script` output."""
    comm, frames = None, []
    for line in lines:
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif line[0] not in " \t":
            comm, frames = line.split()[0] if line.split() else "?", []
        else:
            parts = line.strip().split(" ", 1)
            rest = parts[1] if len(parts) > 1 else "[unknown]"
            sym, _, dso = rest.rpartition(" (")
            frames.append((sym or rest, dso.rstrip(")").rsplit("/", 1)[-1]))
    if comm is not None:
        yield comm, frames


def charge(comm, frames):
    for sym, _ in frames:
        if "AFProxy" in sym:
            return sym
    leaf_dso = frames[0][1] if frames else "?"
    return f"[no afproxy frame] {comm.rstrip('0123456789#-')} in {leaf_dso}"


def allocations(requests, limit):
    sites, total = collections.Counter(), 0
    for line in sys.stdin:
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue
        frames = [frame.split(" (")[0] for frame in stack.split(";") if frame]
        ours = [frame for frame in frames if "AFProxy" in frame]
        who = ours[-1] if ours else "[no afproxy frame: start-up, NIO, libraries]"
        sites[who] += int(count)
        total += int(count)
    print(f"Allocations per request ({total} over {requests} requests, start-up included), by the innermost afproxy frame:")
    for who, count in sites.most_common(limit):
        print(f"{count / requests:8.1f}  {who}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--allocations":
        return allocations(int(sys.argv[2]), int(sys.argv[3]))
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    everything, runtime = collections.Counter(), collections.Counter()
    total = runtime_total = 0
    for comm, frames in samples(sys.stdin):
        if not frames:
            continue
        total += 1
        who = charge(comm, frames)
        everything[who] += 1
        leaf = frames[0][0].split("+")[0]
        if RUNTIME_LEAVES.match(leaf):
            runtime_total += 1
            runtime[who] += 1
    print(f"All samples ({total}), charged to the innermost afproxy function on the stack:")
    for who, n in everything.most_common(limit):
        print(f"{100 * n / total:6.2f}%  {who}")
    share = 100 * runtime_total / max(total, 1)
    print(f"\nAllocator and reference-counting samples ({runtime_total}, {share:.1f} % of all), charged the same way:")
    for who, n in runtime.most_common(limit):
        print(f"{100 * n / max(total, 1):6.2f}%  {who}")


if __name__ == "__main__":
    main()
