"""One question, one answer: does this release run on this machine? asked of `plan` (the requirement),
`check` (a one-line requirements file), `doctor` (the release installed on a copy of the machine, as pip lays
it out) and `explain` (a log whose pip line names the release), each as a user runs it.

The machine is given to plan, check and explain as flags and to doctor as the files it reads (--root); the
verdict each gives (JSON: plan's and doctor's "verdict", check's "checked_lines", explain's "plan") must be the
same, and the one the table states."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess

from .messages import real_message

RunCli = Callable[..., CompletedProcess[str]]

RUNS, WARNED, CANNOT = "runs", "runs, with a warning", "cannot run"


@dataclass(frozen=True)
class Machine:
    driver: str
    gpu: str
    cuda: str  # the toolkit's cudart version, as version.json states it
    cudnn: tuple[int, int, int]
    python: str

    def flags(self) -> list[str]:
        series = ".".join(self.cuda.split(".")[:2])
        cudnn = ".".join(str(n) for n in self.cudnn)
        return ["--driver", self.driver, "--gpu", self.gpu, "--cuda", series, "--cudnn", cudnn, "--python", self.python]


MACHINES = {
    "t4-cuda12.2": Machine("535.104.05", "Tesla T4", "12.2.140", (8, 9, 7), "3.10"),
    "t4-driver470": Machine("470.82.01", "Tesla T4", "11.4.148", (8, 2, 4), "3.10"),
    "k80": Machine("470.82.01", "Tesla K80", "11.4.148", (8, 2, 4), "3.8"),
    "a100-cuda11.8": Machine("525.85.12", "NVIDIA A100-SXM4-80GB", "11.8.89", (8, 6, 0), "3.10"),
    "a100-driver560": Machine("560.35.03", "NVIDIA A100-SXM4-80GB", "12.6.77", (9, 3, 0), "3.11"),
}

# jax[cuda12]'s CUDA plugin as pip installs it, its nvidia-* wheels required through its with_cuda extra
JAX_CUDA12 = [
    ("jax-cuda12-plugin", "0.4.30", "jax-cuda12-pjrt==0.4.30", 'nvidia-cudnn-cu12<10.0,>=9.0; extra == "with_cuda"'),
    ("jax-cuda12-pjrt", "0.4.30"),
    ("nvidia-cudnn-cu12", "9.1.0.70"),
]

# (requirement, machine, what pip installs for it: (distribution, version, Requires-Dist...)..., the answer)
CASES: list[tuple[str, str, list[tuple[str, ...]], str]] = [
    # PyPI's onnxruntime-gpu 1.17.0 is the CUDA 11.8 build; its CUDA 12 build is a download
    ("onnxruntime-gpu==1.17.0", "t4-cuda12.2", [("onnxruntime-gpu", "1.17.0")], CANNOT),
    ("onnxruntime-gpu==1.17.0", "a100-cuda11.8", [("onnxruntime-gpu", "1.17.0")], RUNS),
    ("torch==2.1.0", "t4-cuda12.2", [("torch", "2.1.0")], RUNS),
    # PyPI's torch 2.1.0 is the cu121 build, which needs driver 530 (525 with minor-version compatibility)
    ("torch==2.1.0", "t4-driver470", [("torch", "2.1.0")], CANNOT),
    ("torch==2.1.0+cu118", "t4-driver470", [("torch", "2.1.0+cu118")], WARNED),
    # PyPI's torch 2.5.1 (cu124) carries no sm_37 code, and driver 470 does not run CUDA 12
    ("torch==2.5.1", "k80", [("torch", "2.5.1")], CANNOT),
    ("tensorflow==2.15.0", "t4-cuda12.2", [("tensorflow", "2.15.0")], RUNS),
    ("tensorflow==2.15.0", "t4-driver470", [("tensorflow", "2.15.0")], CANNOT),
    # jax 0.4.30 without an extra is its CPU build: the GPU goes unused
    ("jax==0.4.30", "a100-driver560", [("jax", "0.4.30"), ("jaxlib", "0.4.30")], WARNED),
    ("jax[cuda12]==0.4.30", "a100-driver560", [("jax", "0.4.30"), ("jaxlib", "0.4.30"), *JAX_CUDA12], RUNS),
    # before 0.4.30 a plain jax brings no jaxlib: it does not import, on any machine
    ("jax==0.4.25", "a100-driver560", [("jax", "0.4.25")], CANNOT),
    # CuPy 13.3's CUDA 12 wheel was built against cuDNN 8.8: it runs with 8.9, but its cuDNN features want 8.8
    ("cupy-cuda12x==13.3.0", "t4-cuda12.2", [("cupy-cuda12x", "13.3.0")], WARNED),
    ("cupy-cuda11x==13.3.0", "t4-cuda12.2", [("cupy-cuda11x", "13.3.0")], CANNOT),
    ("paddlepaddle-gpu==2.5.2", "a100-cuda11.8", [("paddlepaddle-gpu", "2.5.2")], RUNS),
    # PyPI's paddlepaddle-gpu 2.5.2 is the CUDA 11.8 build; CUDA 12.2 is loaded
    ("paddlepaddle-gpu==2.5.2", "t4-cuda12.2", [("paddlepaddle-gpu", "2.5.2")], CANNOT),
]


def _log(requirement: str, installed: list[tuple[str, ...]]) -> str:
    """What a user pastes: pip's last line, then the error the run printed (PyTorch's own for torch, jax's
    for a jax without jaxlib, a loader's that names no framework for the others)."""
    pip = "Successfully installed " + " ".join(f"{name}-{version}" for name, version, *_ in installed)
    if requirement.startswith("torch"):
        source = "https://github.com/facebookresearch/detectron2/issues/235"
    elif installed == [("jax", "0.4.25")]:
        source = "https://github.com/huggingface/datasets/issues/5663"
    else:
        source = "https://github.com/createamind/Planet/issues/5"
    return f"{pip}\n{real_message(source)}\n"


