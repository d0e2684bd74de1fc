"""`dnnresolve check` end to end: real project files, the real CLI in a subprocess, each format parsed back."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
PROJECTS = FIXTURES / "projects"
MATRIX = str(FIXTURES / "check_matrix.toml")

Run = Callable[..., subprocess.CompletedProcess[str]]


def check_json(run_cli: Run, *args: str) -> tuple[int, dict[str, Any]]:
    proc = run_cli("check", "--matrix", MATRIX, "--json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def findings(report: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == rule]


def at(f: dict[str, Any]) -> tuple[str, int]:
    return Path(f["file"]).name, f["line"]


def test_research_repo_tf1_against_its_conda_cuda(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(PROJECTS / "research-tf1" / "environment.yml"))
    assert rc == 1
    assert "only internal consistency" in report["notes"][0]
    [f] = findings(report, "target-incompatible")
    assert at(f) == ("environment.yml", 12) and f["package"] == "tensorflow-gpu" and f["severity"] == "error"
    assert "built for CUDA 8.0; CUDA 10.1 is in use" in f["message"] and "environment.yml:7" in f["message"]
    assert "cuDNN 7.6 is loaded" in f["message"]
    assert f["source"] == "https://www.tensorflow.org/install/source#gpu"
    assert "numpy" in report["not_checked"] and "pillow" in report["not_checked"]


def test_research_repo_env_python_beats_target_python(run_cli: Run) -> None:
    # the conda file says python=3.6: the target's 3.11 is not what runs tensorflow-gpu 1.4 there
    _, report = check_json(
        run_cli, str(PROJECTS / "research-tf1" / "environment.yml"), "--python", "3.11", "--driver", "375.26"
    )
    [f] = findings(report, "target-incompatible")
    assert "Python" not in f["message"]


def test_modern_repo_torch_cu121_and_jax_clash_on_cudnn(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(PROJECTS / "modern-torch-jax" / "requirements.txt"))
    assert rc == 1
    [f] = findings(report, "wheel-conflict")
    assert at(f) == ("requirements.txt", 5) and f["package"] == "jax"
    assert "nvidia-cudnn-cu12==8.9.2.26" in f["message"] and "nvidia-cudnn-cu12<10.0,>=9.0" in f["message"]
    # jax's cuBLAS range >=12.1.3.1 admits torch's ==12.1.3.1: no clash reported for it
    assert "cublas" not in f["message"]
    assert [at(x) for x in findings(report, "skipped")] == [("requirements-dev.txt", 2)]
    assert [x["package"] for x in findings(report, "not-checked")] == ["torchvision"]
    assert "einops" in report["not_checked"]


def test_modern_repo_old_driver_against_the_cu121_index(run_cli: Run) -> None:
    _, report = check_json(
        run_cli, str(PROJECTS / "modern-torch-jax" / "requirements.txt"), "--driver", "470.82.01", "--gpu", "A100"
    )
    [f] = findings(report, "cuda-disagreement")
    assert at(f) == ("requirements.txt", 3)
    assert "driver >= 530.30.02; found 470.82.01" in f["message"] and "whl/cu121" in f["message"]
    assert [at(x) for x in findings(report, "target-incompatible")] == [("requirements.txt", 5)]


def test_uv_project_torch_index_disagrees_with_conda_cuda(run_cli: Run) -> None:
    rc, report = check_json(
        run_cli, str(PROJECTS / "uv-torch" / "pyproject.toml"), str(PROJECTS / "uv-torch" / "environment.yml")
    )
    assert rc == 1
    assert report["target"]["driver"] == "535.104.05" and "[tool.dnnresolve]" in report["target"]["sources"]["driver"]
    assert report["notes"] == []
    [f] = findings(report, "cuda-disagreement")
    assert at(f) == ("pyproject.toml", 6) and f["severity"] == "error"
    assert "CUDA 11.8" in f["message"] and "cuda-version=12.2" in f["message"]
    assert findings(report, "target-incompatible") == []


def test_uv_project_clean_without_the_conda_file(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(PROJECTS / "uv-torch" / "pyproject.toml"))
    assert rc == 0 and report["summary"]["error"] == 0 and report["summary"]["warning"] == 0
    assert report["checked"] == ["tensorflow", "torch"]


def test_a_pin_the_target_runs_with_a_caveat_is_a_warning(run_cli: Run) -> None:
    # the packaged matrix: TensorFlow 2.15's wheels carry sm_50-sm_75 and PTX compute_80, so the A100 of the
    # project's [tool.dnnresolve] compiles that PTX at first use; torch 2.1.2's cu118 wheels carry sm_80
    proc = run_cli("check", "--json", str(PROJECTS / "uv-torch" / "pyproject.toml"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    [caveat] = report["findings"]
    assert (caveat["rule"], caveat["package"], caveat["severity"]) == ("target-caveat", "tensorflow", "warning")
    assert at(caveat) == ("pyproject.toml", 12)
    assert caveat["message"].startswith("tensorflow 2.15.1 (CUDA 12.2) runs, with a caveat: compute_capability: ")
    assert "PTX (compute_80)" in caveat["message"]
    # an older driver runs torch's CUDA 11.8 build through minor-version compatibility only: a caveat too
    proc = run_cli("check", "--json", "--driver", "470.82.01", str(PROJECTS / "uv-torch" / "pyproject.toml"))
    torch = [f for f in json.loads(proc.stdout)["findings"] if f["package"] == "torch"]
    assert [(f["rule"], f["severity"]) for f in torch] == [("target-caveat", "warning")]
    assert "driver: runs through CUDA 11.x minor-version compatibility" in torch[0]["message"]


def test_poetry_project_range_and_tf_clash(run_cli: Run) -> None:
    _, report = check_json(run_cli, str(PROJECTS / "poetry-torch-tf" / "pyproject.toml"))
    [u] = findings(report, "unpinned")
    assert at(u) == ("pyproject.toml", 9) and u["severity"] == "warning" and "<3,>=2.1" in u["message"]
    [c] = findings(report, "wheel-conflict")
    assert at(c) == ("pyproject.toml", 10)
    assert "nvidia-cublas-cu12==12.1.3.1" in c["message"] and "nvidia-cublas-cu12==12.2.5.6" in c["message"]


def test_pipfile_python_too_new(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(PROJECTS / "pipenv-tf" / "Pipfile"), "--python", "3.11")
    assert rc == 1
    [f] = findings(report, "target-incompatible")
    assert at(f) == ("Pipfile", 7) and "no wheels for Python 3.11" in f["message"]
    # torch = "*": some release runs on 3.11, so only the unpinned warning
    assert [at(x) for x in findings(report, "unpinned")] == [("Pipfile", 8)]


def test_warnings_fail_only_with_strict(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("torch>=2.1\n")
    assert run_cli("check", "--matrix", MATRIX, str(req), "--python", "3.11").returncode == 0
    assert run_cli("check", "--matrix", MATRIX, "--strict", str(req), "--python", "3.11").returncode == 1


def test_cu11_and_cu12_wheels_in_one_process_warn(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("torch==1.13.1\ntensorflow[and-cuda]==2.15.1\n")
    rc, report = check_json(run_cli, str(req))
    assert rc == 0 and findings(report, "wheel-conflict") == []
    [w] = findings(report, "cuda-major-mix")
    assert at(w) == ("requirements.txt", 2) and w["severity"] == "warning"
    assert "nvidia-cudnn-cu11==8.5.0.96" in w["message"] and "libcudnn.so.8" in w["message"]


def test_sarif_has_the_required_fields(run_cli: Run) -> None:
    proc = run_cli(
        "check", "--matrix", MATRIX, "--format", "sarif", str(PROJECTS / "modern-torch-jax" / "requirements.txt")
    )
    assert proc.returncode == 1
    sarif = json.loads(proc.stdout)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "dnnresolve"
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert run["results"]
    for result in run["results"]:
        assert result["ruleId"] in rule_ids and result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith(".txt") and loc["region"]["startLine"] >= 1
    assert any(r["ruleId"] == "wheel-conflict" and r["level"] == "error" for r in run["results"])


def test_markdown_table_parses_back(run_cli: Run) -> None:
    proc = run_cli(
        "check", "--matrix", MATRIX, "--format", "markdown", str(PROJECTS / "poetry-torch-tf" / "pyproject.toml")
    )
    lines = proc.stdout.splitlines()
    assert lines[0] == "### dnnresolve check: 1 error(s), 1 warning(s)"
    header = lines.index("| file:line | package | severity | finding | fix |")
    assert lines[header + 1] == "|---|---|---|---|---|"
    rows = [ln.strip("|").split(" | ") for ln in lines[header + 2 :] if ln.startswith("|")]
    assert [(r[0].strip(" `").rsplit("/", 1)[-1], r[1], r[2]) for r in rows] == [
        ("pyproject.toml:9", "torch", "warning"),
        ("pyproject.toml:10", "tensorflow", "error"),
    ]


def test_text_table_and_globs(run_cli: Run) -> None:
    proc = run_cli("check", "--matrix", MATRIX, "research-tf1/*.yml", "pipenv-tf", cwd=PROJECTS)
    assert proc.returncode == 1
    assert "environment.yml:12" in proc.stdout and "tensorflow-gpu" in proc.stdout
    assert "1 error(s), 1 warning(s)" in proc.stdout and "in 2 file(s)" in proc.stdout


@pytest.mark.parametrize(
    ("name", "content", "where", "what"),
    [
        ("requirements.txt", b"numpy\n\x89PNG\r\n\x1a\n\x00\x00", "requirements.txt:4:", "binary data"),
        ("requirements.txt", b"numpy==1.0\ntorch==2.1.2 # caf\xe9\n", "requirements.txt:2:", "not valid UTF-8"),
        ("a.txt", b"-r b.txt\n", "b.txt:1:", "include cycle"),
        ("requirements.txt", b"numpy\n-r ../outside.txt\n", "requirements.txt:2:", "outside the project"),
        ("environment.yml", b"dependencies:\n  - python=3.6\n  - [unclosed\n", "environment.yml:", "not valid YAML"),
        ("pyproject.toml", b'[project]\ndependencies = ["torch=="]\n', "pyproject.toml:2:", "not a valid requirement"),
    ],
)
def test_unreadable_input_is_one_line_exit_2(
    run_cli: Run, tmp_path: Path, name: str, content: bytes, where: str, what: str
) -> None:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "b.txt").write_text("-r a.txt\n")
    (tmp_path / "outside.txt").write_text("torch\n")
    (proj / name).write_bytes(content)
    proc = run_cli("check", "--matrix", MATRIX, str(proj / name))
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0] and what in lines[0], lines
    assert "Traceback" not in proc.stderr


def test_target_profile_from_detect(run_cli: Run, tmp_path: Path) -> None:
    """A `detect --json` of the K20m node is the deploy target: its cuDNN 5.0 cannot serve TF 1.4."""
    from .detect.machines import make_machine

    root = make_machine(tmp_path, "k20m")
    profile = tmp_path / "k20m.json"
    detected = run_cli("detect", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert detected.returncode == 0, detected.stderr
    profile.write_text(detected.stdout)
    req = tmp_path / "requirements.txt"
    req.write_text("tensorflow-gpu==1.0.0\n")
    proc = run_cli("check", "--json", "--target", str(profile), str(req))
    assert proc.returncode == 1, proc.stderr
    [f] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "target-incompatible"]
    assert f["line"] == 1 and "cuDNN" in f["message"]
    missing = run_cli("check", "--target", str(tmp_path / "x.json"), str(req))
    assert missing.returncode == 2 and "x.json" in missing.stderr and missing.stderr[-1] == "\n"


def test_matrix_from_environment_variable(run_cli: Run) -> None:
    proc = run_cli("check", "--json", str(PROJECTS / "pipenv-tf" / "Pipfile"), env={"DNNRESOLVE_MATRIX": MATRIX})
    assert proc.returncode == 0 and "tensorflow-gpu" in json.loads(proc.stdout)["checked"]


def test_conda_pytorch_cuda_disagrees_with_cuda_version(run_cli: Run, tmp_path: Path) -> None:
    env = tmp_path / "environment-gpu.yml"
    env.write_text(
        "name: train\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.11\n"
        "  - pytorch::pytorch=2.1.2\n  - pytorch::pytorch-cuda=11.8\n  - cuda-version=12.2\n"
    )
    rc, report = check_json(run_cli, str(env), "--driver", "535.104.05")
    assert rc == 1 and report["checked"] == ["torch"]
    [f] = findings(report, "cuda-disagreement")
    assert at(f) == ("environment-gpu.yml", 7) and f["severity"] == "error"
    assert "CUDA 11.8 (pytorch::pytorch-cuda=11.8" in f["message"] and "cuda-version=12.2" in f["message"]
    assert findings(report, "unpinned") == []


def test_markers_follow_the_target_python(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text('tensorflow-gpu==1.4.0; python_version < "3.7"\n')
    rc, report = check_json(run_cli, str(req), "--python", "3.11")
    assert rc == 0 and report["checked"] == []
    [note] = report["findings"]  # pip skips the line on this target: a note says so (issue 21)
    assert note["severity"] == "info" and "skipped: its marker" in note["message"]
    rc, report = check_json(run_cli, str(req), "--python", "3.6", "--cuda", "9.0")
    [f] = findings(report, "target-incompatible")
    assert rc == 1 and "built for CUDA 8.0; CUDA 9.0 is in use [given (--cuda)]" in f["message"]


def test_pre_commit_hook_definition() -> None:
    import re

    import yaml

    [hook] = yaml.safe_load((FIXTURES.parents[1] / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("dnnresolve-check", "dnnresolve check", "python")
    files = re.compile(hook["files"])
    for name in ("requirements.txt", "ci/requirements-gpu.txt", "pyproject.toml", "environment-gpu.yml", "Pipfile"):
        assert files.search(name), name
    for name in ("setup.py", "docs/notes.txt", "Pipfile.lock", "conda-lock.yml"):
        assert not files.search(name), name


def test_same_pin_judged_per_environment_and_reported_per_line(run_cli: Run, tmp_path: Path) -> None:
    # one run, the same tensorflow-gpu pin three times: twice in a plain requirements file (Python 3.11
    # from the target: no 1.4 wheels) and once inside a conda env that sets python=3.6 (wheels exist)
    env = tmp_path / "environment.yml"
    env.write_text(
        "dependencies:\n  - python=3.6\n  - cudatoolkit=8.0\n  - cudnn=6.0\n  - pip\n  - pip:\n"
        "    - tensorflow-gpu==1.4.0\n"
    )
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("tensorflow-gpu==1.4.0\nnumpy\ntensorflow-gpu==1.4.0\n")
    _, report = check_json(run_cli, str(reqs), str(env), "--python", "3.11", "--driver", "375.26")
    python_findings = [f for f in findings(report, "target-incompatible") if "Python 3.11" in f["message"]]
    assert sorted(at(f) for f in python_findings) == [("requirements.txt", 1), ("requirements.txt", 3)]
    assert not [f for f in report["findings"] if at(f)[0] == "environment.yml" and "Python" in f["message"]]


def test_conda_cuda_packages_are_not_read_as_a_framework_pin(run_cli: Run) -> None:
    # the packaged matrix has a TF recipe whose conda packages are only cudatoolkit and cudnn (Windows):
    # cudatoolkit=10.1 must stay the environment's CUDA, not become "tensorflow-gpu==10.1.*"
    proc = run_cli("check", "--json", str(PROJECTS / "research-tf1" / "environment.yml"), "--driver", "375.26")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert [at(f) for f in report["findings"] if f["package"] == "tensorflow-gpu"] == [("environment.yml", 12)]


def test_a_wheel_that_brings_its_cuda_is_not_held_to_the_targets_toolkit(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.1.0+cu118\n--extra-index-url https://download.pytorch.org/whl/cu118\n")
    target = ("--driver", "535.104.05", "--gpu", "7.0", "--python", "3.10")
    _, report = check_json(run_cli, str(req), *target, "--cuda", "11.4")
    assert findings(report, "cuda-disagreement") == []  # torch's cu118 wheel loads its own CUDA 11.8 runtime
    assert report["checked"] == ["torch"] and report["summary"]["error"] == 0


def test_check_without_a_file_reads_the_current_directory(run_cli: Run, tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "project"
    shutil.copytree(PROJECTS / "research-tf1", project)
    here = run_cli("check", "--json", "--no-detect", cwd=project)
    named = run_cli("check", "--json", "--no-detect", str(project))
    assert here.returncode == named.returncode and here.returncode in (0, 1)
    assert json.loads(here.stdout)["checked"] == json.loads(named.stdout)["checked"] != []
    empty = run_cli("check", cwd=tmp_path / "project" / "..")
    assert empty.returncode == 2 and "no requirement files in this directory" in empty.stderr


def test_tensorflow_gpu_after_it_stopped_is_a_warning_with_the_name_to_use(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("tensorflow-gpu==2.12.0\n")
    out = run_cli("check", "--json", "--no-detect", "--python", "3.11", str(req))
    report = json.loads(out.stdout)
    [f] = findings(report, "renamed")
    assert f["severity"] == "warning" and f["fix"] == "require tensorflow==2.12.0"
    assert "stops at 2.11.0" in f["message"]


def test_a_pin_the_matrix_does_not_list_names_the_releases_around_it(run_cli: Run, tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("torch==2.1.7\n")
    proc = run_cli("check", "--json", str(reqs))  # the packaged matrix
    [f] = findings(json.loads(proc.stdout), "not-checked")
    assert f["message"].endswith(
        "no release in the matrix satisfies it; not checked (the matrix knows 2.1.2 below it and 2.2.0 above it)"
    )


def test_a_recipe_that_names_its_pythons_concerns_only_pins_that_ask_for_its_extra(
    run_cli: Run, tmp_path: Path
) -> None:
    """TF 2.14's and-cuda extra cannot resolve on Python 3.11; tensorflow==2.14.1 itself installs there."""
    reqs = tmp_path / "requirements.txt"
    target = ("--python", "3.11", "--gpu", "A100", "--driver", "535.104.05")
    reqs.write_text("tensorflow==2.14.1\n")
    assert findings(json.loads(run_cli("check", "--json", str(reqs), *target).stdout), "target-incompatible") == []
    reqs.write_text("tensorflow[and-cuda]==2.14.1\n")
    [f] = findings(json.loads(run_cli("check", "--json", str(reqs), *target).stdout), "target-incompatible")
    assert "installs only on Python 3.9, 3.10" in f["message"] and "tensorrt" in f["message"]


