"""HTTP plumbing shared by `update` and the index checks: which URLs are allowed, credentials kept out of
every message, timeouts and an overall deadline, proxies (never for this machine), and one bounded GET that
turns every failure into a one-line error."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast
from urllib.parse import unquote, urljoin, urlsplit

from .credentials import redact
from .errors import UserError
from .records import record

if TYPE_CHECKING:
    import threading

    import requests

TIMEOUT_ENV = "DNNRESOLVE_HTTP_TIMEOUT"
DEADLINE_ENV = "DNNRESOLVE_HTTP_DEADLINE"
DEADLINE_S = 60.0  # a whole `update`, or all the index checks of one `plan --verify`
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 30.0
MAX_BYTES = 32 * 1024 * 1024  # a matrix or an index page; anything bigger is not what we asked for


class NetworkError(UserError):
    """A download failed or was refused; the message is one line and holds no credentials."""


class HttpStatusError(NetworkError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _scrub(text: str, url: str, proxy: str | None = None) -> str:
    """Redact URLs in ``text``, and the user names and passwords of ``url`` and ``proxy`` wherever they still
    appear."""
    out = redact(text)
    for address in (url, proxy or ""):
        try:
            parts = urlsplit(address if "://" in address else "http://" + address)
        except ValueError:
            continue
        for secret in (parts.password, parts.username):
            if secret and len(secret) >= 3:
                for form in {secret, unquote(secret)}:
                    out = out.replace(form, "***")
    return out


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str = "URL") -> None:
    """HTTPS anywhere; plain HTTP only to this machine (127.0.0.0/8, ::1, localhost)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise NetworkError(f"{what} {redact(url)!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not host:
        raise NetworkError(f"{what} {redact(url)!r} is not an http(s) URL")
    if scheme == "http" and not is_loopback(host):
        raise NetworkError(
            f"{what} {redact(url)} uses plain http; only https is accepted (plain http only to this machine)"
        )


def timeouts() -> tuple[float, float]:
    """(connect, read) seconds; DNNRESOLVE_HTTP_TIMEOUT=S sets both."""
    value = _seconds(TIMEOUT_ENV)
    return (value, value) if value is not None else (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)


def _seconds(name: str) -> float | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise UserError(f"{name}={raw!r} is not a positive number of seconds")
    return value


@record(frozen=True)
class Deadline:
    """When a piece of network work must be over, all its requests together (connect, headers, body).

    Read timeouts alone never end a server that trickles a byte at a time; this does."""

    total: float  # seconds
    ends: float  # time.monotonic()
    what: str = "the download"

    @classmethod
    def start(cls, total: float | None = None, what: str = "the download") -> Deadline:
        """From now: ``total`` seconds, else $DNNRESOLVE_HTTP_DEADLINE, else DEADLINE_S."""
        if total is None:
            total = _seconds(DEADLINE_ENV) or DEADLINE_S
        return cls(total, time.monotonic() + total, what)

    def left(self) -> float:
        return self.ends - time.monotonic()

    def missed(self, shown: str, started: bool = True, via: str = "") -> NetworkError:
        when = "while reading" if started else "before reading"
        where = f"{shown}, {via}" if via else shown
        return NetworkError(
            f"{self.what} took longer than {self.total:g} s; gave up {when} {where} ({DEADLINE_ENV} sets the limit)"
        )


@record(frozen=True)
class Fetched:
    url: str  # after redirects, redacted
    status: int
    content_type: str
    body: bytes


def get(
    url: str,
    accept: str | None = None,
    max_bytes: int = MAX_BYTES,
    allow_http: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    deadline: Deadline | None = None,
) -> Fetched:
    """GET ``url`` whole, or raise NetworkError with a one-line message. HTTP errors raise too.

    ``allow_http``: plain http is fine for read-only checks (an index page); never for what we keep.
    ``on_progress(received, expected)`` hears of each chunk (expected: Content-Length, or 0).
    ``deadline``: when the whole request must be over (default: DEADLINE_S from now). The request runs on a
    daemon thread so that the caller returns at the deadline whatever phase the request is stuck in."""
    import threading

    if not allow_http:
        check_url(url)
    shown = redact(url)
    timeout = timeouts()
    deadline = deadline or Deadline.start()
    if deadline.left() <= 0:
        raise deadline.missed(shown, started=False)
    attempt = _Attempt(threading.Event())

    def work() -> None:
        try:
            attempt.result = _fetch(url, accept, max_bytes, allow_http, on_progress, timeout, attempt)
        except Exception as exc:  # handed to the caller's thread, which raises it
            attempt.error = exc

    worker = threading.Thread(target=work, name="dnnresolve-http", daemon=True)
    worker.start()
    worker.join(max(deadline.left(), 0.0))
    if worker.is_alive():
        attempt.abandon()
        raise deadline.missed(redact(attempt.current or url), via=_via(attempt.proxy, attempt.current or url))
    if attempt.error is not None:
        raise attempt.error
    assert attempt.result is not None
    return attempt.result


class _Attempt:
    """What the request thread shares with its caller: the way to stop it, and what it ended with."""

    def __init__(self, cancelled: threading.Event) -> None:
        self.cancelled = cancelled
        self.response: requests.Response | None = None
        self.proxy: str | None = None  # of the request in flight
        self.current = ""  # its URL (after redirects)
        self.result: Fetched | None = None
        self.error: Exception | None = None

    def abandon(self) -> None:
        """Stop the thread's download: shutting the socket down ends a blocked read at once."""
        import socket

        self.cancelled.set()
        response = self.response
        sock = getattr(getattr(response.raw, "connection", None), "sock", None) if response is not None else None
        with contextlib.suppress(OSError, AttributeError):
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)


