"""Channel types (``lgstate-channel-type``): what each channel of a graph accepts, and whether a
written item fits it.

LangGraph types every update as ``dict[str, Any]``, so mypy never compares what a node, a
``Command`` or ``update_state`` writes with the channel it writes. A channel without a reducer
stores what it is given (its field's declared type says what the nodes after it read); a channel
``Annotated[T, reducer]`` hands what it is given to the reducer, whose second parameter says what it
takes; ``Annotated[T, SomeChannel]`` is a channel class of its own. Which of these a field declares
is read from its class's syntax, and kept in its metadata (``routes/channel_specs.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from mypy.erasetype import erase_typevars
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    ARG_POS,
    CallExpr,
    ConditionalExpr,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FuncBase,
    FuncDef,
    ListExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    SetExpr,
    StarExpr,
    StrExpr,
    SymbolNode,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.subtypes import is_same_type, is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    ProperType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    UnionType,
    flatten_nested_unions,
)

from mypy_lgstate.core import rules, write_messages
from mypy_lgstate.routes import discovery, displays
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.channel_specs import ADD_MESSAGES, UNTRACKED, Spec, specs_of
from mypy_lgstate.routes.schemas import schema_items

OVERWRITE: Final = "langgraph.types.Overwrite"
TOPIC: Final = "langgraph.channels.topic.Topic"
# Channel classes that store the last value written as it is: their field's declared type is what
# the nodes after a write read (measured: tests/test_verdicts_runtime.py).
_VALUE_CHANNELS: Final = frozenset(
    {"langgraph.channels.last_value.LastValue", UNTRACKED,
     "langgraph.channels.ephemeral_value.EphemeralValue"}
)
_MAPPINGS: Final = frozenset({"builtins.dict", "typing.Mapping", "typing.MutableMapping"})
# ``operator`` functions typeshed declares with ``Any`` parameters: ``current + value`` works for a
# value of the channel's own type.
_OPERATORS: Final = frozenset(
    f"{module}.{name}"
    for module in ("operator", "_operator")
    for name in ("add", "iadd", "or_", "ior", "and_", "iand", "mul", "imul", "concat", "iconcat")
)


# What a graph's channels accept ------------------------------------------------------------------


class Channel(NamedTuple):
    """One schema's declaration of a channel."""

    schema: TypeInfo
    declared: Type
    accepts: Type | None  # None: anything (an untyped reducer, a channel class, unknown metadata)
    reducer: str | None  # the reducer's fullname
    untracked: bool = False
    # No reducer: the channel stores what it is given (no channel class at all, or one of
    # ``_VALUE_CHANNELS``), an ``Overwrite`` object too.
    stores_as_given: bool = False
    # A reducer that returns what is written ("last write wins"): the channel stores the value
    # itself, whose own verdict holds, as without a reducer (``Overwrite`` is unwrapped).
    keeps_written: bool = False
    # A ``Topic``: it appends each value written, an ``Overwrite`` object too.
    topic: bool = False


def graph_channels(
    schemas: Sequence[TypeInfo],
    modules: dict[str, MypyFile],
    lookup: Callable[[str], SymbolNode | None],
) -> dict[str, list[Channel]]:
    """Each key of the graph with every declaration of it; a key of a class whose channels are not
    known is left out."""
    found: dict[str, list[Channel]] = {}
    for info in schemas:
        declared = schema_items(info)
        specs = specs_of(info, modules)
        if specs is None:
            continue
        for key, typ in declared:
            found.setdefault(key, []).append(_channel(info, typ, specs.get(key), lookup))
    return found


def _channel(
    info: TypeInfo, declared: Type, spec: Spec | None, lookup: Callable[[str], SymbolNode | None]
) -> Channel:
    if spec is None:
        return Channel(info, declared, declared, None, stores_as_given=True)
    kind, fullname = spec
    if kind == "channel":
        value = fullname in _VALUE_CHANNELS
        return Channel(
            info, declared, declared if value else None, None, fullname == UNTRACKED, value,
            topic=fullname == TOPIC,
        )
    if kind == "keep":
        return Channel(info, declared, declared, fullname or "<lambda>", keeps_written=True)
    if kind != "reducer":
        return Channel(info, declared, None, None)
    if fullname in _OPERATORS:
        return Channel(info, declared, declared, fullname)
    return Channel(info, declared, _second_parameter(lookup(fullname)), fullname)


