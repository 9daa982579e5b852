"""Interception's edge cases, tried with hostile and old clients: bytes that are not TLS never
switch interception off for a host; a client's alert sent in the clear is named; a client that
completes the handshake (or takes afproxy's flight) and goes away without a word is a likely
rejection, passed through on a repeat; the client's Finished is acknowledged at once; a client
that offers only RSA gets an RSA certificate. Every client runs on 127.0.0.1 against origin.py
over TLS (the tls_origin fixture)."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys

import pytest

from helpers import ca_path, connect_through, ctl, curl, send_after_connect, wait_for

# ----------------------------------------------------------------------------------------------
# fixtures and helpers


@pytest.fixture
def intercepting(start_proxy, tls_origin, tls_files):
    """Factory: a daemon that intercepts 127.0.0.1, trusts the test CA for the origin and allows
    CONNECT to its port; extra flags go on top."""

    def start(*extra: str):
        return start_proxy("--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(tls_origin.port),
                           "--tls-ca-file", tls_files.ca_cert, *extra)

    return start


def connect(proxy, tls_origin) -> socket.socket:
    """A socket through the proxy's CONNECT to the origin, the 200 read."""
    return connect_through(proxy, f"127.0.0.1:{tls_origin.port}")


def streams(proxy) -> list[dict]:
    return [t for t in proxy.tasks(all=True) if t["kind"] == "stream"]


def ended_streams(proxy, count: int) -> list[dict]:
    """The stream tasks, once `count` of them have completed."""
    def done():
        ended = [t for t in streams(proxy) if t["state"] == "completed"]
        return ended if len(ended) >= count else None
    return wait_for(done, timeout=20, message=lambda: f"{count} completed stream tasks: {streams(proxy)}")


def passthrough(proxy) -> list[dict]:
    status, body = proxy.api("GET", "/v1/intercept")
    assert status == 200, body
    return body["passthrough"]


def still_intercepted(proxy, tls_origin) -> None:
    """A client that trusts afproxy's CA still gets its request made a task of its own."""
    result = curl(proxy, "--cacert", ca_path(proxy), tls_origin.url("/bytes/100"))
    assert result.returncode == 0, result.stderr
    wait_for(lambda: [t for t in proxy.tasks(all=True) if t["url"] == tls_origin.url("/bytes/100")] or None)


def handshake_and_close(proxy, tls_origin, ca: str) -> None:
    """A client that trusts afproxy's CA, completes the handshake and closes without a request:
    what a client pinning its server's key does."""
    sock = connect(proxy, tls_origin)
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False
    with context.wrap_socket(sock) as tls:
        assert tls.version() is not None


def flight_and_close(proxy, tls_origin) -> None:
    """A client that sends its ClientHello, reads afproxy's whole first flight and closes without
    a word (no alert): a TLS 1.3 client that sees a certificate it does not want."""
    sock = connect(proxy, tls_origin)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    tls = context.wrap_bio(incoming, outgoing)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    sock.sendall(outgoing.read())
    received = b""
    # ServerHello, ChangeCipherSpec, then the encrypted flight: read until an application-data
    # record (type 23) is whole.
    while True:
        chunk = sock.recv(65536)
        assert chunk, "afproxy closed before its flight"
        received += chunk
        if has_application_data_record(received):
            break
    sock.close()


def has_application_data_record(data: bytes) -> bool:
    offset = 0
    while offset + 5 <= len(data):
        length = int.from_bytes(data[offset + 3:offset + 5], "big")
        if data[offset] == 23 and offset + 5 + length <= len(data):
            return True
        offset += 5 + length
    return False


# ----------------------------------------------------------------------------------------------
# 1. bytes that are not TLS


@pytest.mark.parametrize("sent", [os.urandom(512), b"SSH-2.0-OpenSSH_9.2\r\n"], ids=["random-512", "ssh-banner"])
def test_bytes_that_are_not_tls_never_pass_the_host_through(intercepting, tls_origin, sent):
    """Whatever a local program sends after its CONNECT, if it is not a ClientHello afproxy answered
    with its certificate, interception of the host stays on for every client."""
    proxy = intercepting()
    ca_path(proxy)
    for _ in range(3):
        send_after_connect(proxy, f"127.0.0.1:{tls_origin.port}", sent)
    for stream in ended_streams(proxy, 3):
        assert stream["errorCode"] == "client-tls-failed", stream
        assert "not a TLS handshake" in stream["error"], stream["error"]
        assert "passed through" not in stream["error"], stream["error"]
    assert passthrough(proxy) == []
    assert "passthrough  127.0.0.1" not in ctl(proxy, "intercept", "--list").stdout
    still_intercepted(proxy, tls_origin)


# ----------------------------------------------------------------------------------------------
# 3. the alert a client sent, named


