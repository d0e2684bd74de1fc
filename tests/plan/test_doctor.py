"""`doctor` on copies of real machines: the installed framework checked against what would load."""

from __future__ import annotations

import json
from pathlib import Path

from ..detect.machines import MACHINES, make_machine


def test_doctor_on_the_k20m_node_finds_the_wrong_cudnn_and_the_right_one_on_disk(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "k20m")
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["installed_frameworks"] == ["tensorflow-gpu==1.0.0"]
    req = data["requirements"][0]
    assert req["gap"] == ["cudnn"]
    first = req["options"][0]
    # Under --root, paths are the other machine's own: the command is for that machine's shell.
    assert first["steps"][0]["command"] == 'export LD_LIBRARY_PATH="/opt/apps/cudnn/5.1/lib64:$LD_LIBRARY_PATH"'
    assert all(s["kind"] != "pip" for s in first["steps"])  # it is installed already

    text = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0"}).stdout
    assert "use the cuDNN 5.1.10 already installed" in text


def test_doctor_with_nothing_installed(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "nogpu")
    r = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 0, r.stderr
    assert "No GPU framework" in r.stdout


def _install_torch(root: Path, site: str, fatbin: bytes) -> None:
    """torch as pip lays it out: its libraries under torch/lib, named in the dist-info's RECORD."""
    from ..test_fatbin import elf64

    site_dir = root / site.lstrip("/")
    lib = site_dir / "torch" / "lib"
    lib.mkdir(parents=True)
    (lib / "libtorch_cuda.so").write_bytes(elf64({".text": b"\x90" * 256, ".nv_fatbin": fatbin}))
    (lib / "libtorch_cpu.so").write_bytes(elf64({".text": b"\x90" * 256}))
    (lib / "libcudnn.so.9").write_bytes(elf64({".nv_fatbin": fatbin}))  # NVIDIA's code, not torch's
    info = site_dir / "torch-2.7.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.0\n")
    files = ["torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cpu.so", "torch/lib/libcudnn.so.9", "torch/__init__.py"]
    (info / "RECORD").write_text("".join(f"{f},sha256=x,1\n" for f in files) + "torch-2.7.0.dist-info/RECORD,,\n")


