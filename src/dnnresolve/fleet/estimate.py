"""A node's profile estimated from what Slurm says of it (``fleet collect --no-jobs``): its GPUs from the GRES
types (``gpu:k20m:2``) or, failing those, a feature the matrix's GPU table names (``a100``). No driver, CUDA,
cuDNN or Python is known: an answer made from an estimate says so. No I/O."""

from __future__ import annotations

from ..machine import MATRIX_GPU_TABLE, Gpu, Runtime
from ..matrix import Matrix
from .slurm import SlurmNode, gpu_gres

ESTIMATE_NOTE = (
    "estimated from Slurm's GRES and features, not read on the node: its driver, CUDA, cuDNN and Python are not known"
)


def estimated_runtime(node: SlurmNode, matrix: Matrix) -> Runtime:
    rt = Runtime()
    rt.notes.append(ESTIMATE_NOTE)
    rt.sources["estimate"] = "sinfo"
    for kind, count in gpu_gres(node.gres):
        model = matrix.gpu_typed(kind)[0] if kind else None
        if model is None:
            what = f"GRES gpu:{kind}" if kind else "an untyped GPU GRES"
            rt.notes.append(f"{what}: not a GPU the matrix's GPU table names; its compute capability is not known")
            continue
        where = f"sinfo: GRES gpu:{kind}:{count}"
        rt.gpus.extend(Gpu(model.name, model.compute_capability, None, where, MATRIX_GPU_TABLE) for _ in range(count))
    if not rt.gpus:
        for feature in node.features:
            model, guess = matrix.gpu_typed(feature)
            if model is not None and guess is None:  # a feature only as the table spells a GPU: "ib" is no GPU
                rt.gpus.append(
                    Gpu(model.name, model.compute_capability, None, f"sinfo: feature {feature}", MATRIX_GPU_TABLE)
                )
                break
    if rt.gpus:
        rt.sources["gpus"] = rt.gpus[0].found_in
    return rt