@pytest.mark.parametrize("client", ["python-tls13", "curl-tls12"])
def test_an_unknown_ca_alert_is_named_and_is_the_pass_throughs_reason(intercepting, tls_origin, tls_files, client):
    """A client that trusts only the origin's CA refuses afproxy's leaf with unknown_ca: in TLS 1.3
    Python (OpenSSL) sends it in the clear where BoringSSL expects an encrypted record; in TLS 1.2
    BoringSSL reads it itself. Either way the stream task names the alert, and `intercept --list`
    gives it as the pass-through's reason."""
    proxy = intercepting()
    ca_path(proxy)
    if client == "python-tls13":
        sock = connect(proxy, tls_origin)
        context = ssl.create_default_context(cafile=tls_files.ca_cert)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(sock, server_hostname="127.0.0.1")
        sock.close()
    else:
        refused = curl(proxy, "--tls-max", "1.2", "--cacert", tls_files.ca_cert, tls_origin.url("/bytes/10"))
        assert refused.returncode == 60, refused.stderr
    stream = ended_streams(proxy, 1)[0]
    assert stream["errorCode"] == "client-tls-failed"
    assert "TLS alert unknown_ca" in stream["error"], stream["error"]
    assert "BAD_PACKET_LENGTH" not in stream["error"]
    listing = ctl(proxy, "intercept", "--list").stdout
    assert "passthrough  127.0.0.1" in listing, listing
    assert "the client sent TLS alert unknown_ca after afproxy's certificate" in listing, listing


# ----------------------------------------------------------------------------------------------
# 4. a client that goes away without a word


def test_a_client_that_closes_after_the_certificate_twice_is_passed_through(intercepting, tls_origin):
    """A client that takes afproxy's flight and closes without an alert, then one that completes
    the handshake and closes without a request (a pinned key): each stream task ends with
    client-rejected-certificate naming the host; the first leaves the host intercepted, the
    second passes it through, with the reason listed."""
    proxy = intercepting()
    ca = ca_path(proxy)
    flight_and_close(proxy, tls_origin)
    first = ended_streams(proxy, 1)[0]
    assert first["errorCode"] == "client-rejected-certificate", first
    assert "127.0.0.1" in first["error"] and "may not trust" in first["error"], first["error"]
    assert passthrough(proxy) == []

    handshake_and_close(proxy, tls_origin, ca)
    second = [t for t in ended_streams(proxy, 2) if t["id"] != first["id"]][0]
    assert second["errorCode"] == "client-rejected-certificate", second
    assert "completed the TLS handshake for 127.0.0.1" in second["error"], second["error"]
    assert "passed through" in second["error"], second["error"]
    entries = passthrough(proxy)
    assert [e["host"] for e in entries] == ["127.0.0.1"], entries
    assert "without an alert or a request, twice within 600 s" in entries[0]["reason"], entries
    assert "twice within 600 s" in ctl(proxy, "intercept", "--list").stdout


def test_clients_that_send_a_request_are_never_counted_as_rejections(intercepting, tls_origin):
    """Normal clients complete the handshake, send a request and close, over and over: no
    rejection, no pass-through."""
    proxy = intercepting()
    ca = ca_path(proxy)
    for n in range(3):
        result = curl(proxy, "--cacert", ca, tls_origin.url(f"/bytes/{n + 1}"))
        assert result.returncode == 0, result.stderr
    for stream in ended_streams(proxy, 3):
        assert stream["errorCode"] is None, stream
    assert passthrough(proxy) == []


# ----------------------------------------------------------------------------------------------
# 2. the client's Finished acknowledged at once

# A client in the daemon's network namespace: COUNT intercepted TLS 1.3 handshakes with Nagle's
# algorithm on (Python's default, as requests and pip leave it), each waiting until its Finished
# is acknowledged (tcpi_unacked 0, polled), then closing without a request. Prints the
# namespace's TcpExt DelayedACKs before and after: ACKs the kernel sent on its delayed-ACK timer
# rather than at once.
DELAYED_ACK_CLIENT = r"""
import socket, ssl, struct, sys, time
port, ca, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

def delayed_acks():
    lines = open("/proc/net/netstat").read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split()[1:], values.split()[1:]))["DelayedACKs"])

def unacked(sock):
    return struct.unpack_from("I", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 24)[0]

context = ssl.create_default_context(cafile=ca)
context.minimum_version = ssl.TLSVersion.TLSv1_3
before = delayed_acks()
for _ in range(count):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n")
    answer = b""
    while not answer.endswith(b"\r\n\r\n"):
        answer += sock.recv(1)
    assert answer.startswith(b"HTTP/1.1 200"), answer
    tls = context.wrap_socket(sock, server_hostname="127.0.0.1")
    deadline = time.monotonic() + 10
    while unacked(tls) and time.monotonic() < deadline:
        time.sleep(0.001)
    assert unacked(tls) == 0
    tls.close()
print(before, delayed_acks())
"""


