"""Detection against copies of real machines' files (``--root``): no program runs."""

from __future__ import annotations

from pathlib import Path

from dnnresolve.detect import detect_runtime
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion

from .machines import K20M_ENV, MACHINES


def test_k20m_node_driver_gpu_cuda_and_both_cudnn_modules() -> None:
    rt = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    assert rt.driver == DriverVersion.parse("375.26")
    assert rt.sources["driver"] == "/proc/driver/nvidia/version"
    assert [g.name for g in rt.gpus] == ["Tesla K20m"]
    assert rt.gpus[0].compute_capability == ComputeCapability.parse("3.5")  # from the matrix's GPU table
    assert rt.gpus[0].found_in.startswith("/proc/driver/nvidia/gpus/0000:03:00.0/information")
    assert [(str(c.version), c.path) for c in rt.cuda] == [("8.0.61", "/usr/local/cuda-8.0")]
    assert rt.cuda[0].found_in.startswith("/usr/local/cuda-8.0/version.txt")
    cudnn = {str(c.version): c for c in rt.cudnn}
    assert set(cudnn) == {"5.0.5", "5.1.10"}
    assert cudnn["5.0.5"].path == "/opt/apps/cudnn/5.0" and cudnn["5.0.5"].loads_first
    assert "loads first for libcudnn.so.5 (LD_LIBRARY_PATH" in cudnn["5.0.5"].found_in
    assert cudnn["5.1.10"].path == "/opt/apps/cudnn/5.1" and not cudnn["5.1.10"].loads_first
    assert "module cudnn/5.1" in cudnn["5.1.10"].found_in
    assert rt.active_cudnn is not None and rt.active_cudnn.version == CudnnVersion.parse("5.0.5")


def test_k20m_modules_loaded_and_available_from_modulepath_files() -> None:
    rt = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    mods = {m.full: m for m in rt.modules}
    assert set(mods) == {"cuda/8.0", "cudnn/5.0", "cudnn/5.1"}
    assert mods["cudnn/5.0"].loaded and mods["cuda/8.0"].loaded and not mods["cudnn/5.1"].loaded
    assert (mods["cudnn/5.1"].name, mods["cudnn/5.1"].version) == ("cudnn", "5.1")
    assert mods["cudnn/5.1"].modulefile == "/opt/apps/modulefiles/cudnn/5.1.lua"


def test_k20m_python_frameworks_and_glibc_from_files() -> None:
    rt = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    assert rt.python == PythonVersion.parse("3.6")
    assert rt.glibc == "2.17"
    names = {p.name: p.version for p in rt.packages}
    assert names == {"tensorflow-gpu": "1.0.0"}  # numpy is not a framework


def test_loading_another_cudnn_module_changes_which_loads_first() -> None:
    env = dict(
        K20M_ENV,
        LD_LIBRARY_PATH="/opt/apps/cudnn/5.1/lib64:/usr/local/cuda-8.0/lib64",
        LOADEDMODULES="cuda/8.0:cudnn/5.1",
    )
    rt = detect_runtime(str(MACHINES / "k20m"), env, timeout=2)
    first = [str(c.version) for c in rt.cudnn if c.loads_first]
    assert first == ["5.1.10"]


