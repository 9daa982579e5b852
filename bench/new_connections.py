#!/usr/bin/env python3
"""What a new intercepted connection costs a client that keeps Nagle's algorithm on.

Python's requests (and pip) leave Nagle on: after a TLS 1.3 handshake its request waits for the
proxy's ACK of its Finished, and a proxy that writes nothing there leaves that ACK to the
kernel's delayed-ACK timer. This starts an HTTPS origin (origin.py, a test CA made here) and an
afproxy that intercepts it, then times COUNT GETs with requests, each on a new connection (a
Session per request), and the same through a plain tunnel (the host not intercepted) for
comparison. Everything runs on 127.0.0.1.

  bench/new_connections.py [COUNT]        (default 50)
  AFPROXY_BIN: the daemon (default .build/debug/afproxy)
Prints NEWCONN mode=intercept|tunnel count=N median_ms=F mean_ms=F p90_ms=F
"""
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "integration"))

import requests  # noqa: E402

from helpers import ca_path, launch_afproxy  # noqa: E402
from origin import start_origin  # noqa: E402
from range_origin import make_tls_files  # noqa: E402


def run(mode: str, count: int, binary: str, files, origin, workdir: str) -> None:
    intercept = ["--intercept-hosts", "127.0.0.1"] if mode == "intercept" else []
    proxy = launch_afproxy(binary, os.path.join(workdir, f"{mode}.sock"),
                           (*intercept, "--allow-connect-port", str(origin.port), "--tls-ca-file", files.ca_cert))
    try:
        ca = ca_path(proxy) if mode == "intercept" else files.ca_cert
        proxies = {"https": f"http://127.0.0.1:{proxy.port}"}
        url = origin.url("/bytes/100")
        times = []
        for _ in range(count + 1):
            with requests.Session() as session:
                session.trust_env = False
                start = time.perf_counter()
                answer = session.get(url, proxies=proxies, verify=ca, timeout=30)
                times.append((time.perf_counter() - start) * 1000)
                assert answer.status_code == 200 and len(answer.content) == 100
        times = times[1:]  # the first mints the leaf
        times.sort()
        print(f"NEWCONN mode={mode} count={count} median_ms={statistics.median(times):.2f} "
              f"mean_ms={statistics.mean(times):.2f} p90_ms={times[int(len(times) * 0.9) - 1]:.2f}")
    finally:
        proxy.stop()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    binary = os.environ.get("AFPROXY_BIN", os.path.join(REPO, ".build", "debug", "afproxy"))
    with tempfile.TemporaryDirectory(prefix="afp-newconn-") as workdir:
        files = make_tls_files(os.path.join(workdir, "tls"))
        origin = start_origin(tls=files.server_context())
        try:
            for mode in ("intercept", "tunnel"):
                run(mode, count, binary, files, origin, workdir)
        finally:
            origin.stop()


if __name__ == "__main__":
    main()
