"""The requirement-file readers: each format, with file and line, on realistic files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnnresolve.errors import UserError
from dnnresolve.sources import read_file
from dnnresolve.sources.matchspec import parse_matchspec
from dnnresolve.sources.poetry import poetry_to_pep440

PROJECTS = Path(__file__).parent / "fixtures" / "projects"


def by_name(sf):  # type: ignore[no-untyped-def]
    return {r.name: r for r in sf.requirements}


def test_requirements_txt_includes_index_hash_and_vcs() -> None:
    sf = read_file(PROJECTS / "modern-torch-jax" / "requirements.txt")
    reqs = by_name(sf)
    assert reqs["torch"].line == 3 and str(reqs["torch"].requirement) == "torch==2.1.2"
    assert reqs["jax"].requirement is not None and reqs["jax"].requirement.extras == {"cuda12"}
    # pip applies index options to the whole install, the -r file's requirements included
    assert reqs["pytest"].index.extra_index_urls == ("https://download.pytorch.org/whl/cu121",)
    assert reqs["torch"].index.find_links == ("https://storage.googleapis.com/jax-releases/jax_cuda_releases.html",)
    assert reqs["pytest"].file.endswith("requirements-dev.txt") and reqs["pytest"].line == 1
    assert [(Path(s.file).name, s.line) for s in sf.skipped] == [("requirements-dev.txt", 2)]


def test_conda_env_specs_pip_section_and_lines() -> None:
    sf = read_file(PROJECTS / "research-tf1" / "environment.yml")
    reqs = by_name(sf)
    assert reqs["cudatoolkit"].origin == "conda" and reqs["cudatoolkit"].line == 7
    assert reqs["cudatoolkit"].conda is not None and reqs["cudatoolkit"].conda.exact_version == "10.1"
    assert reqs["tensorflow-gpu"].origin == "pip" and reqs["tensorflow-gpu"].line == 12
    # the pip: list's -r include is read relative to the environment file; --hash continuation joined
    assert reqs["scipy"].line == 4 and str(reqs["scipy"].requirement) == "scipy==1.1.0"
    assert reqs["tqdm"].line == 3


def test_uv_sources_pin_torch_to_its_index() -> None:
    sf = read_file(PROJECTS / "uv-torch" / "pyproject.toml")
    reqs = by_name(sf)
    assert reqs["torch"].line == 6 and reqs["torch"].index.index_url == "https://download.pytorch.org/whl/cu118"
    assert reqs["numpy"].index.index_url == ""  # an explicit index serves only the packages sourced to it
    assert reqs["tensorflow"].line == 12 and reqs["tensorflow"].group == "optional-dependencies.tf"
    assert sf.target == {"driver": "535.104.05", "gpu": "A100", "python": "3.11"} and sf.target_line == 22


def test_poetry_dependencies_sources_and_constraints() -> None:
    sf = read_file(PROJECTS / "poetry-torch-tf" / "pyproject.toml")
    reqs = by_name(sf)
    assert "python" not in reqs
    assert str(reqs["torch"].requirement) == "torch<3,>=2.1" and reqs["torch"].line == 9
    assert reqs["torch"].index.index_url == "https://download.pytorch.org/whl/cu121"
    assert reqs["tensorflow"].requirement is not None and reqs["tensorflow"].requirement.extras == {"and-cuda"}
    assert reqs["pytest"].line == 14 and str(reqs["pytest"].requirement.specifier) == "<7.5,>=7.4"  # type: ignore[union-attr]


def test_pipfile_packages_and_source() -> None:
    sf = read_file(PROJECTS / "pipenv-tf" / "Pipfile")
    reqs = by_name(sf)
    assert reqs["tensorflow-gpu"].line == 7 and str(reqs["tensorflow-gpu"].requirement) == "tensorflow-gpu==1.4.0"
    assert reqs["torch"].index.index_url == "https://pypi.org/simple"
    assert reqs["pytest"].group == "dev-packages"


@pytest.mark.parametrize(
    ("poetry", "pep440"),
    [
        ("^2.1", ">=2.1,<3"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("*", ""),
        ("2.15.1", "==2.15.1"),
        (">= 1.2, < 2", ">=1.2,<2"),
        (">=1.2 <2", ">=1.2,<2"),
    ],
)
def test_poetry_constraints(poetry: str, pep440: str) -> None:
    assert poetry_to_pep440(poetry) == pep440


@pytest.mark.parametrize(
    ("text", "name", "channel", "spec", "exact"),
    [
        ("cudatoolkit=10.1", "cudatoolkit", "", "==10.1.*", "10.1"),
        ("pytorch::pytorch==1.4.0", "pytorch", "pytorch", "==1.4.0", "1.4.0"),
        ("cuda-version 12.2.*", "cuda-version", "", "==12.2.*", "12.2"),
        ("pytorch>=1.4,<2", "pytorch", "", "<2,>=1.4", ""),
        ("cudnn=7.6.5=cuda10.1_0", "cudnn", "", "==7.6.5.*", "7.6.5"),
    ],
)
def test_matchspec(text: str, name: str, channel: str, spec: str, exact: str) -> None:
    m = parse_matchspec(text)
    assert (m.name, m.channel, str(m.specifier), m.exact_version) == (name, channel, spec, exact)


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    return proj


def test_include_cycle_names_file_and_line(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    (proj / "a.txt").write_text("numpy\n-r b.txt\n")
    (proj / "b.txt").write_text("# loops back\n-r a.txt\n")
    with pytest.raises(UserError) as err:
        read_file(proj / "a.txt")
    assert err.value.file is not None and err.value.file.endswith("b.txt") and err.value.line == 2
    assert "cycle" in err.value.message


def test_include_outside_project_is_an_error(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    (tmp_path / "secret.txt").write_text("torch\n")
    (proj / "requirements.txt").write_text("numpy\n\n-r ../secret.txt\n")
    with pytest.raises(UserError) as err:
        read_file(proj / "requirements.txt")
    assert err.value.line == 3 and "outside the project" in err.value.message


def test_marker_and_url_lines(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    (proj / "requirements.in").write_text(
        'tensorflow-gpu==1.4.0; python_version < "3.7"\nhttps://example.org/x-1.0-py3-none-any.whl\n-e .\n'
    )
    sf = read_file(proj / "requirements.in")
    assert str(sf.requirements[0].requirement.marker) == 'python_version < "3.7"'  # type: ignore[union-attr]
    assert [s.line for s in sf.skipped] == [2, 3]