def _second_parameter(node: SymbolNode | None) -> Type | None:
    """What a reducer ``(current, update)`` declares for ``update``: ``None`` for anything. A
    callable instance is called through its class's ``__call__`` (``self`` bound)."""
    bound = 0
    function: SymbolNode | FuncBase | None = node
    if isinstance(node, Var):
        instance = proper_type(node.type)
        function = instance.type.get_method("__call__") if isinstance(instance, Instance) else None
        bound = 1
    if isinstance(function, Decorator):
        function = function.func  # the function as written (``add_messages`` is wrapped)
    if not isinstance(function, FuncDef):
        return None
    signature = proper_type(function.type)
    if not isinstance(signature, CallableType):
        return None
    positional = [typ for kind, typ in zip(signature.arg_kinds, signature.arg_types) if kind == ARG_POS]
    if len(positional) < bound + 2:
        return None
    accepts = erase_typevars(positional[bound + 1])
    return None if isinstance(proper_type(accepts), AnyType) else accepts


# Does a written item fit? -------------------------------------------------------------------------


def fits(written: Type, accepts: Type) -> bool:
    """Whether a value of ``written`` is one of ``accepts``, reading containers covariantly: a
    ``list[AIMessage]`` written where ``list[AnyMessage]`` is declared is one."""
    if is_subtype(written, accepts):
        return True
    w, a = proper_type(written), proper_type(accepts)
    if isinstance(w, UnionType):
        return all(fits(item, a) for item in w.items)
    if isinstance(a, UnionType):
        return any(fits(w, item) for item in a.items)
    if isinstance(w, Instance) and w.last_known_value is not None:
        if is_subtype(w.last_known_value, a):
            return True
    if isinstance(w, Instance) and isinstance(a, TypedDictType):
        # A dict is what a TypedDict is at run time: its values must fit every item.
        return w.type.fullname in _MAPPINGS and len(w.args) == 2 and all(
            fits(w.args[1], item) for item in a.items.values()
        )
    if isinstance(w, TypedDictType) and isinstance(a, Instance):
        return a.type.fullname in _MAPPINGS and len(a.args) == 2 and all(
            fits(item, a.args[1]) for item in w.items.values()
        )
    if isinstance(w, Instance) and isinstance(a, Instance) and w.type.has_base(a.type.fullname):
        mapped = map_instance_to_supertype(w, a.type)
        return len(mapped.args) == len(a.args) and all(
            fits(x, y) for x, y in zip(mapped.args, a.args)
        )
    return False


# The str literals every assignment of a local variable gives it (``None``: a value computed at run
# time, a parameter, an attribute), for a ``str`` mypy widened from them.
Literals = Callable[[NameExpr], "frozenset[str] | None"]


def _no_literals(name: NameExpr) -> frozenset[str] | None:
    return None


# The model or dataclass a structured-output call returns an instance of, where mypy sees
# ``dict | BaseModel`` (routes/structured_output.py).
Structured = Callable[[Expression], "TypeInfo | None"]


def _no_structured(expr: Expression) -> TypeInfo | None:
    return None


def expr_fits(
    expr: Expression,
    accepts: Type,
    type_of: Callable[[Expression], Type | None],
    literals: Literals = _no_literals,
) -> bool:
    """Whether what ``expr`` evaluates to is one of ``accepts``. A display or a comprehension is
    judged by its items: mypy inferred it without the channel's type as context (``{"a": 1}`` as
    ``dict[str, int]``, ``[("user", "hi")]`` as ``list[tuple[str, str]]``, ``[x for x in names]`` as
    ``list[Any]``), and a display is a value of any type its items fit (a TypedDict,
    ``list[MessageLikeRepresentation]``). ``a if c else b`` fits when both do. A ``str`` fits a
    ``Literal[...]`` channel when it is a local whose every assignment is one of its values
    (``literals``): mypy widens ``status = "closed"`` to ``str``."""
    a = proper_type(accepts)
    if isinstance(a, AnyType):
        return True
    if isinstance(expr, ConditionalExpr):
        return expr_fits(expr.if_expr, a, type_of, literals) and expr_fits(
            expr.else_expr, a, type_of, literals
        )
    displayed = isinstance(expr, (DictExpr, ListExpr, SetExpr, TupleExpr))
    if displayed and isinstance(a, UnionType):
        return any(expr_fits(expr, item, type_of, literals) for item in a.items)
    written = type_of(expr)
    if written is None:
        return True
    if isinstance(expr, DictExpr) and isinstance(a, TypedDictType):
        return _missing_key(expr, a) is None and all(
            expr_fits(value, a, type_of, literals)
            if key is None
            else isinstance(key, StrExpr) and key.value in a.items
            and expr_fits(value, a.items[key.value], type_of, literals)
            for key, value in expr.items
        )
    if isinstance(expr, (DictExpr, DictionaryComprehension)) and isinstance(a, Instance):
        if len(a.args) == 2 and _container_fits(written, a):
            return all(
                expr_fits(value, a, type_of, literals)
                if key is None
                else expr_fits(key, a.args[0], type_of, literals)
                and expr_fits(value, a.args[1], type_of, literals)
                for key, value in displays.dict_items(expr)
            )
    if isinstance(expr, TupleExpr) and isinstance(a, TupleType):
        return len(expr.items) == len(a.items) and all(
            expr_fits(item, typ, type_of, literals) for item, typ in zip(expr.items, a.items)
        )
    if isinstance(expr, NameExpr) and _literal_values(a) is not None:
        assigned = literals(expr)
        allowed = _literal_values(a)
        if assigned is not None and allowed is not None and assigned <= allowed:
            return True
    items = displays.items(expr)
    if items is not None and isinstance(a, Instance) and a.args:
        starred = any(isinstance(item, StarExpr) for item in items)
        if _container_fits(written, a) and not starred:
            return all(expr_fits(item, a.args[0], type_of, literals) for item in items)
    return fits(written, a)


