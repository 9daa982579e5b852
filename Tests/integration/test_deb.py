"""The Debian package (issue 25), on this machine as a user would meet it: scripts/make-deb builds it
from the binaries under test (linked with the static Swift standard library, see
scripts/test) and lintian passes it; `dpkg -i` installs it; the installed config checks, the
installed units verify, the installed daemon proxies a request byte for byte and afproxyctl sees
it; the man pages and completions are where man and the shells look; `dpkg -r` keeps the edited
conffile and `dpkg --purge` removes every file, the config and the service's state.

Installs into the real root: it runs only as root and on Debian's dpkg, and purges a package left
by an earlier run first. Not under a sanitizer: packaging is the same for every build, and the
sanitized binaries are neither static nor meant to be installed."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import afproxyctl_path, curl_sha256, launch_afproxy, short_socket_dir, skip_under_sanitizer, wait_for
from origin import payload_sha256

REPO = Path(__file__).resolve().parents[2]
UNITS = ("afproxy.service", "afproxy.socket", "afproxy-control.socket")
SYSTEM_UNIT_DIR = Path("/lib/systemd/system")
# A template: started by the services `afproxyctl capture` names, never enabled by the package.
CAPTURE_UNIT = "afproxy-capture@.service"
STATE = (Path("/var/lib/private/afproxy"), Path("/var/lib/afproxy"), Path("/run/afproxy"))

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root"),
    pytest.mark.skipif(shutil.which("dpkg-buildpackage") is None, reason="dpkg-dev is not installed"),
    skip_under_sanitizer("the package holds the plain build; sanitized binaries are not for installing"),
]


def run(*argv: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def ok(r: subprocess.CompletedProcess, what: str) -> str:
    assert r.returncode == 0, f"{what} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


def installed() -> bool:
    r = run("dpkg-query", "-W", "-f=${db:Status-Status}", "afproxy")
    return r.returncode == 0 and r.stdout.strip() not in ("", "not-installed")


def purge() -> None:
    if installed():
        ok(run("dpkg", "--purge", "afproxy"), "dpkg --purge afproxy")


@pytest.fixture(scope="module")
def deb(afproxy_bin, tmp_path_factory) -> Path:
    """The package, built by `make deb-files` from the binaries under test."""
    builddir = Path(afproxy_bin).parent
    linked = ok(run("readelf", "-d", afproxy_bin), "readelf")
    if "libswiftCore" in linked:
        pytest.fail(f"{afproxy_bin} loads the Swift runtime from the toolchain; the package needs it "
                    "linked statically: `make static-debug` first (scripts/test does)", pytrace=False)
    outdir = tmp_path_factory.mktemp("deb")
    # gzip at its fastest: xz takes minutes over the 130 MB of debug binaries (packaging/debian/rules).
    made = run("make", "-s", "-C", str(REPO), "deb-files", f"BUILDDIR={builddir}", f"DEBDIR={outdir}",
               timeout=900, env={**os.environ, "AFPROXY_DEB_COMPRESSION": "gzip"})
    ok(made, "make deb-files")
    debs = sorted(outdir.glob("afproxy_*.deb"))
    assert len(debs) == 1, f"expected one package in {outdir}: {debs}"
    # scripts/make-deb ends with lintian --fail-on error,warning; what it printed is kept here.
    (outdir / "make.out").write_text(made.stdout + made.stderr)
    return debs[0]


@pytest.fixture(scope="module")
def package(deb):
    """The package installed with dpkg -i (over nothing: a leftover of an earlier run is purged)."""
    purge()
    ok(run("dpkg", "-i", str(deb)), "dpkg -i")
    files = [Path(line) for line in ok(run("dpkg", "-L", "afproxy"), "dpkg -L").splitlines()]
    yield files
    purge()


def test_name_version_and_dependencies(afproxy_bin, deb):
    version = ok(run(afproxy_bin, "--version"), "afproxy --version").strip()
    arch = ok(run("dpkg", "--print-architecture"), "dpkg --print-architecture").strip()
    assert deb.name == f"afproxy_{version}_{arch}.deb"
    depends = ok(run("dpkg-deb", "-f", str(deb), "Depends"), "dpkg-deb -f")
    names = {d.strip().split()[0] for d in depends.replace("|", ",").split(",")}
    assert {"libc6", "libcurl4", "libsystemd0"} <= names, depends
    assert not any("swift" in n for n in names), depends


def test_the_binaries_carry_no_icu(afproxy_bin):
    """Both binaries use FoundationEssentials only: one `import Foundation` (in any module of
    ours) links FoundationInternationalization and ICU's data, about 49 MB in each static binary."""
    for binary in (Path(afproxy_bin), Path(afproxyctl_path())):
        data = binary.read_bytes()
        assert b"FoundationInternationalization" not in data and b"_FoundationICU" not in data, \
            f"{binary} links Foundation's ICU: an `import Foundation` where FoundationEssentials would do?"


