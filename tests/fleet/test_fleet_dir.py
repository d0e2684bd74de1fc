"""A fleet directory read by ``plan/check --fleet``: verdicts per group from profiles written by hand (no cluster
needed), and every way a directory can fail to be a fleet: exit 2, one line naming the file, no traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., "subprocess.CompletedProcess[str]"]
DOCS_FLEET = Path(__file__).resolve().parents[1] / "fixtures" / "docs" / "fleet"
A100 = json.loads((DOCS_FLEET / "nodes" / "a100-1.json").read_text())  # read by detect on the test cluster's a100-1
PYTHON = {"version": "3.11", "implementation": "CPython", "executable": "/usr/bin/python3", "machine": "x86_64"}


def write_fleet(root: Path, nodes: dict[str, tuple[list[str], dict[str, Any] | None]]) -> Path:
    """A fleet as collect writes it: node -> (partitions, profile or None for an unreachable node)."""
    (root / "nodes").mkdir(parents=True)
    index: dict[str, Any] = {"schema": "dnnresolve-fleet/1", "collected": "2026-01-01T00:00:00Z", "nodes": {}}
    for name, (partitions, profile) in nodes.items():
        rec: dict[str, Any] = {"partitions": partitions, "state": "idle", "profile": None, "reason": None}
        if profile is None:
            rec.update(state="down*", reason="Slurm state down* (not responding): no reason given")
        else:
            rec["profile"] = f"nodes/{name}.json"
            (root / rec["profile"]).write_text(json.dumps(profile))
        index["nodes"][name] = rec
    (root / "fleet.json").write_text(json.dumps(index))
    return root


def a100(driver: str = "570.86.15", torch: str | None = None, found_in: str = "") -> dict[str, Any]:
    profile = json.loads(json.dumps(A100))
    profile.update(driver=driver, driver_cuda=None, python=PYTHON)
    profile["packages"] = [{"name": "torch", "version": torch, "location": "/usr/lib/python3"}] if torch else []
    if found_in:
        profile["gpus"][0]["found_in"] = found_in
    return profile


def test_every_verdict_and_the_exit_status(tmp_path: Path, run_cli: Run) -> None:
    fleet = write_fleet(
        tmp_path / "fleet",
        {
            "g1": (["gpu"], a100(torch="2.8.0+cu128")),
            "g2": (["gpu"], a100(torch="2.8.0+cu128", found_in="/proc/driver/nvidia/gpus/0000:08:00.0/information")),
            "g3": (["gpu", "long"], a100()),
            "old": (["legacy"], a100(driver="450.80.02")),
            "k1": (["k20m"], json.loads((DOCS_FLEET / "nodes" / "k20m-1.json").read_text())),
            "dead": (["gpu"], None),
        },
    )
    done = run_cli("plan", "torch==2.8.0", "--fleet", str(fleet), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    verdicts = {tuple(g["nodes"]): (g["verdict"], g["partitions"]) for g in answer["groups"]}
    assert verdicts == {
        ("g1", "g2"): ("ready", ["gpu"]),  # where each GPU was found differs; nothing a verdict depends on does
        ("g3",): ("installable", ["gpu", "long"]),
        ("old",): ("needs_root", ["legacy"]),
        ("k1",): ("cannot", ["k20m"]),
    }
    groups = {tuple(g["nodes"]): g for g in answer["groups"]}
    assert groups[("g1", "g2")]["option"] == "nothing to do: this machine runs it as it is"
    assert groups[("g3",)]["plan"]["requirements"][0]["options"][0]["steps"][0]["argv"][:3] == ["python", "-m", "pip"]
    assert answer["unreachable"] == [{"node": "dead", "reason": "Slurm state down* (not responding): no reason given"}]
    assert set(answer) >= {"requirement", "groups", "unreachable"}


def test_exit_0_when_every_group_is_ready(tmp_path: Path, run_cli: Run) -> None:
    fleet = write_fleet(tmp_path / "fleet", {"g1": (["gpu"], a100(torch="2.8.0+cu128"))})
    done = run_cli("plan", "torch==2.8.0", "--fleet", str(fleet))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "g1" in done.stdout and "ready" in done.stdout


def test_check_a_file_against_a_fleet(tmp_path: Path, run_cli: Run) -> None:
    fleet = write_fleet(tmp_path / "fleet", {"g1": (["gpu"], a100(torch="2.8.0+cu128")), "g3": (["gpu"], a100())})
    (tmp_path / "requirements.txt").write_text("torch==2.8.0\nrequests\n")
    done = run_cli("check", "requirements.txt", "--fleet", str(fleet), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["requirement"] == "torch==2.8.0"
    assert {tuple(g["nodes"]): g["verdict"] for g in answer["groups"]} == {("g1",): "ready", ("g3",): "installable"}


def test_the_documented_fleet_answers_at_80_columns(run_cli: Run, tmp_path: Path) -> None:
    shutil.copytree(DOCS_FLEET, tmp_path / "fleet")
    done = run_cli("plan", "torch==2.8.0", "--fleet", "fleet", env={"COLUMNS": "80"}, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout
    assert "k20m-[1-2]  cannot  partitions k20m" in done.stdout


def _one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert all(w in done.stderr for w in words), done.stderr


def test_a_directory_that_is_not_a_fleet(tmp_path: Path, run_cli: Run) -> None:
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(tmp_path / "none")), "no such directory")
    (tmp_path / "empty").mkdir()
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(tmp_path / "empty")), "no fleet.json", "empty")


@pytest.mark.parametrize(
    ("index", "words"),
    [
        ("{not json", ["fleet.json:1", "not JSON"]),
        ("[]", ["fleet.json", "expected a JSON object"]),
        ('{"schema": "dnnresolve-runtime/1", "nodes": {}}', ["fleet.json", "'schema'"]),
        ('{"schema": "dnnresolve-fleet/1", "nodes": []}', ["fleet.json", "'nodes'"]),
        (
            '{"schema": "dnnresolve-fleet/1", "nodes": {"n": {"partitions": "gpu", "reason": "x"}}}',
            ["nodes.n.partitions"],
        ),
        ('{"schema": "dnnresolve-fleet/1", "nodes": {"n": {"partitions": []}}}', ["nodes.n", "neither"]),
        ('{"schema": "dnnresolve-fleet/1", "nodes": {"n": {"profile": "../../etc/passwd"}}}', ["inside the fleet"]),
        ('{"schema": "dnnresolve-fleet/1", "nodes": {"n": {"profile": "/etc/passwd"}}}', ["inside the fleet"]),
        (
            '{"schema": "dnnresolve-fleet/1", "nodes": {"n": {"profile": "nodes/n.json"}}}',
            ["nodes/n.json", "no such file"],
        ),
    ],
)
def test_a_bad_fleet_index_is_one_line_naming_the_file(
    index: str, words: list[str], tmp_path: Path, run_cli: Run
) -> None:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "fleet.json").write_text(index)
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(fleet)), *words)


def test_a_bad_profile_names_its_file(tmp_path: Path, run_cli: Run) -> None:
    fleet = write_fleet(tmp_path / "fleet", {"g1": (["gpu"], {**a100(), "driver": "not-a-driver"})})
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(fleet)), "nodes/g1.json", "'driver'")


def test_machine_flags_do_not_mix_with_a_fleet(tmp_path: Path, run_cli: Run) -> None:
    fleet = write_fleet(tmp_path / "fleet", {"g1": (["gpu"], a100())})
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(fleet), "--driver", "535"), "--driver")
    _one_line_error(run_cli("plan", "torch==2.8.0", "--fleet", str(fleet), "--format", "sh"), "--format sh")


def test_collect_never_replaces_a_directory_that_is_not_a_fleet(tmp_path: Path, run_cli: Run) -> None:
    precious = tmp_path / "results"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    _one_line_error(run_cli("fleet", "collect", "--out", str(precious)), "not a fleet directory", str(precious))
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_collect_without_slurm_says_so(tmp_path: Path, run_cli: Run) -> None:
    done = run_cli("fleet", "collect", "--out", str(tmp_path / "f"), env={"PATH": str(tmp_path)})
    _one_line_error(done, "sinfo", "cannot run")
    assert not (tmp_path / "f").exists()


def test_garbage_from_sinfo_is_an_error_naming_its_line(tmp_path: Path, run_cli: Run) -> None:
    fake = tmp_path / "bin" / "sinfo"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'NODELIST   NODES PARTITION STATE'\n")  # a sinfo that ignores --format
    fake.chmod(0o755)
    done = run_cli("fleet", "collect", "--out", str(tmp_path / "f"), env={"PATH": f"{fake.parent}:/usr/bin:/bin"})
    _one_line_error(done, "sinfo:1: not a line of", "NODELIST")


_WRITER = """
import sys
from dnnresolve.fleet.store import write_fleet
out, node = sys.argv[1], sys.argv[2]
for i in range(150):
    index = {"schema": "dnnresolve-fleet/1", "collected": f"{node}-{i}", "command": [],
             "nodes": {node: {"partitions": ["gpu"], "profile": f"nodes/{node}.json"}}}
    write_fleet(out, index, {f"nodes/{node}.json": {"written_by": node}})