def _literal_values(accepts: ProperType) -> frozenset[str] | None:
    """The str values of a ``Literal[...]`` (or a union of them), else ``None``."""
    members = accepts.items if isinstance(accepts, UnionType) else [accepts]
    values = [proper_type(member) for member in members]
    if not all(isinstance(value, LiteralType) and isinstance(value.value, str) for value in values):
        return None
    return frozenset(str(value.value) for value in values if isinstance(value, LiteralType))


def missing_key(expr: Expression, accepts: Type) -> str | None:
    """The first required key of the TypedDict ``accepts`` that the dict display ``expr`` lacks,
    below it too (``account.tier``): the nodes after it read it, and get ``KeyError``."""
    a = proper_type(accepts)
    if not isinstance(expr, DictExpr) or not isinstance(a, TypedDictType):
        return None
    missing = _missing_key(expr, a)
    if missing is not None:
        return missing
    for key, value in expr.items:
        if isinstance(key, StrExpr) and key.value in a.items:
            inner = missing_key(value, a.items[key.value])
            if inner is not None:
                return f"{key.value}.{inner}"
    return None


def _missing_key(expr: DictExpr, accepts: TypedDictType) -> str | None:
    if any(key is None for key, _ in expr.items):
        return None  # ``**other`` may hold it
    present = {key.value for key, _ in expr.items if isinstance(key, StrExpr)}
    required = (key for key in accepts.items if key in accepts.required_keys)
    return next((key for key in required if key not in present), None)


def _container_fits(written: Type, accepts: Instance) -> bool:
    """Whether the display's own class (``list``, ``dict``...) is one of ``accepts``'s class."""
    proper: ProperType = proper_type(written)
    if isinstance(proper, TupleType):
        proper = proper.partial_fallback
    return isinstance(proper, Instance) and proper.type.has_base(accepts.type.fullname)


def accepted(channels: list[Channel], overwrite: bool) -> list[Type] | None:
    """What the declarations of a key accept (``None``: anything). ``Overwrite(v)`` bypasses the
    reducer: ``v`` is stored as the channel's value."""
    found: list[Type] = []
    for channel in channels:
        accepts = channel.declared if overwrite and channel.reducer is not None else channel.accepts
        if accepts is None:
            return None
        found.append(accepts)
    return found


def state_kind(info: TypeInfo) -> str:
    """``pydantic`` before ``dataclass``: mypy records models as dataclass-like classes too."""
    if info.typeddict_type is not None:
        return "typeddict"
    if any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
        return "pydantic"
    return "dataclass"


