"""`matrix --json` answers every query in one shape (docs/matrix-schema.md, "The answer of matrix --json")."""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

Cli = Callable[..., CompletedProcess[str]]

KEYS = {"query", "releases", "names", "packages", "message"}


@pytest.mark.parametrize(
    "args",
    [
        ["tensorflow-gpu==1.0.0"],  # one release, one system
        ["tensorflow-gpu==1.13.1"],  # one release on several systems (issue 21)
        ["cupy-cuda80==5.0.0"],  # (issue 21)
        ["torch==2.8.0", "--os", "windows"],
        ["tensorflow-gpu>=2.15"],  # nothing here: a message
        ["jaxlib"],  # every release of a package
        ["--cuda", "11.8"],  # a filter alone
        [],  # the summary
        ["not-a-framework-at-all"],
    ],
)
def test_every_query_answers_in_one_shape(run_cli: Cli, args: list[str]) -> None:
    r = run_cli("matrix", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    data = json.loads(r.stdout)
    assert isinstance(data, dict) and set(data) == KEYS, sorted(data)
    assert all(isinstance(data[k], list) for k in ("releases", "names", "packages"))
    assert data["message"] is None or isinstance(data["message"], str)
    assert (r.returncode == 0) == bool(data["releases"] or data["names"] or data["packages"])


def test_one_release_is_a_list_of_one(run_cli: Cli) -> None:
    data = json.loads(run_cli("matrix", "torch==2.8.0", "--json").stdout)
    assert len(data["releases"]) == 1
    release = data["releases"][0]
    assert release["package"] == "torch" and release["version"] == "2.8.0"
    assert release["os"] == ["linux"] and [o["os"] for o in release["other_os"]] == [["windows"]]
    assert data["query"] == "torch==2.8.0"


def test_rows_of_other_releases_are_listed_alike(run_cli: Cli) -> None:
    # TensorFlow's Windows row for the 1.13 series is named after 1.13.0 and covers 1.13.1, which PyPI publishes:
    # an exact pin shows that release on both systems, one record with the other system's beside it
    data = json.loads(run_cli("matrix", "tensorflow-gpu==1.13.1", "--json").stdout)
    [release] = data["releases"]
    assert (release["version"], release["os"]) == ("1.13.1", ["linux"])
    assert [(o["version"], o["os"]) for o in release["other_os"]] == [("1.13.1", ["windows"])]
    # a range lists each row as it is: the Windows row under its own name
    data = json.loads(run_cli("matrix", "tensorflow-gpu>=1.13,<1.14", "--json").stdout)
    assert ("1.13.0", ["windows"]) in [(r["version"], r["os"]) for r in data["releases"]]
