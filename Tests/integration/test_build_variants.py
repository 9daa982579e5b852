"""The two builds of the daemon. `make run` on a new machine builds afproxy first without the
`Interception` trait (no TLS stack: it serves within minutes), and every other build, the shipped
ones included, has it. The daemon says which it is in `--version`; these tests check what that
build must do, and so run in both: in the suite against the shipped static build (which must be
the whole daemon), and in `scripts/test`'s last step against the quick build
(AFPROXY_BIN=.build/test-binaries/quick/afproxy, built with `--disable-default-traits`), where plain HTTP and
CONNECT tunnels work and interception says that it is not there and how to get it."""

from __future__ import annotations

import os
import subprocess

from helpers import ctl, curl_sha256
from origin import payload_sha256

QUICK_NOTE = "(built without HTTPS interception)"


def _is_quick(afproxy_bin: str) -> bool:
    version = subprocess.run([afproxy_bin, "--version"], capture_output=True, text=True, timeout=30, check=True)
    return QUICK_NOTE in version.stdout


def test_the_build_under_test_is_the_one_expected(afproxy_bin):
    """The suite's build is the whole daemon unless the run says it is the quick one: a shipped
    build without interception fails here rather than in every interception test."""
    assert _is_quick(afproxy_bin) == (os.environ.get("AFPROXY_EXPECT_QUICK_BUILD") == "1")


def test_plain_http_and_tunnels_work_in_either_build(start_proxy, origin, tls_origin, tls_files):
    proxy = start_proxy("--allow-connect-port", str(tls_origin.port))
    size = 3 * 1024 * 1024 + 17
    plain = curl_sha256(proxy, origin.url(f"/bytes/{size}"))
    assert (plain.returncode, plain.size, plain.sha256) == (0, size, payload_sha256(size)), plain.stderr
    tunneled = curl_sha256(proxy, "--cacert", tls_files.ca_cert, tls_origin.url(f"/bytes/{size}"))
    assert (tunneled.returncode, tunneled.size, tunneled.sha256) == (0, size, payload_sha256(size)), tunneled.stderr
    kinds = {(t["kind"], t["state"]) for t in proxy.tasks(all=True)}
    assert kinds == {("data", "completed"), ("stream", "completed")}, kinds


def test_interception_is_there_or_says_how_to_get_it(proxy, afproxy_bin):
    added = ctl(proxy, "intercept", "example.test")
    shown = ctl(proxy, "ca")
    if not _is_quick(afproxy_bin):
        assert added.returncode == 0, added.stderr
        assert shown.returncode == 0 and "ca-cert.pem" in shown.stdout, shown.stdout + shown.stderr
        return
    for answer in (added, shown):
        assert answer.returncode != 0
        assert "built without HTTPS interception" in answer.stderr and "make build" in answer.stderr, answer.stderr
    listed = ctl(proxy, "intercept", "--list")
    assert listed.returncode == 0 and "no host is intercepted" in listed.stdout, listed.stdout
