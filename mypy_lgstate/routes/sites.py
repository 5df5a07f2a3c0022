"""Write sites: where values enter a checkpoint other than through a state schema (docs/checks.md, "Write sites").

- Node return types (``add_node`` / ``add_sequence``): declared signatures only.
- ``Command(update=..., resume=...)``, ``Send(node, arg)``, ``interrupt(value)``, and the inputs of a
  compiled graph (``invoke`` and friends, ``update_state``). langgraph types these payloads as ``Any``;
  the plugin checks what the call passes. A display (``{...}``, ``[...]``, ``(...)``, ``{a, b}``) is
  checked item by item, each by its own inferred type, and reported on the item's own line; any other
  expression by its type.

Only the call being checked is read (its arguments and the declared signatures they name); the types
of the call's own arguments come from the checker's type map, where mypy put them a moment before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple, Protocol

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    CallExpr,
    ConditionalExpr,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FuncItem,
    ListComprehension,
    ListExpr,
    MypyFile,
    RefExpr,
    SetComprehension,
    SetExpr,
    StarExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.join import join_type_list
from mypy.server.subexpr import get_subexpressions
from mypy.plugin import FunctionContext, MethodContext
from mypy.subtypes import find_member
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    NoneType,
    Overloaded,
    ProperType,
    Type,
    TypedDictType,
    TupleType,
    TypeOfAny,
    UninhabitedType,
    UnionType,
)

from mypy_lgstate.core.messages import key_part
from mypy_lgstate.routes import discovery, displays
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import model_fields, schema_items

COMMAND: Final = "langgraph.types.Command"
OVERWRITE: Final = "langgraph.types.Overwrite"
BASE_MESSAGE: Final = "langchain_core.messages.base.BaseMessage"
_AWAITABLES: Final = {"typing.Coroutine": 2, "typing.Awaitable": 0}


# Node return types ------------------------------------------------------------------------------


class Node(NamedTuple):
    """A callable registered as a node: its name, its type, and the expression that names it."""

    name: str
    type: Type
    expr: Expression | None = None
    # How it is wrapped ("registered through traced()" for ``add_node("n", traced(fn))``, "decorated
    # with @traced"), by a wrapper whose result says nothing of what the node writes: the node is
    # the function it wraps.
    through: str | None = None
    # The wrapper: its call (``traced(fn)``), or the decorated function (``@traced``), whose body
    # tells what the node returns when its summary is read (``reach``).
    wrapper: Expression | None = None


def node_return_type(node_type: Type) -> Type | None:
    """The declared return type of a node callable (coroutines unwrapped); ``None`` when the node is
    a Runnable, a prebuilt node or a compiled subgraph, or its type is unknown."""
    proper = proper_type(node_type)
    if isinstance(proper, Overloaded):
        proper = proper.items[0]
    if isinstance(proper, Instance):
        if proper.type.has_base(discovery.RUNNABLE):
            return None
        if proper.type.fullname == "functools.partial" and proper.args:
            return _unwrap_awaitable(proper.args[0])
        call = find_member("__call__", proper, proper)
        if call is None:
            return None
        proper = proper_type(call)
    if not isinstance(proper, CallableType) or proper.is_type_obj():
        return None
    return _unwrap_iterator(_unwrap_awaitable(proper.ret_type))


# A generator node writes the last value it yields (``Iterator[Update]``, ``AsyncIterator[Update]``).
_ITERATORS: Final = frozenset(
    {
        "typing.Iterator", "typing.Iterable", "typing.Generator",
        "typing.AsyncIterator", "typing.AsyncIterable", "typing.AsyncGenerator",
    }
)


def is_iterator(typ: Type) -> bool:
    proper = proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname in _ITERATORS and bool(proper.args)


def _unwrap_iterator(ret: Type) -> Type:
    proper = proper_type(ret)
    return proper.args[0] if is_iterator(proper) and isinstance(proper, Instance) else ret


def _unwrap_awaitable(ret: Type) -> Type:
    proper = proper_type(ret)
    if isinstance(proper, Instance) and proper.type.fullname in _AWAITABLES:
        index = _AWAITABLES[proper.type.fullname]
        if len(proper.args) > index:
            return proper.args[index]
    return ret


class UpdateShape(NamedTuple):
    """What a node's declared return type says it writes."""

    checked: list[tuple[str, Type]]  # (path, type) pairs to walk
    keys: list[tuple[str, str]]  # (key, name of the update type) to match against the channels
    untyped: bool


