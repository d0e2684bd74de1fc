"""specs.parse_requirement reads requirements as packaging.requirements does: the same name, extras,
specifiers, URL, marker and text for every input both accept, an error where packaging gives one."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement as PackagingInvalid
from packaging.requirements import Requirement as PackagingRequirement

from dnnresolve import specs
from dnnresolve.specs import InvalidRequirement, parse_requirement

KNOWN = [
    "tensorflow-gpu==1.0",
    "torch",
    "torch==2.1.0+cu118",
    "jax[cuda12]>=0.4.30",
    "jax[ cuda12 , tpu ]  >= 0.4 , < 0.5",
    "Foo.Bar_baz-1 ~= 1.4.2",
    "cupy-cuda12x!=13.0.*,>=12",
    "numpy<2",
    "torch>=2.0rc1,<=2.1.post1",
    "paddlepaddle-gpu==2.6.1.post117",
    "x==1!2.0",
    "onnxruntime-gpu ==1.17.0",
    "mxnet-cu101[]",
    'torch==2.1.0; python_version < "3.12"',
    "torch @ https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp311-cp311-linux_x86_64.whl",
    "torch (>=2.0)",
    "torch===2.1.0",
    'jax[cuda12]==0.4.30 ; sys_platform == "linux"',
    "tensorflow[and-cuda]==2.15.1",
]

BAD = [
    "",
    "==1.0",
    "torch==",
    "torch==1.0,",
    "torch>=1.0 <2",
    "torch=1.0",
    "torch>=1.*",
    "torch==1.0 extra",
    "-torch",
    "torch[cuda",
    "torch[a,]==1",
    "torch==1.0\n",
    "torch\u00a0==1.0",
]


def _same(text: str) -> None:
    try:
        ref = PackagingRequirement(text)
    except PackagingInvalid:
        with pytest.raises(InvalidRequirement):
            parse_requirement(text)
        return
    ours = parse_requirement(text)
    assert (ours.name, set(ours.extras), str(ours.specifier), ours.url, str(ours.marker)) == (
        ref.name,
        ref.extras,
        str(ref.specifier),
        ref.url,
        str(ref.marker),
    ), text
    assert str(ours) == str(ref)


@pytest.mark.parametrize("text", KNOWN + BAD)
def test_the_same_reading_as_packaging(text: str) -> None:
    _same(text)


@pytest.mark.parametrize("text", KNOWN[:13])
def test_common_forms_are_read_without_packaging_requirements(text: str) -> None:
    code = (
        "import sys\nfrom dnnresolve.specs import parse_requirement\n"
        f"r = parse_requirement({text!r})\n"
        "print(r.name, 'packaging.requirements' in sys.modules, 'dataclasses' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    name, packaging_loaded, dataclasses_loaded = out.stdout.split()
    assert name == PackagingRequirement(text).name
    assert (packaging_loaded, dataclasses_loaded) == ("False", "False")


def test_a_marker_or_url_is_read_by_packaging_and_kept() -> None:
    req = parse_requirement('torch==2.1.0; python_version < "3.12"')
    assert req.marker is not None and req.marker.evaluate({"python_version": "3.11"})
    assert parse_requirement("torch @ https://example.org/t.whl").url == "https://example.org/t.whl"


def test_too_long_numbers_are_refused_by_either_reader() -> None:
    for text in ("torch==" + "7" * 40, "torch==" + "7" * 40 + '; os_name == "posix"'):
        with pytest.raises(InvalidRequirement, match="longer than"):
            parse_requirement(text)


def test_the_same_text_gives_the_same_object() -> None:
    assert parse_requirement("torch==2.1.0") is parse_requirement("torch==2.1.0")
    assert specs._parsed["torch==2.1.0"].name == "torch"


NAME = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,8}[A-Za-z0-9])?", fullmatch=True)
VERSION = st.from_regex(
    r"([0-9]!)?[0-9]{1,3}(\.[0-9]{1,3}){0,3}((a|b|rc|\.post|\.dev)[0-9])?(\.\*|\+cu[0-9]{3})?", fullmatch=True
)
OP = st.sampled_from(["==", "!=", "<=", ">=", "<", ">", "~=", "===", "=", ""])
SPACE = st.sampled_from(["", " ", "  ", "\t"])
PIECE = st.tuples(SPACE, OP, SPACE, VERSION).map("".join)
REQUIREMENT = st.tuples(
    SPACE,
    NAME,
    SPACE,
    st.one_of(st.just(""), st.lists(NAME, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")),
    st.lists(PIECE, max_size=3).map(",".join),
    st.sampled_from(["", ",", " ", "; python_version >= '3.8'", " extra"]),
).map("".join)


@given(REQUIREMENT)
def test_generated_requirements_read_as_packaging_reads_them(text: str) -> None:
    _same(text)


@given(st.text(alphabet="torch[]cu12=!<>~.,;@ *+ab0-9\t", max_size=25))
def test_any_text_reads_as_packaging_reads_it(text: str) -> None:
    _same(text)


@pytest.mark.parametrize("text", ["torch==", "torch (>=1.0", "torch @", "torch; python_version <", "-x"])
def test_an_unreadable_requirement_is_explained_on_one_line(text: str) -> None:
    with pytest.raises(InvalidRequirement) as info:
        parse_requirement(text)
    assert "\n" not in str(info.value) and str(info.value)
    if text == "torch==":
        assert str(info.value).endswith("(at character 6)")  # where "==" begins
