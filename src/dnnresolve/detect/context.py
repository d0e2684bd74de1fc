"""What every probe shares: the machine's files (under ``--root`` when given), its environment, the
programs it may run (each with a timeout, concurrently, each command once), and the notes it leaves.

Detection reads the machine afresh on every run: nothing here is kept between commands.

Paths handed around between probes are paths *on the target machine* (``/usr/local/cuda-8.0``);
``host()`` turns one into the path to open here (``DIR/usr/local/cuda-8.0`` under ``--root DIR``).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable, Mapping, Sequence

from .programs import Job as Job
from .programs import ProgramResult as ProgramResult
from .programs import Programs, execute

# Text files the probes read are small (version files, headers, /proc entries); a bigger one is not ours.
MAX_READ = 4 * 1024 * 1024
CLOSE_WAIT_S = 2.0  # how long close() waits for the runs it stopped to notice


class ProbeContext:
    """The target machine as the probes see it."""

    def __init__(
        self,
        root: str | None,
        env: Mapping[str, str],
        timeout: float,
        run_programs: bool,
    ) -> None:
        self.root = os.path.abspath(root) if root else None
        self.env = dict(env)
        self.timeout = timeout
        self.run_programs = run_programs
        self._notes: list[str] = []
        self._listings: dict[str, list[str]] = {}  # one run's directory listings (``glob``)
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, ...], Job[ProgramResult]] = {}
        self._programs = Programs()

    # ------------------------------------------------------------------ notes
    def note(self, text: str) -> None:
        with self._lock:
            if text not in self._notes:
                self._notes.append(text)

    @property
    def notes(self) -> list[str]:
        with self._lock:
            return list(self._notes)

    def close(self) -> None:
        """Kill the programs still running (each one's whole process group) and wait a moment for their runs to
        end. Detection has collected every answer it wanted by then; on an interrupt this is what stops them."""
        self._programs.stop()
        with self._lock:
            jobs = list(self._runs.values())
        end = time.monotonic() + CLOSE_WAIT_S
        for job in jobs:
            job.wait(max(0.0, end - time.monotonic()))

    # ------------------------------------------------------------------ files
    def host(self, path: str) -> str:
        """The path to open here for ``path`` on the target machine."""
        if self.root is None:
            return path
        return os.path.join(self.root, os.path.normpath(path).lstrip("/"))

    def target(self, host_path: str) -> str:
        """The inverse of ``host``: how the target machine names a file found here."""
        if self.root is None:
            return host_path
        rel = os.path.relpath(host_path, self.root)
        if rel == "." or rel.startswith(".."):
            return "/" if rel == "." else host_path
        return "/" + rel

    def read_text(self, path: str) -> str | None:
        """A small text file's content, or None when it is absent or unreadable."""
        data = self.read_bytes(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_bytes(self, path: str, limit: int = MAX_READ) -> bytes | None:
        """A small file's bytes (at most ``limit``), or None when it is absent, unreadable or not a regular file
        (a FIFO or a device in place of a version file must not hang the probe)."""
        from ..readfile import NotRegular, read_regular

        try:
            return read_regular(self.host(path), limit)
        except PermissionError:
            self.note(f"{path}: permission denied; not read")
        except NotRegular:
            self.note(f"{path}: not a regular file; not read")
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.note(f"{path}: cannot read: {exc.strerror or exc}")
        return None

    def exists(self, path: str) -> bool:
        return _stat(self.host(path)) is not None

    def is_dir(self, path: str) -> bool:
        st = _stat(self.host(path))
        return st is not None and stat.S_ISDIR(st.st_mode)

    def is_file(self, path: str) -> bool:
        st = _stat(self.host(path))
        return st is not None and stat.S_ISREG(st.st_mode)

    def listdir(self, path: str) -> list[str]:
        host = self.host(path)
        try:
            return sorted(os.listdir(host))
        except OSError:
            return []

    def walk(self, top: str) -> Iterable[tuple[str, list[str], list[str]]]:
        """``os.walk`` of a target directory (host paths); the caller may prune ``dirnames`` in place."""
        yield from os.walk(self.host(top))

    def glob(self, pattern: str) -> list[str]:
        """Target paths matching a pattern of target paths, sorted (``glob.glob``'s rules). Where only the last
        part has wildcards (the probes' usual ``{dir}/libcudnn.so*``), each directory is listed once per run,
        however many patterns ask of it: a library directory holds thousands of names."""
        host = self.host(pattern)
        directory, name = os.path.split(host)
        if any(c in directory for c in "*?[") or not any(c in name for c in "*?["):
            import glob

            return sorted(self.target(p) for p in glob.glob(host))
        import fnmatch

        names = self._listing(directory)
        if not name.startswith("."):  # as glob: a wildcard does not match a leading dot
            names = [n for n in names if not n.startswith(".")]
        # the names that start as the pattern does, before its regex tries them: of a library directory's thousand,
        # a few (``libcudnn.so*``); names compare as they are here (fnmatch folds case only where paths do)
        prefix = name[: min((name.find(c) for c in "*?[" if c in name), default=len(name))]
        if prefix and os.path.normcase("A") == "A":
            names = [n for n in names if n.startswith(prefix)]
        return sorted(self.target(os.path.join(directory, n)) for n in fnmatch.filter(names, name))

    def _listing(self, directory: str) -> list[str]:
        with self._lock:
            names = self._listings.get(directory)
        if names is None:
            try:
                names = os.listdir(directory or os.curdir)
            except OSError:
                names = []
            with self._lock:
                self._listings[directory] = names
        return names

    def realpath(self, path: str) -> str:
        """Symlinks resolved; under ``--root`` an absolute link target stays inside the copy."""
        if self.root is None:
            return os.path.realpath(path)
        return self._resolve(path)

    def _resolve(self, path: str) -> str:
        current = os.path.normpath(path)
        for _ in range(40):  # a symlink chain longer than this is a loop
            parts = current.strip("/").split("/")
            resolved = "/"
            changed = False
            for i, part in enumerate(parts):
                candidate = os.path.join(resolved, part)
                link = self.host(candidate)
                st = _lstat(link)
                if st is not None and stat.S_ISLNK(st.st_mode):
                    try:
                        dest = os.readlink(link)
                    except OSError:
                        return current
                    joined = dest if dest.startswith("/") else os.path.join(resolved, dest)
                    current = os.path.normpath(os.path.join(joined, *parts[i + 1 :]))
                    changed = True
                    break
                resolved = candidate
            if not changed:
                return current
        return current

    def env_paths(self, name: str) -> list[str]:
        """A colon-separated environment variable as a list of absolute paths, in order, no blanks."""
        return [p for p in self.env.get(name, "").split(os.pathsep) if p.startswith("/")]

    # --------------------------------------------------------------- programs
    def which(self, name: str, extra_dirs: Iterable[str] = ()) -> str | None:
        """A program on the target's PATH (then in ``extra_dirs``), as a target path; None if absent."""
        for d in [*self.env_paths("PATH"), *extra_dirs]:
            candidate = os.path.join(d, name)
            if self.is_program(candidate):
                return candidate
        return None

    def is_program(self, path: str) -> bool:
        """A file this user may run."""
        return self.is_file(path) and os.access(self.host(path), os.X_OK)

    def start(self, argv: Sequence[str]) -> Job[ProgramResult]:
        """Start a program (target path first) unless the same command already ran or is running."""
        key = tuple(argv)
        with self._lock:
            fut = self._runs.get(key)
            if fut is None:
                fut = Job(lambda: self._run(key), "dnnresolve-probe")
                self._runs[key] = fut
            return fut

    def run(self, argv: Sequence[str]) -> ProgramResult:
        return self.start(argv).result()

    def _run(self, argv: tuple[str, ...]) -> ProgramResult:
        if not self.run_programs:
            return ProgramResult(argv, error="programs are not run under --root")
        env = {**self.env, "LC_ALL": "C", "LANG": "C"}
        return self._noted(execute(argv, [self.host(argv[0]), *argv[1:]], env, self.timeout, self._programs))

    def _noted(self, result: ProgramResult) -> ProgramResult:
        if result.warning:
            self.note(f"{result.name}: {result.warning}")
        return result

    def run_here(self, argv: Sequence[str]) -> ProgramResult:
        """Run a program of *this* machine that only reads files of the target
        (``ldconfig -p -C DIR/etc/ld.so.cache``); allowed under ``--root``."""
        key = ("<here>", *argv)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "LANG": "C"}
        with self._lock:
            fut = self._runs.get(key)
            if fut is None:
                fut = Job(
                    lambda: self._noted(execute(tuple(argv), list(argv), env, self.timeout, self._programs)),
                    "dnnresolve-probe",
                )
                self._runs[key] = fut
        return fut.result()


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None