def _machine_root(tmp_path: Path, m: Machine, installed: list[tuple[str, ...]]) -> Path:
    """A copy of the machine as detection reads it: the driver's and the GPU's files under /proc, a CUDA toolkit
    with its cuDNN, and a virtual environment with the distributions pip installed."""
    root = tmp_path
    nvidia = root / "proc/driver/nvidia"
    (nvidia / "gpus/0000:3b:00.0").mkdir(parents=True)
    (nvidia / "version").write_text(f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {m.driver}  Tue Aug 1 2023\n")
    (nvidia / "gpus/0000:3b:00.0/information").write_text(f"Model: \t\t {m.gpu}\nBus Location: \t 0000:3b:00.0\n")
    series = ".".join(m.cuda.split(".")[:2])
    cuda = root / f"usr/local/cuda-{series}"
    (cuda / "lib64").mkdir(parents=True)
    (cuda / "include").mkdir()
    (cuda / "version.json").write_text(json.dumps({"cuda_cudart": {"name": "CUDA Runtime", "version": m.cuda}}))
    major = m.cuda.split(".")[0]
    (cuda / f"lib64/libcudart.so.{m.cuda}").write_bytes(b"")
    (cuda / f"lib64/libcudart.so.{major}").symlink_to(f"libcudart.so.{m.cuda}")
    a, b, c = m.cudnn
    (cuda / f"lib64/libcudnn.so.{a}.{b}.{c}").write_bytes(b"")
    (cuda / f"lib64/libcudnn.so.{a}").symlink_to(f"libcudnn.so.{a}.{b}.{c}")
    (cuda / "include/cudnn_version.h").write_text(
        f"#define CUDNN_MAJOR {a}\n#define CUDNN_MINOR {b}\n#define CUDNN_PATCHLEVEL {c}\n"
    )
    (root / "usr/local/cuda").symlink_to(f"cuda-{series}")
    venv = root / "home/user/venv"
    site = venv / f"lib/python{m.python}/site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {m.python}.12\n")
    for name, version, *requires in installed:
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        (info / "METADATA").write_text(meta + "".join(f"Requires-Dist: {r}\n" for r in requires))
    return root


def _doctor_env() -> dict[str, str]:
    return {"DNNRESOLVE_NVML": "0", "VIRTUAL_ENV": "/home/user/venv", "CONDA_PREFIX": ""}


def test_a_fixture_machine_reads_as_its_flags_say(run_cli: RunCli, tmp_path: Path) -> None:
    # the two descriptions of a machine the test uses are one machine
    m = MACHINES["t4-cuda12.2"]
    root = _machine_root(tmp_path, m, [])
    d = json.loads(run_cli("detect", "--root", str(root), "--json", env=_doctor_env()).stdout)
    assert d["driver"] == m.driver and d["gpus"][0]["name"] == m.gpu
    assert d["cuda"][0]["version"] == m.cuda and d["cudnn"][0]["version"] == "8.9.7"
    assert d["python"]["version"].startswith(m.python)


