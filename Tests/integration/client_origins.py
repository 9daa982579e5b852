"""Small HTTPS origins on 127.0.0.1 for the real-client interception tests: a static one (fixed
paths to fixed bodies: a pip simple index and its wheel, a page with subresources), a smart-HTTP
git server (`git http-backend` as a CGI), and the bad certificates (expired, self-signed, for
another name) the daemon must refuse. Each records the requests it served."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import os
import socketserver
import ssl
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Served:
    method: str
    path: str        # with its query
    status: int
    length: int      # of the body sent


class _TLSServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler, context: ssl.SSLContext, owner: "HTTPSOrigin") -> None:
        self.context = context
        self.owner = owner
        super().__init__(("127.0.0.1", 0), handler)

    def get_request(self):
        sock, address = self.socket.accept()
        # The handshake happens in the handler's thread, on first read.
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request, client_address):  # quiet: clients hang up on purpose
        pass


class HTTPSOrigin:
    """A threaded HTTPS server on 127.0.0.1 with `handler` (a BaseHTTPRequestHandler subclass
    that may read `self.server.owner`). `requests` lists what it served."""

    def __init__(self, handler, context: ssl.SSLContext) -> None:
        self._lock = threading.Lock()
        self._requests: list[Served] = []
        self._server = _TLSServer(handler, context, self)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"https-origin-{self.port}", daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    @property
    def requests(self) -> list["Served"]:
        with self._lock:
            return list(self._requests)

    def record(self, served: "Served") -> None:
        with self._lock:
            self._requests.append(served)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# ----------------------------------------------------------------------------------------------
# static bodies


class _StaticHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        found = self.server.owner.files.get(self.path.split("?", 1)[0])
        body, content_type = found if found else (b"not found\n", "text/plain")
        self.server.owner.record(Served("GET", self.path, 200 if found else 404, len(body)))
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


class StaticOrigin(HTTPSOrigin):
    """Serves `files` ({path: (body, content type)}); any other path is a 404."""

    def __init__(self, files: dict[str, tuple[bytes, str]], context: ssl.SSLContext) -> None:
        self.files = files
        super().__init__(_StaticHandler, context)


# ----------------------------------------------------------------------------------------------
# git smart HTTP


class _GitHandler(http.server.BaseHTTPRequestHandler):
    """Runs `git http-backend` once per request with the CGI variables it reads, and relays its
    answer with a Content-Length (the whole answer is small and read first)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _backend(self) -> None:
        path, _, query = self.path.partition("?")
        body = self._body()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.owner.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "tester",
            "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for name in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(name):
                env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
        result = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env, timeout=60)
        head, _, answer = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, answer = result.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.server.owner.record(Served(self.command, self.path, status, len(answer)))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def git_env(home: Path) -> dict[str, str]:
    """An environment for git in the tests: HOME at `home`, no system config, no prompt, a fixed
    author; without GIT_SSL_CAINFO and its kin (set on some machines), which would win over
    -c http.sslCAInfo."""
    from helpers import clean_env
    env = clean_env({"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
                     "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
                     "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test"})
    for name in ("GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY"):
        env.pop(name, None)
    return env


class GitOrigin(HTTPSOrigin):
    """Smart-HTTP git for the bare repositories under `root` (pushes allowed where the repository
    sets http.receivepack)."""

    def __init__(self, root: Path, context: ssl.SSLContext) -> None:
        self.root = root
        super().__init__(_GitHandler, context)


# ----------------------------------------------------------------------------------------------
# certificates the daemon must refuse


@dataclass
class CertPair:
    cert: str
    key: str

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def make_bad_cert(kind: str, directory: Path, ca_cert: str, ca_key: str) -> CertPair:
    """A server certificate the test CA's trust does not make valid for https://127.0.0.1:
    "expired" (signed by the CA, ended yesterday), "self-signed" (for 127.0.0.1, its own issuer),
    "wrong-name" (signed by the CA, for DNS:other.test only)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"afproxy test {kind}")])
    if kind == "self-signed":
        issuer, signing_key = subject, key
    else:
        ca = x509.load_pem_x509_certificate(Path(ca_cert).read_bytes())
        issuer = ca.subject
        signing_key = serialization.load_pem_private_key(Path(ca_key).read_bytes(), password=None)
    if kind == "expired":
        not_before, not_after = now - datetime.timedelta(days=3), now - datetime.timedelta(days=1)
    else:
        not_before, not_after = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=2)
    names = [x509.DNSName("other.test")] if kind == "wrong-name" else [
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(signing_key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    pair = CertPair(str(directory / f"{kind}.pem"), str(directory / f"{kind}.key"))
    Path(pair.cert).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    Path(pair.key).write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                 serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
    return pair