def check_on_an_a100(run_cli: Run, tmp_path: Path, text: str, *flags: str) -> tuple[int, dict[str, Any]]:
    """``check`` of a requirements file holding ``text``, against a Linux A100 with driver 550 and Python 3.11."""
    target = ("--driver", "550.54.15", "--gpu", "NVIDIA A100-SXM4-80GB", "--python", "3.11", "--os", "linux")
    req = tmp_path / "requirements.txt"
    req.write_text(text)
    proc = run_cli("check", "--json", str(req), *target, *flags)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_a_pin_that_loads_the_system_cudnn_is_checked_against_the_targets(run_cli: Run, tmp_path: Path) -> None:
    # jax[cuda12_local] loads the machine's cuDNN (0.4.30: 9.1 or newer); jax[cuda12] brings its own as wheels
    cuda = ("--cuda", "12.4", "--cudnn", "9.0")
    rc, report = check_on_an_a100(run_cli, tmp_path, "numpy\njax[cuda12_local]==0.4.30\n", *cuda)
    [f] = findings(report, "target-incompatible")
    assert rc == 1 and at(f) == ("requirements.txt", 2) and f["severity"] == "error"
    assert "cuDNN 9.0 is loaded" in f["message"] and "at least 9.1" in f["message"]
    assert "'jax[cuda12_local]==0.4.30'" in f["fix"]
    rc, report = check_on_an_a100(run_cli, tmp_path, "numpy\njax[cuda12]==0.4.30\n", *cuda)
    assert rc == 0 and findings(report, "target-incompatible") == []


