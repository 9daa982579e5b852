"""WebSocket through the proxy: a handshake becomes a stream task that relays both ways after the
origin's 101. Plain `ws://` as an absolute-form GET with Upgrade (a raw client: the form most
libraries do not use, and the one that used to lose its Upgrade header), and `wss://` inside an
intercepted connection with websocket-client, the origin verified over TLS by afproxy. Bad
input: an origin that declines (its answer reaches the client, nothing more of the client's
reaches the origin), a handshake with a body, an origin whose certificate does not verify."""

from __future__ import annotations

import hashlib
import os
import random
import socket
import ssl

import pytest
import websocket

from helpers import ca_path, key_pin, wait_for
from range_origin import make_self_signed
from ws_origin import WebSocketOrigin, accept_key, frame, read_frame, read_head

KEY = "dGhlIHNhbXBsZSBub25jZQ=="


@pytest.fixture
def ws_origin():
    o = WebSocketOrigin()
    yield o
    o.stop()


@pytest.fixture
def wss_origin(tls_files):
    o = WebSocketOrigin(tls=tls_files.server_context())
    yield o
    o.stop()


def handshake(url: str, extra: str = "") -> bytes:
    return (f"GET {url} HTTP/1.1\r\nHost: {url.split('/')[2]}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
            f"{extra}\r\n").encode()


def ws_tasks(proxy, scheme: str = "ws://") -> list[dict]:
    return [t for t in proxy.tasks(all=True) if t["url"].startswith(scheme)]


def ended(proxy, task_id: int) -> dict:
    return wait_for(lambda: (lambda t: t if t["state"] == "completed" else None)(proxy.task(task_id)), timeout=20)


def test_ws_upgrade_through_the_proxy_relays_both_ways(proxy, ws_origin):
    url = f"http://127.0.0.1:{ws_origin.port}/echo?room=1"
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
    sock.sendall(handshake(url))
    head, rest = read_head(sock)
    assert head.startswith(b"HTTP/1.1 101 "), head
    assert f"Sec-WebSocket-Accept: {accept_key(KEY)}".encode() in head
    assert rest == b""
    # What the origin read: origin form, Upgrade and Connection kept, Via added, Host from the URL.
    sent = ws_origin.heads[0].decode()
    assert sent.startswith("GET /echo?room=1 HTTP/1.1\r\n"), sent
    assert "Upgrade: websocket" in sent and "Connection: Upgrade" in sent and "Via: 1.1 " in sent
    assert f"Host: 127.0.0.1:{ws_origin.port}" in sent

    rng = random.Random(4242)
    sent_bytes = 0
    for size in (5, 200, 70_000, 1 << 20):
        message = rng.randbytes(size)
        sock.sendall(frame(2, message, mask=True))
        opcode, echoed = read_frame(sock)
        assert opcode == 2
        assert hashlib.sha256(echoed).hexdigest() == hashlib.sha256(message).hexdigest()
        sent_bytes += size
    sock.sendall(frame(1, "héllo".encode(), mask=True))
    assert read_frame(sock) == (1, "héllo".encode())

    [task] = ws_tasks(proxy)
    assert task["kind"] == "stream" and task["method"] == "GET"
    assert task["url"] == f"ws://127.0.0.1:{ws_origin.port}/echo?room=1"
    assert task["status"] == 101 and task["state"] == "running"
    assert task["download"]["completed"] > sent_bytes  # the 101 and the echoes
    assert task["upload"]["completed"] > sent_bytes    # the handshake and the masked frames

    sock.sendall(frame(8, b"\x03\xe8", mask=True))
    assert read_frame(sock)[0] == 8
    assert sock.recv(10) == b""  # the origin closed, and so did the tunnel
    sock.close()
    done = ended(proxy, task["id"])
    assert done["status"] == 101 and done.get("errorCode") is None
    status, har = proxy.api("GET", "/v1/har?all=1")
    assert status == 200
    [entry] = [e for e in har["log"]["entries"] if e["_taskId"] == task["id"]]
    assert entry["request"]["method"] == "GET" and entry["request"]["url"] == task["url"]
    assert entry["response"]["status"] == 101 and entry["response"]["statusText"] == "Switching Protocols"
    assert entry["response"]["bodySize"] == done["download"]["completed"]
    proxy.wait_idle()


def test_a_declined_upgrade_answers_and_carries_nothing_more(proxy, ws_origin):
    url = f"http://127.0.0.1:{ws_origin.port}/elsewhere"
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
    # A second request right behind the handshake: after a 404, it must not reach the origin
    # through the tunnel, where no task would see it.
    sock.sendall(handshake(url) + f"GET /sneaked HTTP/1.1\r\nHost: 127.0.0.1:{ws_origin.port}\r\n\r\n".encode())
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    assert data.startswith(b"HTTP/1.1 404 "), data
    assert data.endswith(b"no WebSocket here")
    assert ws_origin.requests == ["GET /elsewhere HTTP/1.1"]
    [task] = ws_tasks(proxy)
    done = ended(proxy, task["id"])
    assert done["status"] == 404
    proxy.wait_idle()