def test_lintian_reports_no_error_and_no_warning(deb):
    """make-deb fails on them (so the fixture would have failed) and says so once lintian passed."""
    out = (deb.parent / "make.out").read_text()
    assert "make-deb: lintian reports no error and no warning" in out, out
    assert not [line for line in out.splitlines() if line[:2] in ("E:", "W:")], out


def test_conffile_and_maintainer_scripts(deb, tmp_path):
    ok(run("dpkg-deb", "-e", str(deb), str(tmp_path / "control")), "dpkg-deb -e")
    assert (tmp_path / "control/conffiles").read_text().split() == ["/etc/afproxy/afproxy.conf"]
    postinst = (tmp_path / "control/postinst").read_text()
    # The service's user before its runtime directory that belongs to it.
    assert postinst.index("systemd-sysusers") < postinst.index("systemd-tmpfiles")
    for unit in UNITS:
        assert f"deb-systemd-helper enable '{unit}'" in postinst, f"{unit} not enabled by postinst"
    assert CAPTURE_UNIT not in postinst, postinst


def test_installed_files_are_where_debian_looks(package):
    expected = [
        "/usr/bin/afproxy", "/usr/bin/afproxyctl", "/etc/afproxy/afproxy.conf",
        *(f"/lib/systemd/system/{u}" for u in (*UNITS, CAPTURE_UNIT)), "/usr/lib/systemd/user/afproxy.service",
        "/usr/lib/sysusers.d/afproxy.conf", "/usr/lib/tmpfiles.d/afproxy.conf",
        "/usr/share/man/man8/afproxy.8.gz", "/usr/share/man/man1/afproxyctl.1.gz",
        "/usr/share/man/man5/afproxy.conf.5.gz",
        "/usr/share/bash-completion/completions/afproxy",
        "/usr/share/bash-completion/completions/afproxyctl",
        "/usr/share/zsh/vendor-completions/_afproxy", "/usr/share/zsh/vendor-completions/_afproxyctl",
        "/usr/share/fish/vendor_completions.d/afproxy.fish",
        "/usr/share/fish/vendor_completions.d/afproxyctl.fish",
        "/usr/share/doc/afproxy/README.md", "/usr/share/doc/afproxy/copyright",
        "/usr/share/doc/afproxy/changelog.gz", "/usr/share/doc/afproxy/docs/configuration.md",
    ]
    listed = set(map(str, package))
    missing = [p for p in expected if p not in listed or not Path(p).exists()]
    assert not missing, f"not installed: {missing}"
    # What the units' Documentation= names is there, uncompressed.
    service = (SYSTEM_UNIT_DIR / "afproxy.service").read_text()
    assert "Documentation=file:///usr/share/doc/afproxy/README.md\n" in service
    assert "ExecStart=/usr/bin/afproxy --config /etc/afproxy/afproxy.conf\n" in service
    hold = (SYSTEM_UNIT_DIR / CAPTURE_UNIT).read_text()
    assert "Documentation=file:///usr/share/doc/afproxy/docs/capture.md\n" in hold
    assert Path("/usr/share/doc/afproxy/docs/capture.md").is_file()
    assert "ExecStart=/usr/bin/afproxyctl --socket /run/afproxy/control.sock capture-hold %i\n" in hold