def test_a_pin_without_the_extras_that_bring_cuda_loads_the_targets(run_cli: Run, tmp_path: Path) -> None:
    # onnxruntime-gpu 1.23.2: [cuda,cudnn] brings CUDA 12 and cuDNN 9 as wheels; the plain pin loads the system's
    rc, report = check_on_an_a100(run_cli, tmp_path, "onnxruntime-gpu==1.23.2\n", "--cuda", "12.4", "--cudnn", "8.9")
    [f] = report["findings"]
    assert rc == 1 and (f["rule"], f["severity"], at(f)) == ("needs-extras", "error", ("requirements.txt", 1))
    assert "without [cuda,cudnn] loads CUDA and cuDNN" in f["message"] and "cuDNN 8.9 is loaded" in f["message"]
    assert f["fix"].startswith("require onnxruntime-gpu[cuda,cudnn]==1.23.2")
    # the target's own cuDNN 9 fits the plain form; the extras bring their own anywhere; an unknown cuDNN says nothing
    for text, more in (
        ("onnxruntime-gpu==1.23.2\n", ("--cudnn", "9.1")),
        ("onnxruntime-gpu[cuda,cudnn]==1.23.2\n", ("--cudnn", "8.9")),
        ("onnxruntime-gpu==1.23.2\n", ()),
    ):
        rc, report = check_on_an_a100(run_cli, tmp_path, text, "--cuda", "12.4", *more)
        assert rc == 0 and report["findings"] == [], (text, more, report)