def mismatch(
    writer: str,
    key: str,
    expr: Expression,
    declared: list[Channel] | None,
    type_of: Callable[[Expression], Type | None],
    type_name: Callable[[Type], str],
    *,
    json_profile: bool,
    literals: Literals = _no_literals,
    structured: Structured = _no_structured,
) -> str | None:
    """The message for ``expr`` written to channel ``key``, when none of its declarations
    accepts it (``None`` when one does, or when nothing is known)."""
    if not declared:
        return None
    overwrite = _is_overwrite(expr)
    first = declared[0]
    if overwrite and all(channel.stores_as_given or channel.topic for channel in declared):
        # Only a reducer unwraps it: LangGraph stores the Overwrite object (langgraph#9019), and a
        # Topic appends it as an item.
        return write_messages.overwrite_message(
            writer,
            key,
            declared_name(first.declared, type_name),
            first.schema.name,
            state_kind(first.schema),
            json_profile and not first.untracked,
            topic=first.topic,
        )
    if overwrite:
        assert isinstance(expr, CallExpr)
        expr = expr.args[0]
    elif any(channel.reducer == ADD_MESSAGES for channel in declared):
        rejected = rejected_message(expr)
        if rejected is not None:
            item, role = rejected
            return write_messages.rejected_message(writer, key, item, role)
    accepts = accepted(declared, overwrite)
    written = type_of(expr)
    if accepts is None or written is None or isinstance(proper_type(written), AnyType):
        return None
    made = object_in_scalar(expr, accepts, type_of, structured)
    if made is not None and not overwrite:
        info, origin = made
        scalar = accepts[0]
        return write_messages.object_in_scalar_message(
            writer,
            key,
            info.name,
            origin,
            declared_name(first.declared, type_name),
            first.schema.name,
            state_kind(first.schema),
            [name for name, typ in schema_items(info) if is_same_type(typ, scalar)],
            json_profile and not first.untracked,
        )
    if any(expr_fits(expr, typ, type_of, literals) for typ in accepts):
        return None
    # A reducer that keeps what is written stores it as a channel without one does.
    reducer = None if overwrite or first.keeps_written else first.reducer
    shown = displays.shown_type(expr, type_of) or written
    proper = proper_type(shown)
    if isinstance(proper, Instance) and proper.last_known_value is not None and any(
        _names_literals(typ) for typ in accepts
    ):
        shown = proper.last_known_value  # the member it is not: ``Literal['archived']``
    return write_messages.channel_type_message(
        writer,
        key,
        type_name(shown),
        declared_name(first.declared, type_name),
        first.schema.name,
        state_kind(first.schema),
        reducer.rpartition(".")[2] if reducer is not None else None,
        declared_name(accepts[0], type_name),
        missing=missing_key(expr, accepts[0]) if len(accepts) == 1 else None,
        raises=reducer_raises(reducer, accepts[0], written),
    )


_SCALARS: Final = frozenset({"builtins.str", "builtins.int", "builtins.float", "builtins.bool"})


def object_in_scalar(
    expr: Expression,
    accepts: Sequence[Type],
    type_of: Callable[[Expression], Type | None],
    structured: Structured = _no_structured,
) -> tuple[TypeInfo, str | None] | None:
    """The model or dataclass whose instance ``expr`` is, written where every accepted type is a
    ``str``, ``int``, ``float`` or ``bool`` (and the call it comes from, when mypy does not name
    the class): how the serializer would write the object says nothing of what the channel holds,
    its field of that type does."""
    if not accepts or not all(
        isinstance(p, Instance) and p.type.fullname in _SCALARS and p.last_known_value is None
        for p in map(proper_type, accepts)
    ):
        return None
    info = structured(expr)
    if info is not None:
        return info, f"with_structured_output({info.name})"
    written = proper_type(type_of(expr))
    if isinstance(written, Instance) and written.type.fullname not in _SCALARS:
        if discovery.is_schema(written.type) and written.type.typeddict_type is None:
            return written.type, None
    return None


def reducer_raises_on(
    expr: Expression, declared: list[Channel] | None, type_of: Callable[[Expression], Type | None]
) -> bool:
    """Whether the reducer of the channel ``expr`` is written to raises on it in that step (``list
    + tuple``, ``dict | list``, a dict ``add_messages`` makes no message of): the value is never
    stored, so what the serializer would make of it says nothing (``mismatch`` reports it)."""
    if not declared or _is_overwrite(expr) or declared[0].keeps_written:
        return False
    if any(channel.reducer == ADD_MESSAGES for channel in declared):
        return rejected_message(expr) is not None
    written = type_of(expr)
    accepts = accepted(declared, overwrite=False)
    if written is None or not accepts or any(expr_fits(expr, typ, type_of) for typ in accepts):
        return False
    return reducer_raises(declared[0].reducer, accepts[0], written) is not None