def test_system_units_enabled_and_the_user_unit_not(package):
    wants = Path("/etc/systemd/system")
    for link in ("sockets.target.wants/afproxy.socket", "sockets.target.wants/afproxy-control.socket",
                 "multi-user.target.wants/afproxy.service"):
        assert (wants / link).is_symlink(), f"{link} not enabled"
    # Enabled globally, a user unit would start a proxy in every user's session.
    assert not Path("/etc/systemd/user/default.target.wants/afproxy.service").exists()


def test_user_and_runtime_directory_made_by_the_package(package):
    user = pwd.getpwnam("afproxy")
    assert user.pw_uid < 1000 and user.pw_shell.endswith("nologin")
    run_dir = Path("/run/afproxy")
    assert run_dir.is_dir() and run_dir.stat().st_uid == user.pw_uid


def test_installed_config_checks_and_units_verify(package):
    out = ok(run("/usr/bin/afproxy", "--check-config", "/etc/afproxy/afproxy.conf"), "--check-config")
    assert out == "/etc/afproxy/afproxy.conf: valid\n", out
    r = run("systemd-analyze", "verify", *UNITS, CAPTURE_UNIT, cwd=SYSTEM_UNIT_DIR)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_installed_daemon_proxies_and_afproxyctl_sees_it(package, origin, tmp_path):
    control = str(short_socket_dir(tmp_path) / "control.sock")
    daemon = launch_afproxy("/usr/bin/afproxy", control, ("--config", "/etc/afproxy/afproxy.conf"))
    try:
        got = curl_sha256(daemon, origin.url("/bytes/1048576"))
        assert (got.size, got.sha256) == (1048576, payload_sha256(1048576))
        out = ok(run("/usr/bin/afproxyctl", "--socket", control, "list", "--all", timeout=30),
                 "afproxyctl list")
        assert "/bytes/1048576" in out
    finally:
        daemon.stop()


def test_man_and_completions_found_by_their_tools(package):
    if shutil.which("man"):
        for page, section in (("afproxy", "8"), ("afproxyctl", "1"), ("afproxy.conf", "5")):
            where = ok(run("man", "-w", section, page), f"man -w {section} {page}").strip()
            assert where == f"/usr/share/man/man{section}/{page}.{section}.gz"
    r = run("bash", "-c", "source /usr/share/bash-completion/completions/afproxyctl && complete -p afproxyctl")
    assert ok(r, "bash completion").startswith("complete ")


def test_remove_keeps_the_edited_conffile_and_purge_removes_everything(package):
    conffile = Path("/etc/afproxy/afproxy.conf")
    conffile.write_text(conffile.read_text() + "\n# edited by test_deb\n")
    # What the running service would have made: its state directory behind DynamicUser's link.
    STATE[0].mkdir(parents=True, exist_ok=True)
    (STATE[0] / "downloads.json").write_text("[]")
    if not STATE[1].exists():
        STATE[1].symlink_to("private/afproxy")

    ok(run("dpkg", "-r", "afproxy"), "dpkg -r")
    assert "# edited by test_deb" in conffile.read_text()
    assert not Path("/usr/bin/afproxy").exists()

    ok(run("dpkg", "--purge", "afproxy"), "dpkg --purge")
    assert not installed()
    left = [str(p) for p in package if p.exists() and not p.is_dir()]
    assert not left, f"left behind by dpkg --purge: {left}"
    assert not Path("/etc/afproxy").exists()
    assert not [str(p) for p in STATE if p.exists() or p.is_symlink()]
