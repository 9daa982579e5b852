"""The local CA of HTTPS interception through the real daemon and afproxyctl: made on first use in
ca-dir, its fingerprint as openssl prints it, the key 0600 and never shown, replaced on demand, and a
broken key reported without stopping the proxy."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess

import pytest

from helpers import assert_serves, ctl

FINGERPRINT = re.compile(r"^sha256:\s+([0-9A-F:]+)$", re.M)
CERTIFICATE = re.compile(r"^certificate:\s+(\S+)$", re.M)


@pytest.fixture(autouse=True)
def _needs_afproxyctl(afproxyctl_bin):
    """Every test here needs the CLI binary (fails clearly when it is not built)."""


def ok(r: subprocess.CompletedProcess, what: str) -> str:
    assert r.returncode == 0, f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def openssl_fingerprint(path: str) -> str:
    out = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", path],
                         capture_output=True, text=True, check=True).stdout
    return out.strip().split("=", 1)[1]


def key_body(path: str) -> str:
    """The key's base64 lines, as they would appear were it leaked anywhere."""
    with open(path) as f:
        return "".join(line.strip() for line in f if not line.startswith("-----"))


def test_ca_is_made_on_first_use_and_matches_openssl(start_proxy, tmp_path):
    ca_dir = tmp_path / "ca"
    proxy = start_proxy("--ca-dir", str(ca_dir))
    assert not ca_dir.exists(), "the CA must not be made before it is asked for"
    out = ok(ctl(proxy, "ca"), "afproxyctl ca")
    path = CERTIFICATE.search(out).group(1)
    assert path == str(ca_dir / "ca-cert.pem")
    assert FINGERPRINT.search(out).group(1) == openssl_fingerprint(path)
    assert stat.S_IMODE(os.stat(ca_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(ca_dir / "ca-key.pem").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    with open(path) as f:
        assert ok(ctl(proxy, "ca", "--pem"), "afproxyctl ca --pem") == f.read()
    # openssl agrees it is a CA of this machine
    text = subprocess.run(["openssl", "x509", "-noout", "-text", "-in", path],
                          capture_output=True, text=True, check=True).stdout
    assert "CA:TRUE" in text and "Certificate Sign" in text and "afproxy local CA" in text
    subprocess.run(["openssl", "verify", "-CAfile", path, path], check=True, capture_output=True)
    # the same CA after a restart
    proxy.stop(by_test=True)
    again = start_proxy("--ca-dir", str(ca_dir))
    assert FINGERPRINT.search(ok(ctl(again, "ca"), "afproxyctl ca")).group(1) == openssl_fingerprint(path)


def test_the_ca_is_under_the_state_directory_by_default(start_proxy, tmp_path):
    state = tmp_path / "state"
    proxy = start_proxy("--state-dir", str(state))
    out = ok(ctl(proxy, "ca"), "afproxyctl ca")
    assert CERTIFICATE.search(out).group(1) == str(state / "ca" / "ca-cert.pem")


def test_regenerate_replaces_the_ca(start_proxy, tmp_path):
    ca_dir = tmp_path / "ca"
    proxy = start_proxy("--ca-dir", str(ca_dir))
    first = FINGERPRINT.search(ok(ctl(proxy, "ca"), "afproxyctl ca")).group(1)
    old_key = key_body(str(ca_dir / "ca-key.pem"))
    second = FINGERPRINT.search(ok(ctl(proxy, "ca", "--regenerate"), "afproxyctl ca --regenerate")).group(1)
    assert second != first
    assert second == openssl_fingerprint(str(ca_dir / "ca-cert.pem"))
    assert key_body(str(ca_dir / "ca-key.pem")) != old_key
    assert stat.S_IMODE(os.stat(ca_dir / "ca-key.pem").st_mode) == 0o600
    assert FINGERPRINT.search(ok(ctl(proxy, "ca"), "afproxyctl ca")).group(1) == second


def test_the_key_appears_in_no_answer_nor_log(start_proxy, tmp_path, origin):
    ca_dir = tmp_path / "ca"
    proxy = start_proxy("--ca-dir", str(ca_dir), "--log-level", "debug")
    ok(ctl(proxy, "ca"), "afproxyctl ca")
    ok(ctl(proxy, "ca", "--regenerate"), "afproxyctl ca --regenerate")
    assert_serves(proxy, origin, n=10)
    body = key_body(str(ca_dir / "ca-key.pem"))
    assert len(body) > 100
    pieces = [body[i:i + 32] for i in range(0, len(body) - 32, 32)]
    answers = [json.dumps(proxy.api("GET", path)[1]) for path in ("/v1/ca", "/v1/status", "/v1/tasks?all=1")]
    answers += [ok(ctl(proxy, "ca", "--json"), "afproxyctl ca --json"), proxy.log()]
    for text in answers:
        assert "PRIVATE KEY" not in text
        assert not any(piece in text for piece in pieces)
    # the certificate, by contrast, is served
    assert proxy.api("GET", "/v1/ca")[1]["certificatePEM"].startswith("-----BEGIN CERTIFICATE-----")


def test_a_garbage_key_is_reported_and_the_proxy_still_serves(start_proxy, tmp_path, origin):
    ca_dir = tmp_path / "ca"
    first = start_proxy("--ca-dir", str(ca_dir))
    ok(ctl(first, "ca"), "afproxyctl ca")
    first.stop(by_test=True)
    (ca_dir / "ca-key.pem").write_text("-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n")
    proxy = start_proxy("--ca-dir", str(ca_dir))
    assert "ca-key.pem is not a PEM P-256 private key" in proxy.log()
    r = ctl(proxy, "ca")
    assert r.returncode == 1, r
    assert f"{ca_dir}/ca-key.pem is not a PEM P-256 private key" in r.stderr
    assert_serves(proxy, origin, n=10)
    # --regenerate is the way out
    out = ok(ctl(proxy, "ca", "--regenerate"), "afproxyctl ca --regenerate")
    assert FINGERPRINT.search(out).group(1) == openssl_fingerprint(str(ca_dir / "ca-cert.pem"))


def test_the_help_says_how_to_trust_the_ca(start_proxy):
    out = ok(ctl(None, "ca", "--help"), "afproxyctl ca --help")
    for needle in ("update-ca-certificates", "certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n afproxy -i FILE",
                   "--cacert", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
        assert needle in out


def test_ca_dir_comes_from_the_environment_or_the_config_file(start_proxy, tmp_path):
    from_env = start_proxy(env={"AFPROXY_CA_DIR": str(tmp_path / "env-ca")})
    out = ok(ctl(from_env, "ca"), "afproxyctl ca")
    assert CERTIFICATE.search(out).group(1) == str(tmp_path / "env-ca" / "ca-cert.pem")
    conf = tmp_path / "afproxy.conf"
    conf.write_text(f"ca-dir = {tmp_path / 'file-ca'}\n")
    from_file = start_proxy("--config", str(conf))
    out = ok(ctl(from_file, "ca"), "afproxyctl ca")
    assert CERTIFICATE.search(out).group(1) == str(tmp_path / "file-ca" / "ca-cert.pem")
