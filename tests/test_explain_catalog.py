"""The error catalog: it loads, every entry is sound, and a malformed one is named with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnnresolve.explain.catalog import CatalogError, compile_pattern, load_catalog, packaged_catalog_path, parse_catalog
from dnnresolve.explain.decoders import DECODERS

GOOD = """
[frameworks]
tensorflow = "TensorFlow"

[[error]]
id = "x"
kind = "other"
framework = "tensorflow"
anchors = ["boom"]
pattern = '''boom (?P<n>\\d+)'''
decoder = "plain"
summary = "s"
explanation = "e"
source = "https://example.org/x"
"""


def test_packaged_catalog_is_sound() -> None:
    cat = load_catalog(packaged_catalog_path())
    assert len(cat.entries) >= 30
    for e in cat.entries:
        assert e.decoder in DECODERS
        assert e.source.startswith("https://")
        assert e.fixes, e.id
        assert e.framework == "" or e.framework in cat.framework_names, e.id
    assert all(m.framework in cat.framework_names for m in cat.markers)


def test_a_space_in_a_pattern_also_matches_a_line_break_but_not_inside_a_class() -> None:
    p = compile_pattern(r"compiled with (?P<v>[^ \n]+) ok")
    m = p.search("compiled\nwith 5103\nok")
    assert m is not None and m.group("v") == "5103"
    assert p.search("compiled with 5 103 ok") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('kind = "other"', 'kind = "bad"'), "kind 'bad' is not one of"),
        (('decoder = "plain"', 'decoder = "nope"'), "no decoder named 'nope'"),
        (("boom (?P<n>", "boom (?P<n"), "bad regex"),
        (('source = "https://example.org/x"', 'source = "somewhere"'), "source must be a URL"),
        (('anchors = ["boom"]', "anchors = []"), "anchors must be a non-empty list"),
    ],
)
def test_errors_name_file_line_row_and_field(change: tuple[str, str], message: str) -> None:
    text = GOOD.replace(*change)
    with pytest.raises(CatalogError) as info:
        parse_catalog(text, "cat.toml")
    assert str(info.value).startswith("cat.toml:5: [[error]] row 1 (x): ")
    assert message in str(info.value)


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(CatalogError, match="duplicate id 'x'"):
        parse_catalog(GOOD + GOOD.split("\n", 4)[4], "cat.toml")


def test_every_packaged_pattern_compiles_and_a_lazy_bad_one_names_its_line() -> None:
    # the packaged catalog compiles its regexes on first use, so the suite compiles each one here
    assert all(entry.pattern.pattern for entry in load_catalog().entries)
    assert all(rule.pattern.pattern for rule in load_catalog().libraries)
    lazy = parse_catalog(GOOD.replace("boom (?P<n>", "boom (?P<n"), "cat.toml", compile_now=False)
    with pytest.raises(CatalogError) as info:
        _ = lazy.entries[0].pattern
    assert str(info.value).startswith("cat.toml:5: [[error]] (x): bad regex")


def test_the_packaged_catalog_is_read_from_its_compiled_form_until_its_content_changes(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    from dnnresolve.explain import catalog as catalog_module

    copy = tmp_path / "error_catalog.toml"
    shutil.copy(catalog_module.packaged_catalog_path(), copy)
    cache = tmp_path / "cache"
    code = (
        "import sys\n"
        "from dnnresolve.explain import catalog as c\n"
        f"c.packaged_catalog_file = lambda: {str(copy)!r}\n"
        "cat = c.load_catalog()\n"
        "parsed = 'tomllib' in sys.modules or 'tomli' in sys.modules\n"
        "print(len(cat.entries), cat.entries[0].id, cat.entries[0].summary, parsed)\n"
    )
    env = {"DNNRESOLVE_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}

    def run() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True
        )
        return out.stdout.split()

    first, second = run(), run()
    assert first[-1] == "True" and second[-1] == "False"  # parsed once, then read from the cache
    assert first[:-1] == second[:-1] and int(first[0]) == len(catalog_module.load_catalog().entries)
    assert list((cache / "compiled").glob("catalog-*.bin"))
    data = copy.read_bytes()
    before = copy.stat()
    first_id = first[1]
    renamed = "x" * len(first_id)  # the same size, written in place, its times put back: still seen
    with open(copy, "r+b") as f:
        f.write(data.replace(f'id = "{first_id}"'.encode(), f'id = "{renamed}"'.encode(), 1))
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    third = run()
    assert third[1] == renamed and third[-1] == "True"  # a changed file is parsed again


def test_no_pattern_takes_quadratic_time_on_a_long_line() -> None:
    """A 20,000-character run (digits, one word, a path, words) around each anchor: every pattern reads it in
    linear time. An unbounded leading repeat (``[^\\n]*?`` before the anchor) took minutes on such a line, which
    a pasted JSON log or a hypothesis example holds; the bound is for a hang, not a speed figure. The same for each
    pattern read as a message cut short. (CPU time: the suite runs beside other work.)"""
    import time

    fillers = ["7" * 20000, "a" * 20000, "/lib.so" * 3000, "x " * 10000]
    slow: list[tuple[float, str]] = []
    start = time.process_time()
    for e in load_catalog(packaged_catalog_path()).entries:
        t = time.process_time()
        for pattern in (e.pattern, e.cut):  # (the cut is the pattern read as a title cut short)
            for filler in fillers:
                for anchor in e.anchors or ("",):
                    for _ in pattern.finditer(f"{filler} {anchor} {filler}\n{filler}") if pattern else ():
                        pass
        slow.append((time.process_time() - t, e.id))
    assert time.process_time() - start < 60, sorted(slow, reverse=True)[:3]


def test_the_prefilter_keeps_exactly_the_anchors_no_other_anchor_is_part_of() -> None:
    # the catalog finds them with one str.find pass per anchor (start-up, #26); this is the definition, pair by pair
    from dnnresolve.explain.catalog import _minimal

    def by_pairs(anchors: list[str]) -> tuple[str, ...]:
        every = set(anchors)
        return tuple(sorted(a for a in every if not any(b != a and b in a for b in every)))

    packaged = [a for e in load_catalog().entries for a in e.anchors]
    cases = [
        packaged,
        ["cudnn", "cudnn", "libcudnn", "cuda"],  # repeated, one within another
        ["aa", "b", "a\nb"],  # "a\nb" is found across the joint of "aa" and "b" joined: it is in neither
        ["x y", "y", "x", "z"],
        ["abc", "bc", "abcd", "d"],
        [],
    ]
    for anchors in cases:
        assert _minimal(anchors) == by_pairs(anchors), anchors
