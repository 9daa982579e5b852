"""The range origin (range_origin.py) by itself, with the real curl and no daemon: the files and
their validators, Range and If-Range, the breaks a resuming client gets past, the behaviours the
download tests rely on (ignore-range, answer-416, change-after, 503 first, trickle, status,
Content-Disposition) and HTTPS with a CA made here."""

from __future__ import annotations

import hashlib
import time

import pytest

from helpers import curl, file_sha256 as sha256_of, parse_head_block
from range_origin import (
    OLD_DATES, VERSION_STEP, file_bytes, file_sha256, make_tls_files, start_range_origin, strong_etag,
)

MiB = 1024 * 1024


@pytest.fixture
def range_origin():
    o = start_range_origin()
    yield o
    o.stop()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    return make_tls_files(tmp_path_factory.mktemp("tls"))


def get(url: str, *args: str, timeout: float = 60):
    """curl URL with the response head dumped before the body: (exit code, [(status, headers)], body)."""
    r = curl(None, "--max-time", "30", "-D", "/dev/stderr", *args, url, timeout=timeout)
    return r.returncode, parse_head_block(r.stderr), r.stdout


def test_content_is_deterministic_and_position_bound():
    """Same (size, seed), same bytes; no two 64 KiB blocks alike; version 2 differs everywhere."""
    data = file_bytes(3 * MiB + 5, 7)
    assert hashlib.sha256(data).hexdigest() == file_sha256(3 * MiB + 5, 7)
    assert file_bytes(3 * MiB + 5, 7, 1_000_003, 2 * MiB) == data[1_000_003:2 * MiB]
    blocks = {data[i:i + 64 * 1024] for i in range(0, 3 * MiB, 64 * 1024)}
    assert len(blocks) == 48
    other = file_bytes(3 * MiB + 5, 7 + VERSION_STEP)
    assert all(other[i:i + 4096] != data[i:i + 4096] for i in range(0, len(data), 4096))


def test_whole_file_with_validators(range_origin):
    size = 2 * MiB + 3
    url = range_origin.url(f"/a/b.bin?size={size}&seed=3")
    rc, heads, body = get(url)
    assert rc == 0
    assert hashlib.sha256(body).hexdigest() == file_sha256(size, 3)
    status, h = heads[-1]
    assert status == 200
    assert h["content-length"] == str(size)
    assert h["accept-ranges"] == "bytes"
    assert h["etag"] == strong_etag(size, 3) == f'"s3-v1-{size}"'
    assert h["last-modified"] == OLD_DATES[1]
    assert "content-disposition" not in h
    [req] = range_origin.requests
    assert (req.method, req.target, req.range, req.if_range) == ("GET", f"/a/b.bin?size={size}&seed=3", None, None)
    answered = (req.status, req.version, req.body_start, req.body_end, req.sent, req.broke)
    assert answered == (200, 1, 0, size, size, False)

    r = curl(None, "--max-time", "30", "-I", url)  # the head goes to stdout, and nothing else
    [(status, h)] = parse_head_block(r.stdout)
    assert (r.returncode, status, h["content-length"], h["etag"]) == (0, 200, str(size), strong_etag(size, 3))
    assert range_origin.requests[-1].method == "HEAD"