def update_shape(ret: Type, node: str) -> UpdateShape:
    checked: list[tuple[str, Type]] = []
    keys: list[tuple[str, str]] = []
    untyped = False
    for part in union_items(proper_type(ret)):
        if isinstance(part, (NoneType,)) or (
            isinstance(part, Instance) and part.type.fullname == COMMAND
        ):
            continue
        if isinstance(part, AnyType):
            untyped = True
        elif isinstance(part, TypedDictType):
            # Walked whole: the walker decides each TypedDict class once, whatever the node.
            checked.append((f"{node}()", part))
            update_name = part.fallback.type.name
            keys.extend((key, update_name) for key in part.items)
        elif isinstance(part, Instance) and discovery.is_schema(part.type):
            for key, var, _ in model_fields(part.type):
                assert var.type is not None
                checked.append((f"{node}().{key}", var.type))
                keys.append((key, part.type.name))
        elif isinstance(part, Instance) and part.type.fullname in MAPPINGS:
            value = proper_type(part.args[1]) if len(part.args) == 2 else None
            if (
                value is None
                or isinstance(value, AnyType)
                or isinstance(value, Instance) and value.type.fullname == "builtins.object"
            ):
                untyped = True  # its body tells, when it is read (``bodies.is_loose``)
            else:
                checked.append((f"{node}(){{}}", value))
    return UpdateShape(checked, keys, untyped)


MAPPINGS: Final = frozenset({"builtins.dict", "typing.Mapping", "typing.MutableMapping"})


def union_items(typ: ProperType) -> Iterator[ProperType]:
    if isinstance(typ, UnionType):
        for item in typ.items:
            yield from union_items(proper_type(item))
    else:
        yield typ


def state_schema_of_enclosing_node(api: TypeChecker) -> TypeInfo | None:
    """The declared type of the first parameter of the function being checked, when it is a schema
    class: the state a node reads, used to approximate the graph's derived strict allowlist."""
    func = api.scope.current_function()
    if not isinstance(func, FuncItem) or not isinstance(func.type, CallableType):
        return None
    for kind, arg_type in zip(func.type.arg_kinds, func.type.arg_types):
        if kind != ARG_POS:
            continue
        proper = proper_type(arg_type)
        if isinstance(proper, TypedDictType):
            return proper.fallback.type
        if isinstance(proper, Instance) and discovery.is_schema(proper.type):
            return proper.type
        return None
    return None


# Write-site values ------------------------------------------------------------------------------

# Write sites whose payloads langgraph types as Any: callee -> {parameter: root of the reported path}.
FUNCTION_WRITE_SITES: Final = {
    "langgraph.types.Command": {"update": "Command.update", "resume": "Command.resume"},
    "langgraph.types.Send": {"arg": "Send.arg"},
    "langgraph.types.interrupt": {"value": "interrupt.value"},
}
GRAPH_INPUTS: Final = {
    "invoke": {"input": "invoke.input"},
    "ainvoke": {"input": "ainvoke.input"},
    "stream": {"input": "stream.input"},
    "astream": {"input": "astream.input"},
    "batch": {"inputs": "batch.inputs"},
    "abatch": {"inputs": "abatch.inputs"},
    "stream_events": {"input": "stream_events.input"},
    "astream_events": {"input": "astream_events.input"},
    "batch_as_completed": {"inputs": "batch_as_completed.inputs"},
    "abatch_as_completed": {"inputs": "abatch_as_completed.inputs"},
    "update_state": {"values": "update_state.values"},
    "aupdate_state": {"values": "aupdate_state.values"},
    "bulk_update_state": {"supersteps": "bulk_update_state.supersteps"},
    "abulk_update_state": {"supersteps": "abulk_update_state.supersteps"},
}

# Write sites whose values update channels one key at a time, with how messages name the writer.
CHANNEL_TYPE_WRITERS: Final = {
    "Command.update": "Command.update",
    "update_state.values": "update_state",
    "aupdate_state.values": "aupdate_state",
    # Each update of a bulk update (``bulk_updates`` roots it under its superstep and index).
    "bulk_update_state.supersteps": "bulk_update_state",
    "abulk_update_state.supersteps": "abulk_update_state",
}


class TypeMap(Protocol):
    """Where the types of a write's expressions are read: the checker's type map, or the types of
    an update rebuilt from a summary (``reach.Typer``)."""

    def lookup_type_or_none(self, node: Expression) -> Type | None: ...

    def named_generic_type(self, name: str, args: list[Type]) -> Instance: ...


