"""Module naming styles sites use, read into what they provide."""

from __future__ import annotations

import pytest

from dnnresolve.machine import Module
from dnnresolve.modulenames import read_module


@pytest.mark.parametrize(
    ("name", "version", "component", "cudnn", "cuda"),
    [
        ("cudnn", "5.1", "cudnn", "5.1", None),
        ("cudnn", "5.1-cuda8.0", "cudnn", "5.1", "8.0"),  # TACC / many university clusters
        ("cuDNN", "8.2.1.32-CUDA-11.3.1", "cudnn", "8.2.1", "11.3"),  # EasyBuild
        ("cudnn", "v7.6.5", "cudnn", "7.6.5", None),
        ("cudnn", "7.6.5.32-10.2", "cudnn", "7.6.5", None),
        ("cuda", "11.8.0", "cuda", None, "11.8.0"),
        ("CUDA", "12.1.1", "cuda", None, "12.1.1"),
        ("cudatoolkit", "10.1", "cuda", None, "10.1"),
        ("nvidia/cuda-11.8", "", "cuda", None, "11.8"),
    ],
)
def test_module_names(name: str, version: str, component: str, cudnn: str | None, cuda: str | None) -> None:
    offer = read_module(Module(name, version))
    assert offer is not None
    assert offer.component == component
    assert (str(offer.cudnn) if offer.cudnn else None) == cudnn
    assert (str(offer.cuda) if offer.cuda else None) == cuda


@pytest.mark.parametrize(("name", "version"), [("gcc", "9.3.0"), ("python", "3.11"), ("cudnn", "latest"), ("cuda", "")])
def test_other_modules_provide_nothing(name: str, version: str) -> None:
    assert read_module(Module(name, version)) is None
