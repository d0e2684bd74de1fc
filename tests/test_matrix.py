"""The matrix loader: schema errors name file, line, row and field; queries answer from the data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from dnnresolve.errors import MatrixError
from dnnresolve.matrix import load_matrix, packaged_matrix_path
from dnnresolve.matrix.parse import parse_matrix
from dnnresolve.versions import CudaVersion

GOOD_ROW = """
[[framework]]
package = "tensorflow-gpu"
version = "1.0.0"
covers = "==1.0.*"
os = ["linux"]
python = ["3.5"]
cuda = ["8.0"]
cudnn = ["5.1"]
source = "https://www.tensorflow.org/install/source#gpu"
"""


def error_for(text: str) -> str:
    with pytest.raises(MatrixError) as info:
        parse_matrix(text, "m.toml")
    return str(info.value)


def test_packaged_matrix_loads_and_has_the_classic_row() -> None:
    m = load_matrix(packaged_matrix_path())
    rows = m.find("tensorflow-gpu", "==1.0")
    assert rows and rows[0].version == Version("1.0.0")
    assert [str(c) for c in rows[0].cuda] == ["8.0"]
    assert [str(c) for c in rows[0].cudnn] == ["5.1"]


def test_wrong_type_names_row_field_and_line() -> None:
    msg = error_for(GOOD_ROW.replace('cuda = ["8.0"]', 'cuda = "8.0"'))
    assert msg.startswith("m.toml:2: ")
    assert "[[framework]] row 1 (tensorflow-gpu 1.0.0)" in msg
    assert "field 'cuda'" in msg and "list of strings" in msg
    assert "\n" not in msg


def test_second_row_error_points_at_its_header_line() -> None:
    text = GOOD_ROW + GOOD_ROW.replace('version = "1.0.0"', 'version = "1.1.0"').replace(
        'cudnn = ["5.1"]', 'cudnn = ["five"]'
    )
    msg = error_for(text)
    assert msg.startswith("m.toml:12: ")
    assert "row 2 (tensorflow-gpu 1.1.0), field 'cudnn'" in msg


@pytest.mark.parametrize(
    ("mutation", "field", "words"),
    [
        (('source = "https://www.tensorflow.org/install/source#gpu"', ""), "source", "missing"),
        (('source = "https://www.tensorflow.org/install/source#gpu"', 'source = "tf docs"'), "source", "not a URL"),
        (('os = ["linux"]', 'os = ["beos"]'), "os", "unknown operating system"),
        (('version = "1.0.0"', 'version = "one"'), "version", "Invalid version"),
        (('python = ["3.5"]', 'pyhton = ["3.5"]'), "pyhton", "unknown field"),
        (('cudnn = ["5.1"]', 'cudnn_rule = "loose"'), "cudnn_rule", "unknown rule"),
        (('cudnn = ["5.1"]', 'on_pypi = "no"'), "on_pypi", "expected true or false"),
        (('cudnn = ["5.1"]', "wheels_any_python = 1"), "wheels_any_python", "expected true or false"),
        (('cudnn = ["5.1"]', 'cudnn = ["5.1"]\ncudnn_optional = "yes"'), "cudnn_optional", "expected true or false"),
        (
            ('cudnn = ["5.1"]', 'cudnn = ["5.1"]\nbuilds_each_release = 1'),
            "builds_each_release",
            "expected true or false",
        ),
        (('cudnn = ["5.1"]', 'ptx = ["eight"]'), "ptx", "not a compute capability"),
        (('cudnn = ["5.1"]', 'ptx = "8.0"'), "ptx", "list"),
        (('cudnn = ["5.1"]', 'cudnn = ["5.1"]\npinned_by = { "1.1.0" = "0.2.0" }'), "pinned_by", "the row covers"),
        (('cudnn = ["5.1"]', 'cudnn = ["5.1"]\npinned_by = { "1.0.0" = "new" }'), "pinned_by", "a version"),
        (('cudnn = ["5.1"]', 'cudnn = ["5.1"]\npinned_by = ["1.0.0"]'), "pinned_by", "inline table"),
    ],
)
def test_schema_errors(mutation: tuple[str, str], field: str, words: str) -> None:
    msg = error_for(GOOD_ROW.replace(*mutation))
    assert f"field '{field}'" in msg
    assert words in msg


def test_invalid_toml_names_the_line() -> None:
    msg = error_for(GOOD_ROW + "\n[[cuda]\nversion = 1\n")
    assert msg.startswith("m.toml:12: not valid TOML")


def test_unknown_top_level_key_names_its_line() -> None:
    assert error_for("\n\ncolour = 2\n" + GOOD_ROW).startswith("m.toml:3: unknown table or key 'colour'")
    # ``schema`` is the format's version: a newer one names what to upgrade; a bad one is refused
    assert error_for("\n\nschema = 2\n" + GOOD_ROW).startswith("m.toml:3: schema 2: a matrix made for a newer")
    assert "whole number" in error_for('schema = "1"\n' + GOOD_ROW)


def test_duplicate_rows_are_refused() -> None:
    assert "duplicates row 1" in error_for(GOOD_ROW + GOOD_ROW)


def test_install_recipe_checked() -> None:
    text = GOOD_ROW + 'install = [ { kind = "pip", cuda = "8.0" } ]\n'
    assert "a pip recipe needs 'requirement'" in error_for(text)


def test_a_recipes_cudnn_must_be_in_the_rows_list() -> None:
    recipe = 'install = [ { kind = "pip", cuda = "8.0", requirement = "tensorflow-gpu==1.0.0", cudnn = ["%s"] } ]\n'
    message = error_for(GOOD_ROW + recipe % "6.0")
    assert message.startswith("m.toml:2:")
    assert "cuDNN 6.0 of the CUDA 8.0 recipe is not in the row's cudnn list" in message
    assert "entry 1: cudnn: not a version: 'five'" in error_for(GOOD_ROW + recipe % "five")
    row = parse_matrix(GOOD_ROW + recipe % "5.1", "m.toml").frameworks[0]
    assert [str(c) for c in row.cudnn_for(CudaVersion.parse("8.0"))] == ["5.1"]


def test_queries() -> None:
    text = (
        GOOD_ROW
        + """
