"""Strict msgpack: the allowlist that LangGraph's ``compile()`` will derive, computed from declared types.

This mirrors ``langgraph._internal._serde.collect_allowlist_from_schemas`` (see docs/rules.md,
"Strict msgpack"), including what it does not reach. At run time it walks ``get_type_hints(...,
include_extras=True)`` of each schema:

- Union / Optional / ``|``; the first argument of ``Annotated``, ``Required`` and ``NotRequired``
  (mypy has already stripped those). ``ReadOnly[...]`` is not unwrapped, so a TypedDict key declared
  ``ReadOnly`` contributes nothing;
- the arguments of ``list``, ``set``, ``tuple``, ``dict``, ``deque`` and ``frozenset`` only, never of
  ``Sequence``, ``Mapping`` or any other generic origin;
- NewTypes; the fields of a TypedDict class, but not of a parametrized generic TypedDict (``TD[int]``
  is a typing alias, not a TypedDict, at run time);
- pydantic models and dataclasses: the class is added, then every annotation of it and its bases is
  walked (private attributes of a model and underscore fields of a dataclass included). A parametrized
  generic dataclass (``DC[int]``) is an alias and is skipped; a parametrized generic model
  (``Box[int]``) is a class of its own, but its annotations are the generic ones (``T``), which add
  nothing, and it cannot be re-imported anyway;
- Enum classes are added. NamedTuples, ``SecretStr`` and PEP 695 / ``TypeAliasType`` aliases are not
  reached, nor is anything under them.

The plugin cannot see run-time failures of ``get_type_hints`` (a TypedDict whose annotations name
something imported only under ``TYPE_CHECKING`` contributes nothing at run time); it assumes the
annotations resolve.
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
)

from mypy_lgstate.checker.findings import UserClass
from mypy_lgstate.checker.generics import is_parametrized
from mypy_lgstate.core import rules
from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import instance_attributes


class Allowlists:
    """The allowlist the checks compare classes with: in strict msgpack mode, what ``compile()``
    derives from a graph's classes (memoized per set of classes), or nothing with
    ``derive_allowlist = false``; ``None`` in any other mode (no class is checked against one)."""

    def __init__(self, config: LGStateConfig) -> None:
        self.strict = config.profile == "msgpack" and config.strict_msgpack
        self._derive = config.derive_allowlist
        self._derived: dict[tuple[TypeInfo, ...], frozenset[str]] = {}

    def forget(self) -> None:
        self._derived.clear()

    def of_schemas(self, schemas: Iterable[TypeInfo]) -> frozenset[str] | None:
        """The allowlist of a graph whose classes are ``schemas``."""
        if not self.strict:
            return None
        if not self._derive:
            return frozenset()
        key = tuple(schemas)
        allowed = self._derived.get(key)
        if allowed is None:
            allowed = self._derived[key] = derive_allowlist(map(discovery.schema_type, key))
        return allowed

    def of_types(self, types: list[Type]) -> frozenset[str] | None:
        """The allowlist derived from the types of an ``@entrypoint``'s values."""
        if not self.strict:
            return None
        return derive_allowlist(types) if self._derive else frozenset()


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
            return  # a TypeAliasType object at run time: compile() does not look inside
        alias_key = ("alias", typ.alias.fullname if typ.alias else "", str(typ.args))
        if alias_key in seen:
            return
        seen.add(alias_key)
    _collect_proper(proper_type(typ), found, seen)


def _collect_proper(typ: ProperType, found: set[str], seen: set[object]) -> None:
    if isinstance(typ, UnionType):
        for item in typ.items:
            _collect(item, found, seen)
    elif isinstance(typ, TypedDictType):
        # A schema's own ``typeddict_type`` has the anonymous ``typing._TypedDict`` fallback; an
        # annotation's has the class (with its type arguments).
        info = typ.fallback.type
        key: object = info.fullname if info.typeddict_type is not None else id(typ)
        if is_parametrized(typ.fallback) or key in seen:
            return
        seen.add(key)
        for name, item in typ.items.items():
            if name not in typ.readonly_keys:
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
    elif info.is_enum:
        found.add(info.fullname)
    elif any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
        if not is_parametrized(typ):
            found.add(info.fullname)
        _collect_attributes(info, found, seen)
    elif "dataclass" in info.metadata and not is_parametrized(typ):
        found.add(info.fullname)
        _collect_attributes(info, found, seen)


def _collect_attributes(info: TypeInfo, found: set[str], seen: set[object]) -> None:
    """The declared annotations, type variables unexpanded, as ``get_type_hints`` returns them."""
    if _first_visit(info, seen):
        for _, _, var in instance_attributes(info):
            assert var.type is not None
            _collect(var.type, found, seen)


def _first_visit(info: TypeInfo, seen: set[object]) -> bool:
    if info.fullname in seen:
        return False
    seen.add(info.fullname)
    return True
