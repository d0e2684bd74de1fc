"""``fleet collect`` and ``plan/check --fleet`` against a real Slurm cluster on this host (conftest.cluster): the
profiles come from ``dnnresolve detect --json`` run on each node by srun, each node a different fixture machine."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..test_text_width import too_wide
from .cluster import DOWN, LIVE, Cluster

Run = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture(autouse=True)
def settled(request: pytest.FixtureRequest) -> None:
    """Each test that uses the cluster starts on idle nodes with no job left."""
    if "cluster" in request.fixturenames:
        request.getfixturevalue("cluster").settle()


@pytest.fixture(scope="module")
def fleet(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:  # type: ignore[type-arg]
    """One collect of the whole cluster, shared by the tests that read it: (its directory, its --json answer)."""
    import os
    import sys

    out = tmp_path_factory.mktemp("fleet") / "fleet"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(cluster.env, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"), NO_COLOR="1")
    env["DNNRESOLVE_CACHE_DIR"] = str(out.parent / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "dnnresolve", "fleet", "collect", "--out", str(out), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # a node is down: not all good
    yield out, json.loads(done.stdout)


def test_collect_gathers_a_profile_per_live_node_through_srun_and_lists_the_down_one(fleet: tuple[Path, dict]) -> None:  # type: ignore[type-arg]
    out, answer = fleet
    index = json.loads((out / "fleet.json").read_text())
    assert set(index["nodes"]) == {*LIVE, DOWN}
    assert index["nodes"] == answer["nodes"]
    down = index["nodes"][DOWN]
    assert down["profile"] is None and down["reason"].startswith("Slurm state unknown")
    gpus = {}
    for node in LIVE:
        rec = index["nodes"][node]
        assert rec["reason"] is None and rec["collected"], rec
        profile = json.loads((out / rec["profile"]).read_text())
        # each node read its own machine: the TaskProlog's DNNRESOLVE_ROOT reached detect inside the job
        assert profile["sources"]["root"].endswith(f"/machines/{LIVE[node]}")
        gpus[node] = [g["name"] for g in profile["gpus"]]
    assert gpus == {
        "k20m-1": ["Tesla K20m"],
        "k20m-2": ["Tesla K20m"],
        "a100-1": ["NVIDIA A100-SXM4-40GB"],
        "cpu-1": [],
    }
    assert index["nodes"]["k20m-1"]["partitions"] == ["k20m"] and index["nodes"]["a100-1"]["gres"] == ["gpu:a100:4"]
    assert index["nodes"]["k20m-1"]["features"] == ["k20m", "ib"]


def test_plan_per_group_of_alike_nodes(fleet: tuple[Path, dict], run_cli: Run) -> None:  # type: ignore[type-arg]
    out, _ = fleet
    done = run_cli("plan", "torch==2.8.0", "--fleet", str(out), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["requirement"] == "torch==2.8.0"
    groups = {tuple(g["nodes"]): g for g in answer["groups"]}
    assert set(groups) == {("k20m-1", "k20m-2"), ("a100-1",), ("cpu-1",)}
    k20m, a100 = groups[("k20m-1", "k20m-2")], groups[("a100-1",)]
    assert k20m["verdict"] == "cannot" and k20m["partitions"] == ["k20m"]
    assert a100["verdict"] in ("ready", "installable") and a100["partitions"] == ["a100"]
    assert a100["plan"]["machine"]["gpu"] == "NVIDIA A100-SXM4-40GB"
    assert k20m["plan"]["requirements"][0]["gap"] and "compute_capability" in k20m["plan"]["requirements"][0]["gap"]
    assert answer["unreachable"] == [{"node": DOWN, "reason": answer["unreachable"][0]["reason"]}]
    assert "unknown" in answer["unreachable"][0]["reason"]


def test_plan_fleet_text_is_a_row_or_block_per_group_within_80_columns(fleet: tuple[Path, dict], run_cli: Run) -> None:  # type: ignore[type-arg]
    out, _ = fleet
    done = run_cli("plan", "torch==2.8.0", "--fleet", str(out), env={"COLUMNS": "80"})
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    assert "k20m-[1-2]" in done.stdout and "cannot" in done.stdout
    assert any(line.startswith("unreachable") and DOWN in line for line in lines)
    wide = run_cli("plan", "torch==2.8.0", "--fleet", str(out), env={"COLUMNS": "160"})
    rows = [line for line in wide.stdout.splitlines() if "k20m-[1-2]" in line]
    assert rows and "cannot" in rows[0] and "Tesla K20m" in rows[0], wide.stdout  # one table row for the group


def test_check_a_file_per_group(fleet: tuple[Path, dict], run_cli: Run, tmp_path: Path) -> None:  # type: ignore[type-arg]
    out, _ = fleet
    (tmp_path / "requirements.txt").write_text("tensorflow-gpu==1.0.0\nnumpy\n")
    done = run_cli("check", "requirements.txt", "--fleet", str(out), "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["requirement"] == "tensorflow-gpu==1.0.0"  # numpy: not a framework the matrix knows
    groups = {tuple(g["nodes"]): g for g in answer["groups"]}
    # the classic case: tensorflow-gpu 1.0.0 is installed on the K20m nodes, cuDNN 5.0 loads, and 5.1 is on disk
    k20m = groups[("k20m-1", "k20m-2")]
    assert k20m["verdict"] == "installable" and "cuDNN 5.1.10 already installed" in k20m["option"]


def test_a_second_collect_replaces_the_fleet_whole(cluster: Cluster, run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    env = cluster.env
    first = run_cli("fleet", "collect", "--out", str(out), "--partition", "k20m", env=env)
    assert first.returncode == 1, first.stderr  # gone-1 is in k20m
    assert sorted(p.name for p in (out / "nodes").iterdir()) == ["k20m-1.json", "k20m-2.json"]
    second = run_cli("fleet", "collect", "--out", str(out), "--nodes", "a100-1", env={**env, "COLUMNS": "40"})
    assert second.returncode == 0, second.stderr
    assert not too_wide(second.stdout, 40), second.stdout  # (a path wider than a line stays whole)
    assert sorted(p.name for p in (out / "nodes").iterdir()) == ["a100-1.json"]
    assert list(json.loads((out / "fleet.json").read_text())["nodes"]) == ["a100-1"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".fleet.")]  # no work directory left
    assert "1 of 1 node profiles read through srun" in second.stdout


def test_a_drained_node_is_not_waited_for_and_its_reason_is_slurms(
    cluster: Cluster, run_cli: Run, tmp_path: Path
) -> None:
    cluster.scontrol("update", "nodename=k20m-2", "state=drain", "reason=PSU swap | back Tuesday")
    try:
        done = run_cli(
            "fleet", "collect", "--out", str(tmp_path / "f"), "--nodes", "k20m-[1-2]", "--json", env=cluster.env
        )
    finally:
        cluster.scontrol("update", "nodename=k20m-2", "state=resume")
    assert done.returncode == 1, done.stderr
    nodes = json.loads(done.stdout)["nodes"]
    assert nodes["k20m-2"]["reason"] == "Slurm state drained: PSU swap | back Tuesday"
    assert nodes["k20m-1"]["profile"] == "nodes/k20m-1.json"


def test_a_node_command_that_fails_is_reported_with_its_own_words(
    cluster: Cluster, run_cli: Run, tmp_path: Path
) -> None:
    done = run_cli(
        "fleet", "collect", "--out", str(tmp_path / "f"), "--nodes", "cpu-1", "--command", "/no/such/dnnresolve",
        "--json", env=cluster.env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    reason = json.loads(done.stdout)["nodes"]["cpu-1"]["reason"]
    assert reason.startswith("exit status") and "/no/such/dnnresolve" in reason, reason


def test_no_jobs_estimates_from_gres_and_says_so(cluster: Cluster, run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "estimated"
    # (a command that cannot run: no job runs at all)
    done = run_cli(
        "fleet", "collect", "--out", str(out), "--no-jobs", "--command", "/no/such", "--json", env=cluster.env
    )
    assert done.returncode == 1, done.stderr  # gone-1 is still down
    nodes = json.loads(done.stdout)["nodes"]
    assert all(nodes[n]["estimate"] and nodes[n]["profile"] for n in LIVE), nodes
    assert nodes[DOWN]["profile"] is None
    plan = run_cli("plan", "torch==2.8.0", "--fleet", str(out), "--json")
    assert plan.returncode == 1, plan.stderr
    groups = {tuple(g["nodes"]): g for g in json.loads(plan.stdout)["groups"]}
    assert all(g["estimate"] for g in groups.values())
    assert groups[("k20m-1", "k20m-2")]["verdict"] == "cannot"
    assert groups[("a100-1",)]["plan"]["machine"]["compute_capability"] == "8.0"
    text = run_cli("plan", "torch==2.8.0", "--fleet", str(out))
    assert "cannot (estimate)" in text.stdout and "estimated from Slurm" in text.stdout


SLOW = "sh -c 'sleep 50' sleeper"  # a node command that outlives every deadline below ("detect --json" follows it)


def _idle(cluster: Cluster, within: float) -> list[str]:
    """The cluster's jobs once none is left, or ``within`` seconds have passed."""
    import time

    end = time.monotonic() + within
    while cluster.jobs() and time.monotonic() < end:
        time.sleep(0.2)
    return cluster.jobs()