def test_a_plain_tensorflow_pin_uses_the_gpu_only_through_the_targets_cuda(run_cli: Run, tmp_path: Path) -> None:
    # TensorFlow's pip page: tensorflow[and-cuda] 'For GPU users', plain 'For CPU users'; 2.15 needs cuDNN 8.9+
    cuda = ("--cuda", "12.2", "--cudnn", "8.6")
    rc, report = check_on_an_a100(run_cli, tmp_path, "tensorflow==2.15.1\n", *cuda)
    [f] = findings(report, "needs-extras")
    assert rc == 1 and "tensorflow==2.15.1 without [and-cuda]" in f["message"] and "cuDNN 8.6 is loaded" in f["message"]
    assert f["fix"].startswith("require tensorflow[and-cuda]==2.15.1")
    rc, report = check_on_an_a100(run_cli, tmp_path, "tensorflow[and-cuda]==2.15.1\n", *cuda)
    assert rc == 0 and findings(report, "needs-extras") == []


def test_a_plain_jax_pin_is_the_cpu_build(run_cli: Run, tmp_path: Path) -> None:
    # jax's docs from 0.4.31: 'CPU-only (Linux/macOS/Windows): pip install -U jax'; the CUDA build is jax[cuda12]
    rc, report = check_on_an_a100(run_cli, tmp_path, "jax==0.5.3\n")
    [f] = findings(report, "needs-extras")
    assert rc == 0 and f["severity"] == "warning" and "installs the CPU build of jax" in f["message"]
    assert "NVIDIA A100-SXM4-80GB goes unused" in f["message"] and f["fix"].startswith("require jax[cuda12]==0.5.3")
    for text in ("jax[cuda12]==0.5.3\n", "jaxlib==0.5.3\n"):
        _, report = check_on_an_a100(run_cli, tmp_path, text)
        assert findings(report, "needs-extras") == [], text


