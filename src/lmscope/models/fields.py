"""Config fields checked against their declared types, once, for every architecture.

A config comes from JSON someone wrote (config.json, lmscope.json, GGUF metadata): ``64.0``,
``"64"``, ``null`` or ``true`` where a whole number belongs must be refused in one line that
names the field, the value and what was expected, before any tensor is built.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, ClassVar, TypeVar

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.i18n import Message

_NAMES = {
    int: "error.config.part.whole-number",
    float: "error.config.part.number",
    str: "error.config.part.text",
    bool: "error.config.part.true-false",
    dict: "error.config.part.mapping",
}


def _allowed(annotation) -> tuple[set[type], bool]:
    """The plain types an annotation admits, and whether None is one of them."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds, optional = set(), False
        for arg in typing.get_args(annotation):
            if arg is type(None):
                optional = True
            else:
                kinds |= _allowed(arg)[0]
        return kinds, optional
    return {origin or annotation}, False


def _fits(value, kinds: set[type]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int):
        return int in kinds or float in kinds
    if isinstance(value, float):
        return float in kinds and math.isfinite(value)
    return any(isinstance(value, k) for k in kinds if isinstance(k, type))


def check_field_types(config, what: object = "config", error: type = InvalidInputError) -> None:
    """Raise CheckpointError naming the first field whose value its annotation does not admit.
    Floats given as integers are accepted (and converted); nothing else is coerced."""
    hints = typing.get_type_hints(type(config))
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        kinds, optional = _allowed(hints[field.name])
        if value is None and optional:
            continue
        if not _fits(value, kinds):
            raise error(
                "error.config.field-type",
                what=what,
                field=field.name,
                expected=_expected(kinds, optional),
                got=f"{value!r:.60}",
            )
        if float in kinds and int not in kinds and isinstance(value, int):
            setattr(config, field.name, float(value))


def _expected(kinds: set[type], optional: bool) -> object:
    """What a field admits, said in the current language: "a whole number or null"."""
    names: list[object] = [
        Message(_NAMES[k]) if k in _NAMES else getattr(k, "__name__", str(k)) for k in kinds
    ]
    names.sort(key=lambda name: name.render("en") if isinstance(name, Message) else str(name))
    names += ["null"] if optional else []
    said = names[0]
    for name in names[1:]:
        said = Message("error.config.part.or", first=said, second=name)
    return said


def require_mapping(data, what: str) -> dict:
    """A parsed JSON document that must be an object."""
    if not isinstance(data, dict):
        raise CheckpointError("error.config.not-object", what=what, type=type(data).__name__)
    return data


_Config = TypeVar("_Config", bound="JsonConfig")


class JsonConfig:
    """``to_dict``/``from_dict`` of a dataclass config stored as a JSON object, for every
    architecture and the trainer: keys the class does not know are left out, and a document
    that is not an object is refused in one line naming ``stored_as``. Its ``require_*``
    checks are the bounds every architecture's values share."""

    stored_as: ClassVar[str] = "the model config"
    # Set by @dataclass on every subclass; declared so the type checker knows they are dataclasses.
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    # The value checks a config's __post_init__ makes: each refuses in one line naming the field.

    def require_at_least(self, low: int, *names: str) -> None:
        """Each field in ``names`` is at least ``low``; else the first that is not."""
        for name in names:
            value = getattr(self, name)
            if value < low:
                raise InvalidInputError("error.value.at-least", name=name, low=low, got=str(value))

    def require_above(self, name: str, low: float) -> None:
        """The field ``name`` is more than ``low`` (an eps of 0 makes a norm divide by zero)."""
        value = getattr(self, name)
        if value <= low:
            raise InvalidInputError("error.value.above", name=name, low=low, got=str(value))

    def require_fraction(self, name: str) -> None:
        """The field ``name`` is a rate in [0, 1): a dropout of 1 drops everything."""
        value = getattr(self, name)
        if not 0.0 <= value < 1.0:
            raise InvalidInputError("error.value.fraction", name=name, got=str(value))

    def require_divisible(self, whole: str, part: str) -> None:
        """The field ``whole`` splits evenly into ``part`` pieces (a width into heads, heads into
        groups)."""
        x, y = getattr(self, whole), getattr(self, part)
        if x % y:
            raise InvalidInputError("error.value.divisible", a=whole, x=str(x), b=part, y=str(y))

    @classmethod
    def from_dict(cls: type[_Config], data: dict) -> _Config:
        data = require_mapping(data, cls.stored_as)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
