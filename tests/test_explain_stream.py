"""`explain` on whole logs: streamed in constant memory, every buried error found with its line number."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from dnnresolve.explain import scan

NOISE = [
    "Epoch {i}/500 - loss: {x:.4f} - accuracy: {y:.4f} - val_loss: {x:.4f}",
    "2021-04-09 19:52:41.{i:06d}: I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:937] successful NUMA read",
    "step {i}: lr=0.001 grad_norm={x:.3f} throughput=1234.5 samples/s (cuda:0, cudnn benchmark on)",
    "INFO:root:Batch [{i}]\tSpeed: {y:.2f} samples/sec\tdriver ok\tkernel launch ok",
]
# (line number, text) of the errors buried in the log; real messages from the test collection
BURIED = {
    1_001: "2020-04-22 21:10:43.537143: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] "
    "Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found",
    40_000: "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 7.5.0 but source "
    "was compiled with: 7.6.5.  CuDNN library needs to have matching major version and equal or higher minor version.",
    40_003: "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is "
    "probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
    123_456: "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your",
    199_999: "NVIDIA GeForce GT 710 with CUDA capability sm_35 is not compatible with the current PyTorch "
    "installation.",
}
TOTAL = 200_000


def generated_log(total: int = TOTAL, buried: dict[int, str] = BURIED) -> Iterator[str]:
    """A training log of ``total`` lines; a buried message of several lines starts at its line number."""
    rnd = random.Random(7)
    at = {start + k: part for start, text in buried.items() for k, part in enumerate(text.split("\n"))}
    for n in range(1, total + 1):
        if n in at:
            yield at[n] + "\n"
        else:
            yield NOISE[n % len(NOISE)].format(i=n, x=rnd.random(), y=rnd.random()) + "\n"


def test_errors_buried_in_a_multi_megabyte_log_are_found_with_their_lines(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    with log.open("w", encoding="utf-8") as f:
        f.writelines(generated_log())
    assert log.stat().st_size > 10_000_000
    with log.open(encoding="utf-8") as f:
        result = scan(f)
    assert result.lines_read == TOTAL
    got = {(d.id, d.line) for d in result.diagnoses}
    assert got == {
        ("tf-dso-missing", 1_001),
        ("tf-cudnn-mismatch-dotted", 40_000),
        ("torch-driver-too-old", 123_456),
        ("torch-arch-not-compatible", 199_999),
    }
    mismatch = next(d for d in result.diagnoses if d.id == "tf-cudnn-mismatch-dotted")
    assert [(c.id, c.line) for c in mismatch.consequences] == [("tf-conv-algorithm", 40_003)]
    # root causes first: the driver, then the cuDNN mismatch, the GPU, the missing library
    assert [d.kind for d in result.diagnoses] == [
        "driver_too_old",
        "cudnn_version_mismatch",
        "arch_unsupported",
        "missing_library",
    ]


def test_an_error_on_a_batch_boundary_and_a_wrapped_one_at_the_end_are_found() -> None:
    # 4096 lines per batch: put a wrapped message across the first boundary and one that ends on the last line
    wrapped = "The detected CUDA version (12.1) mismatches the version that was used to compile\n      PyTorch (11.8)."
    buried = {
        4096: wrapped,
        9_997: "E   Outdated cuDNN installation found.\nE   Version JAX was built against: 8907"
        "\nE   Minimum supported: 9100\nE   Installed version: 8907",
    }
    result = scan(generated_log(10_000, buried))
    assert [(d.id, d.line, d.found, d.expected) for d in result.diagnoses] == [
        ("torch-extension-cuda-mismatch", 4096, {"cuda": "12.1"}, {"cuda": "11.8"}),
        ("jax-cudnn-outdated", 9_997, {"cudnn": "8.9.7"}, {"cudnn": "9.1.0"}),
    ]


def test_a_repeated_error_is_one_diagnosis_and_memory_stays_flat() -> None:
    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    buried = {n: line for n in range(50, 120_000, 1000)}
    tracemalloc.start()
    result = scan(generated_log(120_000, buried))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    (d,) = result.diagnoses
    assert d.occurrences == len(buried)
    assert d.line == 50 and d.lines[:3] == [50, 1050, 2050] and len(d.lines) == 20
    assert peak < 8_000_000, f"peak {peak} bytes for a {result.lines_read}-line log"


def test_plain_logs_give_nothing() -> None:
    result = scan(generated_log(20_000, {}))
    assert result.diagnoses == [] and result.lines_read == 20_000