def test_a_bare_jax_pin_before_0_4_30_installs_no_jaxlib(run_cli: Run, tmp_path: Path) -> None:
    # jax's metadata before 0.4.30 names jaxlib only in its extras (jax[cpu], jax[cuda12_pip]...): import jax fails
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("numpy\njax==0.4.25\n")
    proc = run_cli("check", "--json", str(reqs))  # on any machine: no target needed
    [f] = findings(json.loads(proc.stdout), "no-runtime")
    assert proc.returncode == 1 and f["severity"] == "error" and at(f) == ("requirements.txt", 2)
    assert "installs jaxlib only through one (its CPU build is jax[cpu])" in f["message"]
    assert f["fix"].startswith("require jax[cuda12_pip]==0.4.25 for its CUDA 12.3 build with --find-links https://")
    assert "jax[cpu]==0.4.25 for the CPU build" in f["fix"] and f["source"].endswith("jax-v0.4.25/docs/installation.md")
    # a range of such releases only; not from 0.4.30 (jax depends on jaxlib), with extras, or with jaxlib named
    reqs.write_text("jax<0.4.30\n")
    assert findings(json.loads(run_cli("check", "--json", str(reqs)).stdout), "no-runtime")
    for text in ("jax==0.4.30\n", "jax>=0.4.20\n", "jax[cpu]==0.4.25\n", "jax==0.4.25\njaxlib==0.4.25\n"):
        reqs.write_text(text)
        assert findings(json.loads(run_cli("check", "--json", str(reqs)).stdout), "no-runtime") == [], text
    # the jaxlib may come from another file of the project
    other = tmp_path / "requirements-gpu.txt"
    other.write_text(
        "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\njaxlib==0.4.25+cuda12.cudnn89\n"
    )
    reqs.write_text("jax==0.4.25\n")
    report = json.loads(run_cli("check", "--json", str(reqs), str(other)).stdout)
    assert findings(report, "no-runtime") == []


def test_a_jaxlib_tag_naming_a_whole_cuda_major_selects_its_builds(run_cli: Run, tmp_path: Path) -> None:
    # jaxlib's local tags name the CUDA major only (+cuda12.cudnn89): the 0.4.25 row's CUDA 12.3 build
    rc, report = check_on_an_a100(run_cli, tmp_path, "jax==0.4.25\njaxlib==0.4.25+cuda12.cudnn89\n", "--cuda", "12.3")
    assert rc == 0 and report["findings"] == [], report  # (no "no CUDA 12 build", no CUDA 12 vs 12.3 disagreement)
    env = tmp_path / "environment.yml"  # the environment's CUDA 11.8 is a CUDA 11 the +cuda11 build takes
    env.write_text(
        "dependencies:\n  - python=3.11\n  - cudatoolkit=11.8.0\n  - pip\n  - pip:\n"
        "    - jax==0.4.25\n    - jaxlib==0.4.25+cuda11.cudnn86\n"
    )
    proc = run_cli("check", "--json", str(env))
    assert proc.returncode == 0 and json.loads(proc.stdout)["findings"] == [], proc.stdout
    rc, report = check_on_an_a100(run_cli, tmp_path, "jaxlib==0.4.25+cuda10.cudnn89\n")
    [f] = findings(report, "cuda-disagreement")
    assert rc == 1 and "no CUDA 10 build" in f["message"]


def test_the_wheels_of_every_extra_a_pin_names_are_checked(run_cli: Run, tmp_path: Path) -> None:
    # onnxruntime-gpu[cuda,cudnn] asks pip for nvidia-cudnn-cu12~=9.0; torch 2.3.1 pins 8.9.2.26 (both metadata)
    req = tmp_path / "requirements.txt"

    def check_json(run_cli: Run, path: str) -> tuple[int, dict[str, Any]]:  # with the packaged matrix
        proc = run_cli("check", "--json", path)
        return proc.returncode, json.loads(proc.stdout)

    req.write_text("onnxruntime-gpu[cuda,cudnn]==1.23.2\ntorch==2.3.1\n")
    rc, report = check_json(run_cli, str(req))
    [f] = findings(report, "wheel-conflict")
    assert rc == 1 and "nvidia-cudnn-cu12~=9.0" in f["message"] and "nvidia-cudnn-cu12==8.9.2.26" in f["message"]
    # pip reads and_cuda as and-cuda (PEP 685): the same wheels, the same clash as tensorflow[and-cuda]
    for spelling in ("and-cuda", "and_cuda"):
        req.write_text(f"tensorflow[{spelling}]==2.15.1\ntorch==2.1.0\n")
        _, report = check_json(run_cli, str(req))
        [f] = findings(report, "wheel-conflict")
        assert "nvidia-cublas-cu12==12.2.5.6" in f["message"], spelling
    # the plain pins bring no nvidia-* wheels: nothing to clash
    req.write_text("onnxruntime-gpu==1.23.2\ntorch==2.3.1\n")
    rc, report = check_json(run_cli, str(req))
    assert rc == 0 and findings(report, "wheel-conflict") == []


