"""The frameworks' own checks, each template from its source (tests/data/framework_messages.toml, #22): every
instance reads as the kind and versions the corpus's labelling rules give, whatever wording the check had."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import pytest

from dnnresolve.explain import diagnose
from dnnresolve.explain.catalog import KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data" / "framework_messages.toml"
MESSAGES: list[dict[str, Any]] = tomllib.loads(DATA.read_text(encoding="utf-8"))["message"]
CORPUS = Path(__file__).parent / "data" / "explain_corpus" / "corpus.jsonl"


def _id(m: dict[str, Any]) -> str:
    return f"{m['family']}:{m['text'].strip().splitlines()[-1][:60]}"


def _read(diagnoses: list[Any], kind: str) -> tuple[str | None, dict[str, str], dict[str, str]]:
    """The first diagnosis's kind, and the versions of the first of the labelled kind (as scripts/explain_recall
    judges a corpus message)."""
    if not diagnoses:
        return None, {}, {}
    d = next((d for d in diagnoses if d.kind == kind), diagnoses[0])
    return diagnoses[0].kind, dict(d.found), dict(d.expected)


@pytest.mark.parametrize("message", MESSAGES, ids=[_id(m) for m in MESSAGES])
def test_every_template_instance_reads_as_its_check_says(message: dict[str, Any]) -> None:
    kind, found, expected = _read(diagnose(message["text"].splitlines()), message["kind"])
    assert kind == message["kind"]
    assert {k: found.get(k) for k in message["found"]} == message["found"]
    assert {k: expected.get(k) for k in message["expected"]} == message["expected"]


def test_every_template_cites_its_source_and_no_corpus_thread() -> None:
    threads = {json.loads(line)["thread"] for line in CORPUS.read_text(encoding="utf-8").splitlines()}
    texts = {json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()}
    for m in MESSAGES:
        url = urlparse(m["source"])
        assert url.scheme == "https" and url.netloc and url.path.strip("/"), m["source"]
        assert m["source"] not in threads, m["source"]  # the corpus measures explain on threads no test holds
        assert m["text"] not in texts
        assert m["template"].strip() and m["kind"] in KINDS
    assert len({m["family"] for m in MESSAGES}) >= 8
    assert len(MESSAGES) >= 50


RunCli = Callable[..., Any]


@pytest.mark.parametrize(
    "text, kind",
    [
        (  # TensorRT's own check of the CUDA runtime, its number a cudaError_t (35: the driver is too old)
            "[TensorRT] ERROR: CUDA initialization failure with error 35. Please check your CUDA installation:  "
            "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
            "driver_too_old",
        ),
        (  # xla/pjrt/pjrt_api.cc with ENABLE_PJRT_COMPATIBILITY
            "INVALID_ARGUMENT: Plugin PJRT API version 0.40 is older than the minimum supported version 0.45",
            "no_cuda_build",
        ),
    ],
)
def test_explain_json_reads_a_check_no_sentence_spelt(run_cli: RunCli, text: str, kind: str) -> None:
    r = run_cli("explain", "--json", text)
    assert r.returncode == 1, r.stderr  # explain's status when it found a problem
    assert json.loads(r.stdout)["diagnoses"][0]["kind"] == kind