def test_the_clients_finished_is_acknowledged_at_once(start_proxy, tmp_path):
    """afproxy writes nothing after a TLS 1.3 client's Finished (BoringSSL holds its session
    tickets back until the first write), so without more the kernel delays its ACK and a client
    with Nagle on holds its request back until the timer fires: a delayed-ACK wait on every new
    intercepted connection. afproxy asks for the ACK at once (TCP_QUICKACK) when the handshake
    completes. Run in a network namespace of its own, so that the kernel's count of delayed ACKs
    is this daemon's and this client's alone."""
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no network namespace for an unprivileged user here: {probe.stderr!r}")
    wrapper = ("unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0" "$@"')
    # Handshakes closed without a request count as rejections: keep the host intercepted anyway.
    proxy = start_proxy("--intercept-hosts", "127.0.0.1", "--intercept-auto-passthrough", "no", wrapper=wrapper)
    ca = ca_path(proxy)
    count = 20
    result = subprocess.run(
        ["nsenter", "--preserve-credentials", "-U", "-n", "-t", str(proxy.pid), sys.executable, "-c",
         DELAYED_ACK_CLIENT, str(proxy.port), ca, str(count)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    before, after = map(int, result.stdout.split())
    # Without it, each handshake costs one delayed ACK; a stray one may still happen.
    assert after - before < count // 4, (before, after)
    streams_ = ended_streams(proxy, count)
    assert all(s["metrics"]["tlsMs"] is not None for s in streams_)


# ----------------------------------------------------------------------------------------------
# 5. clients that offer only RSA


def test_a_client_that_offers_only_rsa_gets_an_rsa_leaf(intercepting, tls_origin):
    """curl limited to TLS 1.2 and ECDHE-RSA-AES128-GCM-SHA256 (as older embedded clients offer)
    completes the handshake with an RSA leaf minted by the same CA and gets its response; a
    second such client is served the cached leaf; a modern client on the same host still gets
    the P-256 one."""
    proxy = intercepting()
    ca = ca_path(proxy)
    for n in (1000, 2000):
        result = curl(proxy, "--cacert", ca, "--tls-max", "1.2", "--ciphers", "ECDHE-RSA-AES128-GCM-SHA256",
                      "-w", "%{http_code}", "-o", "/dev/null", tls_origin.url(f"/bytes/{n}"))
        assert result.returncode == 0, result.stderr
        assert result.stdout == b"200"
    for stream in ended_streams(proxy, 2):
        assert stream["errorCode"] is None, stream
    rsa = peer_certificate(proxy, tls_origin, ca, ciphers="ECDHE-RSA-AES128-GCM-SHA256")
    modern = peer_certificate(proxy, tls_origin, ca, ciphers=None)
    assert "rsaEncryption" in key_algorithm(rsa)
    assert "id-ecPublicKey" in key_algorithm(modern)
    assert rsa != modern


def peer_certificate(proxy, tls_origin, ca: str, ciphers: str | None) -> bytes:
    """The DER leaf afproxy shows a Python client; with `ciphers`, TLS 1.2 with only those."""
    sock = connect(proxy, tls_origin)
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False
    if ciphers:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(ciphers)
    with context.wrap_socket(sock) as tls:
        der = tls.getpeercert(binary_form=True)
        tls.sendall(f"GET /bytes/1 HTTP/1.1\r\nHost: 127.0.0.1:{tls_origin.port}\r\n"
                    "Connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := tls.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer
    return der


def key_algorithm(der: bytes) -> str:
    text = subprocess.run(["openssl", "x509", "-inform", "der", "-noout", "-text"], input=der,
                          capture_output=True, check=True).stdout.decode()
    return next(line for line in text.splitlines() if "Public Key Algorithm" in line)


# ----------------------------------------------------------------------------------------------
# openssl s_client through the proxy's CONNECT (-proxy)


def s_client(proxy, tls_origin, ca: str, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        ["openssl", "s_client", "-proxy", f"127.0.0.1:{proxy.port}", "-connect", f"127.0.0.1:{tls_origin.port}",
         "-CAfile", ca, "-verify_return_error", *args],
        input=stdin, capture_output=True, timeout=60)


def test_openssl_s_client_offering_only_rsa_is_served(intercepting, tls_origin):
    proxy = intercepting()
    ca = ca_path(proxy)
    request = f"GET /bytes/10 HTTP/1.1\r\nHost: 127.0.0.1:{tls_origin.port}\r\nConnection: close\r\n\r\n"
    result = s_client(proxy, tls_origin, ca, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256", "-ign_eof",
                      stdin=request.encode())
    out = result.stdout.decode(errors="replace")
    assert result.returncode == 0, result.stderr
    assert "Server public key is 2048 bit" in out, out
    assert "Cipher is ECDHE-RSA-AES128-GCM-SHA256" in out, out
    assert "Verify return code: 0 (ok)" in out, out
    assert "HTTP/1.1 200" in out, out


def test_openssl_s_client_that_only_shakes_hands_twice_passes_the_host_through(intercepting, tls_origin):
    """s_client with nothing to send completes the handshake and closes: the first time a likely
    rejection, the second a pass-through."""
    proxy = intercepting()
    ca = ca_path(proxy)
    for expected in (0, 1):
        result = s_client(proxy, tls_origin, ca)
        assert b"Verify return code: 0 (ok)" in result.stdout, result.stdout
        wait_for(lambda: len(passthrough(proxy)) == expected or None, timeout=20,
                 message=lambda: f"{expected} pass-through(s): {passthrough(proxy)}")
        ended = ended_streams(proxy, 1 + expected)
        assert all(s["errorCode"] == "client-rejected-certificate" for s in ended), ended
