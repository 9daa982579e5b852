"""Fixtures for the afproxy integration tests.

    afproxy_bin   the daemon binary: $AFPROXY_BIN, default <repo>/.build/debug/afproxy
    origin        the in-process test origin (origin.py), one per session
    afproxyctl_bin  the CLI binary: $AFPROXYCTL_BIN, default <repo>/.build/debug/afproxyctl
    start_proxy   factory: start_proxy(*extra_args, env=None, control_socket=None, wrapper=(),
                  default_flags=True) → a running daemon (stopped at teardown); control_socket
                  chooses the socket's path; wrapper is a command line put before the binary
                  (one that execs it); default_flags=False leaves out --listen/--control-socket
    proxy         a daemon with default flags
    tls_files     a test CA and a server certificate for 127.0.0.1/localhost, one per module
    tls_origin    origin.py over HTTPS with that certificate, one per module

Set AFPROXY_TEST_ARGS (e.g. "--log-level debug") to append flags to every daemon started.
The daemon's log is attached to the report of any failing test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import (  # noqa: F401  (re-exported for tests that import from conftest)
    AfproxyProcess, RawConn, afproxyctl_path, assert_serves, ctl, curl, curl_sha256, launch_afproxy,
    parse_status, raw, short_socket_dir, wait_for,
)
from origin import Origin, start_origin
from range_origin import TLSFiles, make_tls_files

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def afproxy_bin() -> str:
    path = Path(os.environ.get("AFPROXY_BIN", REPO / ".build" / "debug" / "afproxy"))
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(
            f"afproxy binary not found (or not executable) at {path}. "
            "Build it with `swift build` in the repository, or point AFPROXY_BIN at it.",
            pytrace=False,
        )
    return str(path)


@pytest.fixture(scope="session")
def afproxyctl_bin() -> str:
    path = Path(afproxyctl_path())
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(
            f"afproxyctl binary not found (or not executable) at {path}. "
            "Build it with `swift build` in the repository, or point AFPROXYCTL_BIN at it.",
            pytrace=False,
        )
    return str(path)


@pytest.fixture(scope="session")
def origin() -> Origin:
    o = start_origin()
    yield o
    o.stop()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> TLSFiles:
    return make_tls_files(tmp_path_factory.mktemp("origin-tls"))


@pytest.fixture(scope="module")
def tls_origin(tls_files) -> Origin:
    """origin.py's endpoints over HTTPS on 127.0.0.1, its certificate from the test CA."""
    o = start_origin(tls=tls_files.server_context())
    yield o
    o.stop()


@pytest.fixture
def origin_v6() -> Origin:
    """The same origin on ::1; skipped where this machine has no IPv6 loopback."""
    try:
        o = start_origin(ipv6=True)
    except OSError as error:
        pytest.skip(f"no IPv6 loopback here: {error}")
    yield o
    o.stop()


@pytest.fixture
def start_proxy(afproxy_bin, tmp_path, request):
    """Factory: start_proxy(*args, env=None, control_socket=None, wrapper=(), default_flags=True)
    starts a daemon with extra flags (and its control socket at `control_socket`, default a fresh
    path in the test's directory), behind `wrapper` if given.

    At teardown every daemon must still be running (unless the test stopped it itself with
    `proxy.stop(by_test=True)`): a daemon that died during a test fails the test.
    """
    started: list[AfproxyProcess] = []
    request.node._afproxies = started
    sock_dir = short_socket_dir(tmp_path)

    def start(*args: str, env: dict[str, str] | None = None, control_socket: str | None = None,
              wrapper: tuple[str, ...] = (), default_flags: bool = True) -> AfproxyProcess:
        control = control_socket or str(sock_dir / f"control-{len(started):02d}.sock")
        p = launch_afproxy(afproxy_bin, control, tuple(str(a) for a in args), env=env,
                           wrapper=tuple(wrapper), default_flags=default_flags)
        started.append(p)
        return p

    yield start

    crashed = []
    for p in started:
        rc = p.proc.poll()
        if rc is not None and not p.stopped_by_test:
            crashed.append(f"afproxy pid {p.pid} exited with status {rc} during the test")
        p.stop()
    if crashed:
        pytest.fail("; ".join(crashed), pytrace=False)


@pytest.fixture
def proxy(start_proxy) -> AfproxyProcess:
    return start_proxy()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attaches the daemon logs to the report of a failed test (setup, call or teardown)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for p in getattr(item, "_afproxies", []):
            lines = p.stderr_lines[-400:]
            status = "running" if p.alive() else f"exited {p.proc.returncode}"
            report.sections.append(
                (f"afproxy pid {p.pid} ({status}) log, {report.when}",
                 f"argv: {' '.join(p.argv)}\n" + "\n".join(lines)))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "network_policy: what a loss of the network does to the tasks (test_reachability.py); "
        "run them alone with -m network_policy")
