"""A fleet directory: ``fleet.json`` (node -> partitions, features, GRES, state, when collected, its profile file or
why there is none) and one runtime profile per node under ``nodes/``. Written whole into a directory beside the
target, then renamed into place: a reader sees the old fleet or the new one, never half of either. Reading
validates everything and names the file at fault."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..machine import Runtime
from ..records import field, record

SCHEMA = "dnnresolve-fleet/1"
INDEX = "fleet.json"
PROFILES = "nodes"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")


@record
class FleetNode:
    """A node of the fleet: what Slurm said of it, and its profile (None when it could not be read: ``reason``)."""

    name: str
    partitions: tuple[str, ...]
    features: tuple[str, ...] = ()
    gres: tuple[str, ...] = ()
    state: str = ""
    collected: str = ""  # when its profile was read (ISO 8601, UTC)
    profile: str = ""  # its profile file, relative to the fleet directory
    reason: str = ""  # why it has no profile
    estimate: bool = False  # its profile was estimated from Slurm's word (--no-jobs), not read on the node
    runtime: Runtime | None = field(default=None, compare=False, repr=False)

    def index_record(self) -> dict[str, Any]:
        return {
            "partitions": list(self.partitions),
            "features": list(self.features),
            "gres": list(self.gres),
            "state": self.state,
            "collected": self.collected or None,
            "profile": self.profile or None,
            "estimate": self.estimate,
            "reason": self.reason or None,
        }


@record
class Fleet:
    directory: str
    collected: str
    nodes: list[FleetNode]
    estimate: bool = False


def profile_name(node: str, taken: set[str]) -> str:
    """The file a node's profile goes in: its name where that is a plain file name, else a numbered one."""
    base = node if _SAFE_NAME.fullmatch(node) else f"node-{len(taken) + 1}"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return f"{PROFILES}/{name}.json"


def write_fleet(directory: str, index: Mapping[str, Any], profiles: Mapping[str, Mapping[str, Any]]) -> None:
    """Write ``index`` as fleet.json and each profile (relative path -> profile JSON) into ``directory``, replacing
    the fleet there whole. A directory that holds something other than a fleet is refused, never replaced."""
    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _writer_lock(target):
        # only under the lock: mid-swap another writer's fleet is briefly a directory without its index
        check_replaceable(directory)
        _replace_whole(target, profiles, index)


@contextmanager
def _writer_lock(target: Path) -> Iterator[None]:
    """Hold the fleet's writer lock: two collects into one directory take turns at the swap, the last one wins.
    Without it their renames interleave, one fails half way and leaves its copies behind. The lock file goes when
    the writer is done; a writer that locked a file another one removed meanwhile takes the new one instead. Where
    flock does not exist the swap is unguarded."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    path = target.parent / f".{target.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the file was removed by the writer before us: lock the one that is there now
    try:
        yield
    finally:
        os.unlink(path)  # before the lock goes, so a waiter on this file retries
        os.close(fd)


def _replace_whole(target: Path, profiles: Mapping[str, Mapping[str, Any]], index: Mapping[str, Any]) -> None:
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".new", dir=target.parent))
    old: Path | None = None
    try:
        (work / PROFILES).mkdir()
        for relative, profile in profiles.items():
            (work / relative).write_text(json.dumps(profile, indent=1) + "\n", encoding="utf-8")
        (work / INDEX).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        os.chmod(work, 0o755)  # mkdtemp's 0700 would hide the fleet from the other users of a shared directory
        if target.exists() and any(target.iterdir()):
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, old / "fleet")
        os.replace(work, target)  # (onto an empty directory, or none)
    except BaseException:
        if old is not None and not target.exists():  # put the old fleet back
            os.replace(old / "fleet", target)
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def check_replaceable(directory: str) -> None:
    """A UserError unless ``directory`` is new, empty, or a fleet: a collect never replaces anything else."""
    target = Path(directory)
    if not target.exists():
        return
    if not target.is_dir():
        raise UserError("not a directory: give a new or empty directory, or a fleet to replace", directory)
    if not (target / INDEX).is_file() and any(target.iterdir()):
        raise UserError(f"not a fleet directory (no {INDEX}), left as it is: give a new or empty one", directory)


def load_fleet(directory: str) -> Fleet:
    """The fleet in ``directory``, every node's profile read; a UserError naming the file at fault."""
    from ..profile import load_profile
    from ..sources.text import read_source

    index_path = os.path.join(directory, INDEX)
    if not os.path.isdir(directory):
        raise UserError("not a fleet directory: no such directory", directory)
    if not os.path.exists(index_path):
        raise UserError(
            f"not a fleet directory: no {INDEX} (write one with 'dnnresolve fleet collect --out DIR')", directory
        )
    text = read_source(Path(index_path), index_path, "a fleet index")
    try:
        data = json.loads(text)
    except RecursionError:
        raise UserError("not JSON: nested too deeply", index_path) from None
    except ValueError as exc:
        raise UserError(f"not JSON: {getattr(exc, 'msg', exc)}", index_path, getattr(exc, "lineno", None)) from None
    fleet = _read_index(data, directory, index_path)
    for node in fleet.nodes:
        if node.profile:
            node.runtime = load_profile(os.path.join(directory, node.profile))
    return fleet


def _read_index(data: Any, directory: str, file: str) -> Fleet:
    def fail(where: str, message: str) -> UserError:
        return UserError(f"field {where!r}: {message}", file)

    if not isinstance(data, dict):
        raise UserError("not a fleet index: expected a JSON object", file)
    if data.get("schema") != SCHEMA:
        raise fail("schema", f"expected {SCHEMA!r} (written by 'dnnresolve fleet collect'), got {data.get('schema')!r}")
    nodes = data.get("nodes")
    if not isinstance(nodes, dict):
        raise fail("nodes", "expected an object of nodes")
    out: list[FleetNode] = []
    for name, rec in nodes.items():
        where = f"nodes.{name}"
        if not isinstance(rec, dict):
            raise fail(where, "expected an object")
        texts = {k: rec.get(k) or "" for k in ("state", "collected", "profile", "reason")}
        lists = {k: rec.get(k) or [] for k in ("partitions", "features", "gres")}
        for k, v in texts.items():
            if not isinstance(v, str):
                raise fail(f"{where}.{k}", "expected a string")
        for k, v in lists.items():
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise fail(f"{where}.{k}", "expected a list of strings")
        profile = texts["profile"]
        if profile and (os.path.isabs(profile) or ".." in Path(profile).parts):
            raise fail(f"{where}.profile", f"expected a file inside the fleet directory, got {profile!r}")
        if not profile and not texts["reason"]:
            raise fail(where, "neither a profile nor a reason")
        estimate = rec.get("estimate", False)
        if not isinstance(estimate, bool):
            raise fail(f"{where}.estimate", "expected true or false")
        out.append(
            FleetNode(
                name,
                tuple(lists["partitions"]),
                tuple(lists["features"]),
                tuple(lists["gres"]),
                texts["state"],
                texts["collected"],
                profile,
                texts["reason"],
                estimate,
            )
        )
    collected = data.get("collected") or ""
    if not isinstance(collected, str):
        raise fail("collected", "expected a string")
    return Fleet(directory, collected, out, bool(data.get("estimate", False)))


def index_json(nodes: Sequence[FleetNode], collected: str, command: Sequence[str], estimate: bool) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "collected": collected,
        "estimate": estimate,
        "command": list(command),
        "nodes": {n.name: n.index_record() for n in nodes},
    }
