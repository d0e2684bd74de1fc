"""HTTP plumbing shared by `update` and the index checks: which URLs are allowed, credentials kept out of
every message, timeouts, and one bounded GET that turns every failure into a one-line error."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

from .credentials import redact
from .errors import UserError
from .records import record

if TYPE_CHECKING:
    import requests

TIMEOUT_ENV = "DNNRESOLVE_HTTP_TIMEOUT"
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


def _scrub(text: str, url: str) -> str:
    """Redact URLs in ``text``, and the URL's own user name and password wherever they still appear."""
    out = redact(text)
    try:
        parts = urlsplit(url)
    except ValueError:
        return out
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
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UserError(f"{TIMEOUT_ENV}={raw!r} is not a positive number of seconds")
    return (value, value)


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
) -> Fetched:
    """GET ``url`` whole, or raise NetworkError with a one-line message. HTTP errors raise too.

    ``allow_http``: plain http is fine for read-only checks (an index page); never for what we keep.
    ``on_progress(received, expected)`` hears of each chunk (expected: Content-Length, or 0)."""
    import requests

    if not allow_http:
        check_url(url)
    shown = redact(url)
    connect_s, read_s = timeouts()
    headers = {"User-Agent": _user_agent()}
    if accept:
        headers["Accept"] = accept
    try:
        with _follow(url, headers, (connect_s, read_s), allow_http) as response:
            if response.status_code >= 400:
                reason = f" {response.reason}" if response.reason else ""
                raise HttpStatusError(f"{shown} answered HTTP {response.status_code}{reason}", response.status_code)
            body = _read_bounded(response, max_bytes, shown, on_progress)
            return Fetched(redact(response.url), response.status_code, response.headers.get("Content-Type", ""), body)
    except HttpStatusError as exc:
        raise HttpStatusError(_scrub(str(exc), url), exc.status) from None
    except NetworkError as exc:
        raise NetworkError(_scrub(str(exc), url)) from None
    except requests.RequestException as exc:
        raise NetworkError(_scrub(_explain(exc, shown, connect_s, read_s), url)) from None


MAX_REDIRECTS = 5


def _follow(url: str, headers: dict[str, str], timeout: tuple[float, float], allow_http: bool) -> requests.Response:
    """GET with redirects followed by hand, so that each target is checked before it is contacted."""
    import requests

    current = url
    for _ in range(MAX_REDIRECTS + 1):
        response = requests.get(current, headers=headers, timeout=timeout, stream=True, allow_redirects=False)
        if not response.is_redirect:
            return response
        target = urljoin(current, response.headers["Location"])
        response.close()
        if not allow_http:
            check_url(target, "redirect to")
        current = target
    raise NetworkError(f"more than {MAX_REDIRECTS} redirects from {redact(url)}")


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


def _explain(exc: Exception, shown: str, connect_s: float, read_s: float) -> str:
    import requests

    text = str(exc)
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