def test_onnxruntime_beside_torch_uses_the_cudnn_torch_brings(run_cli: Run, tmp_path: Path) -> None:
    # ONNX Runtime reuses the CUDA and cuDNN torch has loaded (its PR 23674); torch 2.5.1's wheels bring every
    # nvidia-* wheel onnxruntime-gpu[cuda,cudnn] 1.23.2 would (cuDNN 9 among them): a warning, not an error
    cudnn = ("--cuda", "12.4", "--cudnn", "8.9")
    rc, report = check_on_an_a100(run_cli, tmp_path, "onnxruntime-gpu==1.23.2\ntorch==2.5.1\n", *cudnn)
    [f] = findings(report, "needs-extras")
    assert rc == 0 and f["severity"] == "warning" and at(f) == ("requirements.txt", 1)
    assert "come with torch==2.5.1 (" in f["message"] and "requirements.txt:2)" in f["message"]
    assert "cuDNN 8.9 is loaded" in f["message"]
    assert f["fix"].startswith("import torch before onnxruntime in every process, or require onnxruntime-gpu[cuda")
    assert f["source"] == "https://github.com/microsoft/onnxruntime/pull/23674"
    # torch 2.3.1 brings cuDNN 8.9 (nvidia-cudnn-cu12==8.9.2.26), not the 9.x ONNX Runtime 1.23 needs: an error
    rc, report = check_on_an_a100(run_cli, tmp_path, "onnxruntime-gpu==1.23.2\ntorch==2.3.1\n", *cudnn)
    [f] = findings(report, "needs-extras")
    assert rc == 1 and f["severity"] == "error" and "come with" not in f["message"]


# tensorflow[and-cuda]==2.15.1 written out as a lock file does (pip-compile, uv export): the nvidia-* wheels its
# metadata pins, each on a line of its own
TF_LOCK = (
    "tensorflow==2.15.1\nnvidia-cublas-cu12==12.2.5.6\nnvidia-cuda-cupti-cu12==12.2.142\n"
    "nvidia-cuda-nvcc-cu12==12.2.140\nnvidia-cuda-nvrtc-cu12==12.2.140\nnvidia-cuda-runtime-cu12==12.2.140\n"
    "nvidia-cudnn-cu12==8.9.4.25\nnvidia-cufft-cu12==11.0.8.103\nnvidia-curand-cu12==10.3.3.141\n"
    "nvidia-cusolver-cu12==11.5.2.141\nnvidia-cusparse-cu12==12.1.2.141\nnvidia-nccl-cu12==2.16.5\n"
    "nvidia-nvjitlink-cu12==12.2.140\n"
)


def test_a_lock_file_of_the_extras_is_the_extras(run_cli: Run, tmp_path: Path) -> None:
    # the plain pin with every wheel [and-cuda] brings: no needs-extras, and the wheels are checked, not noted
    rc, report = check_on_an_a100(run_cli, tmp_path, TF_LOCK, "--cuda", "12.2", "--cudnn", "8.6")
    assert rc == 0 and findings(report, "needs-extras") == [] and findings(report, "not-checked") == []
    assert "nvidia-cudnn-cu12" in report["checked"]
    ort = (  # onnxruntime-gpu[cuda,cudnn]==1.23.2 written out, at versions its ~= pins accept
        "onnxruntime-gpu==1.23.2\nnvidia-cuda-nvrtc-cu12==12.9.86\nnvidia-cuda-runtime-cu12==12.9.79\n"
        "nvidia-cufft-cu12==11.4.1.4\nnvidia-curand-cu12==10.3.10.19\nnvidia-cudnn-cu12==9.10.2.21\n"
    )
    rc, report = check_on_an_a100(run_cli, tmp_path, ort, "--cuda", "12.4", "--cudnn", "8.9")
    assert rc == 0 and findings(report, "needs-extras") == [], report
    rc, report = check_on_an_a100(run_cli, tmp_path, ort.replace("nvidia-cufft-cu12==11.4.1.4\n", ""), "--cudnn", "8.9")
    assert rc == 1 and [f["severity"] for f in findings(report, "needs-extras")] == ["error"]  # one missing
    # a wheel that is not the one the CUDA form pins: a warning on its line (pip installs both, TF may not load it)
    rc, report = check_on_an_a100(run_cli, tmp_path, TF_LOCK.replace("8.9.4.25", "9.1.0.70"))
    [f] = findings(report, "wheel-conflict")
    assert f["severity"] == "warning" and at(f) == ("requirements.txt", 7)
    assert "is not the nvidia-cudnn-cu12 that tensorflow[and-cuda]==2.15.1 installs" in f["message"]
    # beside a framework that pins it, pip cannot install a line of another version: an error
    rc, report = check_on_an_a100(run_cli, tmp_path, "torch==2.5.1\nnvidia-cudnn-cu12==8.9.2.26\nnvidia-foo-cu12==1\n")
    [f] = findings(report, "wheel-conflict")
    assert rc == 1 and f["severity"] == "error" and "needs nvidia-cudnn-cu12==9.1.0.70" in f["message"]
    assert [x["package"] for x in findings(report, "not-checked")] == ["nvidia-foo-cu12"]  # no framework pins it


def test_a_lock_file_of_jax_cuda12_is_no_cpu_build(run_cli: Run, tmp_path: Path) -> None:
    # jax[cuda12]==0.6.1 written out: jax, jaxlib (the same release, from 0.4.30 on a package of its own) and the
    # CUDA plugin; neither the CPU-build warning nor a 'renamed' jaxlib
    text = "jax==0.6.1\njaxlib==0.6.1\njax-cuda12-plugin[with-cuda]==0.6.1\njax-cuda12-pjrt==0.6.1\n"
    _, report = check_on_an_a100(run_cli, tmp_path, text)
    assert findings(report, "needs-extras") == [] and findings(report, "renamed") == [], report
    _, report = check_on_an_a100(run_cli, tmp_path, "jax==0.6.1\njaxlib==0.6.1\n")
    assert [f["severity"] for f in findings(report, "needs-extras")] == ["warning"]


# ------------------------------------------------------------------ many files: answers shared, never mixed up

