"""What the loader's ``cls(**model_dump())`` makes of a pydantic model whose class body changes the
round trip: private attributes, ``@model_serializer``, aliases, excluded fields, ``Json`` fields,
``strict=True``, ``extra="forbid"`` with computed fields. Read from the model class and its value:
the runtime twin of what the plugin reads from the class body (``routes/model_facts.py``), in the
same words (``core/messages.py``).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from mypy_lgstate.core import messages
from mypy_lgstate.runtime.classes import PLAIN


class Loss(NamedTuple):
    """A place the rebuilt model does not hold as it was written."""

    path: str
    type_name: str
    back_as: str
    fix: str


def losses(value: Any, cls: type, fields: dict[str, Any], path: str) -> Iterator[Loss]:
    """What the loader's ``cls(**model_dump())`` loses of ``value``, a model whose class body
    changes the round trip: each lossy place, with what it comes back as and the fix."""
    name = cls.__name__
    for private, declared in (getattr(cls, "__private_attributes__", None) or {}).items():
        attribute = getattr(value, private, None)
        if _is_default(attribute, declared):
            continue  # the loader's new instance gets the same value
        lost = messages.PRIVATE_ATTRIBUTE_LOSSY
        yield Loss(f"{path}.{private}", type(attribute).__name__, *lost)
    decorators = getattr(cls, "__pydantic_decorators__", None)
    if decorators is not None and decorators.model_serializers:
        yield Loss(path, name, *messages.MODEL_SERIALIZER_LOSSY)
        return
    config = getattr(cls, "model_config", None) or {}
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    by_alias = bool(config.get("serialize_by_alias"))  # model_dump() writes the aliases

    def aliased(field_name: str, field: Any) -> bool:
        """Whether ``cls(field_name=...)`` misses the field."""
        if by_alias:
            return False
        if field.alias is not None and field.alias != field_name:
            return True
        validation = field.validation_alias
        if validation is None:
            return False
        if isinstance(validation, str):
            return validation != field_name
        return field_name not in (getattr(validation, "choices", None) or ())

    reason = next(
        (
            messages.aliased_field_fallback(field_name)
            for field_name, field in fields.items()
            if aliased(field_name, field) and field.is_required() and not by_name
        ),
        None,
    ) or next(
        (
            messages.json_field_fallback(field_name)
            for field_name, field in fields.items()
            if any(_is_json_marker(item) for item in field.metadata)
        ),
        None,
    ) or next(
        (
            messages.excluded_field_fallback(field_name)
            for field_name, field in fields.items()
            if field.exclude is True and field.is_required()
        ),
        None,
    )
    if reason is None and config.get("extra") == "forbid" and getattr(
        cls, "model_computed_fields", None
    ):
        reason = messages.FORBIDDEN_COMPUTED_FALLBACK
    if reason is None and config.get("strict"):
        reason = next(
            (
                messages.strict_field_fallback(field_name)
                for field_name in fields
                if _strict_rejects(getattr(value, field_name, None))
            ),
            None,
        )
    if reason is not None:
        if reason.startswith("required") or any(
            _needs_validation(getattr(value, field_name, None)) for field_name in fields
        ):
            yield Loss(path, name, *messages.fallback_lossy(reason))
        return
    for field_name, field in fields.items():
        if field.exclude is True:
            back_as, fix = messages.EXCLUDED_FIELD_LOSSY
        elif aliased(field_name, field) and not by_name:
            back_as, fix = messages.ALIASED_FIELD_LOSSY
        else:
            continue
        field_value = getattr(value, field_name, None)
        yield Loss(f"{path}.{field_name}", type(field_value).__name__, back_as, fix)


def _is_default(value: object, declared: Any) -> bool:
    try:
        return bool(value == declared.get_default())
    except Exception:  # a default factory or __eq__ of the user's that fails: assume changed
        return False


def _is_json_marker(item: object) -> bool:
    """pydantic's ``Json`` in a field's metadata (the class itself, or ``Json[...]``'s instance)."""
    cls = item if isinstance(item, type) else type(item)
    return cls.__name__ == "Json" and cls.__module__ == "pydantic.types"


def _strict_rejects(value: object) -> bool:
    """Whether ``strict=True`` rejects what ``value`` is written as: a tuple comes back as a list, a
    dataclass as a dict (a nested model is validated by its own configuration)."""
    return _rebuilt_differently(value, models=False)


def _needs_validation(value: object) -> bool:
    """Whether ``value`` changes in a model built without validation from its ``model_dump()``:
    nested models and dataclasses are dicts there, tuples are lists."""
    return _rebuilt_differently(value, models=True)


def _rebuilt_differently(value: object, *, models: bool, depth: int = 0) -> bool:
    """Whether ``value`` holds a tuple or a dataclass (and, with ``models``, a pydantic model),
    which a model's ``model_dump()`` writes as a list or a dict."""
    if depth > 4 or type(value) in PLAIN:
        return False
    if hasattr(type(value), "model_fields"):
        return models
    if isinstance(value, tuple) or dataclasses.is_dataclass(value):
        return True
    if isinstance(value, dict):
        items: Iterable[object] = value.values()
    elif isinstance(value, (list, set, frozenset, deque)):
        items = value
    else:
        return False
    return any(_rebuilt_differently(item, models=models, depth=depth + 1) for item in items)
