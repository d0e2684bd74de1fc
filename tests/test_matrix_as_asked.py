"""`matrix PKG==X` answers for X, as plan does, for every release a row covers that may exist (issue #21,
Deliver 2 and 8): a row stands for a stretch of releases, and the lower end of each stretch is a release of its
own. jaxlib's CUDA wheels and Paddle's post builds come from their own find-links pages, whose releases PyPI's
recorded list does not hold: `matrix jaxlib==0.1.55` showed the 0.1.56 row with `pip install jaxlib==0.1.56+...`."""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from packaging.version import Version

from dnnresolve.artifact import may_exist
from dnnresolve.matrix import load_matrix
from dnnresolve.pkgname import canonicalize_name
from dnnresolve.query import matrix_query
from dnnresolve.specs import parse_requirement

RunCli = Callable[..., CompletedProcess[str]]


def _stretch_starts() -> list[tuple[str, Version]]:
    """(package, release) for each row whose stretch starts below the row's own release, where that release may
    exist (PyPI's list has it, or the row's builds come from another index)."""
    out = set()
    for row in load_matrix().frameworks:
        for spec in row.covers:
            if spec.operator == ">=":
                start = Version(spec.version)
                if start != row.version and row.matches(start) and may_exist(row, start):
                    out.add((row.package, start))
    return sorted(out)


def test_the_sweep_covers_rows_of_other_indexes() -> None:
    cases = _stretch_starts()
    assert ("jaxlib", Version("0.1.55")) in cases and ("paddlepaddle-gpu", Version("1.8.0")) in cases, cases
    assert len(cases) >= 20, len(cases)


def test_every_stretch_start_is_shown_as_itself() -> None:
    matrix = load_matrix()
    wrong = []
    for package, release in _stretch_starts():
        result = matrix_query(matrix, f"{package}=={release}")
        for record in result.releases:
            if Version(record["version"]) != release:
                wrong.append(f"{package}=={release}: shown as {record['version']}")
                continue
            for step in record["install"]:
                requirement = str(step.get("requirement") or "")
                for part in requirement.split():
                    try:
                        req = parse_requirement(part)
                    except Exception:  # flags and URLs on the line
                        continue
                    if canonicalize_name(req.name) != package or not str(req.specifier).startswith("=="):
                        continue
                    pinned = Version(str(req.specifier)[2:])  # 1.8.0.post97 is a build of 1.8.0
                    if release not in (pinned, Version(pinned.base_version)):
                        wrong.append(f"{package}=={release}: installs {part}")
    assert not wrong, wrong


def test_matrix_and_plan_agree_on_a_find_links_release(run_cli: RunCli) -> None:
    r = run_cli("matrix", "jaxlib==0.1.55", "--json")
    [release] = json.loads(r.stdout)["releases"]
    assert release["version"] == "0.1.55"
    assert any(s["requirement"] == "jaxlib==0.1.55+cuda101" for s in release["install"]), release["install"]
    text = run_cli("matrix", "jaxlib==0.1.55").stdout
    assert text.startswith("jaxlib 0.1.55 (linux)"), text
    assert "0.1.56+" not in text, text
    plan = run_cli("plan", "jaxlib==0.1.55", "--no-detect", "--os", "linux", "--python", "3.8", "--cuda", "10.1")
    assert "jaxlib==0.1.55+cuda101" in plan.stdout, plan.stdout