"""


def test_collects_into_one_directory_at_once_take_turns(tmp_path: Path) -> None:
    """Two admins (or two cron jobs) collecting into one fleet directory at once: each collect finishes, the
    directory holds one of them whole (its index and its profiles), and no half-made copy is left beside it."""
    import sys

    out = tmp_path / "fleet"
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(out), f"node{n}"], stderr=subprocess.PIPE, text=True)
        for n in range(6)
    ]
    errors = [w.communicate(timeout=300)[1] for w in writers]
    assert [w.returncode for w in writers] == [0] * 6, "\n".join(e.strip().splitlines()[-1] for e in errors if e)
    index = json.loads((out / "fleet.json").read_text())
    (node,) = index["nodes"]
    assert index["collected"] == f"{node}-149"
    assert [p.name for p in (out / "nodes").iterdir()] == [f"{node}.json"]
    assert json.loads((out / "nodes" / f"{node}.json").read_text()) == {"written_by": node}
    assert [p.name for p in tmp_path.iterdir()] == ["fleet"]


def test_check_an_environment_file_against_a_fleet(tmp_path: Path, run_cli: Run) -> None:
    # a conda line is judged per node by the model check uses: Anaconda's tensorflow-gpu 2.4.1 is a CUDA 10.1 build
    # (tests/data/anaconda_tensorflow_gpu.json) that the K20m node's driver 375.26 cannot run (CUDA 10.1 needs
    # 418.39) and 440.33.01 can; its step is conda's. Before: exit 2, "no pip requirement of a framework ...: nothing
    # to plan per node"
    k20m = json.loads((DOCS_FLEET / "nodes" / "k20m-1.json").read_text())
    fleet = write_fleet(
        tmp_path / "fleet", {"new": (["gpu"], {**k20m, "driver": "440.33.01"}), "old": (["k20m"], k20m)}
    )
    (tmp_path / "environment.yml").write_text(
        "channels:\n  - defaults\ndependencies:\n  - python=3.8\n  - tensorflow-gpu=2.4.1\n  - pip\n"
    )
    done = run_cli("check", "environment.yml", "--fleet", str(fleet), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["requirement"] == "tensorflow-gpu=2.4.1"
    groups = {tuple(g["nodes"]): g for g in answer["groups"]}
    assert {k: g["verdict"] for k, g in groups.items()} == {("new",): "installable", ("old",): "needs_root"}
    new = groups[("new",)]["plan"]["requirements"][0]
    assert new["cuda_variant"] == "10.1"
    steps = [s["argv"] for s in new["options"][0]["steps"]]
    assert steps == [
        ["conda", "install", "-y", "-c", "defaults", "tensorflow-gpu==2.4.1", "cudatoolkit=10.1", "cudnn=7.6"]
    ]
