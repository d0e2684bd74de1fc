"""The cuDNN a build uses against the GPU (#21): NVIDIA's support matrices list the oldest compute capability each
cuDNN release supports per CUDA major, and a Kepler K80 (sm_37) is below cuDNN 9's (5.0) though torch's cu118
wheels still carry sm_37 code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunCli = Callable[..., CompletedProcess[str]]

K80 = ("--no-detect", "--driver", "470.82.01", "--gpu", "Tesla K80", "--python", "3.11")
T4 = ("--no-detect", "--driver", "470.82.01", "--gpu", "T4", "--python", "3.11")


def _option_blocks(out: str) -> list[str]:
    text = out.split("Options, best first:\n", 1)[1].split("\nSource:", 1)[0]
    blocks: list[str] = []
    for line in text.splitlines():
        if line[:5].strip().rstrip(".").isdigit():
            blocks.append(line)
        elif blocks:
            blocks[-1] += "\n" + line
    return blocks


def test_a_k80_is_told_torch_2_7_1s_cudnn_does_not_support_it(run_cli: RunCli) -> None:
    r = run_cli("plan", "torch==2.8.0", *K80)
    assert r.returncode in (0, 1), r.stderr
    first = " ".join(_option_blocks(r.stdout)[0].split())
    assert first.startswith("1. use torch 2.7.1 instead"), first
    assert "with cuDNN turned off (cuDNN 9.1 does not support sm_37)" in first
    assert "torch.backends.cudnn.enabled = False" in first
    assert "cuDNN 9.1 for CUDA 11.x supports compute capability 5.0 and newer" in first


def test_a_k80_is_offered_the_newest_torch_whose_cudnn_supports_it(run_cli: RunCli) -> None:
    r = run_cli("plan", "torch==2.8.0", *K80)
    blocks = [" ".join(b.split()) for b in _option_blocks(r.stdout)]
    whole = [b for b in blocks if "its cuDNN supports this GPU" in b]
    assert len(whole) == 1, blocks
    # torch 2.3.1's CUDA 11.8 wheels bundle cuDNN 8.7.0.84 (PyTorch's release matrix), whose CUDA 11 build still
    # carries sm_35 code (read from NVIDIA's nvidia-cudnn-cu11 8.7.0.84 wheel); 8.8.0 starts at sm_50
    assert whole[0].split(": ")[0].endswith("use torch 2.3.1 instead"), whole[0]
    assert "conda create" not in whole[0] and "turned off" not in whole[0]
    assert "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1" in whole[0]
    assert "--index-url https://download.pytorch.org/whl/cu118" in whole[0]


def test_the_asked_release_shows_the_cudnn_floor_as_a_warning(run_cli: RunCli) -> None:
    r = run_cli("plan", "torch==2.8.0", *K80)
    table = r.stdout.split("Options, best first:", 1)[0]
    line = next(x for x in table.splitlines() if "cudnn_gpu" in x)
    assert line.split()[0] == "warn" and "needs cuDNN 9.10: >= 5.0" in line and line.split()[-1] == "3.7"


def test_a_t4_hears_nothing_of_it(run_cli: RunCli) -> None:
    r = run_cli("plan", "torch==2.8.0", *T4)
    assert "cudnn_gpu" not in r.stdout and "cuDNN turned off" not in r.stdout
    assert "its cuDNN supports this GPU" not in r.stdout
    assert _option_blocks(r.stdout)[0].startswith("  1. use torch 2.7.1 instead")


def test_tensorflow_loading_a_system_cudnn_below_the_gpu_fails(run_cli: RunCli) -> None:
    # TensorFlow needs cuDNN on the GPU: cuDNN 8.9.5 for CUDA 11.x lists 5.0 and newer, a K80 is 3.7
    args = ("--no-detect", "--driver", "525.60.13", "--gpu", "Tesla K80", "--cuda", "11.8", "--cudnn", "8.9.5")
    r = run_cli("plan", "tensorflow==2.12.0", *args, "--python", "3.10")
    table = r.stdout.split("Options, best first:", 1)[0]
    line = next(x for x in table.splitlines() if "cudnn_gpu" in x)
    assert line.split()[0] == "MISSING", line
    assert "tensorflow needs the cuDNN it loads from the system" in " ".join(table.split())
    assert "1. install tensorflow\n" not in r.stdout  # no plan keeps it as it is
    # a cuDNN 8.5 (SM 3.5 and later for CUDA 11.x) passes
    ok = run_cli("plan", "tensorflow==2.12.0", *args[:-1], "8.5.0", "--python", "3.10")
    assert "cudnn_gpu" not in ok.stdout


def test_a_floor_for_a_cuda_major_the_row_lacks_is_a_one_line_error(run_cli: RunCli, tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "data" / "compat_matrix.toml"
    text = src.read_text(encoding="utf-8")
    good = 'compute_capability_min_by_cuda = { "12" = "5.0", "11" = "5.0" }'
    bad = text.replace(good, 'compute_capability_min_by_cuda = { "10" = "5.0" }', 1)
    assert bad != text
    copy = tmp_path / "m.toml"
    copy.write_text(bad, encoding="utf-8")
    r = run_cli("matrix", "torch==2.8.0", "--matrix", str(copy))
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "m.toml" in err[0] and "compute_capability_min_by_cuda" in err[0], r.stderr
    assert "Traceback" not in r.stderr


def test_cupy_warns_that_only_its_cudnn_features_fail(run_cli: RunCli) -> None:
    args = ("--no-detect", "--driver", "525.60.13", "--gpu", "Tesla K80", "--cuda", "11.8", "--cudnn", "8.9.5")
    r = run_cli("plan", "cupy-cuda11x", *args, "--python", "3.10")
    table = " ".join(r.stdout.split("Options, best first:", 1)[0].split())
    assert "warn cudnn_gpu needs cuDNN 8.9.5: >= 5.0 has 3.7" in table
    assert "cupy-cuda11x runs, but its cuDNN features (cupy.cudnn) fail" in table


def test_torch_2_1_on_a_k80_is_offered_a_cu118_build_whose_cudnn_carries_kepler_code(run_cli: RunCli) -> None:
    # torch 2.1-2.3's CUDA 11.8 wheels bundle cuDNN 8.7: no support matrix of 8.6-8.9.0 was found, and before, with
    # 8.5.0 (3.5) and 8.9.1 (5.0) around it disagreeing, a K80 got no verdict and was sent back to torch 2.0.1
    r = run_cli("plan", "torch==2.1.0", *K80)
    assert r.returncode in (0, 1), r.stderr
    blocks = [" ".join(b.split()) for b in _option_blocks(r.stdout)]
    whole = [b for b in blocks if "its cuDNN supports this GPU" in b]
    assert len(whole) == 1 and "use torch 2.3.1 instead" in whole[0], blocks
    assert (
        "torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url https://download.pytorch.org/whl/cu118"
        in (whole[0])
    )
    assert not [b for b in blocks if "use torch 2.0.1 instead" in b], blocks
    # the asked build (CUDA 12.1, cuDNN 8.9) cites the page of the series (8.9.1), not the reading of 8.9.0's wheel
    table = " ".join(r.stdout.split("Options, best first:", 1)[0].split())
    assert (
        "cuDNN 8.9 for CUDA 12.x supports compute capability 5.0 and newer (NVIDIA's support matrix of cuDNN 8.9.1)"
        in (table)
    )
    # its own CUDA 11.8 build passes the cuDNN check: no warning, no failure
    cu118 = run_cli("plan", "torch==2.1.0+cu118", *K80)
    assert "cudnn_gpu" not in cu118.stdout.split("Options, best first:", 1)[0]


def test_a_floor_read_from_the_library_says_so(run_cli: RunCli) -> None:
    # cuDNN 8.8.0's CUDA 11 wheel carries no sm_35/sm_37 code (its oldest is sm_50); TensorFlow loading it on a K80
    # fails, and the reason names where the floor comes from
    args = ("--no-detect", "--driver", "525.60.13", "--gpu", "Tesla K80", "--cuda", "11.8", "--python", "3.10")
    r = run_cli("plan", "tensorflow==2.12.0", *args, "--cudnn", "8.8.0")
    table = r.stdout.split("Options, best first:", 1)[0]
    line = next(x for x in table.splitlines() if "cudnn_gpu" in x)
    assert line.split()[0] == "MISSING" and "needs cuDNN 8.8.0: >= 5.0" in line, line
    said = " ".join(table.split())
    assert "cuDNN 8.8.0 for CUDA 11.x carries GPU code for compute capability 5.0 and newer only" in said
    assert "(read from NVIDIA's nvidia-cudnn-cu11 8.8.0 wheel; no support matrix of it was found)" in said
    # cuDNN 8.7.0 still carries sm_35: a K80 runs it
    ok = run_cli("plan", "tensorflow==2.12.0", *args, "--cudnn", "8.7.0")
    assert "cudnn_gpu" not in ok.stdout.split("Options, best first:", 1)[0]


def test_a_dockerfile_refused_on_a_k80_does_not_blame_deleted_tags(run_cli: RunCli) -> None:
    # jax 0.4.1's CUDA 11.8 build needs cuDNN >= 8.6: every published image that brings one carries cuDNN 8.9 or
    # newer, below which a K80 (sm_37) falls. Before, the refusal blamed NVIDIA's deleted tags, which hold only
    # CUDA before 11.0.3 and have nothing to do with a CUDA 11.8 build
    r = run_cli("plan", "jax[cuda]==0.4.1", "--no-detect", "--driver", "470.82.01", "--gpu", "Tesla K80",
                "--python", "3.10", "--format", "dockerfile")  # fmt: skip
    assert r.returncode == 2 and not r.stdout
    assert "no published nvidia/cuda image fits" in r.stderr and "deleted" not in r.stderr
    assert "do not run it on this host's GPU or driver: see `dnnresolve plan`" in r.stderr
    # a CUDA 10.0 build still hears why: NVIDIA deleted those tags
    r = run_cli("plan", "tensorflow-gpu==1.15.0", "--no-detect", "--driver", "470.82.01", "--gpu", "T4",
                "--python", "3.7", "--format", "dockerfile")  # fmt: skip
    assert r.returncode == 2 and "NVIDIA deleted the older tags" in r.stderr


def test_a_system_cudnn_9_11_fails_a_pascal_gpu(run_cli: RunCli) -> None:
    # NVIDIA's nvidia-cudnn-cu12 9.11.0.98 wheel: libcudnn_ops.so.9 and the others start at sm_75 (9.10.1.4 still
    # carries sm_50 in every library); JAX built for a local CUDA loads the system's cuDNN and needs it
    args = ("--no-detect", "--driver", "570.86.15", "--gpu", "GTX 1080", "--cuda", "12.8", "--python", "3.11")
    r = run_cli("plan", "jax[cuda12-local]==0.7.0", *args, "--cudnn", "9.11.0")
    table = r.stdout.split("Options, best first:", 1)[0]
    line = next(x for x in table.splitlines() if "cudnn_gpu" in x)
    assert line.split()[0] == "MISSING" and "needs cuDNN 9.11.0: >= 7.5" in line and line.split()[-1] == "6.1"
    assert "read from NVIDIA's nvidia-cudnn-cu12 9.11.0 wheel" in " ".join(table.split())
    ok = run_cli("plan", "jax[cuda12-local]==0.7.0", *args, "--cudnn", "9.10.2")
    assert "cudnn_gpu" not in ok.stdout.split("Options, best first:", 1)[0]


# jax 0.7.0's wheels require nvidia-cudnn-cu12>=9.8,<10.0 (its [[wheel_pins]] row, from pip's resolver report), and
# pip installs the newest release of a range: cuDNN 9.11 and later carry code for Turing (7.5) and newer only (read
# from NVIDIA's wheels; immich-app/immich PR 23110 pinned 9.10 after Pascal and Maxwell users broke on 9.14)
JAX_PASCAL = ("--no-detect", "--driver", "575.57.08", "--gpu", "6.1", "--python", "3.11")


def test_a_pascal_gpu_gets_the_cudnn_wheel_held_below_the_release_that_dropped_it(run_cli: RunCli) -> None:
    r = run_cli("plan", "jax[cuda12]==0.7.0", *JAX_PASCAL)
    assert r.returncode == 1 and not r.stderr, r.stderr  # a plan: not installed yet
    flat = " ".join(r.stdout.split())
    assert (
        "warn cudnn_gpu needs nvidia-cudnn-cu12<9.11" in flat
        and "cuDNN 9.10.2, which it also allows, supports 6.1" in flat
    )
    assert "pip installs the newest nvidia-cudnn-cu12 that jax 0.7.0 allows (<10.0,>=9.8)" in flat
    first = " ".join(_option_blocks(r.stdout)[0].split())
    assert "python -m pip install 'jax[cuda12]==0.7.0' 'nvidia-cudnn-cu12<9.11'" in first, first


def test_a_gpu_the_newest_cudnn_wheel_supports_gets_the_plain_command(run_cli: RunCli) -> None:
    r = run_cli(
        "plan", "jax[cuda12]==0.7.0", "--no-detect", "--driver", "575.57.08", "--gpu", "8.0", "--python", "3.11"
    )
    assert r.returncode == 1 and not r.stderr, r.stderr  # a plan: not installed yet
    assert "cudnn_gpu" not in r.stdout and "nvidia-cudnn-cu12<" not in r.stdout
    assert "python -m pip install 'jax[cuda12]==0.7.0'\n" in r.stdout


def test_check_of_a_requirements_file_names_the_cudnn_wheel_pin(run_cli: RunCli, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("jax[cuda12]==0.7.0\n")
    r = run_cli("check", str(req), *JAX_PASCAL)
    flat = " ".join(r.stdout.split())
    assert "requirements.txt:1" in flat and "add 'nvidia-cudnn-cu12<9.11' to the pip command" in flat, r.stdout


def test_a_system_cudnn_9_24_for_cuda_13_names_its_floor(run_cli: RunCli) -> None:
    # The matrix knew no CUDA 13 floor from cuDNN 9.23.1 on: the plan said nothing of cuDNN on a Volta GPU. NVIDIA's
    # nvidia-cudnn-cu13 9.24.0.43 wheel carries code for sm_75 and newer in every library.
    args = ("--no-detect", "--driver", "580.65.06", "--gpu", "7.0", "--cuda", "13.0", "--python", "3.12")
    r = run_cli("plan", "jax[cuda13-local]==0.11.1", *args, "--cudnn", "9.24.0")
    table = r.stdout.split("Options, best first:", 1)[0]
    line = next(x for x in table.splitlines() if "cudnn_gpu" in x)
    assert line.split()[0] == "MISSING" and "needs cuDNN 9.24.0: >= 7.5" in line and line.split()[-1] == "7.0"
    assert "read from NVIDIA's nvidia-cudnn-cu13 9.24.0 wheel" in " ".join(table.split())


def test_an_option_whose_pin_keeps_cudnn_does_not_say_cudnn_is_turned_off(run_cli: RunCli) -> None:
    # The option's own command holds the cuDNN wheel below 9.11, whose cuDNN supports sm_70: its title said "with
    # cuDNN turned off (nvidia-cudnn-cu12<9.11 (cuDNN 9.10.2) does not support sm_70)", the opposite.
    args = ("--no-detect", "--driver", "580.65.06", "--gpu", "7.0", "--cuda", "13.0", "--python", "3.12")
    r = run_cli("plan", "jax[cuda13-local]==0.11.1", *args, "--cudnn", "9.24.0")
    first = " ".join(_option_blocks(r.stdout)[0].split())
    assert "'nvidia-cudnn-cu12<9.11'" in first, first
    assert "turned off" not in first and "with nvidia-cudnn-cu12<9.11 beside it, whose cuDNN supports sm_70" in first
