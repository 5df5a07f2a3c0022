"""``Send(node, arg)`` payloads against the input of the node they run (``lgstate-channel-type``).

A ``Send`` runs its node with ``arg`` as the node's input, as it is: LangGraph neither validates,
coerces nor converts it to the node's input schema, and checkpoints it as it is
(tests/test_send_payloads_runtime.py). What the node reads is what the node function's first
parameter declares (mypy checks its body against it), or, without an annotation, its
``add_node(..., input_schema=...)`` class. So a dict display sent to a node whose input is a
TypedDict is compared item by item with the TypedDict's declared items (no reducer runs on a
payload); one sent to a node whose input is a pydantic model or a dataclass is wrong as a whole: the
node gets the dict. A key the input does not declare is handed over too, and read by nothing the
node declares: it is not reported. An item that reads a field of another class
(``state["search_query"]``) has that field's declared type: the message names that declaration too,
since either may be the wrong one.

The target is known when the node's name is a string literal and this module's builders add nodes
of that name (``add_node("work", work)``, ``add_node(work)``) with one input schema between them:
read once per module tree from its syntax and declarations, as
``builder_calls.node_graph_classes`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    Decorator,
    DictExpr,
    Expression,
    FuncDef,
    IndexExpr,
    LambdaExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    StrExpr,
    TypeInfo,
)
from mypy.types import AnyType, Instance, Type, TypedDictType

from mypy_lgstate.checker import channels, errorcodes as codes
from mypy_lgstate.checker.report import fail
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core import write_messages
from mypy_lgstate.core.messages import key_part
from mypy_lgstate.routes import bodies, builder_calls, builders, discovery, displays
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import schema_items

ROOT: Final = "Send.arg"


class Target(NamedTuple):
    """A ``Send`` whose node's input schema is known, and the dict display it sends (a variable's
    displays, merged: ``payload = {...}; payload["k"] = v; Send("work", payload)``)."""

    node: str
    schema: TypeInfo
    payload: DictExpr
    sent: Expression  # the argument as written: the display, or the variable


class Sends:
    """The ``Send`` checks of one plugin object, with the input schema of each node the builders of
    a module add, by node name (``None`` when one of them is not known, or they differ), indexed
    once per module tree."""

    def __init__(self) -> None:
        self._by_module: dict[str, tuple[MypyFile, dict[str, TypeInfo | None]]] = {}

    def forget(self) -> None:
        self._by_module.clear()

    def check(self, api: TypeChecker, call: CallExpr, reported: set[str], walker: Walker) -> None:
        """``Send(node, arg)`` being checked: its payload against its node's input, when known."""
        target = self._target(call, api)
        if target is not None:
            _check_payload(api, target, reported, walker)

    def _target(self, call: CallExpr, api: TypeChecker) -> Target | None:
        tree = api.tree
        arguments = builder_calls.call_arguments(call, ("node", "arg"))
        node, sent = arguments.get("node"), arguments.get("arg")
        if sent is None:
            return None
        payload = sent
        if not isinstance(payload, DictExpr):
            function = api.scope.current_function()
            local = bodies.local_displays(payload, function or tree, call.line)
            if local:
                merged = [item for display in local for item in display.items]
                payload = DictExpr(merged)
                payload.set_line(call)
        if not isinstance(node, StrExpr) or not isinstance(payload, DictExpr):
            return None
        known = self._by_module.get(tree.fullname)
        if known is None or known[0] is not tree:
            known = self._by_module[tree.fullname] = (tree, node_input_schemas(tree))
        schema = known[1].get(node.value)
        return Target(node.value, schema, payload, sent) if schema is not None else None


def node_input_schemas(tree: MypyFile) -> dict[str, TypeInfo | None]:
    """Each node name the module's ``add_node`` calls give, with the input schema of its node."""
    found: dict[str, TypeInfo | None] = {}
    for scope, call, method in builder_calls.module_builder_calls(tree):
        if method != "add_node":
            continue
        name, schema = _added_node(call, scope)
        if name is not None:
            found[name] = schema if found.get(name, schema) is schema else None
    return found


def _added_node(call: CallExpr, scope: builders.Scope) -> tuple[str | None, TypeInfo | None]:
    """An ``add_node`` call's node name (LangGraph names a function by its ``__name__``) and the
    schema its node reads: its function's first-parameter class, else its ``input_schema=``."""
    arguments = builder_calls.call_arguments(call, ("node", "action"))
    node, action = arguments.get("node"), builder_calls.node_callable(arguments)
    name: str | None = None
    if isinstance(node, StrExpr):
        name = node.value
    elif action is node and isinstance(node, RefExpr):
        function = node.node.func if isinstance(node.node, Decorator) else node.node
        name = function.name if isinstance(function, FuncDef) else None
    schema: TypeInfo | None = None
    if action is not None and not isinstance(action, LambdaExpr):
        declared = builders.declared_callable(action, scope)
        schema = discovery.first_parameter_schema(declared) if declared is not None else None
    given = arguments.get("input_schema")
    if schema is None and given is not None:
        schema = discovery.schema_class(given, discovery.NO_TYPE)
    return name, schema


def _check_payload(api: TypeChecker, target: Target, reported: set[str], walker: Walker) -> None:
    """Report what of ``target``'s payload its node does not read as declared. An item the
    serializer checks already reported (``reported``: paths under ``Send.arg``) is not reported
    again, as at channel writes."""
    kind = channels.state_kind(target.schema)
    type_of, type_name = api.lookup_type_or_none, walker.type_name
    if kind != "typeddict":
        written = displays.shown_type(target.sent, type_of)
        if written is not None:
            message = write_messages.send_dict_message(
                target.node, type_name(written), target.schema.name, kind, walker.profile == "json"
            )
            fail(api, message, target.sent, codes.CHANNEL_TYPE)
        return
    declared = dict(schema_items(target.schema))
    function = api.scope.current_function()
    scope = function if function is not None else api.tree

    def literals(name: NameExpr) -> frozenset[str] | None:
        return displays.literal_assignments(name, scope)

    for key, value in target.payload.items:
        if not isinstance(key, StrExpr) or key.value not in declared:
            continue
        top = ROOT + key_part(key.value)
        if any(path == top or path.startswith((top + "[", top + "{", top + ".")) for path in reported):
            continue
        written = type_of(value)
        if written is None or isinstance(proper_type(written), AnyType):
            continue
        if channels.expr_fits(value, declared[key.value], type_of, literals):
            continue
        message = write_messages.send_item_message(
            target.node,
            key.value,
            type_name(displays.shown_type(value, type_of) or written),
            channels.declared_name(declared[key.value], type_name),
            target.schema.name,
            _declared_source(value, type_of),
        )
        fail(api, message, value, codes.CHANNEL_TYPE)


def _declared_source(
    value: Expression, type_of: Callable[[Expression], Type | None]
) -> tuple[str, str] | None:
    """Where the type of ``value`` is declared, when it reads a field of another class
    (``state["search_query"]``, ``state.search_query``): the field and its class."""
    if isinstance(value, IndexExpr) and isinstance(value.index, StrExpr):
        base = proper_type(type_of(value.base))
        if isinstance(base, TypedDictType) and value.index.value in base.items:
            return value.index.value, base.fallback.type.name
    if isinstance(value, MemberExpr):
        base = proper_type(type_of(value.expr))
        if isinstance(base, Instance) and discovery.is_schema(base.type):
            return value.name, base.type.name
    return None
