"""Fixture machines: copies of real machines' files, and the environments their users have."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MACHINES = FIXTURES / "machines"
BIN = FIXTURES / "bin"

# The K20m node as a user sees it after `module load cuda/8.0 cudnn/5.0` (the environment Lmod leaves).
K20M_ENV = {
    "PATH": "/usr/local/cuda-8.0/bin:/usr/bin:/bin",
    "LD_LIBRARY_PATH": "/opt/apps/cudnn/5.0/lib64:/usr/local/cuda-8.0/lib64",
    "CPATH": "/opt/apps/cudnn/5.0/include",
    "CUDA_HOME": "/usr/local/cuda-8.0",
    "CUDNN_ROOT": "/opt/apps/cudnn/5.0",
    "MODULEPATH": "/opt/apps/modulefiles",
    "LOADEDMODULES": "cuda/8.0:cudnn/5.0",
    "_LMFILES_": "/opt/apps/modulefiles/cuda/8.0.lua:/opt/apps/modulefiles/cudnn/5.0.lua",
}


def make_machine(tmp_path: Path, name: str, programs: dict[str, str] | None = None) -> Path:
    """A private copy of a fixture machine; ``programs`` puts fixture scripts into it:
    {"k20m/nvidia-smi": "/usr/bin"} copies tests/fixtures/bin/k20m/nvidia-smi to ROOT/usr/bin/."""
    root = tmp_path / name
    if (MACHINES / name).is_dir():
        shutil.copytree(MACHINES / name, root, symlinks=True)
    else:
        root.mkdir(parents=True)
    for script, dest in (programs or {}).items():
        target = root / dest.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(BIN / script, target / Path(script).name)
    return root


def _modulefile(base: Path, extra: str = "") -> str:
    return (
        f'local base = "{base}"\n'
        'prepend_path("LD_LIBRARY_PATH", pathJoin(base, "lib64"))\n'
        'prepend_path("CPATH", pathJoin(base, "include"))\n' + extra
    )


def k20m_cluster(tmp_path: Path) -> tuple[Path, Path]:
    """The K20m node's files and real Lua modulefiles for cuda/8.0, cudnn/5.0 and cudnn/5.1 pointing into them:
    (the node's root, the MODULEPATH directory)."""
    node = make_machine(tmp_path, "k20m")
    modulefiles = tmp_path / "modulefiles"
    (modulefiles / "cuda").mkdir(parents=True)
    (modulefiles / "cuda" / "8.0.lua").write_text(
        _modulefile(
            node / "usr/local/cuda-8.0", 'prepend_path("PATH", pathJoin(base, "bin"))\nsetenv("CUDA_HOME", base)\n'
        )
    )
    (modulefiles / "cudnn").mkdir()
    for series in ("5.0", "5.1"):
        (modulefiles / "cudnn" / f"{series}.lua").write_text(
            'prereq("cuda/8.0")\n' + _modulefile(node / "opt/apps/cudnn" / series)
        )
    return node, modulefiles
