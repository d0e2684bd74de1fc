"""pip's own configuration is index context (issue #21, Deliver 1): ``PIP_INDEX_URL`` / ``PIP_EXTRA_INDEX_URL`` and
pip.conf (the environment's, the user's, ``PIP_CONFIG_FILE``) choose the build ``pip install -r`` gets, as a
requirements file's own ``--index-url`` line does; uv's sources in pyproject.toml choose it for uv. Real files in
tmp dirs, real variables, a real ``dnnresolve`` subprocess.

torch 2.1.0 on driver 470.82.01: PyPI's build (CUDA 12.1) cannot run; the CUDA 11.8 build from
https://download.pytorch.org/whl/cu118 runs through minor-version compatibility."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

RunCli = Callable[..., CompletedProcess[str]]
CU118 = "https://download.pytorch.org/whl/cu118"
CU121 = "https://download.pytorch.org/whl/cu121"
TARGET = ("--driver", "470.82.01", "--python", "3.11")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Nothing of this machine's own pip configuration but /etc/pip.conf (which names no build); ``extra`` on top."""
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
        "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
        "VIRTUAL_ENV": str(tmp_path / "venv"),
        "CONDA_PREFIX": "",
        "PIP_CONFIG_FILE": "",
        "PIP_INDEX_URL": "",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_FIND_LINKS": "",
        "PIP_NO_INDEX": "",
    }
    env.update(extra)
    return env


