"""What a write site or a node's update restates of the graph's own schemas, and so adds nothing.

A value written to a channel under exactly the type the graph declares for that channel
(``Send("work", {"order": state["order"]})``, ``graph.invoke({"order": order})`` with ``order: Order``,
a node declared ``-> State``) holds what the schema's own check already reported where the class
became graph state: reporting it again at every write would count one problem many times. Only what
a write adds is reported: an item of another type, or a key the schemas do not declare. Node bodies
follow the same rule (``bodies.declared_as``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from mypy.nodes import TypeInfo
from mypy.subtypes import is_same_type
from mypy.types import Instance, TupleType, Type, TypedDictType, get_proper_type

from mypy_lgstate.checker.findings import Findings
from mypy_lgstate.checker.models import model_fields
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core import rules
from mypy_lgstate.core.messages import field_part, key_part
from mypy_lgstate.routes import discovery, sites

# The write sites whose dict items update the channels of the graph key by key (``Send.arg`` is the
# state a node of the same graph starts from).
CHANNEL_ITEM_ROOTS: Final = sites.CHANNEL_ROOTS | {"Send.arg"}

Declared = Mapping[str, Sequence[Type]]


def is_declared(key: str, typ: Type, declared: Declared) -> bool:
    """Whether ``typ`` is a type the graph declares for channel ``key``."""
    return any(is_same_type(typ, channel) for channel in declared.get(key, ()))


def restated_item(value: sites.Value, root: str, declared: Declared) -> bool:
    """Whether ``value`` is one item of a write site's dict display, ``root["key"]``, of the type
    the graph declares for that channel."""
    if not declared or root not in CHANNEL_ITEM_ROOTS or not value.path.startswith(root):
        return False
    rest = value.path[len(root):]
    return any(
        rest == key_part(key) and is_declared(key, value.type, declared) for key in declared
    )


def restated_update_fields(update: Type, node_root: str, declared: Declared) -> list[str]:
    """The paths (``node().key``) of the fields of a node's declared update type (a TypedDict, a
    model or a dataclass) whose type is the one the graph declares for that channel."""
    if not declared:
        return []
    proper = get_proper_type(update)
    if isinstance(proper, TypedDictType):
        items = list(proper.items.items())
    elif isinstance(proper, Instance) and discovery.is_schema(proper.type):
        items = [(key, var.type) for key, var, _ in model_fields(proper.type) if var.type is not None]
    else:
        return []
    return [node_root + field_part(key) for key, typ in items if is_declared(key, typ, declared)]


def revalidated_tuples(
    walker: Walker, found: Findings, node_root: str, schemas: Sequence[TypeInfo], declared: Declared
) -> Findings:
    """``found``, a node's update, worded as its state schema's fields are when that schema is a
    pydantic model: LangGraph rebuilds the model before each node, so a tuple written to a channel
    declared as a tuple is a tuple again inside nodes (only ``get_state()`` shows the stored list).
    Measured in ``tests/test_precision_runtime.py``."""
    if not schemas or not any(base.fullname in rules.PYDANTIC_MODELS for base in schemas[0].mro):
        return found
    tuple_channels = [
        node_root + field_part(key)
        for key, types in declared.items()
        if any(_is_tuple(typ) for typ in types)
    ]
    return walker.revalidated(found, tuple_channels) if tuple_channels else found


def _is_tuple(typ: Type) -> bool:
    proper = get_proper_type(typ)
    return isinstance(proper, TupleType) or (
        isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple"
    )