def test_a_handshake_with_a_body_is_refused(proxy, ws_origin):
    url = f"http://127.0.0.1:{ws_origin.port}/echo"
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
    sock.sendall(handshake(url, "Content-Length: 5\r\n") + b"hello")
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    assert data.startswith(b"HTTP/1.1 400 "), data
    assert b"carries no body" in data
    assert ws_origin.requests == []


def test_other_upgrades_are_still_declined(proxy, origin):
    """h2c is not WebSocket: Upgrade is dropped and the origin answers in HTTP/1.1."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
    sock.sendall(f"GET {origin.url('/bytes/10')} HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n"
                 "Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n".encode())
    head, _ = read_head(sock)
    sock.close()
    assert head.startswith(b"HTTP/1.1 200 "), head


def intercepting_proxy(start_proxy, tls_files, origin_port: int, trust: bool = True):
    args = ["--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(origin_port)]
    if trust:
        args += ["--tls-ca-file", tls_files.ca_cert]
    proxy = start_proxy(*args)
    return proxy, ca_path(proxy)


def test_wss_inside_an_intercepted_connection(start_proxy, tls_files, wss_origin):
    proxy, ca = intercepting_proxy(start_proxy, tls_files, wss_origin.port)
    ws = websocket.create_connection(
        f"wss://127.0.0.1:{wss_origin.port}/echo", http_proxy_host="127.0.0.1", http_proxy_port=proxy.port,
        proxy_type="http", sslopt={"ca_certs": ca}, timeout=20)
    rng = random.Random(77)
    for size in (10, 100_000, 1 << 20):
        message = rng.randbytes(size)
        ws.send_binary(message)
        assert hashlib.sha256(ws.recv()).hexdigest() == hashlib.sha256(message).hexdigest()
    ws.send("text")
    assert ws.recv() == "text"
    [child] = ws_tasks(proxy, "wss://")
    assert child["url"] == f"wss://127.0.0.1:{wss_origin.port}/echo" and child["status"] == 101
    parent = proxy.task(child["parent"])
    assert parent["method"] == "CONNECT" and parent["requests"] == 1
    ws.close()
    assert ended(proxy, child["id"])["status"] == 101
    proxy.wait_idle()


def test_wss_to_an_origin_that_does_not_verify(start_proxy, tls_files, wss_origin):
    """The daemon does not trust the origin's CA: the client gets a 502 inside its TLS, the task
    says tls-verify-failed, and no byte of the origin's reaches the client."""
    proxy, ca = intercepting_proxy(start_proxy, tls_files, wss_origin.port, trust=False)
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(
            f"wss://127.0.0.1:{wss_origin.port}/echo", http_proxy_host="127.0.0.1", http_proxy_port=proxy.port,
            proxy_type="http", sslopt={"ca_certs": ca}, timeout=20)
    assert refused.value.status_code == 502
    [child] = wait_for(lambda: [t for t in ws_tasks(proxy, "wss://") if t["state"] == "completed"] or None)
    assert child["errorCode"] == "tls-verify-failed", child
    assert wss_origin.requests == []


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 that no CA vouches for: (cert, key)."""
    return make_self_signed(tmp_path_factory.mktemp("ws-self-signed"))


@pytest.mark.parametrize("origin_cert, rule, expected", [
    ("self-signed", "standalone", None),              # the pin alone decides
    ("self-signed", "", "tls-verify-failed"),         # a pin without standalone needs the chain too
    ("self-signed", "wrong standalone", "tls-pin-mismatch"),
    ("trusted", "", None),                            # chain verified, then the key checked
    ("trusted", "wrong", "tls-pin-mismatch"),
])
def test_wss_origins_are_held_to_their_pins(start_proxy, tls_files, self_signed, origin_cert, rule, expected):
    cert, key = self_signed if origin_cert == "self-signed" else (tls_files.cert, tls_files.key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    origin = WebSocketOrigin(tls=context)
    try:
        pin = "sha256//" + "A" * 43 + "=" if rule.startswith("wrong") else key_pin(cert)
        line = f"127.0.0.1 {pin}" + (" standalone" if rule.endswith("standalone") else "")
        proxy = start_proxy("--intercept-hosts", "127.0.0.1", "--allow-connect-port", str(origin.port),
                            "--tls-ca-file", tls_files.ca_cert, "--pin", line)
        ca = ca_path(proxy)
        connect = dict(http_proxy_host="127.0.0.1", http_proxy_port=proxy.port, proxy_type="http",
                       sslopt={"ca_certs": ca}, timeout=20)
        url = f"wss://127.0.0.1:{origin.port}/echo"
        if expected is None:
            ws = websocket.create_connection(url, **connect)
            ws.send("pinned")
            assert ws.recv() == "pinned"
            ws.close()
        else:
            with pytest.raises(websocket.WebSocketBadStatusException) as refused:
                websocket.create_connection(url, **connect)
            assert refused.value.status_code == 502
            [child] = wait_for(lambda: [t for t in ws_tasks(proxy, "wss://") if t["state"] == "completed"] or None)
            assert child["errorCode"] == expected, child
            assert origin.requests == []
    finally:
        origin.stop()