def _conf(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _checked(run_cli: RunCli, tmp_path: Path, env: dict[str, str], lines: str = "torch==2.1.0\n") -> str:
    (tmp_path / "requirements.txt").write_text(lines)
    r = run_cli("check", "requirements.txt", *TARGET, "--json", env=env)
    assert r.returncode in (0, 1), r.stderr
    [line] = json.loads(r.stdout)["checked_lines"]
    return str(line["release"])


def test_without_configuration_pypi_s_build_is_checked(run_cli: RunCli, tmp_path: Path) -> None:
    assert _checked(run_cli, tmp_path, _env(tmp_path)) == "torch 2.1.0 for CUDA 12.1"


def test_pip_index_url_chooses_the_build(run_cli: RunCli, tmp_path: Path) -> None:
    assert _checked(run_cli, tmp_path, _env(tmp_path, PIP_INDEX_URL=CU118)) == "torch 2.1.0 for CUDA 11.8"


def test_pip_extra_index_url_chooses_the_build(run_cli: RunCli, tmp_path: Path) -> None:
    # pip sees 2.1.0 on PyPI and 2.1.0+cu118 on the extra index, and picks the latter (a local version sorts higher)
    env = _env(tmp_path, PIP_EXTRA_INDEX_URL=f"file:///nowhere {CU118}")
    assert _checked(run_cli, tmp_path, env) == "torch 2.1.0 for CUDA 11.8"


@pytest.mark.parametrize(
    "where", ["venv/pip.conf", "home/.config/pip/pip.conf", "home/.pip/pip.conf", "xdg/pip/pip.conf"]
)
def test_a_pip_conf_chooses_the_build(run_cli: RunCli, tmp_path: Path, where: str) -> None:
    _conf(tmp_path / where, f"[global]\nindex-url = {CU118}\n")
    assert _checked(run_cli, tmp_path, _env(tmp_path)) == "torch 2.1.0 for CUDA 11.8"


def test_pip_config_file_and_its_precedence(run_cli: RunCli, tmp_path: Path) -> None:
    conf = _conf(tmp_path / "pip-custom.conf", f"[install]\nindex_url = {CU118}\n[global]\nindex-url = {CU121}\n")
    assert _checked(run_cli, tmp_path, _env(tmp_path, PIP_CONFIG_FILE=str(conf))) == "torch 2.1.0 for CUDA 11.8"
    # the variable beats every file; /dev/null loads no file at all
    env = _env(tmp_path, PIP_CONFIG_FILE=str(conf), PIP_INDEX_URL=CU121)
    assert _checked(run_cli, tmp_path, env) == "torch 2.1.0 for CUDA 12.1"
    _conf(tmp_path / "venv/pip.conf", f"[global]\nindex-url = {CU118}\n")
    assert _checked(run_cli, tmp_path, _env(tmp_path, PIP_CONFIG_FILE="/dev/null")) == "torch 2.1.0 for CUDA 12.1"


def test_the_file_s_own_index_line_wins(run_cli: RunCli, tmp_path: Path) -> None:
    env = _env(tmp_path, PIP_INDEX_URL=CU118)
    assert _checked(run_cli, tmp_path, env, f"--index-url {CU121}\ntorch==2.1.0\n") == "torch 2.1.0 for CUDA 12.1"


def test_uv_sources_are_uv_s_and_pip_configuration_is_pip_s(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch==2.1.0"]\n\n'
        '[tool.uv.sources]\ntorch = [{ index = "pytorch-cu118" }]\n\n'
        f'[[tool.uv.index]]\nname = "pytorch-cu118"\nurl = "{CU118}"\nexplicit = true\n'
    )
    r = run_cli("check", "pyproject.toml", *TARGET, "--json", env=_env(tmp_path, PIP_INDEX_URL=CU121))
    [line] = json.loads(r.stdout)["checked_lines"]
    assert line["release"] == "torch 2.1.0 for CUDA 11.8"


def test_plan_reads_pip_s_configuration(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("plan", "torch==2.1.0", "--no-detect", *TARGET, "--json", env=_env(tmp_path, PIP_INDEX_URL=CU118))
    assert r.returncode in (0, 1), r.stderr
    req = json.loads(r.stdout)["requirements"][0]
    assert req["cuda_variant"] == "11.8", req["cuda_variant"]


def _profile(tmp_path: Path, pip: dict[str, object] | None) -> Path:
    """A profile of a machine with driver 470 and Python 3.11, as `detect --json` writes it there."""
    data: dict[str, object] = {"schema": "dnnresolve-runtime/1", "driver": "470.82.01", "python": {"version": "3.11"}}
    if pip is not None:
        data["pip"] = pip
    path = tmp_path / "target.json"
    path.write_text(json.dumps(data))
    return path


def test_check_reads_the_target_s_pip_configuration_from_its_profile(run_cli: RunCli, tmp_path: Path) -> None:
    # the cluster's pip is set to the cu118 index; the CI machine running the check is set to cu121
    pip = {"index_url": CU118, "from": {"index-url": "/etc/pip.conf"}}
    target = _profile(tmp_path, pip)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    r = run_cli("check", "requirements.txt", "--target", str(target), "--json", env=_env(tmp_path, PIP_INDEX_URL=CU121))
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    [line] = out["checked_lines"]
    assert line["release"] == "torch 2.1.0 for CUDA 11.8"
    assert any("on the target" in n and "index-url from /etc/pip.conf" in n for n in out["notes"]), out["notes"]


def test_a_profile_without_pip_s_configuration_falls_back_to_this_machine_s(run_cli: RunCli, tmp_path: Path) -> None:
    target = _profile(tmp_path, None)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    r = run_cli("check", "requirements.txt", "--target", str(target), "--json", env=_env(tmp_path, PIP_INDEX_URL=CU118))
    out = json.loads(r.stdout)
    [line] = out["checked_lines"]
    assert line["release"] == "torch 2.1.0 for CUDA 11.8"
    assert any("does not record the target's pip configuration" in n for n in out["notes"]), out["notes"]


def test_a_target_whose_pip_names_no_index_gets_pypi_s_build(run_cli: RunCli, tmp_path: Path) -> None:
    target = _profile(tmp_path, {"index_url": "", "from": {}})
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    r = run_cli("check", "requirements.txt", "--target", str(target), "--json", env=_env(tmp_path, PIP_INDEX_URL=CU118))
    [line] = json.loads(r.stdout)["checked_lines"]
    assert line["release"] == "torch 2.1.0 for CUDA 12.1"


def test_plan_reads_the_target_s_pip_configuration(run_cli: RunCli, tmp_path: Path) -> None:
    target = _profile(tmp_path, {"index_url": CU118, "from": {"index-url": "PIP_INDEX_URL"}})
    env = _env(tmp_path, PIP_INDEX_URL=CU121)
    r = run_cli("plan", "torch==2.1.0", "--no-detect", "--target", str(target), "--json", env=env)
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["requirements"][0]["cuda_variant"] == "11.8"


def test_detect_records_pip_s_configuration_and_it_reads_back(run_cli: RunCli, tmp_path: Path) -> None:
    _conf(tmp_path / "home/.config/pip/pip.conf", f"[global]\nindex-url = {CU118}\nextra-index-url = {CU121}\n")
    r = run_cli("detect", "--json", env=_env(tmp_path, PIP_FIND_LINKS="/srv/wheels"))
    assert r.returncode == 0, r.stderr
    pip = json.loads(r.stdout)["pip"]
    assert (pip["index_url"], pip["extra_index_urls"], pip["find_links"]) == (CU118, [CU121], ["/srv/wheels"])
    assert pip["from"] == {
        "index-url": str(tmp_path / "home/.config/pip/pip.conf"),
        "extra-index-url": str(tmp_path / "home/.config/pip/pip.conf"),
        "find-links": "PIP_FIND_LINKS",
    }
    (tmp_path / "target.json").write_text(r.stdout)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    r = run_cli(
        "check", "requirements.txt", "--target", "target.json", "--driver", "470.82.01", "--json", env=_env(tmp_path)
    )
    [line] = json.loads(r.stdout)["checked_lines"]
    assert line["release"] == "torch 2.1.0 for CUDA 11.8"


def test_a_bad_pip_field_names_the_profile_and_field(run_cli: RunCli, tmp_path: Path) -> None:
    target = _profile(tmp_path, {"extra_index_urls": "https://x/simple"})
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    r = run_cli("check", "requirements.txt", "--target", str(target), env=_env(tmp_path))
    assert r.returncode == 2
    assert "target.json" in r.stderr and "pip.extra_index_urls" in r.stderr and "Traceback" not in r.stderr