class Value(NamedTuple):
    """One value to check at a write site: its path, the expression it came from, and its type."""

    path: str
    expr: Expression
    type: Type
    shown: Type | None = None  # the type to name in messages, when ``type`` is a hollow container


def values_of(expr: Expression, path: str, api: TypeMap) -> Iterator[Value]:
    """The values inside ``expr``: the items of displays (recursively), else the expression itself.

    A set or tuple display is also a value of its own (JSON has no set; a tuple comes back as a
    list): it is checked as a "hollow" container, without its items, which are checked one by one.
    Likewise a dict display's non-str keys. ``Overwrite(value)`` stands for its value: the channel
    unwraps it before anything is stored.
    """
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        if expr.callee.fullname == OVERWRITE and len(expr.args) == 1:
            yield from values_of(expr.args[0], path, api)
            return
    if isinstance(expr, DictExpr):
        for key, value in expr.items:
            if key is None:  # ``**other``: checked by its type
                yield from _typed(value, f"{path}{{**}}", api)
            elif isinstance(key, StrExpr):
                yield from values_of(value, path + key_part(key.value), api)
            else:
                key_type = api.lookup_type_or_none(key)
                if key_type is not None:
                    hollow = api.named_generic_type("builtins.dict", [key_type, UninhabitedType()])
                    item_type = api.lookup_type_or_none(value) or AnyType(TypeOfAny.special_form)
                    shown = api.named_generic_type("builtins.dict", [key_type, item_type])
                    yield Value(path, key, hollow, shown)
                yield from values_of(value, path + "{}", api)
    elif isinstance(expr, (ListExpr, TupleExpr, SetExpr)):
        container = api.lookup_type_or_none(expr)
        if container is not None and not isinstance(expr, ListExpr):
            yield Value(path, expr, _hollow(container), _display_type(expr, container, api))
        for index, item in enumerate(expr.items):
            yield from values_of(item, f"{path}[{index}]", api)
    elif isinstance(expr, ConditionalExpr):  # either value may be written
        yield from values_of(expr.if_expr, path, api)
        yield from values_of(expr.else_expr, path, api)
    elif isinstance(expr, (ListComprehension, SetComprehension, DictionaryComprehension)):
        # Inferred where LangGraph expects ``Any`` (``list[Any]``): its items' own types tell.
        typ = displays.shown_type(expr, api.lookup_type_or_none)
        if typ is not None:
            yield Value(path, expr, typ)
    else:
        yield from _typed(expr, path, api)


def update_pairs(expr: Expression, path: str, api: TypeChecker) -> Iterator[Value] | None:
    """The values of ``Command(update=[("key", value), ...])``, the list-of-pairs form, which
    LangGraph reads as ``{"key": value, ...}`` (a list of such pairs held in a variable: the type
    of its values, under ``Command.update{}``); ``None`` when ``expr`` is neither."""
    if not isinstance(expr, (ListExpr, TupleExpr)):
        values = _pair_value(api.lookup_type_or_none(expr))
        return iter([Value(path + "{}", expr, values)]) if values is not None else None
    if not expr.items:
        return None
    pairs = []
    for item in expr.items:
        if not (
            isinstance(item, TupleExpr) and len(item.items) == 2 and isinstance(item.items[0], StrExpr)
        ):
            return None
        key, value = item.items
        assert isinstance(key, StrExpr)
        pairs.append((path + key_part(key.value), value))
    return (found for item_path, value in pairs for found in values_of(value, item_path, api))


def _pair_value(typ: Type | None) -> Type | None:
    """``V`` of a sequence of ``(str, V)`` pairs."""
    proper = proper_type(typ)
    if not isinstance(proper, Instance) or proper.type.fullname not in _PAIR_SEQUENCES:
        return None
    values = []
    for pair in union_items(proper_type(proper.args[0])) if proper.args else ():
        if not (isinstance(pair, TupleType) and len(pair.items) == 2 and _is_str(pair.items[0])):
            return None
        values.append(pair.items[1])
    return make_simplified_union(values) if values else None


_PAIR_SEQUENCES: Final = frozenset({"builtins.list", "builtins.tuple", "typing.Sequence"})


def _display_type(expr: TupleExpr | SetExpr, inferred: Type, api: TypeMap) -> Type:
    """The type to name for a set or tuple display: from its items' own types. Passed where
    LangGraph expects ``Any``, a display is inferred with ``Any`` items (``set[Any]``)."""
    items = [api.lookup_type_or_none(item) for item in expr.items]
    if not items or any(item is None for item in items):
        return inferred
    known = [item for item in items if item is not None]
    if isinstance(expr, SetExpr):
        return api.named_generic_type("builtins.set", [join_type_list(known)])
    if any(isinstance(item, StarExpr) for item in expr.items):
        return inferred
    return TupleType(known, api.named_generic_type("builtins.tuple", [join_type_list(known)]))