def test_a_node_past_its_timeout_is_reported_and_its_job_cancelled(
    cluster: Cluster, run_cli: Run, tmp_path: Path
) -> None:
    try:
        done = run_cli(
            "fleet", "collect", "--out", str(tmp_path / "f"), "--nodes", "cpu-1", "--timeout", "1", "--command", SLOW,
            "--json", env=cluster.env,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["nodes"]["cpu-1"]["reason"] == "srun timed out after 6s"
        assert _idle(cluster, 15) == []  # Slurm cancelled the step: no job runs on until its time limit
    finally:
        cluster.cancel_all()


def test_stopping_a_collect_cancels_its_jobs_and_keeps_the_old_fleet(cluster: Cluster, tmp_path: Path) -> None:
    import os
    import signal
    import sys
    import time

    out = tmp_path / "fleet"
    env = {**os.environ, **cluster.env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    env["DNNRESOLVE_CACHE_DIR"] = str(tmp_path / "cache")
    argv = [sys.executable, "-m", "dnnresolve", "fleet", "collect", "--out", str(out), "--nodes", "k20m-[1-2]"]
    assert subprocess.run(argv, env=env, capture_output=True, timeout=120).returncode == 0
    before = (out / "fleet.json").read_text()
    proc = subprocess.Popen([*argv, "--command", SLOW], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 30
        while len([j for j in cluster.jobs() if "RUNNING" in j]) < 2 and time.monotonic() < end:
            time.sleep(0.2)
        assert len(cluster.jobs()) == 2, cluster.jobs()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert _idle(cluster, 15) == []  # cancelled: not left to run on to its time limit (1 min)
        assert (out / "fleet.json").read_text() == before  # the old fleet, whole
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".fleet.")] == []
    finally:
        proc.kill()
        cluster.cancel_all()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--partition", "nosuch"], "--partition nosuch: no such partition (sinfo lists: a100, cpu, k20m)"),
        (
            ["--nodes", "a100-1", "--partition", "k20m"],
            "--partition k20m: none of --nodes a100-1 is in it (theirs: a100)",
        ),
        (["--nodes", "nosuch-[1-2]"], "sinfo lists no node of --nodes nosuch-[1-2]"),
    ],
)
def test_nodes_and_partitions_slurm_does_not_know(
    args: list[str], error: str, cluster: Cluster, run_cli: Run, tmp_path: Path
) -> None:
    done = run_cli("fleet", "collect", "--out", str(tmp_path / "f"), *args, env=cluster.env)
    assert done.returncode == 2 and done.stderr == f"dnnresolve fleet: error: {error}\n"
    assert not (tmp_path / "f").exists()


def test_a_progress_bar_on_a_terminal_only(cluster: Cluster, run_cli: Run, tmp_path: Path) -> None:
    from ..test_progress import _run_on_terminal

    argv = ["fleet", "collect", "--nodes", "k20m-[1-2]", "--out"]
    status, shown = _run_on_terminal(
        [*argv, str(tmp_path / "a")], {**cluster.env, "DNNRESOLVE_CACHE_DIR": str(tmp_path)}
    )
    assert status == 0 and "collecting node profiles" in shown, shown
    piped = run_cli(*argv, str(tmp_path / "b"), env=cluster.env)
    assert piped.returncode == 0 and piped.stderr == "" and "collecting" not in piped.stdout
