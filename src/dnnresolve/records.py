"""Record classes: the part of ``dataclasses`` this package uses, without its start-up cost.

``dataclasses`` imports ``inspect`` and compiles generated source for every method of every class;
with about fifty classes that was a third of the time a command took to start. A record's methods
are closures over its field names, built without ``exec``, so a class costs microseconds.

Supported, with the meaning ``dataclasses`` gives them: annotated fields with defaults,
``field(default=..., default_factory=..., init=False, compare=False, repr=False)``, ``ClassVar``
annotations (not fields), ``frozen=True``, ``order=True``, ``__post_init__``, inheritance between
records (a subclass adds fields after its bases'), methods the class defines itself are kept, and
``replace``. Equality and ordering hold between instances of exactly the same class.
"""

from __future__ import annotations

import sys
from operator import attrgetter

__all__ = ["FrozenInstanceError", "field", "record", "replace"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An attribute of a frozen record was set or deleted."""


class Field:
    """How one field of a record behaves (what ``field(...)`` returns)."""

    __slots__ = ("compare", "default", "default_factory", "init", "name", "repr")

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Callable[[], Any] | None = None,
        init: bool = True,
        compare: bool = True,
        repr: bool = True,
    ) -> None:
        if default is not _MISSING and default_factory is not None:
            raise ValueError("a field cannot have both a default and a default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.compare = compare
        self.repr = repr

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    init: bool = True,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """Describe a field: a default, a factory for mutable defaults, and whether it is compared or shown."""
    return Field(default, default_factory, init, compare, repr)


if TYPE_CHECKING:  # (typing is not imported at start-up)

    @overload
    @dataclass_transform(field_specifiers=(field,))
    def record(cls: type[_T], /) -> type[_T]: ...

    @overload
    def record(*, frozen: bool = False, order: bool = False) -> Callable[[type[_T]], type[_T]]: ...


def record(cls: Any = None, /, *, frozen: bool = False, order: bool = False) -> Any:
    """Make ``cls`` a record: ``__init__``, ``__repr__``, ``__eq__``; ``__hash__`` and immutability when
    frozen; ``<``, ``<=``, ``>``, ``>=`` with ``order``."""

    def wrap(klass: type[_T]) -> type[_T]:
        return _make(klass, frozen, order)

    return wrap if cls is None else wrap(cls)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the record ``obj`` with ``changes`` applied, built through its ``__init__``."""
    fields: dict[str, Field] = type(obj).__record_fields__  # type: ignore[attr-defined]
    for name in changes:
        f = fields.get(name)
        if f is None or not f.init:
            raise TypeError(f"{type(obj).__qualname__} has no field {name!r} that __init__ takes")
    # every init field by position, in their order: __init__'s fast path (the keyword path checks and fills
    # defaults, three times the cost, which check paid per requirement line)
    args = [changes[name] if name in changes else getattr(obj, name) for name, f in fields.items() if f.init]
    return type(obj)(*args)


def _is_class_var(hint: Any) -> bool:
    text = hint if isinstance(hint, str) else repr(hint)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _own_annotations(cls: type) -> dict[str, Any]:
    """The annotations the class body itself wrote (its bases' fields come from their records)."""
    own = cls.__dict__.get("__annotations__")  # noqa: RUF063 - where 3.9-3.13 keep them
    if own is None and sys.version_info >= (3, 10):
        own = getattr(cls, "__annotations__", None)  # 3.14 computes them; 3.10+ never returns a base's
    return own or {}


def _collect(cls: type) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(base.__dict__.get("__record_fields__", {}))
    for name, hint in _own_annotations(cls).items():
        if _is_class_var(hint):
            continue
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            f = value
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        else:
            f = Field(default=value)
        f.name = name
        fields[name] = f
    seen_default = ""
    for f in fields.values():
        if not f.init:
            continue
        if f.required and seen_default:
            raise TypeError(f"{cls.__qualname__}: field {f.name!r} without a default follows {seen_default!r}")
        if not f.required:
            seen_default = f.name
    return fields


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _make(cls: type[_T], frozen: bool, order: bool) -> type[_T]:
    fields = _collect(cls)
    qualname = cls.__qualname__
    init_fields = [f for f in fields.values() if f.init]
    names = tuple(f.name for f in init_fields)
    count = len(names)
    known = frozenset(names)
    required = tuple(f.name for f in init_fields if f.required)
    defaults = {f.name: f.default for f in init_fields if f.default is not _MISSING}
    factories = tuple((f.name, f.default_factory) for f in fields.values() if f.default_factory is not None)
    post_init = hasattr(cls, "__post_init__")

    def fill(values: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if len(args) > count:
            raise TypeError(f"{qualname}() takes {count} positional arguments but {len(args)} were given")
        if defaults:
            values.update(defaults)
        values.update(zip(names, args))
        if kwargs:
            if not known.issuperset(kwargs):
                unknown = sorted(set(kwargs) - known)
                raise TypeError(f"{qualname}() got an unexpected keyword argument {unknown[0]!r}")
            if args and not kwargs.keys().isdisjoint(names[: len(args)]):
                twice = sorted(kwargs.keys() & set(names[: len(args)]))
                raise TypeError(f"{qualname}() got multiple values for argument {twice[0]!r}")
            values.update(kwargs)
        for name, make in factories:
            if name not in values:
                values[name] = make()
        missing = [name for name in required if name not in values]
        if missing:
            raise TypeError(f"{qualname}() missing required argument(s): {', '.join(map(repr, missing))}")

    # Every field given by position (the common case) stores them in one step; anything else takes
    # the general path that applies defaults and checks the arguments.
    if post_init:

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs or len(args) != count:
                fill(self.__dict__, args, kwargs)
            else:
                self.__dict__.update(zip(names, args))
            self.__post_init__()

    else:

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs or len(args) != count:
                fill(self.__dict__, args, kwargs)
            else:
                self.__dict__.update(zip(names, args))

    shown = tuple(f.name for f in fields.values() if f.repr)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    key = _getter(tuple(f.name for f in fields.values() if f.compare))

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    methods: dict[str, Any] = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__}
    if order:
        methods.update(_ordering(key))
    if frozen:
        methods["__setattr__"] = _refuse_set
        methods["__delattr__"] = _refuse_delete
    own = cls.__dict__
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    for name, method in methods.items():
        if name in own:
            if order and name in ("__lt__", "__le__", "__gt__", "__ge__"):
                raise TypeError(f"{qualname} defines {name} and asks for order=True")
            continue
        method.__qualname__ = f"{qualname}.{name}"
        setattr(cls, name, method)
    # __hash__ as dataclasses sets it: kept when the class writes one; from the compared fields when
    # frozen; None (unhashable) when mutable, since equal records could then stop being equal.
    if not explicit_hash:
        if frozen:
            cls.__hash__ = lambda self: hash(key(self))  # type: ignore[method-assign]
        else:
            cls.__hash__ = None  # type: ignore[assignment]
    cls.__record_fields__ = fields  # type: ignore[attr-defined]
    return cls


def _ordering(key: Callable[[Any], tuple[Any, ...]]) -> dict[str, Callable[[Any, Any], Any]]:
    def __lt__(self: Any, other: Any) -> Any:
        return key(self) < key(other) if other.__class__ is self.__class__ else NotImplemented

    def __le__(self: Any, other: Any) -> Any:
        return key(self) <= key(other) if other.__class__ is self.__class__ else NotImplemented

    def __gt__(self: Any, other: Any) -> Any:
        return key(self) > key(other) if other.__class__ is self.__class__ else NotImplemented

    def __ge__(self: Any, other: Any) -> Any:
        return key(self) >= key(other) if other.__class__ is self.__class__ else NotImplemented

    return {"__lt__": __lt__, "__le__": __le__, "__gt__": __gt__, "__ge__": __ge__}


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a frozen {type(self).__qualname__}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of a frozen {type(self).__qualname__}")