def test_range_and_if_range(range_origin):
    size = 1 * MiB
    url = range_origin.url(f"/r?size={size}")
    whole = file_bytes(size)
    etag = strong_etag(size)

    def ranged(*headers: str):
        args = [a for h in headers for a in ("-H", h)]
        rc, heads, body = get(url, *args)
        assert rc == 0, heads
        return heads[-1][0], heads[-1][1], body

    status, h, body = ranged("Range: bytes=1000-")
    assert (status, h["content-range"], h["content-length"]) == (206, f"bytes 1000-{size - 1}/{size}", str(size - 1000))
    assert body == whole[1000:]
    status, h, body = ranged("Range: bytes=10-19")
    assert (status, h["content-range"], body) == (206, f"bytes 10-19/{size}", whole[10:20])
    status, h, body = ranged("Range: bytes=-100")
    assert (status, body) == (206, whole[-100:])
    status, h, body = ranged(f"Range: bytes={size}-")
    assert (status, h["content-range"]) == (416, f"bytes */{size}")
    status, h, body = ranged("Range: bytes=0-9,20-29")
    assert (status, body) == (200, whole)

    status, _, body = ranged("Range: bytes=5000-", f"If-Range: {etag}")
    assert (status, body) == (206, whole[5000:])
    status, _, body = ranged("Range: bytes=5000-", 'If-Range: "something-else"')
    assert (status, body) == (200, whole)
    status, _, body = ranged("Range: bytes=5000-", f"If-Range: W/{etag}")
    assert (status, body) == (200, whole), "a weak validator never matches If-Range"
    status, _, body = ranged("Range: bytes=5000-", f"If-Range: {OLD_DATES[1]}")
    assert (status, body) == (206, whole[5000:])
    status, _, body = ranged("Range: bytes=5000-", f"If-Range: {OLD_DATES[2]}")
    assert (status, body) == (200, whole)
    got = [(r.range, r.if_range) for r in range_origin.requests]
    assert got[-1] == ("bytes=5000-", OLD_DATES[2]) and got[0] == ("bytes=1000-", None)


@pytest.mark.parametrize("query, etag, last_modified", [
    ("etag=weak", "W/", OLD_DATES[1]),
    ("etag=none", None, OLD_DATES[1]),
    ("last-modified=none", '"', None),
    ("etag=none&last-modified=recent", None, "recent"),
    ("no-validators=1", None, None),
])
def test_validator_variants(range_origin, query, etag, last_modified):
    rc, heads, body = get(range_origin.url(f"/v?size=1000&{query}"))
    assert rc == 0 and body == file_bytes(1000)
    h = heads[-1][1]
    if etag is None:
        assert "etag" not in h
    else:
        assert h["etag"].startswith(etag) and h["etag"].endswith('-v1-1000"')
    if last_modified is None:
        assert "last-modified" not in h
    elif last_modified == "recent":
        age = time.time() - time.mktime(time.strptime(h["last-modified"], "%a, %d %b %Y %H:%M:%S GMT")) + time.timezone
        assert 0 < age < 60, h["last-modified"]
    else:
        assert h["last-modified"] == last_modified


def test_breaks_and_a_resuming_client(range_origin, tmp_path):
    """A file that breaks at two offsets: curl gets exactly the bytes up to each break (exit 18,
    a transfer closed with bytes outstanding), and `curl -C -` with If-Range gets the rest."""
    size = 5 * MiB
    url = range_origin.url(f"/file.bin?size={size}&break={MiB},3000001")
    out = tmp_path / "file.bin"
    etag = strong_etag(size)
    sizes = []
    codes = []
    for _ in range(3):
        r = curl(None, "--max-time", "30", "-C", "-", "-H", f"If-Range: {etag}", "-o", str(out), url)
        codes.append(r.returncode)
        sizes.append(out.stat().st_size)
    assert codes == [18, 18, 0]
    assert sizes == [MiB, 3000001, size]
    assert sha256_of(out) == (size, file_sha256(size))
    reqs = range_origin.requests_for(url)
    assert [(r.range, r.status, r.body_start, r.sent, r.broke) for r in reqs] == [
        (None, 200, 0, MiB, True),
        (f"bytes={MiB}-", 206, MiB, 3000001 - MiB, True),
        ("bytes=3000001-", 206, 3000001, size - 3000001, False),
    ]
    assert [r.if_range for r in reqs[1:]] == [etag, etag]
    # each offset breaks once: the file now comes whole
    assert get(url)[2] == file_bytes(size)


def test_break_with_a_reset(range_origin, tmp_path):
    url = range_origin.url(f"/rst?size={2 * MiB}&break={MiB}&reset=1")
    out = tmp_path / "rst.bin"
    r = curl(None, "--max-time", "30", "-o", str(out), url)
    assert r.returncode == 56, r.stderr  # CURLE_RECV_ERROR: connection reset
    assert b"reset" in r.stderr.lower()
    data = out.read_bytes()
    assert len(data) <= MiB and data == file_bytes(2 * MiB)[:len(data)]


