"""records.record against the reference it replaces: dataclasses, for the features the package uses."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any, ClassVar

import pytest

from dnnresolve.records import FrozenInstanceError, field, record, replace


def _pair(frozen: bool = False, order: bool = False) -> tuple[type[Any], type[Any]]:
    """The same class body made once by dataclasses and once by records."""

    def body(dc: Any, fld: Any) -> type[Any]:
        @dc(frozen=frozen, order=order)
        class Item:
            name: str
            size: int = 0
            tags: list[str] = fld(default_factory=list)
            text: str = fld(default="", compare=False)
            kind: ClassVar[str] = "item"

        return Item

    return body(dataclasses.dataclass, dataclasses.field), body(record, field)


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 2), {}),
    (("a", 2, ["x"], "t"), {}),
    ((), {"name": "a", "tags": ["y"]}),
    (("a",), {"text": "shown", "size": 3}),
]

BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    (("a", 1, [], "", "extra"), {}),
    (("a",), {"name": "b"}),
    (("a",), {"colour": "red"}),
    ((), {"size": 1}),
]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_repr_and_equality_match_dataclasses(
    frozen: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    ref_cls, rec_cls = _pair(frozen=frozen)
    ref, rec = ref_cls(*args, **kwargs), rec_cls(*args, **kwargs)
    assert repr(rec) == repr(ref)
    assert {k: getattr(rec, k) for k in ("name", "size", "tags", "text")} == dataclasses.asdict(ref)
    again = rec_cls(*args, **kwargs)
    assert rec == again
    assert not rec != again  # noqa: SIM202 - __ne__ comes from __eq__
    assert rec != ref  # another class is never equal, as with dataclasses
    other_text = replace(rec, text="different")
    assert other_text == rec  # text is compare=False
    assert rec_cls.kind == "item" and "kind" not in repr(rec)


@pytest.mark.parametrize(("args", "kwargs"), BAD_CALLS)
def test_bad_arguments_fail_as_with_dataclasses(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ref_cls, rec_cls = _pair()
    with pytest.raises(TypeError):
        ref_cls(*args, **kwargs)
    with pytest.raises(TypeError, match="Item"):
        rec_cls(*args, **kwargs)


def test_default_factory_gives_each_instance_its_own() -> None:
    _, rec_cls = _pair()
    a, b = rec_cls("a"), rec_cls("b")
    a.tags.append("x")
    assert b.tags == []


def test_frozen_refuses_changes_and_hashes_by_compared_fields() -> None:
    _, rec_cls = _pair(frozen=True)
    item = rec_cls("a", 1, ("t",))
    with pytest.raises(FrozenInstanceError):
        item.size = 2
    with pytest.raises(FrozenInstanceError):
        del item.name
    with pytest.raises(AttributeError):  # FrozenInstanceError is an AttributeError, as in dataclasses
        item.name = "b"
    same = rec_cls("a", 1, ("t",), text="other")
    assert hash(item) == hash(same) and len({item, same}) == 1


def test_mutable_records_are_unhashable() -> None:
    _, rec_cls = _pair()
    with pytest.raises(TypeError):
        hash(rec_cls("a"))


def test_order_matches_dataclasses_on_many_values() -> None:
    ref_cls, rec_cls = _pair(frozen=True, order=True)
    values = [("a", 2), ("a", 10), ("b", 0), ("a", 2), ("", 5)]
    refs = [ref_cls(*v) for v in values]
    recs = [rec_cls(*v) for v in values]
    assert [(r.name, r.size) for r in sorted(recs)] == [(r.name, r.size) for r in sorted(refs)]
    for i, x in enumerate(recs):
        for j, y in enumerate(recs):
            a, b = refs[i], refs[j]
            assert (x < y, x <= y, x > y, x >= y, x == y) == (a < b, a <= b, a > b, a >= b, a == b)
    with pytest.raises(TypeError):
        recs[0] < refs[0]  # noqa: B015 - different classes do not order


def test_inheritance_adds_fields_after_the_base_and_keeps_methods() -> None:
    @record(frozen=True, order=True)
    class Base:
        parts: tuple[int, ...]

        def __post_init__(self) -> None:
            if not self.parts:
                raise ValueError("empty")

        def __str__(self) -> str:
            return ".".join(map(str, self.parts))

    @record(frozen=True, order=True)
    class Labelled(Base):
        text: str = field(default="", compare=False)

        def __str__(self) -> str:
            return self.text or super().__str__()

    v = Labelled((1, 2), "1.02")
    assert str(v) == "1.02" and str(Labelled((1, 2))) == "1.2"
    assert v == Labelled((1, 2)) and Labelled((1, 2)) < Labelled((1, 10))
    assert Base((1, 2)) != Labelled((1, 2))
    with pytest.raises(ValueError, match="empty"):
        Labelled(())
    assert repr(v).endswith(".<locals>.Labelled(parts=(1, 2), text='1.02')")


def test_init_false_field_is_set_by_post_init_and_refused_by_replace() -> None:
    @record
    class Catalog:
        entries: list[str]
        anchors: tuple[str, ...] = field(init=False)

        def __post_init__(self) -> None:
            self.anchors = tuple(sorted(set(self.entries)))

    c = Catalog(["b", "a", "b"])
    assert c.anchors == ("a", "b")
    assert replace(c, entries=["z"]).anchors == ("z",)
    with pytest.raises(TypeError):
        replace(c, anchors=())
    with pytest.raises(TypeError):
        Catalog(["a"], ("x",))  # type: ignore[call-arg]


def test_a_required_field_after_a_default_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="follows"):

        @record
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]


def test_records_pickle_and_copy_like_plain_objects() -> None:
    from dnnresolve.versions import CudnnVersion, DriverVersion

    for value in (CudnnVersion.parse("5.0.5"), DriverVersion.parse("535.104.05")):
        back = pickle.loads(pickle.dumps(value))
        assert back == value and str(back) == str(value) and hash(back) == hash(value)
