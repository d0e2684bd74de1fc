"""Answers kept and replayed: the output of ``plan``, ``explain``, ``matrix``, ``detect`` and ``doctor`` is kept
with everything it was read from, and printed again, without running the command, while all of that holds.

A shell prompt, a pre-commit hook or a CI step asks the same question again and again; detection alone (an
``nvidia-smi`` run, NVML, a walk of the library directories) takes longer than Python takes to start. A kept
answer is replayed only when

- the command line, the working directory, the whole environment (but ``_`` and ``OLDPWD``), the user, the
  interpreter, and which of standard input, output and error are terminals (and their size) are the same;
- every file, directory and program the run consulted has the same signature (``observed``), dnnresolve's
  own files and its matrix included;
- the command said its answer depends on nothing else (``observed.cacheable()``: not ``plan --verify``, which
  asks the network, not ``explain`` of standard input or of a log file), it ended with status 0 or 1, no
  program timed out, and no file it read had changed within the two seconds before (its times could not be
  trusted);
- it is at most ``TTL`` seconds old: what no file shows (a GPU taken away by MIG reconfiguration, say) is
  read again at least that often.

``DNNRESOLVE_NO_ANSWER_CACHE=1`` turns this off. Answers live in ``<user cache>/answers/``, readable by their
user only, one file per question named by its digest (the environment itself, which may hold secrets, is
never written), at most ``MAX_ENTRIES``; a file that cannot be read or written is ignored. This module uses
the smallest parts of the standard library only: it runs before anything else is imported.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from . import __version__, observed
from .cachedir import user_cache_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

NO_ANSWER_CACHE_ENV = "DNNRESOLVE_NO_ANSWER_CACHE"
TTL = 600.0
MAX_ENTRIES = 256
FORMAT = 1
_MAGIC = b"DNRA"
_IGNORED_ENV = frozenset({"_", "OLDPWD"})  # set by the shell per command / per cd; the cwd itself is in the key
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _terminal(fd: int) -> tuple[int, ...]:
    try:
        if not os.isatty(fd):
            return ()
        size = os.get_terminal_size(fd)
        return (size.columns, size.lines)
    except (OSError, ValueError):
        return ()


def question(argv: Sequence[str]) -> tuple[Any, ...] | None:
    """Everything outside the files that decides a command's output; None when answers are not kept."""
    if os.environ.get(NO_ANSWER_CACHE_ENV) == "1":
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k not in _IGNORED_ENV))
    user = os.getuid() if hasattr(os, "getuid") else -1
    terminals = tuple(_terminal(fd) for fd in (0, 1, 2))
    return (FORMAT, __version__, sys.version, sys.executable, user, tuple(argv), cwd, terminals, env)


def digest(key: tuple[Any, ...]) -> str:
    """The question's digest: what is written to disk, never the environment itself (it may hold secrets)."""
    try:
        from _blake2 import blake2b  # what hashlib.blake2b is, without hashlib's OpenSSL start-up (3 ms)
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    # repr, not marshal: marshal's bytes vary with reference counts
    return blake2b(repr(key).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _entry_path(key_digest: str) -> str:
    return os.path.join(user_cache_path(), "answers", f"{key_digest}.marshal")


def replay(key: tuple[Any, ...]) -> int | None:
    """Print the kept answer to ``key`` and return its exit status, or None when there is none that holds."""
    key_digest = digest(key)
    try:
        with open(_entry_path(key_digest), "rb") as f:
            data = f.read()
        if data[:4] != _MAGIC:
            return None
        entry = marshal.loads(data[4:])
        stored_key, deps, chunks, status, expires = entry
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if stored_key != key_digest or time.time() >= expires:
        return None
    for kind, path, sig in deps:
        if observed.signature(kind, path) != sig:
            return None
    return _write(chunks, status)


def _write(chunks: list[tuple[int, str]], status: int) -> int:
    try:
        last = None
        for fd, text in chunks:
            stream = sys.stdout if fd == 1 else sys.stderr
            if last is not None and last is not stream:
                last.flush()
            stream.write(text)
            last = stream
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BrokenPipeError:  # the reader went away (`| head`), as the command line treats it
        try:  # noqa: SIM105 (contextlib is not imported on this path)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    return int(status)


class _Tee:
    """A text stream that passes everything on to ``inner`` and keeps a copy, in order with the other stream,
    once the command has said its answer may be kept (``check`` output over a monorepo is not held in memory)."""

    def __init__(self, inner: TextIO, fd: int, chunks: list[tuple[int, str]]) -> None:
        self.inner = inner
        self._fd = fd
        self._chunks = chunks
        self.missed = False  # something was written before: the copy is not the whole output

    def write(self, text: str) -> int:
        n = self.inner.write(text)
        if observed.keeping():
            self._chunks.append((self._fd, text))
        else:
            self.missed = True
        return n

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, flush...: the real stream's
        return getattr(self.inner, name)


def run_and_keep(key: tuple[Any, ...], run: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run the command with its output copied and what it reads recorded; keep the answer if it may be kept."""
    from typing import cast

    chunks: list[tuple[int, str]] = []
    saved = sys.stdout, sys.stderr
    copies = _Tee(saved[0], 1, chunks), _Tee(saved[1], 2, chunks)
    tees = cast("TextIO", copies[0]), cast("TextIO", copies[1])
    sys.stdout, sys.stderr = tees
    observed.begin()
    started = time.time()
    try:
        status = run(argv)
    finally:
        rec = observed.finish()
        if sys.stdout is tees[0]:  # the command may have put devnull there (a closed pipe)
            sys.stdout = saved[0]
        if sys.stderr is tees[1]:
            sys.stderr = saved[1]
    whole = not (copies[0].missed or copies[1].missed)
    if rec is not None and rec.cacheable and whole and status in (0, 1) and not rec.problems:
        _keep(key, rec, chunks, status, started)
    return status


def package_files() -> list[str]:
    """dnnresolve's own files (code, packaged data): a change to any of them is a new answer."""
    found = []
    for dirpath, dirnames, filenames in os.walk(_PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found += [os.path.join(dirpath, name) for name in sorted(filenames)]
    return found


def _keep(key: tuple[Any, ...], rec: observed.Recording, chunks: list[tuple[int, str]], status: int, t: float) -> None:
    for path in package_files():
        rec.add("s", path, observed.signature("s", path))
    if observed.racy(rec) is not None:
        return
    deps = [(kind, path, sig) for (kind, path), sig in rec.deps.items()]
    expires = min(t + TTL, rec.until)
    key_digest = digest(key)
    path = _entry_path(key_digest)
    try:
        blob = _MAGIC + marshal.dumps((key_digest, deps, chunks, status, expires))
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            # only its user may read an answer: it names the machine's files and the user's paths
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _prune(os.path.dirname(path))
    except (OSError, ValueError):
        return


def _prune(directory: str) -> None:
    """Keep the newest ``MAX_ENTRIES`` answers; answers past their time go first."""
    entries = []
    for entry in os.scandir(directory):
        if entry.name.endswith(".marshal"):
            entries.append((entry.stat().st_mtime, entry.path))
    now = time.time()
    entries.sort(reverse=True)
    for i, (mtime, path) in enumerate(entries):
        if i >= MAX_ENTRIES or mtime < now - TTL:
            try:  # noqa: SIM105
                os.unlink(path)
            except OSError:
                pass