def test_doctor_reads_the_gpu_code_the_installed_libraries_carry(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the K20m node (compute capability 3.5) with a torch whose libraries carry sm_75 sm_80 sm_90a sm_100
    # and PTX compute_90: nothing there runs on Kepler
    root = make_machine(tmp_path, "k20m")
    kernels = (Path(__file__).resolve().parents[1] / "fixtures" / "fatbin" / "kernels.fatbin").read_bytes()
    _install_torch(root, "/usr/lib64/python3.6/site-packages", kernels)
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    [torch] = [f for f in data["gpu_code"] if f["package"] == "torch"]
    assert torch["code"] == "sm_75 sm_80 sm_90a sm_100 + PTX compute_90"
    assert torch["libraries"] == 1  # libcudnn.so.9 is NVIDIA's
    assert torch["gpu"] == "Tesla K20m" and torch["compute_capability"] == "3.5"
    assert torch["status"] == "fail" and "no kernel image is available" in torch["reason"]
    # the TensorFlow of this fixture has no RECORD: said, not guessed
    assert any("tensorflow-gpu 1.0.0: no file list" in n for n in data["gpu_code_notes"])
    text = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0", "COLUMNS": "200"}).stdout
    assert "GPU code in the installed libraries (read from their fat binaries):" in text
    assert "MISSING  torch 2.7.0 on Tesla K20m (3.5): sm_75 sm_80 sm_90a sm_100 + PTX compute_90 (1 library)" in text


def test_doctor_finds_a_cpu_build_and_ptx_only_code(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "k20m")
    _install_torch(root, "/usr/lib64/python3.6/site-packages", b"")  # no fat binary at all: a CPU build
    data = json.loads(run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"}).stdout)
    [torch] = [f for f in data["gpu_code"] if f["package"] == "torch"]
    assert torch["code"] == "" and torch["status"] == "fail"
    assert torch["reason"].startswith("none of its 2 libraries carries GPU code: a CPU-only build")


def test_each_gpu_gets_its_verdict_from_the_installed_code() -> None:
    from dnnresolve.doctor import code_findings
    from dnnresolve.machine import Gpu, InstalledCode, Runtime
    from dnnresolve.solve.results import Status
    from dnnresolve.versions import ComputeCapability as CC

    code = InstalledCode(
        "torch", "2.7.0+cu126", (CC.parse("8.0"), CC.parse("9.0")), (), (CC.parse("9.0"),), ("lib.so",), 3
    )
    gpus = [Gpu("A10", CC.parse("8.6")), Gpu("RTX 5090", CC.parse("12.0")), Gpu("T4", CC.parse("7.5"))]
    found = {f.gpu: f for f in code_findings([code], Runtime(os="linux", gpus=gpus))}
    assert found["A10"].status is Status.OK and found["A10"].reason == "its SASS runs on sm_86"  # sm_80 runs on 8.6
    assert found["RTX 5090"].status is Status.WARN and "PTX (compute_90)" in found["RTX 5090"].reason
    assert found["T4"].status is Status.FAIL and "`dnnresolve plan torch --gpu 7.5`" in found["T4"].reason
    [nothing] = code_findings([code], Runtime(os="linux"))
    assert nothing.status is Status.UNKNOWN and nothing.gpu == ""


def test_a_fifo_named_as_a_library_does_not_hang_doctor(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import os

    root = make_machine(tmp_path, "k20m")
    _install_torch(root, "/usr/lib64/python3.6/site-packages", b"")
    lib = root / "usr/lib64/python3.6/site-packages/torch/lib/libtorch_cuda.so"
    lib.unlink()
    os.mkfifo(lib)
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})  # run_cli times out at 120 s
    [torch] = [f for f in json.loads(r.stdout)["gpu_code"] if f["package"] == "torch"]
    assert torch["reason"].startswith("none of its 2 libraries carries GPU code")  # the FIFO is not read


def test_a_conda_packages_libraries_come_from_its_conda_record(tmp_path: Path) -> None:
    from dnnresolve.detect.context import ProbeContext
    from dnnresolve.detect.gpucode import probe
    from dnnresolve.machine import InstalledPackage

    from ..test_fatbin import elf64

    kernels = (Path(__file__).resolve().parents[1] / "fixtures" / "fatbin" / "kernels.fatbin").read_bytes()
    prefix = tmp_path / "opt" / "conda"
    lib = prefix / "lib" / "libonnxruntime_providers_cuda.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(elf64({".nv_fatbin": kernels}))
    record = prefix / "conda-meta" / "onnxruntime-gpu-1.16.0-py310_0.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"name": "onnxruntime-gpu", "files": ["lib/libonnxruntime_providers_cuda.so"]}))
    ctx = ProbeContext(str(tmp_path), {}, 5.0, False)
    pkg = InstalledPackage("onnxruntime-gpu", "1.16.0", "/opt/conda/conda-meta/onnxruntime-gpu-1.16.0-py310_0.json")
    [code] = probe(ctx, [pkg], {"onnxruntime-gpu"})
    assert code.libraries == ("/opt/conda/lib/libonnxruntime_providers_cuda.so",)
    assert [str(s) for s in code.sm] == ["7.5", "8.0", "10.0"] and [str(e) for e in code.sm_exact] == ["9.0"]
    assert [str(p) for p in code.ptx] == ["9.0"]
    record.write_text("{not json")
    assert probe(ctx, [pkg], {"onnxruntime-gpu"}) == [] and any("no file list" in n for n in ctx.notes)


def _dist(root: Path, name: str, version: str, *requires: str) -> None:
    """A distribution's metadata as pip leaves it in the machine's site-packages."""
    info = root / "usr/local/lib/python3.11/site-packages" / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", *(f"Requires-Dist: {r}\n" for r in requires)]
    (info / "METADATA").write_text("".join(lines))


def _gpu(root: Path, model: str, bus: str = "0000:17:00.0") -> None:
    """The driver's file for one GPU, as /proc/driver/nvidia lays it out (the K20m node's, with another model)."""
    info = root / "proc/driver/nvidia/gpus" / bus / "information"
    info.parent.mkdir(parents=True)
    k20m = (MACHINES / "k20m/proc/driver/nvidia/gpus/0000:03:00.0/information").read_text()
    info.write_text(k20m.replace("Tesla K20m", model).replace("0000:03:00.0", bus))


def test_doctor_names_a_cpu_build_on_a_machine_with_gpus(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # driver 570.86.15 and an RTX 5880 Ada; jax 0.6.1 installed plain: its CPU jaxlib only
    root = make_machine(tmp_path, "modern")
    _gpu(root, "NVIDIA RTX 5880 Ada Generation")
    _dist(root, "jax", "0.6.1", "jaxlib<=0.6.1,>=0.6.1")
    _dist(root, "jaxlib", "0.6.1")
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    [gap] = json.loads(r.stdout)["cuda_builds"]
    assert (gap["package"], gap["version"], gap["kind"]) == ("jax", "0.6.1", "cpu-build")
    assert gap["fix"] == "`python -m pip install 'jax[cuda12]==0.6.1'`"
    text = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0", "COLUMNS": "200"}).stdout
    assert (
        "CPU build: jax 0.6.1 is its CPU build (jaxlib 0.6.1, no CUDA plugin or CUDA build installed): "
        "the NVIDIA RTX 5880 Ada Generation goes unused"
    ) in text
    assert "ok jax==0.6.1" not in text and "ok jaxlib" not in text
    # with the CUDA plugin beside it, the GPU form is there
    _dist(
        root,
        "jax-cuda12-plugin",
        "0.6.1",
        "jax-cuda12-pjrt==0.6.1",
        'nvidia-cudnn-cu12<10.0,>=9.8; extra == "with-cuda"',
    )
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert json.loads(r.stdout)["cuda_builds"] == []


def test_doctor_names_jax_without_jaxlib_and_a_cpu_torch(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "modern")
    _gpu(root, "NVIDIA RTX 5880 Ada Generation")
    _dist(root, "jax", "0.4.25")  # before 0.4.30 jax does not require jaxlib
    _dist(root, "torch", "2.1.0+cpu")
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    gaps = {g["package"]: g for g in json.loads(r.stdout)["cuda_builds"]}
    assert gaps["jax"]["kind"] == "no-runtime" and "`import jax` fails" in gaps["jax"]["reason"]
    assert gaps["jax"]["fix"].startswith("`python -m pip install 'jax[cuda12_pip]==0.4.25' --find-links https://")
    assert gaps["torch"]["kind"] == "cpu-build" and "+cpu" in gaps["torch"]["reason"]
    assert gaps["torch"]["fix"].startswith("`pip uninstall -y torch`; then `python -m pip install torch==2.1.0")
    # jax without jaxlib cannot run on a machine without a GPU either; the CPU torch is its right build there
    root = make_machine(tmp_path / "cpu", "nogpu")
    _dist(root, "jax", "0.4.25")
    _dist(root, "torch", "2.1.0+cpu")
    gaps = json.loads(run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"}).stdout)[
        "cuda_builds"
    ]
    assert [(g["package"], g["kind"]) for g in gaps] == [("jax", "no-runtime")]


def test_doctor_names_a_cuda_plugin_of_another_release(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # `pip install -U jax` left the CUDA plugin of an older release behind: it does not load, JAX runs on the CPU
    root = make_machine(tmp_path, "modern")
    _gpu(root, "NVIDIA RTX 5880 Ada Generation")
    _dist(root, "jax", "0.6.1", "jaxlib<=0.6.1,>=0.6.1")
    _dist(root, "jaxlib", "0.6.1")
    _dist(
        root,
        "jax-cuda12-plugin",
        "0.5.0",
        "jax-cuda12-pjrt==0.5.0",
        'nvidia-cudnn-cu12<10.0,>=9.1; extra == "with_cuda"',
    )
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    [gap] = json.loads(r.stdout)["cuda_builds"]
    assert gap["kind"] == "plugin-mismatch" and gap["fix"] == "`python -m pip install 'jax[cuda12]==0.6.1'`"
    assert "jax-cuda12-plugin 0.5.0, is not of its jaxlib's release (0.6.1)" in gap["reason"]