def _hollow(container: Type) -> Type:
    """``container`` with its item types emptied: the walker then judges the container alone."""
    proper = proper_type(container)
    if isinstance(proper, TupleType):
        return proper.copy_modified(items=[UninhabitedType() for _ in proper.items])
    if isinstance(proper, Instance):
        return proper.copy_modified(args=[UninhabitedType() for _ in proper.args])
    return container


def _typed(expr: Expression, path: str, api: TypeMap) -> Iterator[Value]:
    typ = api.lookup_type_or_none(expr)
    if typ is not None:
        yield Value(path, expr, typ)


# ``Send`` imported from its deprecated home: the module's ``__getattr__`` returns it, so mypy types it
# as Any and calls no plugin hook for it.
DEPRECATED_SEND: Final = "langgraph.constants.Send"


def deprecated_sends(file: MypyFile) -> list[Expression]:
    """The payloads of the ``Send(node, arg)`` calls of a module that imports ``Send`` from
    ``langgraph.constants``, read from its syntax once the module is checked."""
    found = []
    for expr in get_subexpressions(file):
        if (
            isinstance(expr, CallExpr)
            and isinstance(expr.callee, RefExpr)
            and expr.callee.fullname == DEPRECATED_SEND
        ):
            for index, (arg, name) in enumerate(zip(expr.args, expr.arg_names)):
                if name == "arg" or (name is None and index == 1):
                    found.append(arg)
    return found


def call_values(
    ctx: FunctionContext | MethodContext, wanted: dict[str, str]
) -> Iterator[tuple[Expression, str]]:
    """The argument expressions of the call bound to the parameter names in ``wanted``, each with the
    root of its path (``{"update": "Command.update"}``)."""
    for formal, kinds, exprs in zip(ctx.callee_arg_names, ctx.arg_kinds, ctx.args):
        if formal not in wanted:
            continue
        for kind, expr in zip(kinds, exprs):
            if kind in (ARG_STAR, ARG_STAR2):
                continue  # ``*args`` / ``**kwargs`` at the call: not a value we can place
            yield expr, wanted[formal]


def is_unchecked(typ: Type) -> bool:
    """A value whose type says nothing (``Any`` from an untyped source): nothing to report."""
    proper = proper_type(typ)
    return isinstance(proper, AnyType) and proper.type_of_any != TypeOfAny.explicit


def is_control_object(typ: Type) -> bool:
    """``Command`` / ``Send`` given as a graph input or inside an update: LangGraph acts on them, and
    their own construction is the write site that gets checked. An ``Overwrite`` holds ``Any``: the
    channel unwraps it, and its value is checked where it is built."""
    proper = proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname in _CONTROL_OBJECTS


_CONTROL_OBJECTS: Final = frozenset({COMMAND, "langgraph.types.Send", OVERWRITE})


def messages_channels(schemas: Sequence[TypeInfo]) -> frozenset[str]:
    """The keys of ``schemas`` declared as a list of LangChain messages (``messages:
    Annotated[list[AnyMessage], add_messages]``): a value written there is a message-like that the
    reducer turns into a message, such as ``("user", "text")``, and is not stored as it is written."""
    found = set()
    for info in schemas:
        for key, typ in schema_items(info):
            proper = proper_type(typ)
            if (
                isinstance(proper, Instance)
                and proper.type.fullname in LISTS
                and proper.args
                and all(_is_message(item) for item in union_items(proper_type(proper.args[0])))
            ):
                found.add(key)
    return frozenset(found)


LISTS: Final = frozenset({"builtins.list", "typing.Sequence", "typing.MutableSequence"})


def _is_message(typ: ProperType) -> bool:
    return isinstance(typ, Instance) and typ.type.has_base(BASE_MESSAGE)


def is_message_like(typ: Type) -> bool:
    """``("role", "text")``, or a list of such pairs: what ``add_messages`` turns into messages."""
    proper = proper_type(typ)
    if isinstance(proper, Instance) and proper.type.fullname in LISTS and proper.args:
        proper = proper_type(proper.args[0])
    if isinstance(proper, TupleType) and len(proper.items) == 2:
        return all(_is_str(item) for item in proper.items)
    return False


def _is_str(typ: Type) -> bool:
    proper = proper_type(typ)
    if isinstance(proper, LiteralType):
        proper = proper.fallback
    return isinstance(proper, Instance) and proper.type.fullname == "builtins.str"


