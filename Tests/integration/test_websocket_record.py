"""WebSocket messages under a record rule: a raw client through the proxy to ws_origin exchanges
text and binary messages (one fragmented with a ping between its fragments, one over 65535
bytes, one over the rule's --max), then closes; `afproxyctl show --messages ID --json` lists
every message of both directions in order with its opcode, size and exact payload, the one over
--max cut. Without a rule nothing is read: the relay is the same and the route answers 404."""

from __future__ import annotations

import base64
import json
import os
import random
import socket
import struct

from helpers import ctl, wait_for
from test_websocket import ended, handshake, ws_tasks
from ws_origin import WebSocketOrigin, frame, read_frame, read_head

import pytest

MAX = 100 * 1024


@pytest.fixture
def ws_origin():
    o = WebSocketOrigin()
    yield o
    o.stop()


def fragment(opcode: int, payload: bytes, fin: bool) -> bytes:
    """One masked frame, FIN as given (`ws_origin.frame` always sets it)."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n)
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def connect(proxy, ws_origin) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
    sock.sendall(handshake(f"http://127.0.0.1:{ws_origin.port}/echo"))
    head, rest = read_head(sock)
    assert head.startswith(b"HTTP/1.1 101 "), head
    assert rest == b""
    return sock


def messages(proxy, task_id: int) -> dict | None:
    r = ctl(proxy, "show", "--messages", str(task_id), "--json")
    return json.loads(r.stdout) if r.returncode == 0 else None


def test_a_record_rule_keeps_every_message_both_ways(proxy, ws_origin):
    assert ctl(proxy, "record", "127.0.0.1", "--max", "100KiB").returncode == 0
    sock = connect(proxy, ws_origin)
    rng = random.Random(37)
    small, large, over = rng.randbytes(300), rng.randbytes(70_000), rng.randbytes(150_000)
    expected: list[tuple[str, bytes]] = []  # (opcode, payload as sent) a message, both ways

    def exchange(opcode: int, name: str, payload: bytes) -> None:
        sock.sendall(frame(opcode, payload, mask=True))
        assert read_frame(sock) == (opcode, payload)
        expected.append((name, payload))

    exchange(1, "text", "héllo".encode())
    exchange(2, "binary", small)
    # A fragmented text message, a ping between its fragments: the pong comes first, then the
    # origin echoes the joined message.
    sock.sendall(fragment(1, b"frag-", fin=False) + fragment(9, b"p1", fin=True))
    assert read_frame(sock) == (10, b"p1")
    expected += [("ping", b"p1"), ("pong", b"p1")]
    sock.sendall(fragment(0, b"men", fin=False) + fragment(0, b"ted", fin=True))
    assert read_frame(sock) == (1, b"frag-mented")
    expected.append(("text", b"frag-mented"))
    exchange(2, "binary", large)
    exchange(2, "binary", over)
    sock.sendall(frame(8, b"\x03\xe8", mask=True))
    assert read_frame(sock) == (8, b"\x03\xe8")
    expected.append(("close", b"\x03\xe8"))
    assert sock.recv(10) == b""
    sock.close()

    [task] = ws_tasks(proxy)
    done = ended(proxy, task["id"])
    assert done["status"] == 101 and done.get("relay") == "nio"
    # Each sent message is read before it goes on, so before its echo: the order is fixed.
    want = []
    for name, payload in expected:
        if name in ("ping", "pong"):
            want.append(("sent" if name == "ping" else "received", name, payload))
        else:
            want += [("sent", name, payload), ("received", name, payload)]
    listed = wait_for(lambda: (lambda m: m if m and len(m["messages"]) >= len(want) else None)(
        messages(proxy, task["id"])), timeout=20, message="every message listed")
    assert listed["dropped"] == 0
    got = listed["messages"]
    assert [(m["direction"], m["opcode"]) for m in got] == [(d, o) for d, o, _ in want]
    for message, (direction, opcode, payload) in zip(got, want):
        kept = base64.b64decode(message["payload"])
        assert message["size"] == len(payload), message
        assert kept == payload[:MAX], (direction, opcode, len(payload))
        assert message["cut"] == (len(payload) > MAX)
    assert [m["at"] for m in got] == sorted(m["at"] for m in got)

    text = ctl(proxy, "show", "--messages", str(task["id"]))
    assert text.returncode == 0, text
    lines = text.stdout.strip().split("\n")
    assert len(lines) == len(want)
    assert "→ sent" in lines[0] and "text" in lines[0] and "héllo" in lines[0]
    assert "← received" in lines[1]
    assert "ping" in lines[4] and "70 31" in lines[4]  # a control frame's payload in hex

    # The HAR has them as Chrome's export writes them (`_webSocketMessages`), which viewers read.
    status, har = proxy.api("GET", f"/v1/har?id={task['id']}")
    assert status == 200, har
    [entry] = har["log"]["entries"]
    codes = {"text": 1, "binary": 2, "close": 8, "ping": 9, "pong": 10}
    shown = entry["_webSocketMessages"]
    assert [(m["type"], m["opcode"]) for m in shown] == [
        ("send" if d == "sent" else "receive", codes[o]) for d, o, _ in want]
    for message, listed_one, (_, opcode, payload) in zip(shown, got, want):
        data = message["data"].encode() if opcode == "text" else base64.b64decode(message["data"])
        assert data == payload[:MAX] and message["_size"] == len(payload) and message["_cut"] == (len(payload) > MAX)
        assert message["time"] > 1.7e9
    assert shown[0]["data"] == "héllo"


def test_a_response_only_rule_lists_sent_messages_without_payloads(proxy, ws_origin):
    assert ctl(proxy, "record", "127.0.0.1/echo", "--response-only").returncode == 0
    sock = connect(proxy, ws_origin)
    sock.sendall(frame(1, b"hi", mask=True))
    assert read_frame(sock) == (1, b"hi")
    [task] = ws_tasks(proxy)
    listed = wait_for(lambda: (lambda m: m if m and len(m["messages"]) == 2 else None)(
        messages(proxy, task["id"])), timeout=20, message="two messages")
    sent, received = listed["messages"]
    assert (sent["direction"], sent["size"], sent["payload"]) == ("sent", 2, None)
    assert (received["direction"], base64.b64decode(received["payload"])) == ("received", b"hi")
    sock.close()


def test_without_a_rule_nothing_is_read(proxy, ws_origin):
    sock = connect(proxy, ws_origin)
    sock.sendall(frame(1, b"plain", mask=True))
    assert read_frame(sock) == (1, b"plain")
    sock.sendall(frame(8, b"\x03\xe8", mask=True))
    assert read_frame(sock)[0] == 8
    sock.close()
    [task] = ws_tasks(proxy)
    done = ended(proxy, task["id"])
    assert done.get("relay") == "nio"  # an upgrade stays on NIO, as before: the relay reads its 101
    status, answer = proxy.api("GET", f"/v1/tasks/{task['id']}/messages")
    assert status == 404 and "no record rule" in answer["error"], answer
    r = ctl(proxy, "show", "--messages", str(task["id"]))
    assert r.returncode != 0 and "no recorded messages" in r.stderr, r
    status, answer = proxy.api("GET", "/v1/tasks/999999/messages")
    assert status == 404