# Files whose lines repeat across a project, each line in a context that changes what it means: the index it is
# installed from, the framework beside it, the optional group it sits in, a CUDA build that loads the system's.
CONTEXTS = {
    "index.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.1.0\nnumpy\n",
    "plain.txt": "torch==2.1.0\nnumpy\n",
    "clash.txt": "nvidia-cudnn-cu12==8.9.2.26\ntorch==2.5.1\n",
    "agree.txt": "nvidia-cudnn-cu12==8.9.2.26\ntorch==2.1.0\n",
    "alone.txt": "nvidia-cudnn-cu12==8.9.2.26\nnumpy\n",
    "ort-torch251.txt": "onnxruntime-gpu==1.23.2\ntorch==2.5.1\n",
    "ort-torch231.txt": "onnxruntime-gpu==1.23.2\ntorch==2.3.1\n",
    "tf-lock.txt": "tensorflow==2.15.1\nnvidia-cudnn-cu12==9.1.0.70\n",
    "system-cuda.txt": "tensorflow-gpu==1.4.0\ntensorflow-gpu==1.4.0\nnumpy\n",
    "cu118-tag.txt": "torch==2.1.0+cu118\n",
    "pair-clash.txt": "torch==2.1.0\njax[cuda12]==0.4.30\n",
    "pair-same.txt": "torch==2.1.0\ntorch==2.1.0\n",
    "pyproject.toml": (
        '[project]\nname = "p"\nversion = "1"\ndependencies = ["numpy"]\n[project.optional-dependencies]\n'
        'gpu = ["nvidia-cudnn-cu12==8.9.2.26"]\ntorch = ["torch==2.5.1"]\n'
    ),
}
OLD_DRIVER = ("--driver", "470.82.01", "--gpu", "A100", "--python", "3.10", "--cuda", "11.4", "--cudnn", "8.9")
NEW_DRIVER = ("--driver", "535.104.05", "--gpu", "A100", "--python", "3.10", "--cuda", "11.4", "--cudnn", "8.9")


def write_contexts(root: Path, copies: int) -> list[str]:
    """``copies`` copies of each file of CONTEXTS, interleaved (c000/index.txt, c000/plain.txt, ..., c001/...)."""
    paths = []
    for k in range(copies):
        for name, text in CONTEXTS.items():
            path = root / f"c{k:03d}" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            paths.append(str(path))
    return paths


def said(report: dict[str, Any], path: str) -> list[tuple[Any, ...]]:
    """The findings on one file, with its own path written as FILE (messages name it)."""
    return [
        (f["line"], f["package"], f["severity"], f["rule"], f["message"].replace(path, "FILE"), f["fix"], f["source"])
        for f in report["findings"]
        if f["file"] == path
    ]


@pytest.mark.parametrize("target", [OLD_DRIVER, NEW_DRIVER], ids=["driver-470", "driver-535"])
def test_many_files_in_one_run_say_what_each_says_alone(run_cli: Run, tmp_path: Path, target: tuple[str, ...]) -> None:
    # check works each distinct answer out once for the whole run; every copy must still get its own file's
    alone = {}
    for path in write_contexts(tmp_path / "alone", 1):
        proc = run_cli("check", "--json", path, *target)
        assert proc.returncode in (0, 1), proc.stderr
        alone[Path(path).name] = said(json.loads(proc.stdout), path)
    paths = write_contexts(tmp_path / "many", 20)
    proc = run_cli("check", "--json", *paths, *target)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    for path in paths:
        assert said(report, path) == alone[Path(path).name], path
    # (the contexts do change what the same line means, on one driver or the other)
    assert alone["index.txt"] != alone["plain.txt"] or alone["ort-torch251.txt"] != alone["ort-torch231.txt"]


def test_the_same_line_keeps_the_findings_of_its_own_file(run_cli: Run, tmp_path: Path) -> None:
    paths = write_contexts(tmp_path, 2)
    rules: dict[tuple[str, str, int], set[tuple[str, str]]] = {}  # (driver, file, line): (severity, rule)s
    for target in (OLD_DRIVER, NEW_DRIVER):
        report = json.loads(run_cli("check", "--json", *paths, *target).stdout)
        copies: dict[str, dict[tuple[str, str, int], set[tuple[str, str]]]] = {"c000": {}, "c001": {}}
        for path in paths:
            for line, _, severity, rule, *_ in said(report, path):
                key = (target[1], Path(path).name, line)
                copies[Path(path).parent.name].setdefault(key, set()).add((severity, rule))
        assert copies["c000"] == copies["c001"]  # each copy says the same
        rules.update(copies["c000"])
    # torch==2.1.0 from the cu121 index needs a CUDA 12 driver; so does the same line without it, which gets
    # PyPI's build, cu121 too
    assert rules["470.82.01", "index.txt", 2] == {("error", "cuda-disagreement")}
    assert rules["470.82.01", "plain.txt", 1] == {("error", "target-incompatible")}
    # the same nvidia-cudnn-cu12 line: beside torch 2.5.1 (cuDNN 9) a clash, beside 2.1.0 none, alone what it is
    # (cuDNN for CUDA 12, a driver this one has), in an optional group of its own not installed with torch's
    assert rules["535.104.05", "clash.txt", 1] == {("error", "wheel-conflict")}
    assert ("535.104.05", "agree.txt", 1) not in rules
    assert rules["535.104.05", "alone.txt", 1] == {("info", "cuda-name")}
    assert rules["535.104.05", "pyproject.toml", 6] == {("info", "cuda-name")}
    # the same onnxruntime-gpu line: torch 2.5.1 brings the cuDNN 9 it reuses, torch 2.3.1 does not
    assert rules["535.104.05", "ort-torch251.txt", 1] == {("warning", "needs-extras")}
    assert rules["535.104.05", "ort-torch231.txt", 1] == {("error", "needs-extras")}
    # the same torch line in a pair: beside jax[cuda12] 0.4.30 (cuDNN 8.9 against 9) a clash, beside itself none
    assert rules["535.104.05", "pair-clash.txt", 2] == {("error", "wheel-conflict"), ("warning", "target-caveat")}
    assert ("535.104.05", "pair-same.txt", 2) not in rules


