"""Steps a user pastes: each a command, or a short instruction with no command inside; the commands run as they
are printed, in a real shell; and a machine with environment modules is told `module avail` / `module load`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from ..detect.machines import k20m_cluster

RunCli = Callable[..., CompletedProcess[str]]

# what a command looks like inside a sentence
_COMMAND_IN_PROSE = re.compile(r"&&|\$\(|\|\s|\bmkdir\b|\btar -|\bpip install\b|\bexport \w+=|\bmodule (load|avail)\b")
INSTRUCTION_MAX = 200  # characters: an instruction, its URL and the install page's word on it included

# plans whose options hold every kind of step: cuDNN by hand (a .tgz and a .tar.xz archive), the CUDA toolkit by
# hand, a build that is a download, Windows libraries, a module swap
PLANS = [
    ["tensorflow-gpu==1.0", "--driver", "375.26", "--gpu", "Tesla K20m", "--cuda", "8.0", "--cudnn", "5.0.5"],
    ["paddlepaddle-gpu==2.6.1", "--driver", "525.85.12", "--gpu", "Tesla V100-SXM2-16GB", "--cuda", "11.2"],
    ["onnxruntime-gpu==1.17.0", "--driver", "535.104.05", "--gpu", "Tesla T4", "--cuda", "12.2", "--cudnn", "8.9"],
    ["torch==0.4.1", "--os", "windows", "--driver", "398.36", "--python", "3.6"],
    ["tensorflow-gpu==1.14.0", "--os", "windows", "--driver", "456.71", "--cuda", "9.0", "--cudnn", "7.1.4"],
    ["jax[cuda12_local]==0.4.30", "--driver", "550.54.15", "--gpu", "A100", "--cuda", "12.4", "--cudnn", "9.0.0"],
    ["tensorflow-gpu==1.12.0", "--driver", "384.81", "--gpu", "Tesla K20m", "--cuda", "8.0", "--python", "3.6"],
]


def _options(run_cli: RunCli, args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    r = run_cli("plan", "--json", *args, env={"DNNRESOLVE_NVML": "0", **(env or {})})
    assert r.returncode in (0, 1), r.stderr
    options: list[dict[str, Any]] = json.loads(r.stdout)["requirements"][0]["options"]
    return options


def test_every_step_is_a_command_or_a_short_instruction(run_cli: RunCli) -> None:
    seen = 0
    for args in PLANS:
        for option in _options(run_cli, [*args, "--no-detect"]):
            for step in option["steps"]:
                seen += 1
                if step["command"] is None:  # an instruction: short, and no command inside it
                    text = step["description"]
                    assert len(text) <= INSTRUCTION_MAX, text
                    assert not _COMMAND_IN_PROSE.search(text), text
                else:
                    assert "\n" not in step["command"] and not _COMMAND_IN_PROSE.search(step["description"]), step
    assert seen > 30


def test_the_cudnn_and_toolkit_steps_run_as_printed(run_cli: RunCli, tmp_path: Path) -> None:
    # the option that installs CUDA 11.8 and cuDNN by hand, its commands run one by one in bash: the runfile (a
    # stand-in that takes the installer's options) and the archive (laid out as NVIDIA's) end up where the
    # exported library path says
    options = _options(run_cli, [*PLANS[1], "--cudnn", "8.2.1", "--python", "3.10", "--no-detect"])
    [by_hand] = [o for o in options if o["title"].endswith("install the libraries by hand")]
    commands = [s["command"] for s in by_hand["steps"] if s["command"] and not s["command"].startswith("python")]
    archive = next(w for s in by_hand["steps"] for w in s["description"].split() if w.endswith(".tar.xz"))
    folder = archive.removesuffix(".tar.xz")
    stage = tmp_path / "stage" / folder / "lib"
    stage.mkdir(parents=True)
    (stage / "libcudnn.so.8").write_bytes(b"")
    work = tmp_path / "downloads"
    work.mkdir()
    with tarfile.open(work / archive, "w:xz") as tar:
        tar.add(tmp_path / "stage" / folder, arcname=folder)
    runfile = work / "cuda_11.8.0_520.61.05_linux.run"
    runfile.write_text(
        'for a in "$@"; do case "$a" in --toolkitpath=*) mkdir -p "${a#--toolkitpath=}/lib64";; esac; done\n'
        'printf "%s\\n" "$@" > "$HOME/runfile-args"\n'
    )
    home = tmp_path / "home"
    home.mkdir()
    script = "set -e\n" + "\n".join(commands) + '\nprintf "%s" "$LD_LIBRARY_PATH"\n'
    r = subprocess.run(
        ["bash", "-c", script],
        cwd=work,
        env={"HOME": str(home), "PATH": os.environ["PATH"], "LD_LIBRARY_PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, (commands, r.stderr)
    assert (home / "runfile-args").read_text().split() == [
        "--silent",
        "--toolkit",
        f"--toolkitpath={home}/cuda-11.8",
    ]
    paths = r.stdout.split(":")
    assert paths[0] == f"{home}/cudnn/{folder}/lib" and paths[1] == f"{home}/cuda-11.8/lib64"
    assert (Path(paths[0]) / "libcudnn.so.8").exists() and Path(paths[1]).is_dir()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_machine_with_modules_is_told_module_avail_even_with_flags(run_cli: RunCli, tmp_path: Path) -> None:
    # the K20m cluster offers cuda/8.0 and cudnn/5.0, 5.1; TensorFlow 1.12 needs CUDA 9.0 and cuDNN 7.1+
    _, modulefiles = k20m_cluster(tmp_path)
    flags = ["--driver", "384.81", "--gpu", "Tesla K20m", "--cuda", "8.0", "--cudnn", "5.1", "--python", "3.6"]
    options = _options(run_cli, ["tensorflow-gpu==1.12.0", *flags], env={"MODULEPATH": str(modulefiles)})
    [site] = [o for o in options if "module avail" in o["title"]]
    assert site["title"] == "keep tensorflow-gpu 1.12.0: a site module, if `module avail` lists one"
    assert [s["command"] for s in site["steps"] if s["kind"] == "module"] == [
        "module avail cuda",
        "module load cuda/9.0",
        "module avail cudnn",
        "module load cudnn/7.1",
    ]
    # as explain says for the same need, and ahead of installing the libraries by hand
    titles = [o["title"] for o in options]
    assert titles.index(site["title"]) < titles.index("keep tensorflow-gpu 1.12.0: install the libraries by hand")
    # a profile of the machine says the same; a machine without modules is not told
    detected = run_cli("detect", "--json", env={"MODULEPATH": str(modulefiles), "DNNRESOLVE_NVML": "0"}).stdout
    profile = tmp_path / "node.json"
    profile.write_text(detected)
    options = _options(run_cli, ["tensorflow-gpu==1.12.0", "--target", str(profile), *flags])
    assert [o["title"] for o in options if "module avail" in o["title"]] == [site["title"]]
    options = _options(run_cli, ["tensorflow-gpu==1.12.0", "--no-detect", *flags])
    assert not [o for o in options if "module" in o["title"]]
