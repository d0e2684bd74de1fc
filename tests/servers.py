"""Real HTTP servers on 127.0.0.1 for the network tests, and tiny real wheels to serve."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    content_type: str = "application/octet-stream"
    declared_length: int | None = None  # a Content-Length that lies: the connection closes early
    headers: dict[str, str] = field(default_factory=dict)
    trickle_s: float = 0.0  # send the body one byte at a time, this many seconds apart
    trickle_headers: bool = False  # trickle the status line and headers too


@dataclass
class LocalServer:
    routes: dict[str, Reply] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up early is expected here
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextlib.contextmanager
def serve(routes: dict[str, Reply] | None = None) -> Iterator[LocalServer]:
    state = LocalServer(routes=dict(routes or {}))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            state.seen.append((path, dict(self.headers.items())))
            reply = state.routes.get(path, Reply(b"not found", 404, "text/plain"))
            if reply.trickle_headers:
                head = f"HTTP/1.1 {reply.status} OK\r\nContent-Length: {len(reply.body)}\r\n\r\n"
                _trickle(self.wfile, head.encode() + reply.body, reply.trickle_s)
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            length = reply.declared_length if reply.declared_length is not None else len(reply.body)
            self.send_header("Content-Length", str(length))
            if length != len(reply.body):
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if reply.trickle_s:
                _trickle(self.wfile, reply.body, reply.trickle_s)
            else:
                self.wfile.write(reply.body)

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

    with _running(Handler) as port:
        state.port = port
        yield state


@contextlib.contextmanager
def _running(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """A threaded server of ``handler`` on a free loopback port, for as long as the block runs; yields the port."""
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _trickle(out: io.BufferedIOBase, data: bytes, every_s: float) -> None:
    """One byte at a time: each read the client makes gets something well within any read timeout."""
    for i in range(len(data)):
        out.write(data[i : i + 1])
        out.flush()
        time.sleep(every_s)


@dataclass
class Proxy:
    url: str = ""
    contacts: list[str] = field(default_factory=list)  # "METHOD target" of every request it was sent


@contextlib.contextmanager
def proxy_server(status: int = 502) -> Iterator[Proxy]:
    """An HTTP proxy on 127.0.0.1 that answers ``status`` to everything (GET and CONNECT alike) and records
    that it was asked. Yields it; ``url`` is its address."""
    state = Proxy()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _refuse(self) -> None:
            state.contacts.append(f"{self.command} {self.path}")
            body = b"proxy says no"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_HEAD = do_POST = do_CONNECT = _refuse

        def log_message(self, format: str, *args: object) -> None:
            pass

    with _running(Handler) as port:
        state.url = f"http://127.0.0.1:{port}"
        yield state


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers. Yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        sock.close()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def make_wheel(directory: Path, name: str, version: str, tag: str = "py3-none-any") -> Path:
    """A minimal valid wheel: one module ``<name>.py``, METADATA, WHEEL and RECORD."""
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    files = {
        f"{module}.py": f'VERSION = "{version}"\n'.encode(),
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: dnnresolve-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
        ).encode(),
    }
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()
    path = directory / f"{module}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name_in_zip, data in files.items():
            zf.writestr(name_in_zip, data)
    return path