def test_a_wheel_with_its_own_cuda_is_never_held_to_the_targets_toolkit_among_many_files(
    run_cli: Run, tmp_path: Path
) -> None:
    # torch's cu118 wheel loads its own CUDA runtime, whatever the other files hold: its pin once took the answer
    # of a tensorflow-gpu pin (which loads the system's) of another file, whose memory it happened to reuse
    for copies in (3, 4, 5, 6):
        paths = write_contexts(tmp_path / str(copies), copies)
        for target in (OLD_DRIVER, NEW_DRIVER):
            proc = run_cli("check", "--json", *paths, *target)
            assert proc.returncode in (0, 1), proc.stderr
            report = json.loads(proc.stdout)
            assert [f for f in findings(report, "cuda-disagreement") if "the target's CUDA" in f["message"]] == []


# ------------------------------------------------------------------ a driver given as its branch (#25)


def test_a_driver_branch_is_never_a_cannot_run_on_a_guess(run_cli: Run, tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("tensorflow==2.15.0\n")

    def check(*target: str) -> list[dict[str, str]]:
        proc = run_cli("check", str(reqs), "--python", "3.11", *target, "--json")
        assert proc.returncode in (0, 1), proc.stderr
        return list(json.loads(proc.stdout)["findings"])

    # an RTX 4090 needs TF 2.15's PTX compiled: a 535.x from 535.54.03 on can, an older one cannot; 535.104.05 can
    [branch] = check("--driver", "535", "--gpu", "8.9")
    assert branch["severity"] == "warning" and "cannot run" not in branch["message"]
    assert "driver 535.x: runs CUDA 12.2 if it is 535.54.03 or newer" in branch["message"]
    assert "give the full version (nvidia-smi) to know" in branch["message"]
    [full] = check("--driver", "535.104.05", "--gpu", "8.9")
    assert full["severity"] == "warning" and "the driver compiles their PTX (compute_80)" in full["message"]
    # without a GPU: 535.104.05 runs CUDA 12.2 fully; of a 535.x it depends, a caveat, never an error
    assert check("--driver", "535.104.05") == []
    [vague] = check("--driver", "535")
    assert vague["severity"] == "warning" and "535.54.03 or newer" in vague["message"]
    # a verdict that holds for every driver of the branch is given plainly
    assert check("--driver", "550") == []
    [old] = check("--driver", "470")
    assert old["severity"] == "error" and "found 470.x" in old["message"]


def test_a_branch_from_a_profile_or_the_environment_is_a_branch_too(run_cli: Run, tmp_path: Path) -> None:
    profile = tmp_path / "node.json"
    profile.write_text(json.dumps({"schema": "dnnresolve-runtime/1", "driver": "535", "python": {"version": "3.11"}}))
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("tensorflow==2.15.0\n")
    proc = run_cli("check", str(reqs), "--target", str(profile), "--gpu", "8.9", "--json")
    [finding] = json.loads(proc.stdout)["findings"]
    assert finding["severity"] == "warning" and "driver 535.x: runs CUDA 12.2 if it is 535.54.03" in finding["message"]
    # plan's JSON carries the driver as given and that it is a branch, and each verdict what it found
    for how in (("--target", str(profile)), ("--no-detect", "--driver", "535")):
        proc = run_cli("plan", "tensorflow==2.15.0", *how, "--json")
        data = json.loads(proc.stdout)
        assert data["driver"] == {"version": "535", "branch": True}, how
        [driver] = [c for c in data["requirements"][0]["checks"] if c["component"] == "driver"]
        assert driver["status"] == "warn" and driver["found"] == "535.x", how
    proc = run_cli("plan", "tensorflow==2.15.0", "--no-detect", "--driver", "535.104.05", "--json")
    assert json.loads(proc.stdout)["driver"] == {"version": "535.104.05", "branch": False}
    proc = run_cli("detect", "--json", env={"DNNRESOLVE_DRIVER": "535"})
    assert json.loads(proc.stdout)["sources"]["driver"] == "given (DNNRESOLVE_DRIVER; a branch: some 535.x)"


def test_the_driver_flags_help_says_a_branch_is_accepted_and_what_it_means(run_cli: Run) -> None:
    for command in ("plan", "check"):
        text = " ".join(run_cli(command, "--help", env={"COLUMNS": "200"}).stdout.split())
        assert "a branch alone (535 or 535.x) means some 535.x: verdicts that depend on its patch level say so" in text


def test_a_mirror_of_pypi_selects_no_cuda_build(run_cli: Run, tmp_path: Path) -> None:
    # mirror.baidu.com is named in Paddle's install pages for builds of several CUDA versions: it mirrors PyPI, so
    # it serves PyPI's build; it used to read as the CUDA 9.0 index ("the matrix has no CUDA 9.0 build of it")
    (tmp_path / "requirements.txt").write_text(
        "--index-url https://mirror.baidu.com/pypi/simple\npaddlepaddle-gpu==2.5.0\n"
    )
    r = run_cli("check", "requirements.txt", "--driver", "560.35.03", "--gpu", "A100", "--python", "3.10", "--json",
                cwd=tmp_path)  # fmt: skip
    report = json.loads(r.stdout)
    assert not [f for f in report["findings"] if f["rule"] == "cuda-disagreement"], report["findings"]


def test_a_post_release_names_the_build_it_is(run_cli: Run, tmp_path: Path) -> None:
    # Paddle's 2.2.2.post110 is release 2.2.2's CUDA 11.0 build (its install page's pip line), not its plain one
    (tmp_path / "requirements.txt").write_text(
        "--find-links https://www.paddlepaddle.org.cn/whl/linux/mkl/avx/stable.html\npaddlepaddle-gpu==2.2.2.post110\n"
    )
    r = run_cli("check", "requirements.txt", "--driver", "525.85.12", "--gpu", "V100", "--python", "3.9",
                "--cuda", "11.8", "--cudnn", "8.6.0", "--json", cwd=tmp_path)  # fmt: skip
    report = json.loads(r.stdout)
    assert [line["release"] for line in report["checked_lines"]] == ["paddlepaddle-gpu 2.2.2.post110 for CUDA 11.0"]
    assert not [f for f in report["findings"] if f["severity"] == "error"], report["findings"]