def _fetch(
    url: str,
    accept: str | None,
    max_bytes: int,
    allow_http: bool,
    on_progress: Callable[[int, int], None] | None,
    timeout: tuple[float, float],
    attempt: _Attempt,
) -> Fetched:
    import requests

    shown = redact(url)
    headers = {"User-Agent": _user_agent()}
    if accept:
        headers["Accept"] = accept
    try:
        with _follow(url, headers, timeout, allow_http, attempt) as response:
            via = _via(attempt.proxy, response.url)
            if response.status_code >= 400:
                reason = f" {response.reason}" if response.reason else ""
                what = f"{shown} answered HTTP {response.status_code}{reason}"
                if via:
                    what = f"HTTP {response.status_code}{reason} for {shown} {via}"
                raise HttpStatusError(what, response.status_code)
            body = _read_bounded(response, max_bytes, shown, _unless(attempt.cancelled, on_progress))
            return Fetched(redact(response.url), response.status_code, response.headers.get("Content-Type", ""), body)
    except HttpStatusError as exc:
        raise HttpStatusError(_scrub(str(exc), url, attempt.proxy), exc.status) from None
    except NetworkError as exc:
        raise NetworkError(_scrub(str(exc), url, attempt.proxy)) from None
    except requests.RequestException as exc:
        via = _via(attempt.proxy, attempt.current)
        raise NetworkError(_scrub(_explain(exc, redact(attempt.current), timeout, via), url, attempt.proxy)) from None


MAX_REDIRECTS = 5


def _follow(
    url: str, headers: dict[str, str], timeout: tuple[float, float], allow_http: bool, attempt: _Attempt
) -> requests.Response:
    """GET with redirects followed by hand, so that each target is checked before it is contacted."""
    import requests

    current = url
    for _ in range(MAX_REDIRECTS + 1):
        attempt.proxy, attempt.current = proxy_for(current), current
        # Every scheme named, None meaning none: an explicit setting is one requests does not fill from the
        # environment, so the proxy used is exactly the one named in messages, and never one for loopback.
        proxies = {"http": attempt.proxy, "https": attempt.proxy, "all": attempt.proxy}
        response = requests.get(
            current,
            headers=headers,
            timeout=timeout,
            stream=True,
            allow_redirects=False,
            proxies=cast("dict[str, str]", proxies),
        )
        attempt.response = response
        if not response.is_redirect:
            return response
        target = urljoin(current, response.headers["Location"])
        response.close()
        if not allow_http:
            check_url(target, "redirect to")
        current = target
    raise NetworkError(f"more than {MAX_REDIRECTS} redirects from {redact(url)}")


