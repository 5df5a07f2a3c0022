"""Strict msgpack: the allowlist that LangGraph's ``compile()`` will derive, computed from declared types.

This mirrors ``langgraph._internal._serde.collect_allowlist_from_schemas`` (see RULES.md, "Strict
msgpack"), including what it does not reach: it walks Union / Optional, the first argument of
Annotated / Required / NotRequired (mypy has already stripped those), the arguments of ``list``,
``set``, ``tuple``, ``dict``, ``deque`` and ``frozenset`` only, NewTypes, TypedDict fields, and the
fields of pydantic models and dataclasses (adding the class); Enum classes are added. It never adds
NamedTuples, ``SecretStr``, parametrized generic dataclasses or PEP 695 ``type`` aliases, and it
does not look through ``Sequence``, ``Mapping`` or any other generic origin.
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.nodes import TypeInfo
from mypy.types import (
    Instance,
    ProperType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    UnionType,
    get_proper_type,
)

from mypy_lgstate import rules
from mypy_lgstate.walker import UserClass, model_fields


def derive_allowlist(schemas: Iterable[Type]) -> frozenset[str]:
    """The fullnames of the classes ``compile()`` adds to the allowlist for these schemas."""
    found: set[str] = set()
    seen: set[object] = set()
    for schema in schemas:
        _collect(schema, found, seen)
    return frozenset(found)


def is_allowed(user_class: UserClass, allowed: frozenset[str], configured: Iterable[str]) -> bool:
    """Whether the class is on the effective allowlist: derived, or named (or its module named) in
    ``allowed_msgpack_modules``."""
    if user_class.fullname in allowed:
        return True
    module = user_class.fullname.rpartition(".")[0]
    return any(entry == user_class.fullname or entry == module for entry in configured)


def _collect(typ: Type, found: set[str], seen: set[object]) -> None:
    if isinstance(typ, TypeAliasType):
        if typ.alias is not None and typ.alias.python_3_12_type_alias:
            return  # a TypeAliasType at run time: compile() does not look inside
        key: object = ("alias", typ.alias.fullname if typ.alias else "", str(typ.args))
        if key in seen:
            return
        seen.add(key)
    proper = get_proper_type(typ)
    _collect_proper(proper, found, seen)


def _collect_proper(typ: ProperType, found: set[str], seen: set[object]) -> None:
    if isinstance(typ, UnionType):
        for item in typ.items:
            _collect(item, found, seen)
    elif isinstance(typ, TypedDictType):
        if not _first_visit(typ.fallback.type, seen):
            return
        for item in typ.items.values():
            _collect(item, found, seen)
    elif isinstance(typ, TupleType):
        if not typ.partial_fallback.type.is_named_tuple:
            for item in typ.items:
                _collect(item, found, seen)
    elif isinstance(typ, Instance):
        _collect_instance(typ, found, seen)


def _collect_instance(typ: Instance, found: set[str], seen: set[object]) -> None:
    info = typ.type
    if info.is_newtype and info.bases:
        _collect(info.bases[0], found, seen)
    elif info.fullname in rules.ALLOWLIST_WALKED_ORIGINS:
        for arg in typ.args:
            _collect(arg, found, seen)
    elif info.typeddict_type is not None:
        _collect_proper(info.typeddict_type, found, seen)
    elif info.is_enum:
        found.add(info.fullname)
    elif any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro) or (
        "dataclass" in info.metadata and not (typ.args and info.type_vars)
    ):
        found.add(info.fullname)
        if _first_visit(info, seen):
            for _, var, _ in model_fields(info):
                if var.type is not None:
                    _collect(var.type, found, seen)


def _first_visit(info: TypeInfo, seen: set[object]) -> bool:
    if info.fullname in seen:
        return False
    seen.add(info.fullname)
    return True