[[cuda]]
version = "8.0.61"
driver_min_linux = "375.26"
source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"

[[gpu]]
name = "A100-SXM4-40GB"
aliases = ["A100 40GB"]
compute_capability = "8.0"
architecture = "Ampere"
source = "https://developer.nvidia.com/cuda-gpus"

[[gpu]]
name = "Tesla K20m"
compute_capability = "3.5"
architecture = "Kepler"
source = "https://developer.nvidia.com/cuda-legacy-gpus"
"""
    )
    m = parse_matrix(text, "m.toml")
    assert m.find("tensorflow_gpu", "==1.0.1")  # names are canonicalised; patch releases covered
    assert not m.find("tensorflow-gpu", "==1.1")
    assert m.find("tensorflow-gpu", ">=0.12")
    assert m.using_cuda(CudaVersion.parse("8.0"))
    assert str(m.driver_table().min_driver_for(CudaVersion.parse("8.0"))) == "375.26"
    for name in ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", "a100 40gb"):
        g = m.gpu(name)
        assert g is not None and str(g.compute_capability) == "8.0", name
    for name in ("Tesla K20m", "K20m", "NVIDIA Tesla K20m"):
        g = m.gpu(name)
        assert g is not None and str(g.compute_capability) == "3.5", name
    assert m.gpu("Radeon RX 7900") is None


def test_cli_matrix_json(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json")
    assert r.returncode == 0, r.stderr
    (rec,) = json.loads(r.stdout)["releases"]
    assert rec["package"] == "tensorflow-gpu" and rec["version"] == "1.0.0"
    assert rec["cuda"] == ["8.0"] and rec["cudnn"] == ["5.1"]
    for key in ("python", "driver_min_linux", "compute_capability_min", "install", "source"):
        assert key in rec
    assert rec["source"].startswith("https://")


def test_cli_matrix_bad_file_is_one_line_exit_2(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD_ROW.replace('cuda = ["8.0"]', "cuda = 8"))
    r = run_cli("matrix", "tensorflow-gpu", "--matrix", str(bad))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"{bad}:2:" in r.stderr and "field 'cuda'" in r.stderr
    r = run_cli("matrix", "tensorflow-gpu", "--matrix", str(bad), "--debug")
    assert "Traceback" in r.stderr


def test_cli_usage(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("dnnresolve ")
    r = run_cli("frobnicate")
    assert r.returncode == 2
    r = run_cli("matrix", "torch>>2")
    assert r.returncode == 2 and "not a requirement" in r.stderr
    r = run_cli("matrix", "no-such-framework")
    assert r.returncode == 1


def test_matrix_file_that_is_not_utf8_or_too_big(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(GOOD_ROW.encode() + b'note = "caf\xe9"\n')
    r = run_cli("matrix", "tensorflow-gpu", "--matrix", str(bad))
    assert r.returncode == 2 and r.stderr == f"dnnresolve matrix: error: {bad}:11: not valid UTF-8 (byte 0xe9)\n"
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: costs no disk
    r = run_cli("matrix", "tensorflow-gpu", "--matrix", str(huge))
    assert r.returncode == 2 and "larger than 64 MiB" in r.stderr and r.stderr.count("\n") == 1


def test_an_internal_error_is_one_line_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dnnresolve import cli
    from dnnresolve.cli import matrix as matrix_command

    def broken(args: object) -> int:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(matrix_command, "cmd_matrix", broken)
    assert cli.main(["matrix", "torch"]) == 70
    err = capsys.readouterr().err
    assert err == (
        "dnnresolve matrix: internal error: RuntimeError: a bug of ours "
        "(run again with --debug for the traceback, and please report it)\n"
    )
    with pytest.raises(RuntimeError):
        cli.main(["matrix", "torch", "--debug"])


def test_matrix_text_shows_install_commands_shell_quoted(run_cli) -> None:  # type: ignore[no-untyped-def]
    import shlex

    r = run_cli("matrix", "jax==0.4.30", "--os", "linux")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if "pip install jax[" in line or "pip install 'jax[" in line]
    assert lines and all("'jax[cuda12" in line for line in lines)  # extras quoted against shell globbing
    command = lines[0].split("pip install", 1)[1].strip(" │|")
    assert shlex.split(command)[0].startswith("jax[cuda12")


def test_matrix_text_shows_the_gpu_code_the_wheels_carry(run_cli) -> None:  # type: ignore[no-untyped-def]
    table = run_cli("matrix", "tensorflow", "--os", "linux", env={"COLUMNS": "240"})
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if "tensorflow 2.17.0" in line)
    assert "sm_60-sm_89 + PTX compute_90" in row  # no Maxwell code from 2.17 on
    one = run_cli("matrix", "torch==2.15.0", "--os", "linux", env={"COLUMNS": "240"})
    line = next(line for line in one.stdout.splitlines() if "gpu code (plain PyPI wheel)" in line)
    assert "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120" in line and "PTX" not in line


def test_matrix_text_says_what_each_install_form_is(run_cli) -> None:  # type: ignore[no-untyped-def]
    # jax 0.4.30: jax[cuda12] brings CUDA and cuDNN as wheels, jax[cuda12_local] uses the system's
    one = run_cli("matrix", "jax==0.4.30", env={"COLUMNS": "240"})
    assert one.returncode == 0, one.stderr
    lines = one.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "pip install 'jax[cuda12_local]==0.4.30'" in line)
    assert "local CUDA 12 and cuDNN 9.1 or newer" in lines[at + 1]


def test_matrix_marks_a_cudnn_only_some_features_load(run_cli) -> None:  # type: ignore[no-untyped-def]
    one = run_cli("matrix", "cupy-cuda11x==13.6.0", "--os", "linux", env={"COLUMNS": "240"})
    assert one.returncode == 0, one.stderr
    line = next(line for line in one.stdout.splitlines() if line.strip(" │|").startswith("cudnn "))
    assert line.split("│")[2].strip() == "8.8 (optional)"
    (record,) = json.loads(run_cli("matrix", "cupy-cuda11x==13.6.0", "--os", "linux", "--json").stdout)["releases"]
    assert record["cudnn"] == ["8.8"] and record["cudnn_optional"] is True
    (other,) = json.loads(run_cli("matrix", "onnxruntime-gpu==1.16.3", "--json").stdout)["releases"]
    assert other["cudnn_optional"] is False


def test_cli_matrix_says_where_a_release_it_lacks_is_found(run_cli) -> None:  # type: ignore[no-untyped-def]
    # tensorflow-gpu stops at 2.11: the matrix lists its later releases under tensorflow
    r = run_cli("matrix", "tensorflow-gpu==2.15.0")
    assert r.returncode == 1, r.stderr
    assert " ".join(r.stdout.split()) == (  # wrapped at 80 columns
        "no release in the matrix matches 'tensorflow-gpu==2.15.0'; it lists tensorflow-gpu==2.15.0 under tensorflow: "
        "`dnnresolve matrix tensorflow==2.15.0`"
    )
    r = run_cli("matrix", "tensorflow-gpu>=2.15", "--json")  # a range is quoted for the shell
    assert json.loads(r.stdout)["message"].endswith("under tensorflow: `dnnresolve matrix 'tensorflow>=2.15'`")
    # jaxlib, of jax's own release since 0.4.0, is an alias of jax's rows: its record is jax's
    (record,) = json.loads(run_cli("matrix", "jaxlib==0.5.0", "--json").stdout)["releases"]
    assert record["package"] == "jax" and record["aliases"] == ["jaxlib"]
    # a release between two rows: the neighbours
    r = run_cli("matrix", "torch==1.10.3", "--json")
    assert json.loads(r.stdout)["message"] == (
        "no release in the matrix matches 'torch==1.10.3'; it knows 1.10.2 below it and 1.11.0 above it"
    )


def test_cli_matrix_text_names_the_same_releases_record_for_another_system(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("matrix", "torch==1.4.0")
    assert r.returncode == 0, r.stderr
    # at 80 columns the command goes on a line of its own, whole
    assert r.stdout.rstrip().splitlines()[-2:] == [
        "torch 1.4.0 for windows has its own record:",
        "  dnnresolve matrix torch==1.4.0 --os windows",
    ]
    wide = run_cli("matrix", "torch==1.4.0", env={"COLUMNS": "120"}).stdout
    assert wide.rstrip().splitlines()[-1] == (
        "torch 1.4.0 for windows has its own record: dnnresolve matrix torch==1.4.0 --os windows"
    )
    windows = run_cli("matrix", "torch==1.4.0", "--os", "windows").stdout
    assert "torch 1.4.0 (windows)" in windows and "has its own record" not in windows  # the system asked for


def test_the_packaged_matrix_names_gpus_as_the_driver_prints_them() -> None:
    # names from NVIDIA's driver name list, chips from pci.ids; a name that starts another is not taken for it
    m = load_matrix()
    for name, cc in (
        ("NVIDIA L2", "8.9"),
        ("NVIDIA RTX 6000D", "12.0"),
        ("NVIDIA AX800", "8.0"),
        ("NVIDIA RTX A500 Laptop GPU", "8.6"),
        ("NVIDIA RTX A5000", "8.6"),
        ("NVIDIA T550 Laptop GPU", "7.5"),
        ("NVIDIA GeForce GTX 850M", "5.0"),
        ("GeForce 830M", "5.0"),
    ):
        g = m.gpu(name)
        assert g is not None and str(g.compute_capability) == cc, name
    a500 = m.gpu("NVIDIA RTX A500 Laptop GPU")
    a5000 = m.gpu("NVIDIA RTX A5000")
    assert a500 is not None and a5000 is not None and a500.name != a5000.name
    assert m.gpu("GTX 830M") is None  # NVIDIA sold no such card
