"""A fuzzing HTTP/1.1 origin: every request gets a random response drawn from a grammar of valid
and hostile answers, and the origin records what it did and what a correct proxy must deliver.

The response to a request is a pure function of (seed, request id, method): the request's path is
`/fz/<rid>`, and `make_plan(seed, rid, method)` gives the same `Plan` every time, so the origin, the
test that checks the proxy's answer and a person replaying a failure all agree on it without
passing bodies around:

    python3 Tests/integration/fuzz_origin.py --seed 1234 --show c2n17            # what GET got
    python3 Tests/integration/fuzz_origin.py --seed 1234 --show c2n17 --method HEAD
    python3 Tests/integration/fuzz_origin.py --seed 1234 --serve --port 8099     # serve it
    python3 Tests/integration/fuzz_origin.py --self-check                        # check the grammar

A plan is three independent choices, joined in `Plan.case` as `framing/mutation/transport`:

* framing (how the body is delimited). Valid: `cl`, `cl-0`, `chunked` (random chunk sizes, upper
  case and zero-padded sizes, chunk extensions, optional trailers), `close` (close-delimited),
  `te-gzip-close` (`Transfer-Encoding: gzip`, close-delimited), `te-gzip-chunked`, `http10-cl`,
  `http10-close`, `s204`, `s304`; for HEAD `head-cl`, `head-chunked`, `head-none`. Hostile:
  `cl-dup-differ`, `cl-dup-agree`, `cl-plus`, `cl-bad`, `cl-huge`, `cl-and-chunked`,
  `te-chunked-twice`, `te-chunked-notlast`, `te-gzip-cl`, `http10-chunked`, `trunc-cl`,
  `trunc-chunked`, `chunk-bad-size`, `chunk-bad-crlf`, `head-cl-bad`, `s204-cl`.
* mutation of the head (none most of the time). Valid: `interim` (100/102/103/150 heads before the
  final one), `many-fields`. Hostile: `obs-fold-mid`, `obs-fold-first`, `bare-cr`, `nul`, `ctl`,
  `space-before-colon`, `no-colon`, `bad-name`, `lf-only`, `huge-field`, `interim-101`,
  `http12` (`HTTP/1.2`), `icy` (`ICY 200 OK`), `http09` (a body with no head at all), `lower`
  (`http/1.1`), `status-2digit`, `status-4digit`, `status-999`, `nospace` (`HTTP/1.1 200`),
  `noversion` (`HTTP 200 OK`), `leading-crlf`, `leading-junk`.
* transport (how the bytes go out). `plain`, `trickle` (the head a byte at a time, the body in
  small pieces, with small sleeps), `stall-head` / `stall-body` (a pause of up to 1.2 s), and the
  hostile `stall-forever` (stops and waits for the peer to give up), `disconnect-head`,
  `disconnect-body`, `extra` (a complete response followed, in the same write, by a smuggled
  response carrying `SMUGGLED`, the connection kept open; for HEAD, 204 and 304 the extra bytes are
  a body).

Each plan says whether the response is `valid` per RFC 9112 (a proxy must pass it on: status,
reason phrase, body, trailers, interim heads), or invalid; an invalid one is `recoverable` when
the RFC lets a proxy repair it instead of answering 502 (obs-fold replaced by SP, bare CR or NUL
replaced, whitespace before a colon removed, duplicate equal Content-Lengths merged, Content-Length
dropped beside Transfer-Encoding, HTTP/1.2 read as 1.1, a single LF as line end, ...). For a
recoverable one the plan's status, reason and body are what the repaired message carries. A
chunked body is never repaired (junk after a size's digits, a cut in the final CRLF): its framing
is read strictly, and only `Transfer-Encoding: chunked, chunked` counts as one chunked coding.
`head_ok` says the final head may already have gone out when the body turns out bad (a truncated
or mis-chunked body): the client then sees a connection closed before the message completed.

Not generated on purpose: bytes sent after the response is complete and after a pause (the proxy
may already have sent the next request on that connection; nothing can tell them from its
response), so `extra` bytes always leave in the same write as the end of the response.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import random
import re
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field

CRLF = b"\r\n"

# ------------------------------------------------------------------------------------------------
# The plan


@dataclass
class Plan:
    rid: str
    method: str
    case: str                                   # framing/mutation/transport
    valid: bool                                 # a correct proxy must pass it on
    recoverable: bool                           # invalid, but a proxy may pass on the repaired message
    head_ok: bool                               # the final head may go out before the body fails
    may_time_out: bool                          # the origin stalls for good: a 504 is a correct answer
    status: int                                 # the final status (0 when there is no head)
    reason: bytes
    fields: list[tuple[bytes, bytes]]           # end-to-end fields a correct proxy passes on as they are
    absent: list[bytes]                         # field names a proxy must remove (hop-by-hop)
    body: bytes                                 # what a correct proxy delivers: chunked undone, other codings kept
    codings: list[str]                          # transfer codings other than the last chunked, in order
    plain: bytes                                # the body with every coding undone
    interim: list[int]                          # interim 1xx statuses, in order
    trailers: list[tuple[bytes, bytes]]
    wire: bytes                                 # the response bytes, as sent when nothing is cut
    extra: bytes                                # bytes after the response, in the same write
    steps: list[tuple]                          # ("send", b) ("sleep", s) ("trickle", b, gap) ("hang",)
    keep_open: bool                             # the origin reads the next request afterwards
    head_end: int                               # offset in wire just after the final head (-1: none)
    body_len: int = 0
    body_sha: str = ""
    wire_head: bytes = b""                      # the final head as sent (up to 4 KiB)

    def __post_init__(self) -> None:
        if not self.body_sha:
            self.body_len, self.body_sha = len(self.body), sha(self.body)
            start = self.wire.rfind(b"HTTP/", 0, self.head_end) if self.head_end > 0 else 0
            self.wire_head = self.wire[max(0, start):self.head_end][:4096] if self.head_end > 0 else b""

    def light(self) -> "Plan":
        """The plan without its bytes (bodies, wire), to keep many of them."""
        return dataclasses.replace(self, body=b"", plain=b"", wire=b"", extra=b"", steps=[])

    @property
    def tags(self) -> list[str]:
        return self.case.split("/")

    def summary(self) -> str:
        kind = "valid" if self.valid else ("recoverable" if self.recoverable else "INVALID")
        return (f"{self.method} /fz/{self.rid}: {self.case} [{kind}] status {self.status} "
                f"reason {self.reason[:40]!r} body {self.body_len} B sha256 {self.body_sha[:16]} "
                f"codings {self.codings} interim {self.interim} trailers {len(self.trailers)} "
                f"keep_open {self.keep_open}")

    def wire_preview(self, limit: int = 1200) -> bytes:
        """The bytes the origin writes (cut where it cuts), elided in the middle when long."""
        out = b"".join(s[1] for s in self.steps if s[0] in ("send", "trickle"))
        if len(out) <= limit:
            return out
        return out[: limit * 2 // 3] + b"<... %d bytes ...>" % (len(out) - limit) + out[-limit // 3:]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_STD_REASONS = {
    100: b"Continue", 101: b"Switching Protocols", 102: b"Processing", 103: b"Early Hints",
    150: b"Fuzzy Interim", 200: b"OK", 201: b"Created", 203: b"Non-Authoritative Information",
    204: b"No Content", 299: b"Fuzzy Success", 301: b"Moved Permanently", 302: b"Found",
    304: b"Not Modified", 404: b"Not Found", 410: b"Gone", 418: b"I'm a teapot",
    451: b"Unavailable For Legal Reasons", 500: b"Internal Server Error", 502: b"Bad Gateway",
    503: b"Service Unavailable", 504: b"Gateway Timeout", 599: b"Fuzzy Error", 999: b"Beyond",
}

_STATUSES = [(200, 60), (201, 3), (203, 2), (299, 1), (301, 2), (302, 2), (404, 5), (410, 1),
             (418, 2), (451, 1), (500, 3), (502, 2), (503, 2), (504, 1), (599, 1)]

_FIELD_VALUES = [b"plain", b'a, b; c="d e"', b"caf\xe9 cr\xe8me", "ünïcödé ✓".encode(), b"",
                 b"x" * 1000, b"HTTP/1.1 200 OK", b"tab\tinside"]

_TEMPTING = (b"\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"
             b"\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")

# framing: (name, weight, for HEAD?)
_FRAMINGS = [
    ("cl", 20), ("cl-0", 2), ("chunked", 16), ("close", 5), ("te-gzip-close", 2),
    ("te-gzip-chunked", 3), ("http10-cl", 3), ("http10-close", 2), ("s204", 3), ("s304", 3),
    ("cl-dup-differ", 2), ("cl-dup-agree", 2), ("cl-plus", 1), ("cl-bad", 2), ("cl-huge", 1),
    ("cl-and-chunked", 2), ("te-chunked-twice", 1), ("te-chunked-notlast", 1), ("te-gzip-cl", 1),
    ("http10-chunked", 1), ("trunc-cl", 3), ("trunc-chunked", 3), ("chunk-bad-size", 2),
    ("chunk-bad-crlf", 1), ("s204-cl", 1),
]
_HEAD_FRAMINGS = [("head-cl", 10), ("head-chunked", 4), ("head-none", 3), ("head-cl-bad", 1),
                  ("s204", 1), ("s304", 2)]
_MUTATIONS = [
    ("interim", 10), ("many-fields", 2), ("obs-fold-mid", 3), ("obs-fold-first", 2), ("bare-cr", 2),
    ("nul", 2), ("ctl", 1), ("space-before-colon", 2), ("no-colon", 2), ("bad-name", 2),
    ("lf-only", 2), ("huge-field", 1), ("interim-101", 1), ("http12", 2), ("icy", 2), ("http09", 2),
    ("lower", 1), ("status-2digit", 1), ("status-4digit", 1), ("status-999", 1), ("nospace", 2),
    ("noversion", 1), ("leading-crlf", 1), ("leading-junk", 1),
]
_TRANSPORTS = [("trickle", 8), ("stall-head", 4), ("stall-body", 4), ("stall-forever", 1),
               ("disconnect-head", 4), ("disconnect-body", 3), ("extra", 7)]

#: valid: a proxy passes it on; recoverable: it may pass on the repaired message or answer 502;
#: invalid: 502 (or a truncated message when only the body is bad).
_VALID_MUTATIONS = {"none", "interim", "many-fields"}
_RECOVERABLE_MUTATIONS = {"obs-fold-mid", "obs-fold-first", "bare-cr", "nul", "ctl", "space-before-colon",
                          "lf-only", "huge-field", "http12", "status-999", "nospace", "leading-crlf"}
#: mutations of the status line / whole message (at most one applies)
_STATUS_MUTATIONS = {"http12", "icy", "http09", "lower", "status-2digit", "status-4digit", "status-999",
                     "nospace", "noversion", "leading-crlf", "leading-junk"}

# Set by restrict(): only these framings / mutations / transports are drawn (for reducing a failure).
_ONLY: set[str] | None = None


def restrict(names: set[str] | None) -> None:
    """Draw only the named framings, mutations and transports (each axis falls back to its whole
    list when none of its names is given; "none" means no mutation, "plain" no transport trick).
    None lifts the restriction."""
    global _ONLY
    _ONLY = set(names) if names else None


def _weighted(rng: random.Random, table: list[tuple[str, int]], allowed=None) -> str:
    names = [(n, w) for n, w in table if (allowed is None or n in allowed)]
    if _ONLY is not None and any(n in _ONLY for n, _ in names):
        names = [(n, w) for n, w in names if n in _ONLY]
    total = sum(w for _, w in names)
    x = rng.uniform(0, total)
    for n, w in names:
        x -= w
        if x <= 0:
            return n
    return names[-1][0]


def _make_body(rng: random.Random, rid: str) -> bytes:
    r = rng.random()
    if r < 0.05:
        return b""
    if r < 0.55:
        n = rng.randint(0, 300)
    elif r < 0.87:
        n = rng.randint(300, 20000)
    elif r < 0.98:
        n = rng.randint(20000, 300000)
    else:
        n = rng.randint(300000, 1200000)
    body = bytearray(b"rid=%s;" % rid.encode())
    if rng.random() < 0.2:
        body += _TEMPTING
    body += rng.randbytes(n)
    return bytes(body)


def _chunk(rng: random.Random, data: bytes, trailers: list[tuple[bytes, bytes]] = (),
           style: dict | None = None) -> bytes:
    """Chunked framing of `data` with random chunk sizes and optional cosmetics."""
    style = style if style is not None else {}
    out = bytearray()
    i = 0
    mode = rng.choice(["tiny", "small", "medium", "big", "mixed"])
    while i < len(data):
        m = rng.choice(["tiny", "small", "medium", "big"]) if mode == "mixed" else mode
        n = {"tiny": rng.randint(1, 8), "small": rng.randint(1, 300), "medium": rng.randint(1, 8192),
             "big": rng.randint(8192, 100000)}[m]
        n = min(n, len(data) - i)
        size = (b"%X" if style.get("upper") else b"%x") % n
        if style.get("zeros"):
            size = b"000" + size
        if style.get("ext") and rng.random() < 0.5:
            size += rng.choice([b";a=b", b';name="quoted ; value"', b";flag", b" ; x = y"])
        out += size + CRLF + data[i:i + n] + CRLF
        i += n
    out += b"0" + (b";last=1" if style.get("ext") else b"") + CRLF
    for name, value in trailers:
        out += name + b": " + value + CRLF
    out += CRLF
    return bytes(out)


@dataclass
class _Draft:
    version: bytes = b"HTTP/1.1"
    status: int = 200
    reason: bytes = b"OK"
    fields: list[bytes] = field(default_factory=list)     # field lines of the final head
    body_wire: bytes = b""
    body: bytes = b""
    plain: bytes = b""
    codings: list[str] = field(default_factory=list)
    trailers: list[tuple[bytes, bytes]] = field(default_factory=list)
    definite: bool = True        # the end is known without a close
    keep: bool = True            # the origin may keep the connection
    valid: bool = True
    recoverable: bool = True
    body_fail: bool = False      # the body is bad (truncated, mis-chunked); the head is fine
    has_body: bool = True        # the status/method allows a body
    status_line: bytes | None = None
    no_head: bool = False
    prefix: bytes = b""          # bytes before the first head
    interim: list[tuple[int, bytes, list[bytes]]] = field(default_factory=list)
    eol: bytes = CRLF
    absent: list[bytes] = field(default_factory=list)
    extra_body: bytes = b""      # what a HEAD, 204 or 304 answer would carry as a (forbidden) body
    head_bad: bool = False       # the head itself cannot be passed on
    variant: str = ""            # which form of a framing or mutation, shown in the case name

    def invalid(self, recoverable: bool, head: bool = True) -> None:
        self.valid = False
        self.recoverable = self.recoverable and recoverable
        if head and not recoverable:
            self.head_bad = True


def _framing(rng: random.Random, d: _Draft, name: str, rid: str, method: str) -> None:
    body = _make_body(rng, rid)
    if name.startswith("head-") or method == "HEAD":
        d.has_body = False
        d.body = d.plain = b""
        if name == "head-cl":
            d.fields.append(b"Content-Length: %d" % rng.choice([0, 1, len(body), 10 ** rng.randint(1, 9)]))
        elif name == "head-chunked":
            d.fields.append(b"Transfer-Encoding: chunked")
        elif name == "head-none":
            pass
        elif name == "head-cl-bad":
            d.fields += rng.choice([[b"Content-Length: +5"], [b"Content-Length: 5", b"Content-Length: 6"],
                                    [b"Content-Length: 5, 7"]])
            d.invalid(recoverable=True)
            d.keep = False
        elif name == "s204":
            d.status = 204
        elif name == "s304":
            d.status = 304
            if rng.random() < 0.5:
                d.fields.append(b"Content-Length: %d" % len(body))
        d.extra_body = body
        return

    if name == "cl":
        d.body = d.plain = d.body_wire = body
        d.fields.append(b"Content-Length: %d" % len(body))
    elif name == "cl-0":
        d.fields.append(b"Content-Length: 0")
    elif name == "chunked":
        d.body = d.plain = body
        if rng.random() < 0.4:
            d.trailers = [(b"X-Trailer-Rid", rid.encode()), (b"X-Trailer-Sum", sha(body).encode())]
            if rng.random() < 0.5:
                d.fields.append(b"Trailer: X-Trailer-Rid, X-Trailer-Sum")
        te = rng.choice([b"chunked", b"chunked", b"Chunked", b"  chunked  "])
        d.fields.append(b"Transfer-Encoding: " + te)
        style = {"upper": rng.random() < 0.3, "zeros": rng.random() < 0.2, "ext": rng.random() < 0.3}
        d.body_wire = _chunk(rng, body, d.trailers, style)
    elif name == "close":
        d.body = d.plain = d.body_wire = body
        if rng.random() < 0.6:
            d.fields.append(b"Connection: close")
        d.definite = False
        d.keep = False
    elif name == "te-gzip-close":
        z = gzip.compress(body, compresslevel=1, mtime=0)
        d.body, d.plain, d.body_wire, d.codings = z, body, z, ["gzip"]
        d.fields.append(b"Transfer-Encoding: gzip")
        d.definite = False
        d.keep = False
    elif name == "te-gzip-chunked":
        z = gzip.compress(body, compresslevel=1, mtime=0)
        d.body, d.plain, d.codings = z, body, ["gzip"]
        d.fields += rng.choice([[b"Transfer-Encoding: gzip, chunked"],
                                [b"Transfer-Encoding: gzip", b"Transfer-Encoding: chunked"]])
        d.body_wire = _chunk(rng, z)
    elif name == "http10-cl":
        d.version = b"HTTP/1.0"
        d.body = d.plain = d.body_wire = body
        d.fields.append(b"Content-Length: %d" % len(body))
        if rng.random() < 0.5:
            d.fields.append(b"Connection: keep-alive")
        else:
            d.keep = False
    elif name == "http10-close":
        d.version = b"HTTP/1.0"
        d.body = d.plain = d.body_wire = body
        d.definite = False
        d.keep = False
    elif name in ("s204", "s304"):
        d.status = 204 if name == "s204" else 304
        d.has_body = False
        if name == "s304" and rng.random() < 0.5:
            d.fields.append(b"Content-Length: %d" % len(body))
        if name == "s304" and rng.random() < 0.2:
            d.fields.append(b"Transfer-Encoding: chunked")
            d.fields = [f for f in d.fields if not f.startswith(b"Content-Length")]
        d.extra_body = body
    elif name == "s204-cl":
        # RFC 9110 §8.6: a server MUST NOT send Content-Length in a 204; its end is still known
        d.status = 204
        d.has_body = False
        d.fields.append(b"Content-Length: 0")
        d.invalid(recoverable=True)
    elif name == "cl-dup-differ":
        d.body = d.plain = d.body_wire = body
        n = len(body)
        d.fields += rng.choice([[b"Content-Length: %d" % n, b"Content-Length: %d" % (n + 3)],
                                [b"Content-Length: %d" % (n + 1), b"Content-Length: %d" % n],
                                [b"Content-Length: %d, %d" % (n, n + 7)]])
        d.invalid(recoverable=False)
        d.keep = False
    elif name == "cl-dup-agree":
        # RFC 9110 §8.6: a recipient MAY replace the duplicates with one valid Content-Length
        d.body = d.plain = d.body_wire = body
        n = len(body)
        d.fields += rng.choice([[b"Content-Length: %d" % n, b"Content-Length: %d" % n],
                                [b"Content-Length: %d, %d" % (n, n)]])
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "cl-plus":
        d.body = d.plain = d.body_wire = body
        d.fields.append(b"Content-Length: +%d" % len(body))
        d.invalid(recoverable=False)
        d.keep = False
    elif name == "cl-bad":
        d.body = d.plain = d.body_wire = body
        n = len(body)
        d.variant, value = rng.choice([("neg", b"-1"), ("hex", b"0x%x" % n), ("dot", b"%d.0" % n),
                                       ("alpha", b"%da" % n), ("empty", b""), ("space", b"%d %d" % (n, n)),
                                       ("exp", b"1e3"), ("semi", b"%d;" % n)])
        d.fields.append(b"Content-Length: " + value)
        d.invalid(recoverable=False)
        d.keep = False
    elif name == "cl-huge":
        d.body = d.plain = d.body_wire = body
        d.fields.append(b"Content-Length: " + rng.choice([b"99999999999999999999999", b"18446744073709551616",
                                                          b"9223372036854775808"]))
        d.invalid(recoverable=False)
        d.keep = False
    elif name == "cl-and-chunked":
        # RFC 9112 §6.3: Transfer-Encoding overrides; a proxy that forwards removes Content-Length
        d.body = d.plain = body
        d.fields += [b"Content-Length: %d" % rng.choice([0, len(body), len(body) + 10]), b"Transfer-Encoding: chunked"]
        rng.shuffle(d.fields)
        d.body_wire = _chunk(rng, body)
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "te-chunked-twice":
        # RFC 9112 §6.1 forbids chunked twice; curl and afproxy read one chunked coding, so the
        # repaired message's body is the inner chunked bytes, framed once for the client.
        inner = _chunk(rng, body)
        d.body = d.plain = inner
        d.fields.append(b"Transfer-Encoding: chunked, chunked")
        d.body_wire = _chunk(rng, inner)
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "te-chunked-notlast":
        # RFC 9112 §6.3 item 4: chunked not last in a response: the body ends at the close
        inner = _chunk(rng, body)
        z = gzip.compress(inner, compresslevel=1, mtime=0)
        d.body, d.plain, d.body_wire, d.codings = z, body, z, ["chunked", "gzip"]
        d.fields.append(b"Transfer-Encoding: chunked, gzip")
        d.definite = False
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "te-gzip-cl":
        # Transfer-Encoding overrides Content-Length (§6.3 item 3), gzip last: read until close
        z = gzip.compress(body, compresslevel=1, mtime=0)
        d.body, d.plain, d.body_wire, d.codings = z, body, z, ["gzip"]
        d.fields += [b"Transfer-Encoding: gzip", b"Content-Length: %d" % max(0, len(z) // 2)]
        d.definite = False
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "http10-chunked":
        # RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing
        d.version = b"HTTP/1.0"
        d.body = d.plain = body
        d.fields.append(b"Transfer-Encoding: chunked")
        d.body_wire = _chunk(rng, body)
        d.invalid(recoverable=True)
        d.keep = False
    elif name == "trunc-cl":
        body = body or b"rid=%s;x" % rid.encode()
        d.body = d.plain = body
        d.fields.append(b"Content-Length: %d" % len(body))
        d.body_wire = body[: rng.randint(0, len(body) - 1)]
        d.body_fail = True
        d.invalid(recoverable=False, head=False)
        d.keep = False
    elif name == "trunc-chunked":
        d.body = d.plain = body
        d.fields.append(b"Transfer-Encoding: chunked")
        if rng.random() < 0.3:
            d.trailers = [(b"X-Trailer-Rid", rid.encode())]
        full = _chunk(rng, body, d.trailers)
        # Cut anywhere, even in the final CRLF: afproxy reads chunked bodies strictly (issue 22),
        # so the client always sees a truncated message.
        d.body_wire = full[: rng.randint(0, len(full) - 1)]
        d.body_fail = True
        d.invalid(recoverable=False, head=False)
        d.keep = False
    elif name in ("chunk-bad-size", "chunk-bad-crlf"):
        body = body or b"rid=%s;x" % rid.encode()
        d.body = d.plain = body
        d.fields.append(b"Transfer-Encoding: chunked")
        cut = rng.randint(0, len(body) - 1)
        good = _chunk(rng, body[:cut])[:-5] if cut else b""     # without the last chunk
        rest = body[cut:]
        if name == "chunk-bad-size":
            r = len(rest)
            d.variant, size = rng.choice([("junk", b"zz"), ("neg", b"-%x" % r), ("0x", b"0x%x" % r),
                                          ("space", b"%x %x" % (r, r)), ("empty", b""),
                                          ("overflow", b"ffffffffffffffffffff"), ("plus", b"+%x" % r),
                                          ("nul", b"%x\x00" % r), ("junk-after", b"%xzz" % r)])
            d.body_wire = good + size + CRLF + rest + CRLF + b"0\r\n\r\n"
        else:
            d.body_wire = good + b"%x" % len(rest) + CRLF + rest + b"XY" + b"0\r\n\r\n"
        # libcurl 7.88 reads a size line as its leading hex digits and skips the rest ("space",
        # "nul", "junk-after", and "0x" as a last chunk); afproxy reads chunked bodies strictly
        # (issue 22), so every variant ends the client's response truncated.
        d.body_fail = True
        d.invalid(recoverable=False, head=False)
        d.keep = False
    else:
        raise ValueError(name)


def _mutate(rng: random.Random, d: _Draft, name: str, rid: str) -> None:
    if name == "none":
        return
    if name == "interim":
        for _ in range(rng.randint(1, 3)):
            code = rng.choice([100, 102, 103, 103, 150])
            fields = [b"Link: </style.css>; rel=preload; as=style"] if code == 103 else []
            if rng.random() < 0.3:
                fields.append(b"X-Interim: %d" % code)
            d.interim.append((code, _STD_REASONS[code], fields))
    elif name == "interim-101":
        d.interim.append((101, b"Switching Protocols", [b"Upgrade: fuzz", b"Connection: upgrade"]))
        d.invalid(recoverable=False)
    elif name == "many-fields":
        d.fields += [b"X-Many-%d: value %d" % (i, i) for i in range(rng.randint(50, 400))]
    elif name == "obs-fold-mid":
        # RFC 9112 §5.2: a proxy replaces each obs-fold with SP, or answers 502
        i = rng.randint(0, len(d.fields))
        d.fields[i:i] = [b"X-Fuzz-Fold: first part", rng.choice([b" second part", b"\tsecond part", b"   x"])]
        d.invalid(recoverable=True)
    elif name == "obs-fold-first":
        # RFC 9112 §2.2: whitespace-preceded line before the first field: reject, or consume it
        d.variant, line = rng.choice([("field", b" X-Fuzz-Folded: yes"), ("cl", b"\tContent-Length: 3"),
                                      ("te", b" Transfer-Encoding: chunked")])
        d.fields.insert(0, line)
        d.invalid(recoverable=True)
    elif name == "bare-cr":
        d.fields.insert(rng.randint(0, len(d.fields)), b"X-Fuzz-Cr: a\rb")
        d.invalid(recoverable=True)
    elif name == "nul":
        d.fields.insert(rng.randint(0, len(d.fields)), rng.choice([b"X-Fuzz-Nul: a\x00b", b"X-Fuzz-Nul: \x00"]))
        d.invalid(recoverable=True)
    elif name == "ctl":
        d.fields.insert(rng.randint(0, len(d.fields)), rng.choice([b"X-Fuzz-Ctl: a\x01b", b"X-Fuzz-Ctl: a\x7fb",
                                                                    b"X-Fuzz-Ctl: \x1b[31m"]))
        d.invalid(recoverable=True)
    elif name == "space-before-colon":
        # RFC 9112 §5.1: a proxy MUST remove such whitespace before forwarding
        d.fields.insert(rng.randint(0, len(d.fields)), rng.choice([b"X-Fuzz-Sp : v", b"X-Fuzz-Sp\t: v"]))
        d.invalid(recoverable=True)
    elif name == "no-colon":
        d.fields.insert(rng.randint(0, len(d.fields)), rng.choice([b"X-Fuzz-NoColon", b"just some words"]))
        d.invalid(recoverable=False)
    elif name == "bad-name":
        d.fields.insert(rng.randint(0, len(d.fields)), rng.choice([b"X(Fuzz): v", b"X Fuzz: v", b"\xc3\xa9t\xc3\xa9: v",
                                                                    b": no name", b"X/Fuzz: v"]))
        d.invalid(recoverable=False)
    elif name == "lf-only":
        # RFC 9112 §2.2: a recipient MAY recognize a single LF as a line terminator
        d.eol = b"\n"
        d.invalid(recoverable=True)
    elif name == "huge-field":
        d.fields.append(b"X-Fuzz-Huge: " + b"h" * rng.choice([20000, 60000, 120000, 300000]))
        d.invalid(recoverable=True)  # valid syntax, but no proxy must accept any size
    elif name == "http12":
        # RFC 9112 §2.3: a higher minor version SHOULD be processed as the highest one implemented
        if d.version == b"HTTP/1.1":
            d.version = b"HTTP/1.2"
            d.invalid(recoverable=True)
    elif name == "icy":
        d.status_line = b"ICY %d %s" % (d.status, d.reason)
        d.invalid(recoverable=False)
    elif name == "http09":
        d.no_head = True
        d.body_wire = b"rid=%s;an HTTP/0.9 body with no head at all" % rid.encode()
        d.definite = False
        d.keep = False
        d.interim = []
        d.invalid(recoverable=False)
    elif name == "lower":
        d.status_line = d.version.lower() + b" %d %s" % (d.status, d.reason)
        d.invalid(recoverable=False)
    elif name == "status-2digit":
        d.status_line = d.version + b" %d %s" % (d.status // 10, d.reason)
        d.invalid(recoverable=False)
    elif name == "status-4digit":
        d.status_line = d.version + b" %d0 %s" % (d.status, d.reason)
        d.invalid(recoverable=False)
    elif name == "status-999":
        # RFC 9110 §15: values outside 100..599 are invalid, but a recipient may treat them as x00
        if d.has_body and d.status not in (204, 304):
            d.status, d.reason = 999, _STD_REASONS[999]
            d.invalid(recoverable=True)
    elif name == "nospace":
        d.status_line = d.version + b" %d" % d.status
        d.reason = b""
        d.invalid(recoverable=True)
    elif name == "noversion":
        d.status_line = b"HTTP %d %s" % (d.status, d.reason)
        d.invalid(recoverable=False)
    elif name == "leading-crlf":
        d.prefix = CRLF
        d.invalid(recoverable=True)
    elif name == "leading-junk":
        d.prefix = b"junk before the status line\r\n"
        d.invalid(recoverable=False)
    else:
        raise ValueError(name)


def _render_head(version: bytes, status: int, reason: bytes, fields: list[bytes], eol: bytes,
                 status_line: bytes | None = None) -> bytes:
    line = status_line if status_line is not None else version + b" %d " % status + reason
    return line + eol + b"".join(f + eol for f in fields) + eol


def make_plan(seed: int | str, rid: str, method: str) -> Plan:
    """The response the origin gives to `method /fz/<rid>` under `seed`: always the same."""
    rng = random.Random(f"{seed}|{rid}|{method}")
    d = _Draft()
    d.status = _weighted(rng, [(str(s), w) for s, w in _STATUSES])
    d.status = int(d.status)
    d.reason = _STD_REASONS.get(d.status, b"Status")
    if rng.random() < 0.35:
        d.reason = rng.choice([b"", b"Fuzzy Reason Phrase", b"caf\xe9 cr\xe8me", "Größe ✓".encode(),
                               b"tab\tinside", b"r" * rng.randint(50, 400), b"HTTP/1.1 200 OK", b"  spaced  out  "])

    if method == "HEAD":
        framing = _weighted(rng, _HEAD_FRAMINGS)
    else:
        framing = _weighted(rng, _FRAMINGS)
    val = rng.choice(_FIELD_VALUES)
    d.fields = [b"X-Fuzz-Id: " + rid.encode(), b"X-Fuzz-Val: " + val]
    if rng.random() < 0.5:
        d.fields.append(b"Date: Mon, 23 Nov 2026 08:00:00 GMT")
    if rng.random() < 0.3:
        d.fields.append(b"Set-Cookie: a=%d" % rng.randint(0, 99))
        d.fields.append(b"Set-Cookie: b=%d; Path=/" % rng.randint(0, 99))
    if rng.random() < 0.3:
        d.fields.append(b"Connection: X-Hop-Secret")
        d.fields.append(b"X-Hop-Secret: must not reach the client")
        d.absent.append(b"x-hop-secret")
    if rng.random() < 0.2:
        d.fields.append(b"Keep-Alive: timeout=30")
        d.absent.append(b"keep-alive")
    _framing(rng, d, framing, rid, method)
    if d.status in (204, 304) or method == "HEAD":
        d.has_body = False
    framing += f"[{d.variant}]" if d.variant else ""
    d.variant = ""

    mutation = "none"
    forced = _ONLY is not None and any(n in _ONLY for n, _ in _MUTATIONS)
    never = _ONLY is not None and "none" in _ONLY and not forced
    if forced or (not never and rng.random() < 0.4):
        allowed = {n for n, _ in _MUTATIONS}
        if d.version != b"HTTP/1.1":
            allowed -= {"interim", "interim-101", "http12"}
        if d.status_line is not None:
            allowed -= _STATUS_MUTATIONS
        mutation = _weighted(rng, _MUTATIONS, allowed)
        _mutate(rng, d, mutation, rid)
        mutation += f"[{d.variant}]" if d.variant else ""

    # the keep-alive decision: hostile answers close, a valid one sometimes says close itself
    if d.keep and d.valid and rng.random() < 0.15 and not any(f.lower().startswith(b"connection:") for f in d.fields):
        d.fields.append(b"Connection: close")
        d.keep = False
    if not d.valid:
        d.keep = False

    # assemble
    if d.no_head:
        head = b""
        interim_wire = b""
    else:
        interim_wire = b"".join(_render_head(b"HTTP/1.1", c, r, f, d.eol) for c, r, f in d.interim)
        head = _render_head(d.version, d.status, d.reason, d.fields, d.eol, d.status_line)
    wire = d.prefix + interim_wire + head + (d.body_wire if d.has_body or d.no_head else b"")
    head_end = -1 if d.no_head else len(d.prefix) + len(interim_wire) + len(head)

    # transport
    transport = "plain"
    extra = b""
    forced = _ONLY is not None and any(n in _ONLY for n, _ in _TRANSPORTS)
    never = _ONLY is not None and "plain" in _ONLY and not forced
    if forced or (not never and rng.random() < 0.3):
        allowed = {n for n, _ in _TRANSPORTS}
        if not d.has_body or not d.body_wire or not d.definite or d.body_fail:
            allowed -= {"stall-body", "disconnect-body"}
        if d.no_head:
            allowed -= {"stall-head", "disconnect-head"}
        if not d.definite or d.body_fail or not (d.valid or d.recoverable) or len(wire) > 65536 or d.no_head:
            allowed.discard("extra")
        transport = _weighted(rng, _TRANSPORTS, allowed)
    steps: list[tuple] = []
    may_time_out = False
    head_sent = True             # the whole final head leaves the origin
    if transport == "plain":
        steps.append(("send", wire))
    elif transport == "trickle":
        hs = max(head_end, 0)
        steps.append(("trickle", wire[:hs], 0.003))
        rest = wire[hs:]
        i = 0
        while i < len(rest) and i < 16384:
            n = rng.randint(1, 700)
            steps.append(("send", rest[i:i + n]))
            steps.append(("sleep", rng.uniform(0, 0.004)))
            i += n
        if i < len(rest):
            steps.append(("send", rest[i:]))
    elif transport in ("stall-head", "stall-body"):
        lo, hi = (0, head_end - 1) if transport == "stall-head" else (head_end + 1, len(wire) - 1)
        k = rng.randint(lo, max(lo, hi))
        steps += [("send", wire[:k]), ("sleep", rng.uniform(0.2, 1.2)), ("send", wire[k:])]
    elif transport == "stall-forever":
        k = rng.randint(0, max(0, len(wire) - 1))
        steps += [("send", wire[:k]), ("hang",)]
        may_time_out = True
        head_sent = k >= head_end >= 0
        d.invalid(recoverable=False, head=False)
        d.keep = False
    elif transport == "disconnect-head":
        k = rng.randint(0, head_end - 1)
        steps.append(("send", wire[:k]))
        head_sent = False
        d.invalid(recoverable=False, head=False)
        d.keep = False
    elif transport == "disconnect-body":
        k = rng.randint(head_end, len(wire) - 1)
        steps.append(("send", wire[:k]))
        d.invalid(recoverable=False, head=False)
        d.body_fail = True
        d.keep = False
    elif transport == "extra":
        if d.has_body:
            smuggled = b"SMUGGLED rid=%s;" % rid.encode()
            extra = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(smuggled), smuggled)
        else:
            # the body of a HEAD, 204 or 304 answer, which has none
            extra = (b"SMUGGLED rid=%s;" % rid.encode()) + (d.extra_body or b"x")[:2000]
        steps.append(("send", wire + extra))
    if not d.valid and not d.keep and (d.body_fail or not head_sent) and rng.random() < 0.3:
        steps.append(("reset",))   # an abortive close (RST) instead of a FIN
    head_ok = head_sent and not d.head_bad and not d.no_head

    interim_codes = [c for c, _, _ in d.interim]
    return Plan(
        rid=rid, method=method, case=f"{framing}/{mutation}/{transport}", valid=d.valid,
        recoverable=(not d.valid) and d.recoverable, head_ok=head_ok, may_time_out=may_time_out,
        status=0 if d.no_head else d.status, reason=d.reason,
        fields=[(b"X-Fuzz-Id", rid.encode()), (b"X-Fuzz-Val", val)], absent=d.absent,
        body=d.body if d.has_body else b"", codings=d.codings if d.has_body else [],
        plain=d.plain if d.has_body else b"", interim=interim_codes, trailers=d.trailers if d.has_body else [],
        wire=wire, extra=extra, steps=steps, keep_open=d.keep, head_end=head_end,
    )


# ------------------------------------------------------------------------------------------------
# A strict HTTP/1.1 message reader, shared by the test's clients (what the proxy sends them) and
# the grammar's self-check (what the origin sends)


class Malformed(Exception):
    pass


_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_CTL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_STATUS_LINE = re.compile(rb"^HTTP/1\.([01]) (\d{3})(?: (.*))?$", re.S)


class ByteSource:
    """Reads from a socket (or a bytes object) into a buffer, with a deadline."""

    def __init__(self, sock: socket.socket | None = None, data: bytes | None = None):
        self.sock = sock
        self.buf = bytearray(data or b"")
        self.eof = sock is None
        self.reset = False
        self.total = len(self.buf)

    def fill(self, deadline: float) -> bool:
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 18)
        except ConnectionResetError:
            self.reset = True
            chunk = b""
        except socket.timeout:
            raise TimeoutError("deadline") from None
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        self.total += len(chunk)
        return True

    def line(self, deadline: float, limit: int = 1 << 20) -> bytes | None:
        """One CRLF-terminated line without its CRLF; None at EOF first; Malformed on a bare LF."""
        start = 0
        while True:
            i = self.buf.find(b"\n", start)
            if i >= 0:
                if i == 0 or self.buf[i - 1] != 0x0D:
                    raise Malformed(f"line ending without CR: {bytes(self.buf[max(0, i - 60):i + 1])!r}")
                out = bytes(self.buf[: i - 1])
                del self.buf[: i + 1]
                return out
            if len(self.buf) > limit:
                raise Malformed("line too long")
            start = max(0, len(self.buf) - 1)
            if not self.fill(deadline):
                return None

    def exact(self, n: int, deadline: float) -> tuple[bytes, bool]:
        while len(self.buf) < n:
            if not self.fill(deadline):
                out = bytes(self.buf)
                self.buf.clear()
                return out, False
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out, True

    def rest(self, deadline: float) -> bytes:
        while self.fill(deadline):
            pass
        out = bytes(self.buf)
        self.buf.clear()
        return out


@dataclass
class Message:
    outcome: str = "no-response"        # complete | truncated | no-response | malformed | timeout
    version: bytes = b""
    status: int = 0
    reason: bytes = b""
    fields: list[tuple[bytes, bytes]] = field(default_factory=list)
    interim: list[tuple[int, bytes]] = field(default_factory=list)
    body: bytes = b""
    codings: list[str] = field(default_factory=list)
    trailers: list[tuple[bytes, bytes]] = field(default_factory=list)
    framing: str = ""                   # length | chunked | close | none
    error: str = ""
    raw_head: bytes = b""
    reset: bool = False                 # the connection was reset (not closed with a FIN)

    def field(self, name: bytes) -> bytes | None:
        values = self.field_all(name)
        return values[0] if values else None

    def field_all(self, name: bytes) -> list[bytes]:
        name = name.lower()
        return [v for k, v in self.fields if k.lower() == name]

    def tokens(self, name: bytes) -> list[str]:
        return [t.strip().lower().decode("latin-1") for v in self.field_all(name) for t in v.split(b",") if t.strip()]

    @property
    def persistent(self) -> bool:
        """The connection may carry another exchange after this message."""
        if self.outcome != "complete" or self.framing == "close":
            return False
        conn = self.tokens(b"connection")
        if self.version == b"HTTP/1.0":
            return "keep-alive" in conn
        return "close" not in conn


def _parse_fields(src: ByteSource, deadline: float, msg: Message, raw: bytearray) -> list[tuple[bytes, bytes]] | None:
    out = []
    while True:
        line = src.line(deadline)
        if line is None:
            return None
        raw += line + CRLF
        if line == b"":
            return out
        if line[:1] in (b" ", b"\t"):
            raise Malformed(f"obs-fold line {line[:80]!r}")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.match(name):
            raise Malformed(f"bad field line {line[:80]!r}")
        value = value.strip(b" \t")
        if _CTL.search(value):
            raise Malformed(f"control byte in field {line[:80]!r}")
        out.append((name, value))


def read_message(src: ByteSource, is_head: bool, deadline: float, accept_10: bool = True) -> Message:
    """Reads one response strictly (RFC 9112): interim heads, final head, body per §6.3."""
    msg = Message()
    raw = bytearray()
    try:
        while True:
            line = src.line(deadline, limit=1 << 16)
            if line is None:
                msg.outcome = "no-response" if not raw and not src.buf else "truncated"
                msg.reset = src.reset
                return msg
            raw += line + CRLF
            m = _STATUS_LINE.match(line)
            if not m or (m.group(1) == b"0" and not accept_10):
                raise Malformed(f"bad status line {line[:100]!r}")
            reason = m.group(3) or b""
            if _CTL.search(reason):
                raise Malformed(f"control byte in the status line {line[:100]!r}")
            fields = _parse_fields(src, deadline, msg, raw)
            if fields is None:
                msg.outcome = "truncated"
                msg.raw_head = bytes(raw)
                msg.reset = src.reset
                return msg
            status = int(m.group(2))
            if 100 <= status < 200:
                if status == 101:
                    raise Malformed("101 Switching Protocols")
                msg.interim.append((status, reason))
                continue
            msg.version, msg.status, msg.reason, msg.fields = b"HTTP/1." + m.group(1), status, reason, fields
            msg.raw_head = bytes(raw)
            break
        lengths = [v.strip() for value in msg.field_all(b"content-length") for v in value.split(b",")]
        te = msg.tokens(b"transfer-encoding")
        if lengths and te:
            raise Malformed("Content-Length beside Transfer-Encoding")
        if len(lengths) > 1:
            raise Malformed(f"several Content-Length values {lengths}")
        if lengths and not re.fullmatch(rb"\d{1,18}", lengths[0]):
            raise Malformed(f"invalid Content-Length {lengths[0]!r}")
        if is_head or msg.status in (204, 304):
            msg.framing = "none"
            msg.outcome = "complete"
            return msg
        if te:
            if te.count("chunked") > 1 or ("chunked" in te and te[-1] != "chunked"):
                raise Malformed(f"Transfer-Encoding {te}")
            if te[-1] == "chunked":
                msg.codings = te[:-1]
                msg.framing = "chunked"
                return _read_chunked(src, deadline, msg)
            msg.codings = te
            msg.framing = "close"
        elif lengths:
            msg.framing = "length"
            msg.body, ok = src.exact(int(lengths[0]), deadline)
            msg.outcome = "complete" if ok else "truncated"
            msg.reset = src.reset
            return msg
        else:
            msg.framing = "close"
        msg.body = src.rest(deadline)
        msg.reset = src.reset
        msg.outcome = "truncated" if src.reset else "complete"
        return msg
    except Malformed as e:
        msg.outcome = "malformed"
        msg.error = str(e)
        msg.raw_head = msg.raw_head or bytes(raw)
        return msg
    except TimeoutError:
        msg.outcome = "timeout"
        msg.raw_head = msg.raw_head or bytes(raw)
        return msg


def _read_chunked(src: ByteSource, deadline: float, msg: Message) -> Message:
    body = bytearray()
    while True:
        line = src.line(deadline)
        if line is None:
            break
        size_text = line.split(b";", 1)[0].strip(b" \t")
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,15}", size_text):
            raise Malformed(f"bad chunk size line {line[:60]!r}")
        size = int(size_text, 16)
        if size == 0:
            raw = bytearray()
            trailers = _parse_fields(src, deadline, msg, raw)
            if trailers is None:
                break
            msg.trailers = trailers
            msg.body = bytes(body)
            msg.outcome = "complete"
            return msg
        data, ok = src.exact(size, deadline)
        body += data
        if not ok:
            break
        end, ok = src.exact(2, deadline)
        if not ok:
            break
        if end != CRLF:
            raise Malformed(f"chunk data not followed by CRLF: {end!r}")
    msg.body = bytes(body)
    msg.outcome = "truncated"
    msg.reset = src.reset
    return msg


def undo_codings(body: bytes, codings: list[str]) -> bytes | None:
    """The body with the transfer codings undone (last applied first); None when one fails."""
    for coding in reversed(codings):
        try:
            if coding in ("gzip", "x-gzip"):
                body = gzip.decompress(body)
            elif coding == "chunked":
                msg = _read_chunked(ByteSource(data=body), time.monotonic() + 5, Message())
                if msg.outcome != "complete":
                    return None
                body = msg.body
            else:
                return None
        except (OSError, EOFError, ValueError, Malformed):
            return None
    return body


# ------------------------------------------------------------------------------------------------
# The origin


@dataclass
class Served:
    """One request the origin answered (a proxy may send the same request twice: curl retries a
    request whose reused connection closed before any byte of the answer)."""
    rid: str
    method: str
    case: str
    connection: int                 # the origin's connection number
    index: int                      # requests before this one on that connection
    request_body_sha: str | None    # None: the request body did not arrive whole
    sent: int = 0                   # response bytes written
    done: str = ""                  # "ok", "peer closed", "stopped"
    t_start: float = 0.0
    t_end: float = 0.0
    t_first: float = 0.0            # when the first response byte was written (0: none)


class FuzzOrigin:
    """The fuzzing origin on 127.0.0.1, one thread per connection."""

    def __init__(self, seed: int | str, host: str = "127.0.0.1", port: int = 0):
        self.seed = seed
        self._lock = threading.Lock()
        self.served: dict[str, list[Served]] = {}
        self.unknown: list[bytes] = []          # requests for paths this origin does not know
        self.connections = 0
        self._open: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, port))
        self._listener.listen(512)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, name=f"fuzz-origin-{self.port}", daemon=True)
        self._thread.start()

    def url(self, rid: str) -> str:
        return f"http://127.0.0.1:{self.port}/fz/{rid}"

    def plan(self, rid: str, method: str) -> Plan:
        return make_plan(self.seed, rid, method)

    def records(self, rid: str) -> list[Served]:
        with self._lock:
            return list(self.served.get(rid, ()))

    def stop(self) -> None:
        self._stopping.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)   # wakes the thread blocked in accept()
        except OSError:
            pass
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            socks = list(self._open)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    # ---- connections -------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                number = self.connections
                self._open.add(sock)
            threading.Thread(target=self._serve, args=(sock, number), daemon=True,
                             name=f"fuzz-origin-conn-{number}").start()

    def _serve(self, sock: socket.socket, number: int) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        src = ByteSource(sock)
        index = 0
        try:
            while not self._stopping.is_set():
                req = self._read_request(src, sock)
                if req is None:
                    return
                method, target, body_sha = req
                m = re.fullmatch(r"/fz/([A-Za-z0-9_-]+)", target.split("?")[0])
                if not m:
                    with self._lock:
                        self.unknown.append(f"{method} {target}".encode())
                    sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    return
                rid = m.group(1)
                plan = self.plan(rid, method)
                rec = Served(rid, method, plan.case, number, index, body_sha, t_start=time.monotonic())
                with self._lock:
                    self.served.setdefault(rid, []).append(rec)
                index += 1
                keep = self._send(sock, plan, rec)
                rec.t_end = time.monotonic()
                if not keep or body_sha is None:
                    return
        except (OSError, TimeoutError, Malformed, ValueError):
            return
        finally:
            with self._lock:
                self._open.discard(sock)
            try:
                sock.close()
            except OSError:
                pass

    def _read_request(self, src: ByteSource, sock: socket.socket):
        deadline = time.monotonic() + 300
        line = src.line(deadline)
        while line == b"":
            line = src.line(deadline)
        if line is None:
            return None
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3:
            raise Malformed("bad request line")
        method, target, _ = parts
        headers = {}
        while True:
            h = src.line(deadline)
            if h is None:
                return None
            if h == b"":
                break
            k, _, v = h.partition(b":")
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        if any(v.lower() == b"100-continue" for v in headers.get(b"expect", [])):
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        h = hashlib.sha256()
        complete = True
        if b"chunked" in b",".join(headers.get(b"transfer-encoding", [])).lower():
            msg = _read_chunked(src, deadline, Message())
            complete = msg.outcome == "complete"
            h.update(msg.body)
        elif headers.get(b"content-length"):
            data, complete = src.exact(int(headers[b"content-length"][0]), deadline)
            h.update(data)
        return method, target, (h.hexdigest() if complete else None)

    def _send(self, sock: socket.socket, plan: Plan, rec: Served) -> bool:
        """Writes the plan's bytes; True when the connection stays open for another request."""
        try:
            for step in plan.steps:
                if self._stopping.is_set():
                    rec.done = "stopped"
                    return False
                kind = step[0]
                if kind == "send":
                    if step[1]:
                        rec.t_first = rec.t_first or time.monotonic()
                        sock.sendall(step[1])
                        rec.sent += len(step[1])
                elif kind == "sleep":
                    time.sleep(step[1])
                elif kind == "trickle":
                    data, gap = step[1], step[2]
                    rng = random.Random(len(data))
                    for i in range(len(data)):
                        rec.t_first = rec.t_first or time.monotonic()
                        sock.sendall(data[i:i + 1])
                        rec.sent += 1
                        if rng.random() < 0.5:
                            time.sleep(rng.uniform(0, gap))
                elif kind == "reset":
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    rec.done = "reset"
                    return False
                elif kind == "hang":
                    rec.done = "hung until the peer closed"
                    self._wait_peer_close(sock, 120)
                    return False
        except OSError:
            rec.done = "peer closed"
            return False
        rec.done = "ok"
        if not plan.keep_open:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            self._wait_peer_close(sock, 2)
        return plan.keep_open

    def _wait_peer_close(self, sock: socket.socket, limit: float) -> None:
        deadline = time.monotonic() + limit
        while not self._stopping.is_set() and time.monotonic() < deadline:
            sock.settimeout(0.2)
            try:
                if not sock.recv(65536):
                    return
            except socket.timeout:
                continue
            except OSError:
                return