def test_plan_check_doctor_and_explain_give_one_answer(run_cli: RunCli, tmp_path: Path) -> None:
    said: dict[tuple[str, str], dict[str, str | None]] = {(r, m): {} for r, m, _, _ in CASES}
    for name, machine in MACHINES.items():
        cases = [(r, installed) for r, m, installed, _ in CASES if m == name]
        flags = [*machine.flags(), "--no-detect"]
        plan = run_cli("plan", "--json", *[r for r, _ in cases], *flags)
        assert plan.returncode in (0, 1), plan.stderr
        for req in json.loads(plan.stdout)["requirements"]:
            said[req["requirement"], name]["plan"] = req["verdict"]
        files = []
        for i, (requirement, _) in enumerate(cases):
            f = tmp_path / name / f"case{i}" / "requirements.txt"
            f.parent.mkdir(parents=True)
            f.write_text(requirement + "\n")
            files.append(str(f))
        check = run_cli("check", "--json", *files, *machine.flags())
        assert check.returncode in (0, 1), check.stderr
        lines = {line["file"]: line for line in json.loads(check.stdout)["checked_lines"]}
        for f, (requirement, _) in zip(files, cases):
            said[requirement, name]["check"] = lines[f]["verdict"] if f in lines else "(not checked)"
        for i, (requirement, installed) in enumerate(cases):
            root = _machine_root(tmp_path / name / f"root{i}", machine, installed)
            doctor = run_cli("doctor", "--root", str(root), "--json", env=_doctor_env())
            assert doctor.returncode in (0, 1), doctor.stderr
            package = requirement.split("[")[0].split("=")[0]
            [req] = [r for r in json.loads(doctor.stdout)["requirements"] if r["package"] == package]
            said[requirement, name]["doctor"] = req["verdict"]
            explain = run_cli("explain", "--json", *flags, input=_log(requirement, installed))
            assert explain.returncode == 1, explain.stderr
            plans = [d["plan"] for d in json.loads(explain.stdout)["diagnoses"] if d["plan"]]
            said[requirement, name]["explain"] = plans[0]["verdict"] if plans else "(no plan)"
    expected = {(r, m): want for r, m, _, want in CASES}
    wrong = {k: v for k, v in said.items() if set(v.values()) != {expected[k]}}
    table = "\n".join(f"{r} on {m}: want {expected[r, m]}; got {v}" for (r, m), v in wrong.items())
    assert not wrong, "commands disagree or are wrong:\n" + table
    assert len(CASES) >= 12 and len({r.split("=")[0].split("[")[0].split("-cuda")[0] for r, *_ in CASES}) == 6


def test_check_text_ends_with_what_was_checked_and_passed(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\nnumpy\nonnxruntime-gpu==1.17.0\n")
    r = run_cli("check", "requirements.txt", *MACHINES["t4-cuda12.2"].flags(), env={"COLUMNS": "80"})
    assert r.returncode == 1, r.stderr
    # the last lines, as wrapped to the terminal's 80 columns
    tail = r.stdout[r.stdout.rindex("\nchecked: ") + 1 :].splitlines()
    assert all(len(line) <= 80 for line in tail) and all(line.startswith("  ") for line in tail[1:])
    assert " ".join(line.strip() for line in tail) == (
        "checked: torch 2.1.0 for CUDA 12.1 (requirements.txt:1) ok; onnxruntime-gpu 1.17.0 for CUDA 11.8 "
        "(requirements.txt:3) error, see above"
    )


def test_check_fix_is_plans_first_option_as_lines_to_paste(run_cli: RunCli, tmp_path: Path) -> None:
    """check's fix for a pin the machine cannot run is plan's first option for that machine: its instruction,
    then each step on a line of its own: a command whole (as plan writes it), an instruction wrapped."""
    (tmp_path / "requirements.txt").write_text("tensorflow==2.16.1\ntorch==2.8.0\n")
    flags = MACHINES["t4-driver470"].flags()
    checked = json.loads(run_cli("check", "requirements.txt", *flags, "--json").stdout)
    text = run_cli("check", "requirements.txt", *flags, env={"COLUMNS": "80"}).stdout
    lines = [line.strip() for line in text.splitlines()]
    for finding, spec in zip(checked["findings"], ("tensorflow==2.16.1", "torch==2.8.0"), strict=True):
        option = json.loads(run_cli("plan", spec, *flags, "--json").stdout)["requirements"][0]["options"][0]
        steps = [s["command"] or s["description"] for s in option["steps"]]
        assert finding["fix_steps"] == steps
        assert finding["fix"] == option["title"] + ": " + "; ".join(steps)
        for step in option["steps"]:
            if step["command"]:  # a command: one line of the text, whole
                assert step["command"] in lines
            else:  # an instruction: every word, in order, wrapped to the terminal
                assert step["description"] in " ".join(lines)
    assert all(len(line) <= 80 or "pip install" in line for line in text.splitlines())
