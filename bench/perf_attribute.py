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

       perf script -F comm,ip,sym,dso -i perf.data | perf_attribute.py --threads [LIMIT]
Per kind of thread (the name without its number: NIO-ELT, afproxy-curl, …): its share of the
samples, the libraries of the leaves (self time) and the top leaf symbols, as shares of all
samples. (perf report --comms with --sort dso drops libraries shared between the threads.)

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


ALLOCATOR = re.compile(r"^(malloc|free|cfree|calloc|realloc|_int_\w+|malloc_consolidate|unlink_chunk|tcache_\w+|"
                       r"(__GI_)?__libc_(malloc|free|calloc|realloc)|sysmalloc|systrim|alloc_perturb)")
TLS_C = re.compile(r"BoringSSL|bssl|^(aead_|aes_|gcm_|check_iovec|ssl_|tls_|CRYPTO_|EVP_|BIO_)")


def area(sym, dso):
    """A leaf frame's area: kernel, TLS, libcurl, allocator, Swift runtime, NIO, afproxy, …"""
    sym = sym.split("+0x")[0]
    if dso.startswith("[kernel"):
        return "kernel"
    if dso.startswith(("libssl", "libcrypto")):
        return "TLS: OpenSSL (curl to the origin)"
    if dso.startswith("libcurl"):
        return "libcurl"
    if dso.startswith("libc.so") or dso.startswith("libc-"):
        return "libc allocator" if ALLOCATOR.match(sym) else "libc other"
    if dso.startswith(("libswift", "libdispatch", "libFoundation")) or sym.startswith(("swift_", "__swift", "_swift")):
        return "Swift runtime and stdlib"
    m = re.match(r"^\$s(\d+)(\w+)", sym)
    if m:
        module = m.group(2)[: int(m.group(1))]
        if module.startswith("AFProxy"):
            return "afproxy Swift code"
        if module.startswith(("NIO", "_NIO")):
            return "NIO Swift code (incl. NIOSSL)"
        return f"other Swift code ({module})"
    if sym.startswith("$s"):  # $sS…, $ss…: standard-library generics specialized into the binary
        return "Swift stdlib specialized in the binary"
    if TLS_C.search(sym):
        return "TLS: BoringSSL (NIOSSL, the client side)"
    if "llhttp" in sym:
        return "NIO llhttp parser"
    return f"other ({dso})"


def thread_kind(comm):
    kind = re.sub(r"[-#0-9]+$", "", comm)
    return re.sub(r"-[0-9]+$", "", kind)


def threads(limit):
    kinds, dsos, syms, areas, total = collections.Counter(), {}, {}, {}, 0
    for comm, frames in samples(sys.stdin):
        if not frames:
            continue
        total += 1
        kind = thread_kind(comm)
        kinds[kind] += 1
        sym, dso = frames[0]
        # With --call-graph dwarf an inlined function is a frame of its own, "(inlined)": the
        # library is that of the function it was inlined into, the next frame that has one.
        dso = next((d for _, d in frames if d != "inlined"), dso)
        dsos.setdefault(kind, collections.Counter())[dso] += 1
        syms.setdefault(kind, collections.Counter())[sym.split("+0x")[0]] += 1
        areas.setdefault(kind, collections.Counter())[area(sym, dso)] += 1
        areas.setdefault("all", collections.Counter())[area(sym, dso)] += 1
    print(f"Samples by thread kind ({total}), leaf library, area and symbol as shares of all samples:")
    print("\nall threads, by area: " + ", ".join(f"{a} {100 * c / total:.2f}%" for a, c in areas["all"].most_common()))
    for kind, n in kinds.most_common():
        print(f"\n{100 * n / total:6.2f}%  {kind}")
        print("  libraries: " + ", ".join(f"{d} {100 * c / total:.2f}%" for d, c in dsos[kind].most_common(8)))
        print("  areas: " + ", ".join(f"{a} {100 * c / total:.2f}%" for a, c in areas[kind].most_common(10)))
        for sym, c in syms[kind].most_common(limit):
            print(f"  {100 * c / total:6.2f}%  {sym}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--allocations":
        return allocations(int(sys.argv[2]), int(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "--threads":
        return threads(int(sys.argv[2]) if len(sys.argv) > 2 else 25)
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
