"""What a schema class declares: the fields of a model or dataclass (read once per build), the keys
of any schema class with their declared types, and the channels of a graph with these schemas.

Read from declared types alone (a TypedDict's items, the ``Var`` of each field), so the routes that
find graph state and the checks that judge it read the same fields in every mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy.nodes import TypeInfo, Var
from mypy.types import Type

from mypy_lgstate.core import rules

Field = tuple[str, Var, TypeInfo]  # a field's name, its variable, and the class declaring it

# The fields of each class read so far in this build (every check of a graph asks for its classes'
# fields again). Kept only where a class, once analysed, never changes within the build: not in the
# daemon, which merges a module analysed again into its old tree in place (``keep_fields``).
_fields: Final[dict[TypeInfo, tuple[Field, ...]]] = {}
_keep = False


def keep_fields(keep: bool) -> None:
    """Whether the fields of each class are kept (set by each new plugin object before its first
    use of the checks); forgets those kept so far."""
    global _keep
    _keep = keep
    _fields.clear()


def model_fields(info: TypeInfo) -> tuple[Field, ...]:
    """The fields of a pydantic model or dataclass, in definition order, with their declaring class.

    A dataclass's fields are the ones its ``__init__`` and ``dataclasses.fields()`` know (mypy's
    dataclass metadata), underscore names included; a pydantic model's skip private attributes
    (``_name``), which ``model_dump()`` leaves out.
    """
    known = _fields.get(info)
    if known is None:
        known = _read_fields(info)
        if _keep:
            _fields[info] = known
    return known


def _read_fields(info: TypeInfo) -> tuple[Field, ...]:
    metadata = info.metadata.get("dataclass")
    names: set[str] | None = None
    if metadata is not None and "attributes" in metadata:
        names = {attr["name"] for attr in metadata["attributes"] if not attr.get("is_init_var")}
    fields: dict[str, Field] = {}
    for base, name, var in instance_attributes(info):
        if names is not None:
            if name not in names:
                continue
        elif name.startswith("_") or name == "model_config":
            continue
        fields[name] = (name, var, base)
    return tuple(fields.values())


def instance_attributes(
    info: TypeInfo, *, unannotated: bool = False
) -> list[tuple[TypeInfo, str, Var]]:
    """Every annotated instance attribute of a model or dataclass and its bases (what
    ``typing.get_type_hints`` returns, less ``ClassVar``), base classes first; ``unannotated``
    adds those whose type mypy inferred (``_cache = PrivateAttr(...)``)."""
    found: list[tuple[TypeInfo, str, Var]] = []
    for base in reversed(info.mro):
        if base.fullname in rules.PYDANTIC_MODELS or base.fullname == "builtins.object":
            continue
        for name, sym in base.names.items():
            node = sym.node
            if (
                isinstance(node, Var)
                and node.type is not None
                and not node.is_classvar
                and (unannotated or not node.is_inferred)
            ):
                found.append((base, name, node))
    return found


def schema_items(info: TypeInfo) -> list[tuple[str, Type]]:
    """A schema class's keys with their declared types (a TypedDict's items, a model's or
    dataclass's fields)."""
    if info.typeddict_type is not None:
        return list(info.typeddict_type.items.items())
    return [(name, var.type) for name, var, _ in model_fields(info) if var.type is not None]


def schema_keys(info: TypeInfo) -> list[str]:
    if info.typeddict_type is not None:
        return list(info.typeddict_type.items)
    return [name for name, _, _ in model_fields(info)]


def graph_channels(schemas: Sequence[TypeInfo]) -> tuple[frozenset[str], str] | None:
    """The channel names of a graph with these schemas (state first) and the state schema's name;
    ``None`` when no schema is a known class."""
    if not schemas:
        return None
    names: set[str] = set()
    for info in schemas:
        names.update(schema_keys(info))
    return frozenset(names), schemas[0].name


def channel_types(schemas: Sequence[TypeInfo]) -> dict[str, list[Type]]:
    """The declared type of each channel of a graph with these schemas, by key (a key declared by
    several schemas has each of their types)."""
    found: dict[str, list[Type]] = {}
    for info in schemas:
        for key, typ in schema_items(info):
            found.setdefault(key, []).append(typ)
    return found