# Roots whose top-level value updates the graph's channels one field at a time (a model or dataclass
# given there is read field by field, not stored whole); ``inputs`` roots hold a list of such values.
CHANNEL_ROOTS: Final = frozenset(
    {"Command.update", "invoke.input", "ainvoke.input", "stream.input", "astream.input",
     "stream_events.input", "astream_events.input", "update_state.values", "aupdate_state.values",
     "batch.inputs", "abatch.inputs", "batch_as_completed.inputs", "abatch_as_completed.inputs",
     "bulk_update_state.supersteps", "abulk_update_state.supersteps"}
)


# Roots whose value LangGraph also keeps whole, as the first checkpoint's ``__start__`` value.
START_ROOTS: Final = frozenset(
    {"invoke.input", "ainvoke.input", "stream.input", "astream.input", "stream_events.input",
     "astream_events.input", "batch.inputs", "abatch.inputs", "batch_as_completed.inputs",
     "abatch_as_completed.inputs"}
)
_BULK_ROOTS: Final = frozenset({"bulk_update_state.supersteps", "abulk_update_state.supersteps"})
STATE_UPDATE: Final = "langgraph.types.StateUpdate"


def bulk_updates(expr: Expression, root: str) -> Iterator[tuple[Expression, str]]:
    """The values that update the channels under ``root``: the argument itself, except for
    ``bulk_update_state(config, [[(values, as_node), StateUpdate(values, ...)], ...])``, where each
    update's ``values`` is applied like ``update_state``'s (rooted at
    ``bulk_update_state.supersteps[step][update]``). Only displays tell: the declared type
    ``Sequence[Sequence[StateUpdate]]`` holds ``dict[str, Any]`` values."""
    if root not in _BULK_ROOTS:
        yield expr, root
        return
    if not isinstance(expr, (ListExpr, TupleExpr)):
        return
    for step, superstep in enumerate(expr.items):
        if not isinstance(superstep, (ListExpr, TupleExpr)):
            continue
        for index, update in enumerate(superstep.items):
            values = _update_values(update)
            if values is not None:
                yield values, f"{root}[{step}][{index}]"


def _update_values(update: Expression) -> Expression | None:
    if isinstance(update, TupleExpr) and update.items:
        return update.items[0]
    if (
        isinstance(update, CallExpr)
        and isinstance(update.callee, RefExpr)
        and update.callee.fullname == STATE_UPDATE
    ):
        for arg, name in zip(update.args, update.arg_names):
            if name in (None, "values"):
                return arg
    return None


# The three functions below are about a value under a root whose value updates the channels key by
# key: a write site of CHANNEL_ROOTS, or what a node's body returns (``bodies``). The caller decides.


def channels_schema(value: Value, root: str) -> TypeInfo | None:
    """The model or dataclass class of ``value`` when it stands where LangGraph reads its fields as
    channel updates (``Command(update=State(...))``, ``graph.invoke(State(...))``)."""
    proper = proper_type(value.type)
    if (
        _is_top_level(value, root)
        and isinstance(proper, Instance)
        and discovery.is_schema(proper.type)
    ):
        return proper.type
    return None


def is_schema_instance(value: Value, root: str, schemas: Sequence[TypeInfo]) -> bool:
    """Whether ``value`` is a whole instance of one of ``schemas`` written as channel updates
    (``graph.invoke(state)``, ``{**state, ...}``), checked where that class became graph state. A
    ``Send`` or ``interrupt`` payload is stored whole, as a value of its own: it is checked there."""
    if not schemas:
        return False
    if not (_is_top_level(value, root) or value.path == f"{root}{{**}}"):
        return False
    proper = proper_type(value.type)
    if isinstance(proper, TypedDictType):
        return proper.fallback.type in schemas
    return isinstance(proper, Instance) and proper.type in schemas


def is_channel_value(value: Value, root: str) -> bool:
    """Whether ``value`` is the whole value written to one channel: ``Command.update["key"]``,
    ``invoke.input["key"]``, ``batch.inputs[0]["key"]``."""
    if not value.path.startswith(root):
        return False
    rest = value.path[len(root):]
    if rest.startswith("[") and not rest.startswith('["'):
        rest = rest[rest.index("]") + 1:]
    return rest.startswith('["') and rest.endswith('"]') and rest.count('"]') == 1


def _is_top_level(value: Value, root: str) -> bool:
    return value.path == root or (
        root.endswith(".inputs") and value.path[len(root):].strip("[]").isdigit()
    )
