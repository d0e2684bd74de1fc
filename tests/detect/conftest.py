from __future__ import annotations

from pathlib import Path

import pytest

from .machines import make_machine


@pytest.fixture
def machine(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(name: str, programs: dict[str, str] | None = None) -> Path:
        return make_machine(tmp_path, name, programs)

    return make
