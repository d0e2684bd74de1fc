"""`dnnresolve explain` as a user runs it: text, --file, stdin, --json, exit statuses, runtime flags."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunCli = Callable[..., CompletedProcess[str]]

CLASSIC = (
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5005 (compatibility version "
    "5000) but source was compiled with 5103 (compatibility version 5100).  If using a binary install, upgrade your "
    "CuDNN library to match."
)
# tensorflow/tensorflow#3922: a TensorFlow built for cuDNN 5.0 that loaded 5.1
REVERSED = (
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5103 (compatibility version "
    "5100) but source was compiled with 5005 (compatibility version 5000)."
)


def test_the_classic_message_is_decoded_like_the_design_says(run_cli: RunCli) -> None:
    r = run_cli("explain", CLASSIC, env={"COLUMNS": "200"})  # no line wrapped: the lines as the design has them
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert "cuDNN version mismatch (TensorFlow) - line 1" in out
    assert "cuDNN 5.0.5  (5005 = 5*1000 + 0*100 + 5; compatibility version 5000 = the 5.0 series)" in out
    assert "cuDNN 5.1.3  (5103 = 5*1000 + 1*100 + 3; compatibility version 5100 = the 5.1 series)" in out
    assert "this TensorFlow needs the same major.minor series at run time: 5.1.x" in out
    assert "1. load a cuDNN 5.1.x build: `module load cudnn/5.1` if your site has one" in out
    assert "Source: https://github.com/tensorflow/tensorflow/issues/3225" in out


def test_json_contract(run_cli: RunCli, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(
        "epoch 1\n"
        "2019-01-18 21:14:06.030010: E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library:"
        " 7.5.0 but source was compiled with: 7.6.5.\n"
        "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize\n"
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n",
        encoding="utf-8",
    )
    r = run_cli("explain", "--file", str(log), "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["lines_read"] == 4 and doc["input"] == str(log)
    first, second = doc["diagnoses"]
    assert (first["kind"], first["framework"], first["found"], first["line"]) == (
        "driver_too_old",
        "pytorch",
        {"cuda": "10.1"},
        4,
    )
    assert second["kind"] == "cudnn_version_mismatch" and second["framework"] == "tensorflow"
    assert second["found"] == {"cudnn": "7.5.0"} and second["expected"] == {"cudnn": "7.6.5"}
    assert second["line"] == 2 and second["source"].startswith("https://")
    assert [(c["id"], c["line"]) for c in second["consequences"]] == [("tf-conv-algorithm", 3)]
    for d in doc["diagnoses"]:
        assert set(d) >= {"kind", "framework", "found", "expected", "summary", "explanation", "fixes", "line", "source"}
        assert d["fixes"] and all(isinstance(s, str) for s in d["fixes"])


def test_standard_input_and_no_known_error(run_cli: RunCli) -> None:
    r = run_cli("explain", input="RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert r.returncode == 1 and "no GPU code for this GPU's architecture (PyTorch)" in r.stdout
    r = run_cli("explain", input="Traceback (most recent call last):\nKeyError: 'weights'\n")
    assert r.returncode == 1
    assert "No known CUDA, cuDNN or driver error in standard input (2 lines read)" in r.stdout
    r = run_cli("explain", "--json", "libGL.so.1: cannot open shared object file: No such file or directory")
    assert r.returncode == 1 and json.loads(r.stdout)["diagnoses"] == []  # not a GPU library: no guess


def test_unreadable_input_is_exit_2_with_one_line(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("explain", "--file", str(tmp_path / "missing.log"))
    assert r.returncode == 2
    assert r.stderr.strip() == f"dnnresolve explain: error: {tmp_path / 'missing.log'}: no such file"
    r = run_cli("explain", "--file", str(tmp_path))
    assert r.returncode == 2 and "is a directory" in r.stderr
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x00\x01\x02" * 100)
    r = run_cli("explain", "--file", str(binary))
    assert r.returncode == 2 and "not a text file" in r.stderr
    r = run_cli("explain", "some text", "--file", str(binary))
    assert r.returncode == 2 and "not both" in r.stderr
    r = run_cli("explain", "--cudnn", "five", CLASSIC)
    assert r.returncode == 2 and r.stderr == "dnnresolve explain: error: --cudnn 'five': not a version: 'five'\n"


def test_a_powershell_log_in_utf16_is_read(run_cli: RunCli, tmp_path: Path) -> None:
    log = tmp_path / "ps.log"
    text = "W dso_loader.cc:64] Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found\r\n"
    log.write_bytes(text.encode("utf-16"))
    r = run_cli("explain", "--file", str(log), "--json")
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["expected"] == {"library": "cudnn64_8.dll", "cudnn": "8"}
    assert any("PATH" in step for step in d["fixes"])


def test_runtime_flags_and_the_matrix_make_fixes_concrete(run_cli: RunCli) -> None:
    # the matrix has tensorflow-gpu 1.0.0, built for cuDNN 5.1: the release that fits the cuDNN loaded here
    r = run_cli("explain", "--json", REVERSED)
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["fixes"] == [
        "load a cuDNN 5.0.x build: `module load cudnn/5.0` if your site has one (`module avail cudnn`)",
        "or put a cuDNN 5.0.x library first on LD_LIBRARY_PATH (its lib64 directory), ahead of cuDNN 5.1",
        "or install a TensorFlow release built for cuDNN 5.1: "
        "tensorflow-gpu==1.2.0, tensorflow-gpu==1.1.0, tensorflow-gpu==1.0.0",
    ]
    r = run_cli("explain", "--json", "--cudnn", "5.0.5", "--driver", "375.26", REVERSED)
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["fixes"][0] == "the cuDNN 5.0.5 you named fits: make sure it is the one loaded"
    r = run_cli("explain", "--target", "profile.json", REVERSED)
    assert r.returncode == 2 and r.stderr == "dnnresolve explain: error: profile.json: no such file\n"


def test_target_profile_names_the_cudnn_on_that_machine(run_cli: RunCli, tmp_path: Path) -> None:
    from .detect.machines import make_machine

    root = make_machine(tmp_path, "k20m")
    detected = run_cli("detect", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    profile = tmp_path / "k20m.json"
    profile.write_text(detected.stdout)
    classic = REVERSED.replace("5103 (compatibility version 5100) but source was compiled with 5005", "X").replace(
        "X (compatibility version 5000)",
        "5005 (compatibility version 5000) but source was compiled with 5103 (compatibility version 5100)",
    )
    r = run_cli("explain", "--json", "--target", str(profile), classic)
    assert r.returncode == 1, r.stderr
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["found"] == {"cudnn": "5.0.5"} and d["expected"] == {"cudnn": "5.1.3"}
    # The installed tensorflow-gpu 1.0.0 goes through the planner: its first option leads the fixes.
    assert d["fixes"][0] == (
        "for the installed tensorflow-gpu 1.0.0: use the cuDNN 5.1.10 already installed in /opt/apps/cudnn/5.1: "
        '`export LD_LIBRARY_PATH="/opt/apps/cudnn/5.1/lib64:$LD_LIBRARY_PATH"`'
    )
    assert not any(f.startswith("put cuDNN 5.1.10 first") for f in d["fixes"])  # not said twice


def test_the_driver_table_says_what_a_given_driver_runs(run_cli: RunCli) -> None:
    r = run_cli(
        "explain",
        "--json",
        "--driver",
        "375.26",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 8000).",
    )
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["found"] == {"cuda": "8.0"}
    # the planner's pick for a machine with that driver leads (as `plan torch --driver 375.26` gives it)
    assert d["fixes"][0].startswith("for this machine (driver 375.26 (--driver)): use torch 1.0.0 instead")
    assert d["fixes"][1].startswith("driver 375.26 runs CUDA 8.0 at most")


def test_onnxruntime_naming_its_cuda_and_cudnn_majors_is_decoded(run_cli: RunCli) -> None:
    # the warning onnxruntime-gpu 1.19 printed when CUDA 12 / cuDNN 9 were not found (onnxruntime issue 21769)
    text = (
        "2024-08-16 15:41:33.8037106 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
        "onnxruntime::python::CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN "
        "9.* and CUDA 12.*, and the latest MSVC runtime. Please install all dependencies as mentioned in the GPU "
        "requirements page"
    )
    r = run_cli("explain", "--json", "--no-detect", input=text)
    assert r.returncode == 1, r.stderr
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert (d["kind"], d["framework"]) == ("missing_library", "onnxruntime")
    assert d["expected"] == {"cuda": "12.x", "cudnn": "9.x"}
    assert d["fixes"][0].startswith("install CUDA 12 and cuDNN 9 as wheels in this environment, keeping your release: ")
    assert "or install CUDA 12.x and cuDNN 9.x and put their library folders on LD_LIBRARY_PATH" in d["fixes"][1]
    text_out = run_cli("explain", "--no-detect", input=text).stdout
    assert "needs                CUDA 12.x and cuDNN 9.x libraries, found by the loader" in text_out
    # told the machine's CUDA and cuDNN, it names the newest PyPI build made for them first
    r = run_cli("explain", "--json", "--no-detect", "--cuda", "11.8", "--cudnn", "8.9.7", input=text)
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["fixes"][0] == (
        "this machine has CUDA 11.8 and cuDNN 8.9.7: onnxruntime-gpu 1.18.1 is built for them "
        "(python -m pip install onnxruntime-gpu==1.18.1)"
    )


def test_mxnets_cudnn_warning_says_whether_it_matters(run_cli: RunCli) -> None:
    # MXNet only warns when the cuDNN it loads differs from its build; a newer minor of the same major fits
    newer = "cuDNN lib mismatch: linked-against version 8200 != compiled-against version 8100."
    older = "cuDNN lib mismatch: linked-against version 8005 != compiled-against version 8101."
    (d,) = json.loads(run_cli("explain", "--json", "--no-detect", newer).stdout)["diagnoses"]
    assert d["fixes"][0] == (
        "nothing to fix: cuDNN 8.2.0 fits this build; to quiet the warning, export MXNET_CUDNN_LIB_CHECKING=0"
    )
    assert not [f for f in d["fixes"] if "module load" in f]
    (d,) = json.loads(run_cli("explain", "--json", "--no-detect", older).stdout)["diagnoses"]
    assert d["fixes"][0] == "load cuDNN 8.1 or a newer 8.x: `module load cudnn/8.1` if your site has one"
    assert not [f for f in d["fixes"] if "MXNET_CUDNN_LIB_CHECKING" in f]
    assert "cuDNN 8.0.5 does not fit a build for 8.1.1" in run_cli("explain", "--no-detect", older).stdout


def _site(tmp_path: Path, *dists: tuple[str, ...]) -> Path:
    """A machine root whose Python has these distributions installed: (name, version, Requires-Dist lines...), the
    metadata pip leaves."""
    root = tmp_path / "machine"
    site = root / "usr/local/lib/python3.11/site-packages"
    for name, version, *requires in dists:
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        lines = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
        lines += [f"Requires-Dist: {r}\n" for r in requires]
        (info / "METADATA").write_text("".join(lines))
    return root


def _explain_on_an_a100(run_cli: RunCli, root: Path, text: str) -> dict:  # type: ignore[type-arg]
    flags = ("--driver", "550.54.15", "--gpu", "NVIDIA A100-SXM4-80GB", "--python", "3.11", "--os", "linux")
    r = run_cli("explain", "--json", "--root", str(root), *flags, text, env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    (d,) = json.loads(r.stdout)["diagnoses"]
    return d  # type: ignore[no-any-return]


JAX_CPU = (
    "WARNING:2025-05-27 20:22:28,949:jax._src.xla_bridge:791: An NVIDIA GPU may be present on this machine, but a "
    "CUDA-enabled jaxlib is not installed. Falling back to cpu."
)


def test_a_cpu_build_of_jax_gets_the_cuda_build_of_the_release_installed(run_cli: RunCli, tmp_path: Path) -> None:
    d = _explain_on_an_a100(run_cli, _site(tmp_path, ("jax", "0.6.1"), ("jaxlib", "0.6.1")), JAX_CPU)
    assert (d["id"], d["kind"], d["framework"]) == ("jax-cpu-build", "no_cuda_build", "jax")
    assert d["fixes"][0] == (
        "for the installed jax 0.6.1: install its CUDA build: `python -m pip install 'jax[cuda12]==0.6.1'`"
    )
    # the CUDA plugin is there: it failed to load, and installing it again is no answer
    plugin = (
        "jax-cuda12-plugin",
        "0.6.1",
        "jax-cuda12-pjrt==0.6.1",
        'nvidia-cudnn-cu12<10.0,>=9.8; extra == "with-cuda"',
    )
    root = _site(tmp_path / "p", ("jax", "0.6.1"), ("jaxlib", "0.6.1"), plugin)
    d = _explain_on_an_a100(run_cli, root, JAX_CPU)
    assert d["fixes"][0].startswith("see what is installed: `pip list | grep -i -e jax -e nvidia`")
    assert not any(f.startswith("for the installed") for f in d["fixes"])


def test_jax_without_jaxlib_and_a_cpu_torch_get_their_cuda_builds(run_cli: RunCli, tmp_path: Path) -> None:
    # before 0.4.30 a plain jax installs no jaxlib: the CUDA build is an extra on jax's find-links page
    d = _explain_on_an_a100(
        run_cli, _site(tmp_path, ("jax", "0.4.25")), "ModuleNotFoundError: jax requires jaxlib to be installed."
    )
    assert d["id"] == "jax-needs-jaxlib" and d["fixes"][0] == (
        "for the installed jax 0.4.25: install its CUDA build: `python -m pip install 'jax[cuda12_pip]==0.4.25' "
        "--find-links https://storage.googleapis.com/jax-releases/jax_cuda_releases.html`"
    )
    # pip keeps torch 2.1.0+cpu for torch==2.1.0: the CPU build goes first
    root = _site(tmp_path / "t", ("torch", "2.1.0+cpu"))
    d = _explain_on_an_a100(run_cli, root, "AssertionError: Torch not compiled with CUDA enabled")
    assert d["kind"] == "no_cuda_build" and d["fixes"][0] == (
        "for the installed torch 2.1.0+cpu: install its CUDA build: `pip uninstall -y torch`; then "
        "`python -m pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 "
        "--index-url https://download.pytorch.org/whl/cu121`"
    )
    # nothing installed to go by: the catalog's steps
    r = run_cli("explain", "--json", "--no-detect", "AssertionError: Torch not compiled with CUDA enabled")
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["fixes"][0].startswith("check the build:") and len(d["fixes"]) == 2


def test_jax_and_jaxlib_of_different_releases_are_decoded(run_cli: RunCli) -> None:
    def one(text: str) -> dict:  # type: ignore[type-arg]
        (d,) = json.loads(run_cli("explain", "--json", "--no-detect", text).stdout)["diagnoses"]
        return d  # type: ignore[no-any-return]

    d = one("RuntimeError: jaxlib is version 0.3.25, but this version of jax requires version >= 0.4.7.")
    assert d["id"] == "jaxlib-too-old-for-jax" and d["kind"] == "other"
    assert "(at least 0.4.7)" in d["fixes"][0] and "accepts jaxlib 0.3.25" in d["fixes"][1]
    d = one("ValueError: jaxlib is version 0.1.69, but this version of jax requires version 0.1.74.")  # older jax
    assert d["id"] == "jaxlib-too-old-for-jax" and "(at least 0.1.74)" in d["fixes"][0]
    d = one(
        "RuntimeError: jaxlib version 0.4.30+cuda12 is newer than and incompatible with jax version 0.4.25. "
        "Please update your jax and/or jaxlib packages."
    )
    assert d["id"] == "jaxlib-newer-than-jax" and d["fixes"][0].startswith(
        "upgrade jax to the jaxlib's release, 0.4.30,"
    )
    assert "`dnnresolve plan jax==0.4.30`" in d["fixes"][0] and "jax 0.4.25's release" in d["fixes"][1]


def test_a_cuda_plugin_of_another_release_gets_the_extra_pinned_to_jax(run_cli: RunCli, tmp_path: Path) -> None:
    # google-deepmind/torax#1369: the plugin calls what its jaxlib does not have
    text = (
        '  File "/venv/lib/python3.13/site-packages/jax_plugins/xla_cuda12/__init__.py", line 103, in initialize\n'
        "    triton.register_compilation_handler(\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "AttributeError: module 'jax._src.lib.triton' has no attribute 'register_compilation_handler'"
    )
    plugin = (
        "jax-cuda12-plugin",
        "0.5.0",
        "jax-cuda12-pjrt==0.5.0",
        'nvidia-cudnn-cu12<10.0,>=9.1; extra == "with_cuda"',
    )
    d = _explain_on_an_a100(run_cli, _site(tmp_path, ("jax", "0.6.1"), ("jaxlib", "0.6.1"), plugin), text)
    assert d["id"] == "jax-plugin-mismatch" and d["fixes"][0] == (
        "for the installed jax 0.6.1: install its CUDA build: `python -m pip install 'jax[cuda12]==0.6.1'`"
    )
    # without the installed versions: the catalog's steps, with the plugin's CUDA major filled in
    (d,) = json.loads(run_cli("explain", "--json", "--no-detect", text).stdout)["diagnoses"]
    assert d["fixes"][0].endswith("jaxlib, jax-cuda12-plugin and jax-cuda12-pjrt must be one release")
