"""`explain` over real messages from public issue trackers and Q&A pages (tests/data/explain_messages.toml)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.explain import diagnose
from dnnresolve.explain.catalog import KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data" / "explain_messages.toml"
MESSAGES: list[dict[str, Any]] = tomllib.loads(DATA.read_text(encoding="utf-8"))["message"]


def _id(m: dict[str, Any]) -> str:
    return m["source"].split("://", 1)[1].replace("github.com/", "")[:70]


@pytest.mark.parametrize("message", MESSAGES, ids=[_id(m) for m in MESSAGES])
def test_real_message_is_recognised_and_decoded(message: dict[str, Any]) -> None:
    diagnoses = diagnose(message["text"].splitlines())
    assert len(diagnoses) == message.get("count", 1), [(d.id, d.line, d.text) for d in diagnoses]
    d = diagnoses[0]
    assert d.kind == message["kind"]
    assert (d.framework or "") == message["framework"]
    assert d.found == message["found"]
    assert d.expected == message["expected"]
    assert [c.id for c in d.consequences] == message.get("consequences", [])
    if "occurrences" in message:
        assert d.occurrences == message["occurrences"]
    if "line" in message:
        assert d.line == message["line"]
    assert d.fixes, "every diagnosis comes with steps"
    assert d.source.startswith("https://")


def test_the_collection_is_broad() -> None:
    """At least 60 messages, every kind and every framework the catalog names, each with its page."""
    assert len(MESSAGES) >= 60
    assert {m["kind"] for m in MESSAGES} == set(KINDS)
    frameworks = {m["framework"] for m in MESSAGES}
    assert {"tensorflow", "pytorch", "jax", "cupy", "onnxruntime", "mxnet"} <= frameworks
    assert all(m["source"].startswith("https://") for m in MESSAGES)
    assert len({m["source"] for m in MESSAGES}) == len(MESSAGES)


def test_windows_dll_names_and_chinese_text_are_in_the_collection() -> None:
    texts = [m["text"] for m in MESSAGES]
    assert any("cudart64_110.dll" in t for t in texts)
    assert any("cudnn64_8.dll" in t for t in texts)
    assert any("我试图将 TensorFlow" in t and "5005 (compatibility version 5000)" in t for t in texts)
