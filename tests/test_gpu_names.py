"""GPU names as people type them (issue #25, point 6): the rule that reads ``--gpu`` is built from the matrix's
GPU table, so it is tested over every row of it, and over real nvidia-smi names it was not built from (the
table's aliases, held out)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from dnnresolve.matrix import Matrix, load_matrix
from dnnresolve.model import GpuModel
from dnnresolve.records import replace
from dnnresolve.suggest import gpu_words

_BRAND = re.compile(r"^(?:NVIDIA\s+)?(?:GeForce|Tesla|Quadro)\s+", re.IGNORECASE)
# a space or dash where a letter meets a digit: "RTX 4090" -> "RTX4090", "GTX 1080 Ti" -> "GTX1080Ti"
_LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])[ -](?=\d)|(?<=\d)[ -](?=[A-Za-z])")

SPELLINGS: dict[str, Callable[[str], str]] = {
    "lower case": str.lower,
    "upper case": str.upper,
    "without brand": lambda n: _BRAND.sub("", n),
    "letters against digits": lambda n: _LETTER_DIGIT.sub("", n),
    "all of these": lambda n: _LETTER_DIGIT.sub("", _BRAND.sub("", n)).lower(),
    "spaced out": lambda n: "  " + n.replace(" ", "   ") + " ",
}


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_gpu_row_is_found_by_its_name_as_people_type_it(matrix: Matrix, spelling: str) -> None:
    """Each row's name, spelt so, finds that row (or one named with the same words)."""
    wrong = []
    for row in matrix.gpus:
        typed = SPELLINGS[spelling](row.name)
        found, _ = matrix.gpu_typed(typed)
        if found is None or gpu_words(found.name) != gpu_words(row.name):
            wrong.append(f"{typed!r} -> {found.name if found else None} (row {row.name!r})")
    assert not wrong, "\n".join(wrong)


def _held_out(matrix: Matrix) -> Matrix:
    return Matrix("held-out", gpus=[replace(g, aliases=()) for g in matrix.gpus])


def test_real_nvidia_smi_names_held_out_of_the_table_are_read_safely(matrix: Matrix) -> None:
    """The aliases are the names nvidia-smi and drivers really print ("NVIDIA GeForce RTX 3050Ti Laptop GPU",
    "Tesla V100S"). With them taken out of the table, the rule built from the names alone must never read one
    as a GPU of another compute capability; it finds nearly all, and refuses the rest with names to choose."""
    table = _held_out(matrix)
    found_own, refused, wrong = 0, [], []
    aliases = [(alias, row) for row in matrix.gpus for alias in row.aliases]
    for alias, row in aliases:
        got, guess = table.gpu_typed(alias)
        if got is None:
            shares = {w for w in gpu_words(alias) if len(w) > 1} & set(gpu_words(row.name))
            assert guess is not None and (guess.nearest or not shares), f"{alias!r}: refused without a name"
            refused.append(alias)
        elif got.compute_capability != row.compute_capability:
            wrong.append(f"{alias!r} -> {got.name} {got.compute_capability} (is {row.name} {row.compute_capability})")
        elif got.name == row.name:
            found_own += 1
    assert not wrong, "\n".join(wrong)
    assert found_own >= 0.9 * len(aliases), f"{found_own} of {len(aliases)} found; refused: {refused}"


def test_the_names_that_tell_gpus_apart_are_learnt_from_the_table() -> None:
    """'RTX 6000 Ada' is not 'Quadro RTX 6000' with a word more: the table lists both, 8.9 and 7.5. Without the
    Ada row a name that goes on past a listed one still reads as it (variants of one chip: 'Ti', 'Laptop GPU')."""

    def gpu(name: str, cc: str) -> GpuModel:
        from dnnresolve.versions import ComputeCapability

        return GpuModel(name, ComputeCapability.parse(cc), "")

    both = Matrix("m", gpus=[gpu("Quadro RTX 6000", "7.5"), gpu("RTX 6000 Ada Generation", "8.9")])
    found, _ = both.gpu_typed("RTX 6000 Ada")
    assert found is not None and found.name == "RTX 6000 Ada Generation"
    assert both.gpu_typed("NVIDIA RTX 6000 Ada Generation Laptop GPU")[0] == both.gpus[1]
    assert both.gpu_typed("Quadro RTX 6000 Passive")[0] == both.gpus[0]
    one = Matrix("m", gpus=[gpu("GeForce GTX 950", "5.2"), gpu("GeForce GTX 950M", "5.0"), gpu("Tesla K40", "3.5")])
    assert one.gpu_typed("Tesla K40m")[0] is None  # 'm' tells GPUs apart here: no guess
    assert one.gpu_typed("Tesla K40 PCIe")[0] == one.gpus[2]


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("4090", "GeForce RTX 4090"),
        ("rtx4090", "GeForce RTX 4090"),
        ("RTX 4090ti", "GeForce RTX 4090"),
        ("4070", "GeForce RTX 4070"),  # not the 4070 Ti: the model number alone names the plain one
        ("1080ti", "GeForce GTX 1080 Ti"),
        ("a6000", "RTX A6000"),
        ("k80", "Tesla K80"),
        ("NVIDIA GeForce RTX 3080 Laptop GPU", "GeForce RTX 3080"),
    ],
)
def test_typed_names_read_as_the_row_meant(matrix: Matrix, typed: str, meant: str) -> None:
    found, _ = matrix.gpu_typed(typed)
    assert found is not None and found.name == meant


@pytest.mark.parametrize("typed", ["6000", "100", "4000", "jetson", "TITAN"])
def test_names_of_several_capabilities_are_not_guessed(matrix: Matrix, typed: str) -> None:
    found, guess = matrix.gpu_typed(typed)
    assert found is None and guess is not None and len(guess.nearest) >= 2