def proxy_for(url: str) -> str | None:
    """The proxy a request for ``url`` goes through: none for this machine (whatever NO_PROXY says), else
    what the environment says (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, as requests reads them)."""
    from requests.utils import get_environ_proxies, select_proxy

    try:
        if is_loopback(urlsplit(url).hostname):
            return None
        return select_proxy(url, get_environ_proxies(url)) or None
    except ValueError:  # not a URL requests can use either; it says so itself
        return None


def _via(proxy: str | None, url: str) -> str:
    """ "through the proxy host:port (https_proxy)", or "" without a proxy. No credentials."""
    if not proxy:
        return ""
    try:
        parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        name = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    except ValueError:
        name = "(unreadable address)"
    scheme = urlsplit(url).scheme.lower()
    # urllib's order: the lower-case variable wins; the URL's scheme before ALL_PROXY
    names = (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY")
    source = next((v for v in names if os.environ.get(v) == proxy), "system proxy settings")
    return f"through the proxy {name} ({source})"


def _unless(
    cancelled: threading.Event, on_progress: Callable[[int, int], None] | None
) -> Callable[[int, int], None] | None:
    """``on_progress`` silenced once the caller has given up (the thread may still be finishing a chunk)."""
    if on_progress is None:
        return None
    report = on_progress

    def progress(received: int, expected: int) -> None:
        if cancelled.is_set():
            raise NetworkError("abandoned")
        report(received, expected)

    return progress


def _read_bounded(
    response: requests.Response, max_bytes: int, shown: str, on_progress: Callable[[int, int], None] | None = None
) -> bytes:
    chunks: list[bytes] = []
    size = 0
    length = response.headers.get("Content-Length", "")
    expected = int(length) if length.isdigit() and len(length) < 12 else 0
    for chunk in response.iter_content(chunk_size=65536):
        size += len(chunk)
        if size > max_bytes:
            raise NetworkError(f"{shown} sent more than {max_bytes // (1024 * 1024)} MiB; refused")
        chunks.append(chunk)
        if on_progress is not None:
            on_progress(size, expected)
    return b"".join(chunks)


def _explain(exc: Exception, shown: str, timeout: tuple[float, float], via: str) -> str:
    import requests

    text = str(exc)
    if via and isinstance(exc, requests.exceptions.ProxyError):
        proxy = via.removeprefix("through ")
        tunnel = re.search(r"Tunnel connection failed: ([^'\")]+)", text)
        if tunnel:
            return f"{proxy} refused to reach {shown}: {tunnel.group(1).strip()}"
        return f"cannot connect to {proxy} to reach {shown}: {_short(text)}"
    message = _explain_direct(exc, text, shown, timeout)
    return f"{message}, {via}" if via else message


def _explain_direct(exc: Exception, text: str, shown: str, timeout: tuple[float, float]) -> str:
    import requests

    connect_s, read_s = timeout
    if isinstance(exc, requests.ConnectTimeout):
        return f"timed out connecting to {shown} after {connect_s:g} s"
    if isinstance(exc, requests.ReadTimeout) or "Read timed out" in text:
        return f"no answer from {shown} within {read_s:g} s"
    if isinstance(exc, requests.exceptions.SSLError):
        return f"TLS error talking to {shown}: {_short(text)}"
    if isinstance(exc, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)):
        return f"the download from {shown} was cut short (connection closed before the end)"
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema)):
        return f"{shown!r} is not a valid URL"
    if isinstance(exc, requests.ConnectionError):
        return f"cannot connect to {shown}: {_short(text)}"
    return f"download from {shown} failed: {_short(text)}"


def _short(text: str) -> str:
    """The useful tail of urllib3's nested messages: 'Connection refused', 'Name or service not known'."""
    m = re.search(r"\[Errno -?\d+\]\s*([^'\")\]]+)", text)
    if m:
        return m.group(1).strip()
    m = re.search(r"\[SSL: [A-Z_]+\]\s*([^'\")(]+)", text)
    if m:
        return m.group(1).strip()
    line = text.splitlines()[0] if text else "unknown error"
    return line[:200]


def _user_agent() -> str:
    from . import __version__

    return f"dnnresolve/{__version__}"