def test_ignore_range_and_416(range_origin):
    size = 100_000
    rc, heads, body = get(range_origin.url(f"/i?size={size}&ignore-range=1"), "-H", "Range: bytes=10-")
    assert (rc, heads[-1][0], body) == (0, 200, file_bytes(size))
    assert heads[-1][1]["accept-ranges"] == "bytes"
    url = range_origin.url(f"/n?size={size}&answer-416=1")
    rc, heads, body = get(url, "-H", "Range: bytes=10-")
    assert heads[-1][0] == 416 and heads[-1][1]["content-range"] == f"bytes */{size}"
    rc, heads, body = get(url)
    assert (heads[-1][0], body) == (200, file_bytes(size)), "a request without Range gets the file"


def test_change_after(range_origin):
    """After N GETs the file is version 2: other bytes, ETag and date; If-Range with the old ETag
    gets a 200 with all of version 2."""
    size = 300_000
    url = range_origin.url(f"/c?size={size}&seed=4&change-after=1")
    _, heads, body = get(url)
    assert body == file_bytes(size, 4) and heads[-1][1]["etag"] == strong_etag(size, 4, 1)
    _, heads, body = get(url, "-H", "Range: bytes=1000-", "-H", f"If-Range: {strong_etag(size, 4, 1)}")
    assert heads[-1][0] == 200
    assert hashlib.sha256(body).hexdigest() == file_sha256(size, 4 + VERSION_STEP)
    assert heads[-1][1]["etag"] == strong_etag(size, 4, 2)
    assert heads[-1][1]["last-modified"] == OLD_DATES[2]
    _, heads, body = get(url, "-H", "Range: bytes=1000-", "-H", f"If-Range: {strong_etag(size, 4, 2)}")
    assert (heads[-1][0], body) == (206, file_bytes(size, 4 + VERSION_STEP)[1000:])
    assert [r.version for r in range_origin.requests_for(url)] == [1, 2, 2]


def test_503_first_status_and_disposition(range_origin):
    url = range_origin.url("/s?size=1000&status-503-first=2&retry-after=3")
    for _ in range(2):
        _, heads, _ = get(url)
        assert heads[-1][0] == 503 and heads[-1][1]["retry-after"] == "3"
    _, heads, body = get(url)
    assert (heads[-1][0], body) == (200, file_bytes(1000))

    _, heads, body = get(range_origin.url("/x?status=404"))
    assert (heads[-1][0], body) == (404, b"status 404\n")

    _, heads, body = get(range_origin.url("/dl/?size=10&disposition=x.bin"))
    assert heads[-1][1]["content-disposition"] == 'attachment; filename="x.bin"'


def test_trickle(range_origin):
    """trickle=RATE: 256 KiB at 512 KiB/s takes at least about half a second."""
    t0 = time.monotonic()
    _, _, body = get(range_origin.url(f"/t?size={256 * 1024}&trickle={512 * 1024}"))
    assert body == file_bytes(256 * 1024)
    assert time.monotonic() - t0 >= 0.4


def test_https_with_the_throwaway_ca(tls_files, tmp_path):
    """Over HTTPS: trusted with the CA (127.0.0.1 and localhost), refused without it (exit 60);
    a break is a truncated transfer there too, and Range works."""
    o = start_range_origin(tls=tls_files.server_context())
    try:
        size = 3 * MiB
        url = o.url(f"/secure.bin?size={size}&break={MiB}")
        assert url.startswith("https://127.0.0.1:")
        r = curl(None, "--max-time", "30", url)
        assert r.returncode == 60, r.stderr  # CURLE_PEER_FAILED_VERIFICATION
        out = tmp_path / "secure.bin"
        r = curl(None, "--max-time", "30", "--cacert", tls_files.ca_cert, "-o", str(out), url)
        assert r.returncode in (18, 56), r.stderr
        assert out.stat().st_size == MiB
        r = curl(None, "--max-time", "30", "--cacert", tls_files.ca_cert, "-C", "-", "-o", str(out), url)
        assert r.returncode == 0, r.stderr
        assert sha256_of(out) == (size, file_sha256(size))
        assert [r.range for r in o.requests_for(url)][-1] == f"bytes={MiB}-"

        r = curl(None, "--max-time", "30", "--cacert", tls_files.ca_cert, o.url("/l?size=1000", host="localhost"))
        assert (r.returncode, r.stdout) == (0, file_bytes(1000))
    finally:
        o.stop()
