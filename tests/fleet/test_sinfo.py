"""Reading ``sinfo --Node --format=%N|%R|%T|%f|%G|%E``: real output captured from the test cluster (Slurm 22.05.8,
with a drained node whose reason holds the separator, a node down and not responding, a busy node, a node in two
partitions), its states read as reachable or not, GPU GRES entries, and host lists written back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dnnresolve.errors import UserError
from dnnresolve.fleet.slurm import SlurmNode, gpu_gres, parse_sinfo, srun_argv
from dnnresolve.render.fleet import hostlist

CAPTURED = Path(__file__).resolve().parents[1] / "fixtures" / "slurm" / "sinfo-nodes.txt"


def test_captured_sinfo_output_reads_one_node_per_name_with_all_its_partitions() -> None:
    nodes = {n.name: n for n in parse_sinfo(CAPTURED.read_text())}
    assert list(nodes) == ["a100-1", "cpu-1", "gone-1", "k20m-1", "k20m-2"]
    assert nodes["a100-1"].partitions == ("a100", "debug") and nodes["cpu-1"].partitions == ("cpu", "debug")
    assert nodes["k20m-1"].features == ("k20m", "ib") and nodes["k20m-1"].gres == ("gpu:k20m:2",)
    assert nodes["cpu-1"].features == () and nodes["cpu-1"].gres == () and nodes["cpu-1"].reason == ""
    # the reason is free text: the separator inside it stays, the whole reason is kept
    assert (
        nodes["k20m-2"].reason
        == "maintenance window: replacing the PSU of this node, back on Tuesday | ask hpc-support"
    )


def test_captured_states_say_which_nodes_take_a_job_and_why_the_others_do_not() -> None:
    nodes = {n.name: n for n in parse_sinfo(CAPTURED.read_text())}
    assert nodes["k20m-1"].unreachable == "" and nodes["cpu-1"].unreachable == ""
    assert nodes["a100-1"].unreachable == ""  # allocated: srun --immediate says it is busy, nothing waits for it
    assert nodes["gone-1"].unreachable == "Slurm state down* (not responding): power cut, waiting for facilities"
    assert nodes["k20m-2"].unreachable.startswith("Slurm state drained: maintenance window")


@pytest.mark.parametrize(
    ("state", "unreachable"),
    [
        ("idle", False),
        ("mixed", False),
        ("allocated", False),
        ("completing", False),
        ("planned", False),
        ("down", True),
        ("down*", True),
        ("drained", True),
        ("draining", True),
        ("mixed+drain", True),
        ("fail", True),
        ("failing", True),
        ("unknown", True),
        ("unknown*", True),
        ("idle*", True),  # not responding
        ("idle~", True),  # powered off: waking it is not this command's call
        ("idle#", True),
        ("inval", True),
        ("maint", True),
        ("future", True),
    ],
)
def test_states(state: str, unreachable: bool) -> None:
    node = SlurmNode("n1", ("p",), state, (), (), "")
    assert bool(node.unreachable) is unreachable
    if unreachable:
        assert node.unreachable.startswith(f"Slurm state {state}")


def test_gpu_gres_entries() -> None:
    assert gpu_gres(("gpu:k20m:2",)) == [("k20m", 2)]
    assert gpu_gres(("gpu:a100:4(S:0-1)", "nvme:1")) == [("a100", 4)]
    assert gpu_gres(("gpu:2",)) == [("", 2)]
    assert gpu_gres(("gpu",)) == [("", 1)]
    assert gpu_gres(("gpu:tesla_v100:8(S:0,1)",)) == [("tesla_v100", 8)]
    node = parse_sinfo("n1|p|idle|(null)|gpu:a100:4(S:0,1),gpu:t4:1,nvme:1|none\n")[0]
    assert node.gres == ("gpu:a100:4(S:0,1)", "gpu:t4:1", "nvme:1")  # a comma inside a socket list stays


@pytest.mark.parametrize("line", ["k20m-1 k20m idle", "k20m-1|k20m|idle|k20m|gpu:k20m:2", "|k20m|idle|a|b|c"])
def test_a_line_of_another_shape_is_an_error_naming_it(line: str) -> None:
    with pytest.raises(UserError) as err:
        parse_sinfo(f"a100-1|a100|idle|a100|gpu:a100:4|none\n{line}\n")
    assert str(err.value).startswith("sinfo:2: not a line of 'sinfo --format=%N|%R|%T|%f|%G|%E'")


def test_srun_runs_one_task_on_the_node_at_once_or_not_at_all() -> None:
    argv = srun_argv("k20m-1", "k20m", ["/shared/bin/dnnresolve"], 90)
    assert argv[0] == "srun" and argv[-3:] == ["/shared/bin/dnnresolve", "detect", "--json"]
    assert {
        "--immediate=5",
        "--time=2",
        f"--job-name=dnnresolve-detect.{os.getpid()}.k20m-1",  # its own name: scancel --name ends it alone
        "--nodes=1",
        "--ntasks=1",
        "--nodelist=k20m-1",
        "--partition=k20m",
    } <= set(argv)


def test_hostlist_writes_names_the_way_slurm_does() -> None:
    assert hostlist(["k20m-1", "k20m-2"]) == "k20m-[1-2]"
    assert hostlist(["gpu01", "gpu02", "gpu03", "gpu07", "cpu-1"]) == "gpu[01-03,07],cpu-1"
    assert hostlist(["login", "n9", "n10", "n11"]) == "login,n[9-11]"
    assert hostlist(["a100-1"]) == "a100-1"
