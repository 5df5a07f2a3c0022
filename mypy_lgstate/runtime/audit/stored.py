"""What the stored bytes say: the class a value was written as, and why the loader did not give it
back (``explain``).

A loaded value that is not of its declared class (a dict where a model is declared, a bare value
where an enum is) could have been written that way, or written as a class the loader could not
rebuild. The bytes tell: LangGraph's msgpack encoding stores each class as an extension
``(module, name, payload)``. They are decoded again without rebuilding anything
(``decode_stored``), only for the values that need explaining, and the loader's own questions are
asked of the running program: does ``(module, name)`` import, is it on the strict allowlist, does
the enum still have the value, does the constructor take the stored fields.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
from collections.abc import Collection
from typing import Any, Final, NamedTuple

import ormsgpack
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde import jsonplus

# Extension codes whose payload is ``(module, name, payload, ...)``.
_CLASS_CODES: Final = frozenset({
    jsonplus.EXT_CONSTRUCTOR_SINGLE_ARG,
    jsonplus.EXT_CONSTRUCTOR_POS_ARGS,
    jsonplus.EXT_CONSTRUCTOR_KW_ARGS,
    jsonplus.EXT_METHOD_SINGLE_ARG,
    jsonplus.EXT_PYDANTIC_V1,
    jsonplus.EXT_PYDANTIC_V2,
})


class Stored(NamedTuple):
    """A class as the serializer wrote it."""

    module: str
    name: str
    payload: Any


NOT_FOUND: Final = object()


def _hook(code: int, data: bytes) -> Any:
    inner = ormsgpack.unpackb(data, ext_hook=_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    if code in _CLASS_CODES and isinstance(inner, (list, tuple)) and len(inner) >= 3:
        return Stored(str(inner[0]), str(inner[1]), inner[2])
    if code == jsonplus.EXT_DELTA_SNAPSHOT:
        return inner
    return NOT_FOUND


def decode_stored(data: tuple[str, bytes], cipher: Any = None) -> Any:
    """The stored value with each class kept as ``Stored``; ``NOT_FOUND`` for bytes that are not
    LangGraph's msgpack (json, pickle, a serializer of the application's own)."""
    kind, raw = data
    if "+" in kind and cipher is not None:  # EncryptedSerializer: "msgpack+aes"
        kind, name = kind.split("+", 1)
        try:
            raw = cipher.decrypt(name, raw)
        except Exception:
            return NOT_FOUND
    if kind != "msgpack":
        return NOT_FOUND
    try:
        return ormsgpack.unpackb(raw, ext_hook=_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    except Exception:
        return NOT_FOUND


def find(stored: Any, steps: tuple[tuple[str, Any], ...]) -> Any:
    """The stored value at ``steps`` (a mismatch's path), ``NOT_FOUND`` when the bytes hold none."""
    for kind, key in steps:
        while isinstance(stored, Stored):
            stored = stored.payload
        if kind in ("k", "m", "f"):
            if not isinstance(stored, dict) or key not in stored:
                return NOT_FOUND
            stored = stored[key]
        else:
            if not isinstance(stored, (list, tuple)) or not isinstance(key, int):
                return NOT_FOUND
            if key >= len(stored):
                return NOT_FOUND
            stored = stored[key]
    return stored


class Explanation(NamedTuple):
    """Why a declared class came back as something else."""

    why: str  # one of the reasons below
    stored: tuple[str, str] | None  # the (module, name) written, when the bytes hold a class
    fields: tuple[str, ...] = ()  # missing or unexpected fields
    value: Any = None  # a lost enum member's value


PLAIN_DATA: Final = "plain data"  # written as a dict or a bare value: the declaration changed
UNIMPORTABLE: Final = "unimportable"  # (module, name) no longer imports
NOT_ALLOWED: Final = "not allowed"  # strict msgpack blocked it
ENUM_VALUE: Final = "enum value"  # the enum no longer has the stored value
MISSING_FIELDS: Final = "missing fields"  # the constructor lacks required fields
UNEXPECTED_FIELDS: Final = "unexpected fields"  # the constructor rejects stored fields
REJECTED: Final = "rejected"  # the constructor raised for another reason
OTHER_CLASS: Final = "other class"  # it was another class, which still imports
UNKNOWN: Final = "unknown"  # the bytes cannot tell (no msgpack, no class there)
# The reasons that lie in the stored class, whichever place holds it.
CLASS_CAUSES: Final = frozenset({
    UNIMPORTABLE, NOT_ALLOWED, ENUM_VALUE, MISSING_FIELDS, UNEXPECTED_FIELDS, REJECTED
})
# PostgresSaver keeps a channel value that is a str, int, float or bool (an enum with such a mixin
# included) as JSON in its checkpoints table, without its class (measured with
# langgraph-checkpoint-postgres 3.2: v1 itself gets its str enum back as a str).
INLINE: Final = "inline"


def explain(
    stored: Any, allowed: Collection[tuple[str, ...]] | None, loaded: object
) -> Explanation:
    """``allowed``: the strict allowlist the serializer runs with (``None``: permissive)."""
    if stored is NOT_FOUND:
        return Explanation(UNKNOWN, None)
    if not isinstance(stored, Stored):
        return Explanation(PLAIN_DATA, None)
    key = (stored.module, stored.name)
    if allowed is not None and key not in lg_msgpack.SAFE_MSGPACK_TYPES and key not in allowed:
        return Explanation(NOT_ALLOWED, key)
    try:
        cls = getattr(importlib.import_module(stored.module), stored.name)
    except Exception:
        return Explanation(UNIMPORTABLE, key)
    if not isinstance(cls, type):
        return Explanation(UNIMPORTABLE, key)
    if isinstance(loaded, cls):
        return Explanation(OTHER_CLASS, key)
    if issubclass(cls, enum.Enum):
        return Explanation(ENUM_VALUE, key, value=stored.payload)
    payload = stored.payload if isinstance(stored.payload, dict) else {}
    accepted, required = _parameters(cls)
    if accepted is not None:
        unexpected = tuple(name for name in payload if name not in accepted)
        if unexpected:
            return Explanation(UNEXPECTED_FIELDS, key, unexpected)
    missing = tuple(name for name in required if name not in payload)
    if missing:
        return Explanation(MISSING_FIELDS, key, missing)
    return Explanation(REJECTED, key)


def _parameters(cls: type) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    """The keyword arguments ``cls(**fields)`` accepts (``None``: any), and those it requires."""
    if dataclasses.is_dataclass(cls):
        fields = [field for field in dataclasses.fields(cls) if field.init]
        required = tuple(
            field.name for field in fields
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        return frozenset(field.name for field in fields), required
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        defaults = getattr(cls, "_field_defaults", {})
        return frozenset(cls._fields), tuple(name for name in cls._fields if name not in defaults)
    model_fields = getattr(cls, "__pydantic_fields__", None)
    if isinstance(model_fields, dict):
        required = tuple(name for name, field in model_fields.items() if field.is_required())
        return None, required
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None, ()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None, ()
    return (
        frozenset(p.name for p in parameters),
        tuple(p.name for p in parameters if p.default is p.empty and p.kind is not p.VAR_POSITIONAL),
    )
