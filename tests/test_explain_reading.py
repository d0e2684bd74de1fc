"""Robust reading (#22): encoded, escaped, wrapped and shouted messages read as the plain ones, by the line
scanner (``diagnose``) and by ``explain --file``'s byte search alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.explain import diagnose

# (text as posted, kind, expected versions)
CASES = [
    (  # URL-encoded (a link to a search for the error)
        "https://example.invalid/search?q=Could%20not%20load%20dynamic%20library%20%27libcudart.so.11.0%27%3B"
        "%20dlerror%3A%20libcudart.so.11.0%3A%20cannot%20open%20shared%20object%20file",
        "missing_library",
        {"library": "libcudart.so.11.0", "cuda": "11.0"},
    ),
    (  # JSON-escaped, a quoted Windows path's backslashes doubled
        '{"log": "Traceback:\\nOSError: [WinError 126] Error loading \\"C:\\\\venv\\\\torch\\\\lib\\\\'
        'cudnn_cnn_infer64_8.dll\\" or one of its dependencies.\\n"}',
        "missing_library",
        {"library": "cudnn_cnn_infer64_8.dll", "cudnn": "8"},
    ),
    (  # a Windows path broken mid-word over two lines
        "Could not locate cudnn_ops_in\nfer64_8.dll. Please make sure it is in your library path!",
        "missing_library",
        {"library": "cudnn_ops_infer64_8.dll", "cudnn": "8"},
    ),
    (  # wrapped before the anchor, behind a logger prefix
        "[06/08/2022-15:28:47] [TRT] [E] OSError: [WinError 126] The specified module cannot be found. Error loading\n"
        '[06/08/2022-15:28:47] [TRT] [E] "D:\\sd\\venv\\lib\\torch\\lib\\cudnn_adv_infer64_8.dll" or one',
        "missing_library",
        {"library": "cudnn_adv_infer64_8.dll", "cudnn": "8"},
    ),
    (  # any letter case
        "LOADED RUNTIME CUDNN LIBRARY: 8.1.0 BUT SOURCE WAS COMPILED WITH: 8.6.0",
        "cudnn_version_mismatch",
        {"cudnn": "8.6.0"},
    ),
]


def _versions(d: Any) -> dict[str, str]:
    return {**d["found"], **d["expected"]} if isinstance(d, dict) else {**d.found, **d.expected}


@pytest.mark.parametrize(("text", "kind", "versions"), CASES)
def test_diagnose_reads_encoded_and_wrapped_text(text: str, kind: str, versions: dict[str, str]) -> None:
    found = diagnose(text.splitlines())
    assert found, text
    assert found[0].kind == kind
    assert versions.items() <= _versions(found[0]).items()


def test_explain_file_reads_them_as_the_scanner_does(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "mixed.log"
    noise = "".join(f"step {n}: loss 0.{n:04d} 100%|##########| C:\\data\\run{n}\\x\n" for n in range(2000))
    log.write_text(noise + "\n".join(text for text, _, _ in CASES) + "\n" + noise, encoding="utf-8")
    proc = run_cli("explain", "--json", "--no-detect", "--file", str(log))
    assert proc.returncode == 1, proc.stderr
    got = [_versions(d) for d in json.loads(proc.stdout)["diagnoses"]]
    for text, _, versions in CASES:
        assert any(versions.items() <= g.items() for g in got), (text, got)