def test_modern_venv_pip_wheels_and_system_installs() -> None:
    env = {"VIRTUAL_ENV": "/home/user/venv", "PATH": "/home/user/venv/bin:/usr/bin:/bin"}
    rt = detect_runtime(str(MACHINES / "modern"), env, timeout=2)
    assert rt.driver == DriverVersion.parse("570.86.15")
    assert rt.sources["driver"] == "/sys/module/nvidia/version"
    assert rt.python == PythonVersion.parse("3.11.9")
    assert rt.sources["python"] == "/home/user/venv/pyvenv.cfg"
    site = "/home/user/venv/lib/python3.11/site-packages"
    pkgs = {p.name: p for p in rt.packages}
    assert pkgs["torch"].version == "2.4.0" and pkgs["torch"].location == site  # it requires nvidia-* wheels
    assert pkgs["nvidia-cudnn-cu12"].version == "9.1.0.70"
    assert "requests" not in pkgs
    cudnn = {(str(c.version), c.path) for c in rt.cudnn}
    assert cudnn == {
        ("9.1.0", f"{site}/nvidia/cudnn"),
        ("9.0.0", "/usr/local/cuda-12.4"),
        ("8.9.7", "/usr"),
    }
    pip = next(c for c in rt.cudnn if c.path.endswith("nvidia/cudnn"))
    assert pip.found_in.startswith("pip nvidia-cudnn-cu12 9.1.0.70")
    cuda = [(str(c.version), c.path) for c in rt.cuda]
    assert cuda == [("12.4.127", "/usr/local/cuda-12.4"), ("12.1.105", f"{site}/nvidia/cuda_runtime")]
    assert rt.cuda[0].found_in.startswith("/usr/local/cuda-12.4/version.json")


def test_conda_env_packages_and_torch_build_tag() -> None:
    env = {"CONDA_PREFIX": "/opt/conda/envs/dl", "CONDA_DEFAULT_ENV": "dl", "PATH": "/opt/conda/envs/dl/bin:/usr/bin"}
    rt = detect_runtime(str(MACHINES / "conda"), env, timeout=2)
    assert (rt.conda_prefix, rt.conda_env) == ("/opt/conda/envs/dl", "dl")
    assert rt.python == PythonVersion.parse("3.10.13")  # from conda-meta/python-3.10.13-*.json
    assert [(str(c.version), c.path) for c in rt.cuda] == [("11.8.0", "/opt/conda/envs/dl")]
    assert "conda cudatoolkit 11.8.0" in rt.cuda[0].found_in
    assert [(c.version, c.path) for c in rt.cudnn] == [(CudnnVersion.parse("8.9.2"), "/opt/conda/envs/dl")]
    assert "conda cudnn 8.9.2.26" in rt.cudnn[0].found_in
    assert {p.name: p.version for p in rt.packages} == {"torch": "2.1.0+cu118"}


def test_wsl_is_recognised_without_kernel_module_files() -> None:
    rt = detect_runtime(str(MACHINES / "wsl"), {}, timeout=2)
    assert rt.system == "wsl"
    assert rt.sources["system"] == "/usr/lib/wsl/lib"
    assert rt.driver is None
    assert any("Windows host" in n for n in rt.notes)


def test_jetson_l4t_release_cuda_and_debian_style_cudnn() -> None:
    rt = detect_runtime(str(MACHINES / "jetson"), {}, timeout=2)
    assert rt.system == "jetson"
    assert any("L4T 32.7.1" in n for n in rt.notes)
    assert [str(c.version) for c in rt.cuda] == ["10.2.300"]
    assert [(str(c.version), c.path) for c in rt.cudnn] == [("8.2.1", "/usr")]
    assert not any("no NVIDIA driver found" in n for n in rt.notes)  # Jetson has no discrete driver


def test_machine_without_gpu_reports_nothing_and_says_why() -> None:
    rt = detect_runtime(str(MACHINES / "nogpu"), {}, timeout=2)
    assert (rt.driver, rt.gpus, rt.cuda, rt.cudnn) == (None, [], [], [])
    assert any("no NVIDIA driver found" in n for n in rt.notes)


def test_root_paths_in_environment_are_read_under_root(tmp_path: Path) -> None:
    # CUDA_HOME names a path on the target machine: read under --root, reported as the target's path.
    rt = detect_runtime(str(MACHINES / "k20m"), {"CUDA_HOME": "/usr/local/cuda"}, timeout=2)
    assert rt.cuda[0].path == "/usr/local/cuda-8.0"
    assert "$CUDA_HOME" in rt.cuda[0].found_in
    assert CudaVersion.parse("8.0.61") == rt.cuda[0].version