def rejected_message(expr: Expression) -> tuple[str, str | None] | None:
    """The first item of ``expr`` (a display written to an ``add_messages`` channel, or one of its
    items) that LangChain cannot make a message of, by its literal keys and role: how to show it,
    and the role no message has (``None``: a dict without ``role`` (or ``type``) and ``content``).
    Whatever is not literal is not judged."""
    items = expr.items if isinstance(expr, ListExpr) else [expr]
    for item in items:
        if isinstance(item, DictExpr):
            keys = {key.value: value for key, value in item.items if isinstance(key, StrExpr)}
            if len(keys) != len(item.items) or "lc" in keys:
                continue  # ``**other`` may hold them; a serialized message's envelope
            role = keys.get("role", keys.get("type"))
            if role is None or "content" not in keys:
                return "{" + ", ".join(f'"{key}": ...' for key in keys) + "}", None
            if isinstance(role, StrExpr) and role.value not in rules.MESSAGE_DICT_ROLES:
                return f'{{..., "role": "{role.value}"}}', role.value
        elif isinstance(item, TupleExpr) and len(item.items) == 2:
            role = item.items[0]
            if isinstance(role, StrExpr) and role.value not in rules.MESSAGE_ROLES:
                return f'("{role.value}", ...)', role.value
    return None


def _names_literals(typ: Type) -> bool:
    return any(isinstance(proper_type(item), LiteralType) for item in flatten_nested_unions([typ]))


# Reducers that join the current value with what is written (``current + value``, ``current |
# value``): for a channel of these classes, a value of no class the operator takes raises TypeError
# in that step (measured: tests/test_verdicts_runtime.py, tests/test_reducers_runtime.py).
# Per reducer: for each channel class it joins, how messages name it and the classes it takes; and
# the verb.
_Joined = dict[str, tuple[str, tuple[str, ...]]]
_JOINING: Final[dict[str, tuple[_Joined, str]]] = {
    **{
        f"{module}.{name}": (
            {"builtins.list": ("list", ("builtins.list",)), "builtins.tuple": ("tuple", ("builtins.tuple",))},
            "concatenated with",
        )
        for module in ("operator", "_operator")
        for name in ("add", "concat", "iadd", "iconcat")
    },
    **{
        f"{module}.{name}": (
            {
                "builtins.dict": ("dict", ("builtins.dict",)),
                "builtins.set": ("set", ("builtins.set", "builtins.frozenset")),
                "builtins.frozenset": ("frozenset", ("builtins.set", "builtins.frozenset")),
            },
            "joined (|) with",
        )
        for module in ("operator", "_operator")
        for name in ("or_", "ior")
    },
}


def reducer_raises(reducer: str | None, accepts: Type, written: Type) -> str | None:
    """Why ``reducer`` raises TypeError when it joins a channel of ``accepts`` with a value of
    ``written`` (``a list can only be concatenated with a list``): every value of ``written`` is of
    a class the operator does not take. ``None`` when some value may be taken (a ``Sequence`` may
    be a list)."""
    joining = _JOINING.get(reducer or "")
    a = proper_type(accepts)
    if joining is None or not isinstance(a, Instance) or a.type.fullname not in joining[0]:
        return None
    (name, taken), verb = joining[0][a.type.fullname], joining[1]
    for item in flatten_nested_unions([written]):
        proper = proper_type(item)
        if isinstance(proper, TupleType):
            proper = proper.partial_fallback
        elif isinstance(proper, LiteralType):
            proper = proper.fallback
        if not isinstance(proper, Instance):
            return None
        if any(proper.type.has_base(cls) for cls in taken):
            return None
        if proper.type.is_abstract or proper.type.is_protocol:
            return None  # ``Sequence``, ``Mapping``, ``Iterable``: a taken value may be one
    return f"a {name} can only be {verb} a {name}"


def declared_name(typ: Type, type_name: Callable[[Type], str]) -> str:
    """A type as declared: ``Messages``, ``list[AnyMessage]``, not the unions they stand for."""
    if isinstance(typ, TypeAliasType) and typ.alias is not None and not typ.args:
        return typ.alias.name
    if isinstance(typ, Instance) and any(isinstance(arg, TypeAliasType) for arg in typ.args):
        args = ", ".join(declared_name(arg, type_name) for arg in typ.args)
        return f"{type_name(typ.copy_modified(args=[]))}[{args}]"
    return type_name(typ)


def _is_overwrite(expr: Expression) -> bool:
    return (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, RefExpr)
        and expr.callee.fullname == OVERWRITE
        and len(expr.args) == 1
    )
