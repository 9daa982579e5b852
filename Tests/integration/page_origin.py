"""A page and its images, served over plain HTTP on 127.0.0.1: what a browser loads as many
requests at once (the capture and SOCKS5 tests' Chromium)."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class PageOrigin:
    """`/index.html` with `count` images (`/img/N.bin`, sizes differing), files under `root`."""

    def __init__(self, root: Path, count: int = 20):
        (root / "img").mkdir(parents=True)
        self.images = {f"/img/{n}.bin": bytes([n]) * (1000 + 37 * n) for n in range(count)}
        for path, body in self.images.items():
            (root / path.lstrip("/")).write_bytes(body)
        (root / "index.html").write_text(
            "<html><body><h1>many requests</h1>" + "".join(f'<img src="{p}">' for p in self.images)
            + "</body></html>")
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *args: None
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def urls(self, base: str) -> set[str]:
        """The page's URL and its images', under `base` (`http://host:port`)."""
        return {f"{base}/index.html"} | {base + path for path in self.images}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
