"""The runtime profile: detect --json written, read back, validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dnnresolve.detect import detect_runtime
from dnnresolve.errors import UserError
from dnnresolve.profile import SCHEMA, load_profile, runtime_from_json, runtime_to_json

from .machines import K20M_ENV, MACHINES


def test_profile_round_trips_a_detected_machine() -> None:
    rt = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    data = runtime_to_json(rt)
    assert data["schema"] == SCHEMA == "dnnresolve-runtime/1"
    back = runtime_from_json(json.loads(json.dumps(data)), "k20m.json")
    assert runtime_to_json(back) == data
    assert back.active_cudnn is not None and str(back.active_cudnn.version) == "5.0.5"
    assert [m.full for m in back.modules if m.loaded] == ["cuda/8.0", "cudnn/5.0"]


def test_profile_marks_a_torch_cuda_build() -> None:
    env = {"CONDA_PREFIX": "/opt/conda/envs/dl"}
    data = runtime_to_json(detect_runtime(str(MACHINES / "conda"), env, timeout=2))
    [torch] = [p for p in data["packages"] if p["name"] == "torch"]
    assert torch["build"] == {"kind": "cuda", "cuda": "11.8", "label": "cu118"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "other/1"}, "field 'schema': expected 'dnnresolve-runtime/1'"),
        ({"driver": 375.26}, "field 'driver': expected a string, got float"),
        ({"driver": "banana"}, "field 'driver': not an NVIDIA driver version: 'banana'"),
        ({"gpus": [{"name": "Tesla K20m", "memory_mib": "4742"}]}, "field 'gpus[0].memory_mib': expected an integer"),
        ({"cudnn": [{"path": "/x"}]}, "field 'cudnn[0].version': missing"),
        (
            {"cudnn": [{"version": "5.0.5", "loads_first": "yes"}]},
            "field 'cudnn[0].loads_first': expected true or false",
        ),
        ({"modules": ["cudnn/5.1"]}, "field 'modules[0]': expected an object, got str"),
        ({"os": "macos"}, "field 'os': expected 'linux' or 'windows'"),
    ],
)
def test_bad_profiles_name_the_file_and_field(change: dict[str, object], message: str) -> None:
    data: dict[str, object] = {"schema": SCHEMA, **change}
    with pytest.raises(UserError) as err:
        runtime_from_json(data, "target.json")
    assert str(err.value).startswith(f"target.json: {message}"), str(err.value)


def test_unreadable_profile_file(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text('{"schema": "dnnresolve-runtime/1",\n "driver": }\n')
    with pytest.raises(UserError) as err:
        load_profile(str(bad))
    assert str(err.value).startswith(f"{bad}:2: not JSON")