# ------------------------------------------------------------------------------------------------
# Self-check and the command line


def reference_read(plan: Plan) -> Message:
    """What a strict RFC 9112 recipient reads from the plan's bytes (steps joined, extras left out)."""
    data = b"".join(s[1] for s in plan.steps if s[0] in ("send", "trickle"))
    if plan.extra:
        data = data[: len(data) - len(plan.extra)]
    src = ByteSource(data=data)
    return read_message(src, plan.method == "HEAD", time.monotonic() + 10)


def self_check(count: int = 20000) -> None:
    """Every valid plan reads, with the strict reader, as exactly what the plan says a proxy must
    deliver; every plan that is invalid and not recoverable fails to read or reads as truncated."""
    problems = []
    kinds = {"valid": 0, "recoverable": 0, "invalid": 0}
    for i in range(count):
        method = ["GET", "GET", "HEAD", "POST"][i % 4]
        plan = make_plan("selfcheck", f"s{i}", method)
        assert plan == make_plan("selfcheck", f"s{i}", method), "plans are not deterministic"
        msg = reference_read(plan)
        if plan.valid:
            kinds["valid"] += 1
            ok = (msg.outcome == "complete" and msg.status == plan.status and msg.reason == plan.reason
                  and msg.body == plan.body and msg.codings == plan.codings
                  and [c for c, _ in msg.interim] == plan.interim and msg.trailers == plan.trailers
                  and undo_codings(msg.body, msg.codings) == plan.plain)
            if not ok:
                problems.append(f"valid plan misread: {plan.summary()} -> {msg.outcome} {msg.error} "
                                f"{msg.status} {msg.reason!r} {len(msg.body)}")
        elif plan.recoverable:
            kinds["recoverable"] += 1
        else:
            kinds["invalid"] += 1
            if msg.outcome == "complete" and not plan.may_time_out:
                problems.append(f"invalid plan reads as complete: {plan.summary()}")
    if problems:
        print("\n".join(problems[:30]))
        raise SystemExit(f"{len(problems)} problems")
    print(f"fuzz origin self-check OK: {count} plans, {kinds}")


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", default="0")
    p.add_argument("--show", metavar="RID", help="print the plan for this request id")
    p.add_argument("--method", default="GET")
    p.add_argument("--serve", action="store_true", help="serve on --port until interrupted")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--only", help="comma-separated framings/mutations/transports to draw from")
    p.add_argument("--self-check", action="store_true")
    args = p.parse_args(argv)
    if args.only:
        restrict(set(args.only.split(",")))
    seed = int(args.seed) if args.seed.isdigit() else args.seed
    if args.self_check:
        self_check()
    elif args.show:
        plan = make_plan(seed, args.show, args.method.upper())
        print(plan.summary())
        for step in plan.steps:
            if step[0] in ("send", "trickle"):
                data = step[1]
                shown = data if len(data) <= 2000 else data[:1500] + b"<...>" + data[-400:]
                print(f"{step[0]} {len(data)} bytes: {shown!r}")
            else:
                print(step)
        print("then:", "keep the connection open" if plan.keep_open else "close")
    elif args.serve:
        origin = FuzzOrigin(seed, port=args.port)
        print(f"fuzz origin (seed {seed}) on http://127.0.0.1:{origin.port}/fz/<rid>", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            origin.stop()
    else:
        p.print_help()


if __name__ == "__main__":
    main(sys.argv[1:])
