"""The catalog holds a sentence only where the vocabulary (and the other rules) do not already say the same
(#22): every [[error]] row with a pattern that reads a real message first must change what `explain` tells the
user about at least one of them when the row is taken out. A row whose removal changes nothing is dead weight,
and the next edit of its wording would drift from the rule that really answers."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from dnnresolve.explain.catalog import catalog_from_document, load_catalog
from dnnresolve.explain.diagnosis import Diagnosis
from dnnresolve.explain.scanner import diagnose

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _messages() -> list[str]:
    """The real messages explain is tested and tuned on (never the corpus's held-back part)."""
    data = tomllib.loads((ROOT / "tests" / "data" / "explain_messages.toml").read_text(encoding="utf-8"))
    texts = [str(m["text"]) for m in data["message"]]
    corpus = ROOT / "tests" / "data" / "explain_corpus" / "corpus.jsonl"
    for line in corpus.read_text(encoding="utf-8").splitlines():
        m = json.loads(line)
        if m["part"] == "tune":
            texts.append(str(m["text"]))
    return texts


def _seen(ds: list[Diagnosis]) -> tuple[Any, ...] | None:
    """What the user is told about a message: the first diagnosis's kind, versions, summary and steps."""
    if not ds:
        return None
    d = ds[0]
    return (d.kind, sorted(d.found.items()), sorted(d.expected.items()), d.summary, d.fixes)


def test_every_sentence_row_changes_what_some_real_message_is_told() -> None:
    doc = tomllib.loads((ROOT / "data" / "error_catalog.toml").read_text(encoding="utf-8"))
    full = load_catalog()
    texts = _messages()
    first: dict[str, list[int]] = defaultdict(list)
    told: dict[int, tuple[Any, ...] | None] = {}
    for i, text in enumerate(texts):
        ds = diagnose(text.splitlines(), full)
        told[i] = _seen(ds)
        if ds:
            first[ds[0].id].append(i)
    sentences = {str(row["id"]) for row in doc["error"] if "pattern" in row}
    dead = []
    for entry in sorted(sentences & first.keys()):
        without = dict(doc, error=[row for row in doc["error"] if row["id"] != entry])
        catalog = catalog_from_document(without, {}, "error_catalog.toml")
        if all(_seen(diagnose(texts[i].splitlines(), catalog)) == told[i] for i in first[entry]):
            dead.append(f"{entry} ({len(first[entry])} messages read the same without it)")
    assert len(first.keys() & sentences) > 50  # the check ran over the catalog, not over nothing
    assert not dead, "sentences the other rules already cover: " + "; ".join(dead)
