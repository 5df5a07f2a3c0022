"""Channel types: what each channel of a graph accepts, and whether a written item fits it.

LangGraph types every update as ``dict[str, Any]``, so mypy never compares what a node, a
``Command`` or ``update_state`` writes with the channel it writes. A channel without a reducer
stores what it is given (its field's declared type says what the nodes after it read); a channel
``Annotated[T, reducer]`` hands what it is given to the reducer, whose second parameter says what it
takes; ``Annotated[T, SomeChannel]`` is a channel class of its own.

mypy strips ``Annotated[...]`` metadata from the types it keeps (a TypedDict's items, a field's
``Var.type``), and no class hook fires for a TypedDict. The metadata is therefore read from the
class's syntax (``AssignmentStmt.unanalyzed_type``) while it is there: ``record_module`` runs at the
end of each module's check, before mypy writes the module's cache, and stores the facts in each
schema class's ``TypeInfo.metadata``, which mypy caches with the class; a warm run, a parallel worker
and the daemon read them back. A class whose module is still being checked (the graph in the same
module, or the same import cycle) still has its syntax, read directly. A class with neither (never
seen by this plugin version) is not checked: whether it has reducers is unknown.

A library module that imports no ``Annotated`` and nothing of LangGraph or LangChain
(``state_modules.may_declare_channels``) declares no channel of its own: of its classes only the
TypedDicts are read (their bases are in their syntax alone), and a model or dataclass of it has the
channels of its bases. The standard library's stubs are not read at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, NamedTuple

from mypy.erasetype import erase_typevars
from mypy.join import join_type_list
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    ARG_POS,
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    ConditionalExpr,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FakeInfo,
    FuncDef,
    MDEF,
    ListExpr,
    MypyFile,
    NameExpr,
    IfStmt,
    IndexExpr,
    ListComprehension,
    OverloadedFuncDef,
    RefExpr,
    SetComprehension,
    SetExpr,
    StarExpr,
    Statement,
    StrExpr,
    SymbolNode,
    SymbolTableNode,
    TryStmt,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.server.trigger import make_trigger
from mypy.subtypes import is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    ProperType,
    RawExpressionType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    UnboundType,
    UnionType,
    flatten_nested_unions,
)

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.state_modules import is_stdlib_stub, may_declare_channels
from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.aliases import proper_type

METADATA_KEY: Final = "mypy_lgstate.checker.channels"
OVERWRITE: Final = "langgraph.types.Overwrite"
BASE_CHANNEL: Final = "langgraph.channels.base.BaseChannel"
UNTRACKED: Final = "langgraph.channels.untracked_value.UntrackedValue"
# Channel classes that store the last value written as it is: their field's declared type is what
# the nodes after a write read (measured: tests/test_verdicts_runtime.py).
_VALUE_CHANNELS: Final = frozenset(
    {"langgraph.channels.last_value.LastValue", UNTRACKED,
     "langgraph.channels.ephemeral_value.EphemeralValue"}
)
# How mypy keeps a call in ``Annotated[...]`` metadata (``UntrackedValue(httpx.Client)``): an invalid
# type whose note names the callee.
_CALL_NOTE: Final = re.compile(
    r"Suggestion: use (?P<name>[\w.]+)\[\.\.\.\] instead of (?P=name)\(\.\.\.\)"
)
ADD_MESSAGES: Final = "langgraph.graph.message.add_messages"
_ANNOTATED: Final = frozenset({"Annotated"})
_WRAPPERS: Final = frozenset({"Required", "NotRequired", "ReadOnly"})
# ``operator`` functions typeshed declares with ``Any`` parameters: ``current + value`` works for a
# value of the channel's own type.
_MAPPINGS: Final = frozenset({"builtins.dict", "typing.Mapping", "typing.MutableMapping"})
_LIBRARY_BASES: Final = frozenset({"pydantic.main.BaseModel", "pydantic.v1.main.BaseModel"})
_OPERATORS: Final = frozenset(
    f"{module}.{name}"
    for module in ("operator", "_operator")
    for name in ("add", "iadd", "or_", "ior", "and_", "iand", "mul", "imul", "concat", "iconcat")
)

# A field's channel, as recorded: ``("reducer", fullname)``, ``("channel", fullname)`` for a
# channel class, or ``("unknown", "")`` for metadata the plugin cannot resolve (a call, a lambda).
Spec = tuple[str, str]


# Recording --------------------------------------------------------------------------------------


def record_module(file: MypyFile, modules: dict[str, MypyFile], *, daemon: bool = False) -> None:
    """Record the channels of every schema class defined in ``file`` (its tree is still there),
    inherited ones included: a TypedDict's bases are not in its MRO, and a cached class has no
    syntax left to find them by. ``daemon``: also as a member of the class (``DAEMON_MEMBER``)."""
    if is_stdlib_stub(file.path):
        return  # the standard library declares no graph state
    own_channels = may_declare_channels(file)
    for defn in _class_defs(file.defs):
        info = defn.info
        if isinstance(info, FakeInfo):
            continue
        # Without channels of its own, a model or dataclass is read from its bases (``specs_of``).
        if info.typeddict_type is not None or (own_channels and discovery.is_schema(info)):
            specs = _specs_from_syntax(defn, file, modules)
            if specs is not None:
                recorded = {name: list(spec) for name, spec in specs.items()}
                info.metadata[METADATA_KEY] = recorded
                if daemon:
                    _record_member(info, recorded, modules)


# dmypy rechecks what uses a class when the class's interface changes, and it compares no metadata:
# an edit to a reducer alone (the declared type unchanged) changes nothing it compares. In the daemon
# the channels are therefore also a hidden member of the class, typed by a literal of their record:
# an edit changes the member, which fires its trigger, and every check that read the channels
# depends on that trigger (``channels_trigger``).
DAEMON_MEMBER: Final = "__mypy_lgstate_channels__"


def _record_member(
    info: TypeInfo, recorded: dict[str, list[str]], modules: dict[str, MypyFile]
) -> None:
    builtins = modules.get("builtins")
    str_symbol = builtins.names.get("str") if builtins is not None else None
    if str_symbol is None or not isinstance(str_symbol.node, TypeInfo):
        return
    text = json.dumps(recorded, sort_keys=True)
    member = Var(DAEMON_MEMBER, LiteralType(text, Instance(str_symbol.node, [])))
    member.info = info
    member._fullname = f"{info.fullname}.{DAEMON_MEMBER}"
    member.is_classvar = True
    info.names[DAEMON_MEMBER] = SymbolTableNode(MDEF, member, plugin_generated=True)


def channels_trigger(info: TypeInfo) -> str:
    """The daemon's trigger that fires when the channels recorded for ``info`` change."""
    return make_trigger(f"{info.fullname}.{DAEMON_MEMBER}")


def _class_defs(body: Sequence[Statement]) -> list[ClassDef]:
    """The classes of a module's top level and of the blocks in it (``if TYPE_CHECKING:``,
    ``try:``), nested ones included; a function's are local to it and never a graph's elsewhere.

    Every module is walked, libraries included, so the walk compares exact node types: a statement
    is rarely a class, and this is the plugin's largest cost in a cold run that checks nothing."""
    found: list[ClassDef] = []
    pending = [body]
    while pending:
        for stmt in pending.pop():
            kind = type(stmt)
            if kind is ClassDef:
                assert isinstance(stmt, ClassDef)
                found.append(stmt)
                pending.append(stmt.defs.body)
            elif kind is IfStmt:
                assert isinstance(stmt, IfStmt)
                pending.extend(_reachable((*stmt.body, stmt.else_body)))
            elif kind is TryStmt:
                assert isinstance(stmt, TryStmt)
                blocks = (stmt.body, *stmt.handlers, stmt.else_body, stmt.finally_body)
                pending.extend(_reachable(blocks))
            elif kind is Block:
                assert isinstance(stmt, Block)
                pending.append(stmt.body)
    return found


def _reachable(blocks: Iterable[Block | None]) -> Iterator[list[Statement]]:
    # A block mypy found unreachable (another Python version's) was never analyzed: its classes
    # have no ``TypeInfo``.
    for block in blocks:
        if block is not None and not block.is_unreachable:
            yield block.body


def specs_of(info: TypeInfo, modules: dict[str, MypyFile]) -> dict[str, Spec] | None:
    """The channel of each field of the class that declares one (other fields are plain
    channels), inherited ones included; ``None`` when neither its metadata nor its syntax tells."""
    recorded = info.metadata.get(METADATA_KEY)
    if isinstance(recorded, dict):
        return {name: (spec[0], spec[1]) for name, spec in recorded.items()}
    file = modules.get(info.module_name)
    if file is None:
        return None
    if (
        info.typeddict_type is None
        and is_library(file.path)
        and (file.is_cache_skeleton or not may_declare_channels(file))
    ):
        # A library's model or dataclass without a record declares no channel of its own (or is
        # one ``_class_defs`` does not reach): read alike from the cache and from its syntax.
        return _inherited_specs(info, modules)
    if is_stdlib_stub(file.path):
        return None  # the standard library's TypedDicts are not read, from syntax or cache alike
    if info.defn.defs.body:
        return _specs_from_syntax(info.defn, file, modules)
    return None


def _inherited_specs(info: TypeInfo, modules: dict[str, MypyFile]) -> dict[str, Spec] | None:
    """The channels of a model or dataclass of a library module that declares no channel of its
    own, which records none: those of its bases (its MRO), whether it has the syntax or comes from
    the cache, so that every run reads it alike; its own fields are plain channels."""
    return _bases_specs(_model_bases(info), modules)


def _bases_specs(bases: Iterable[TypeInfo], modules: dict[str, MypyFile]) -> dict[str, Spec] | None:
    """The channels ``bases`` declare, the nearer base's winning; ``None`` when one is unknown."""
    found: dict[str, Spec] = {}
    for base in bases:
        inherited = specs_of(base, modules)
        if inherited is None:
            return None
        found.update(inherited)
    return found


def _specs_from_syntax(
    defn: ClassDef, file: MypyFile, modules: dict[str, MypyFile]
) -> dict[str, Spec] | None:
    found = _bases_specs(_schema_bases(defn), modules)
    if found is None:
        return None
    for stmt in defn.defs.body:
        if not (
            isinstance(stmt, AssignmentStmt)
            and len(stmt.lvalues) == 1
            and isinstance(stmt.lvalues[0], NameExpr)
            and isinstance(stmt.unanalyzed_type, UnboundType)
        ):
            continue
        name = stmt.lvalues[0].name
        found.pop(name, None)  # redeclared: this class's annotation decides
        spec = _annotation_spec(stmt.unanalyzed_type, file)
        if spec is not None:
            found[name] = spec
    return found


def _schema_bases(defn: ClassDef) -> Iterator[TypeInfo]:
    """The schema classes ``defn`` inherits fields from, farthest first: a TypedDict's base
    TypedDicts (written in its bases: mypy gives a TypedDict no MRO of them), else its MRO."""
    info = defn.info
    if info.typeddict_type is None:
        yield from _model_bases(info)
        return
    for expr in [*defn.removed_base_type_exprs, *defn.base_type_exprs]:
        if isinstance(expr, IndexExpr):
            expr = expr.base
        if isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo):
            if expr.node.typeddict_type is not None:
                yield expr.node


def _model_bases(info: TypeInfo) -> Iterator[TypeInfo]:
    """The schema classes a model or dataclass inherits fields from, farthest first."""
    for base in reversed(info.mro[1:]):
        if discovery.is_schema(base) and base.fullname not in _LIBRARY_BASES:
            yield base


def _annotation_spec(annotation: UnboundType, file: MypyFile) -> Spec | None:
    """What ``Annotated[T, ...]`` makes of a field, the way LangGraph reads it: a channel class
    anywhere in the metadata, else a reducer as its last item (``_get_channel``)."""
    last = annotation.name.rpartition(".")[2]
    if last in _WRAPPERS and annotation.args and isinstance(annotation.args[0], UnboundType):
        return _annotation_spec(annotation.args[0], file)
    if last not in _ANNOTATED or len(annotation.args) < 2:
        return None
    resolved = [_resolve(item, file) for item in annotation.args[1:]]
    for kind, fullname in resolved:
        if kind == "channel":
            return (kind, fullname)
    kind, fullname = resolved[-1]
    return None if kind == "inert" else (kind, fullname)


def _resolve(item: Type, file: MypyFile) -> Spec:
    if isinstance(item, RawExpressionType):
        # A string or number is inert; an instance of a channel class (``UntrackedValue(T)``, which
        # LangGraph uses as it is) is that channel; any other expression is not known.
        if item.literal_value is not None:
            return ("inert", "")
        call = _CALL_NOTE.fullmatch(item.note or "")
        callee = _lookup_name(call["name"], file) if call is not None else None
        if isinstance(callee, TypeInfo) and callee.has_base(BASE_CHANNEL):
            return ("channel", callee.fullname)
        return ("unknown", "")
    if not isinstance(item, UnboundType):
        return ("unknown", "")
    node = _lookup_name(item.name, file)
    if isinstance(node, TypeInfo):
        if node.has_base(BASE_CHANNEL):
            return ("channel", node.fullname)
        return ("unknown", "")
    if isinstance(node, (FuncDef, Decorator, OverloadedFuncDef)):
        return ("reducer", node.fullname)
    if isinstance(node, Var):
        proper = proper_type(node.type)
        if isinstance(proper, Instance) and proper.type.has_base(BASE_CHANNEL):
            return ("channel", proper.type.fullname)
        if isinstance(proper, Instance) and proper.type.get_method("__call__") is None:
            return ("inert", "")  # ``PrivateStateAttr`` and other markers
    return ("unknown", "")


def _lookup_name(name: str, file: MypyFile) -> SymbolNode | None:
    parts = name.split(".")
    sym = file.names.get(parts[0])
    node = sym.node if sym is not None else None
    for part in parts[1:]:
        if not isinstance(node, (MypyFile, TypeInfo)):
            return None
        sym = node.names.get(part)
        node = sym.node if sym is not None else None
    return node


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


def graph_channels(
    schemas: Sequence[TypeInfo],
    modules: dict[str, MypyFile],
    lookup: Callable[[str], SymbolNode | None],
) -> dict[str, list[Channel]]:
    """Each key of the graph with every declaration of it; a key of a class whose channels are not
    known is left out."""
    found: dict[str, list[Channel]] = {}
    for info in schemas:
        declared = _declared_items(info)
        specs = specs_of(info, modules)
        if specs is None:
            continue
        for key, typ in declared:
            found.setdefault(key, []).append(_channel(info, typ, specs.get(key), lookup))
    return found


def _declared_items(info: TypeInfo) -> list[tuple[str, Type]]:
    from mypy_lgstate.routes.sites import schema_items

    return schema_items(info)


def _channel(
    info: TypeInfo, declared: Type, spec: Spec | None, lookup: Callable[[str], SymbolNode | None]
) -> Channel:
    if spec is None:
        return Channel(info, declared, declared, None, stores_as_given=True)
    kind, fullname = spec
    if kind == "channel":
        value = fullname in _VALUE_CHANNELS
        return Channel(
            info, declared, declared if value else None, None, fullname == UNTRACKED, value
        )
    if kind != "reducer":
        return Channel(info, declared, None, None)
    if fullname in _OPERATORS:
        return Channel(info, declared, declared, fullname)
    return Channel(info, declared, _second_parameter(lookup(fullname)), fullname)


def _second_parameter(node: SymbolNode | None) -> Type | None:
    """What a reducer ``(current, update)`` declares for ``update``: ``None`` for anything."""
    if isinstance(node, Decorator):
        node = node.func  # the function as written (``add_messages`` is wrapped)
    if not isinstance(node, FuncDef):
        return None
    signature = proper_type(node.type)
    if not isinstance(signature, CallableType):
        return None
    positional = [typ for kind, typ in zip(signature.arg_kinds, signature.arg_types) if kind == ARG_POS]
    if len(positional) < 2:
        return None
    accepts = erase_typevars(positional[1])
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
    if isinstance(w, Instance) and isinstance(a, LiteralType) and w.type is a.fallback.type:
        # A ``str`` where ``Literal["open", "closed"]`` is declared: mypy widens a local to its
        # class (``status = "closed"``), which proves nothing about its value.
        return w.last_known_value is None
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


def expr_fits(expr: Expression, accepts: Type, type_of: Callable[[Expression], Type | None]) -> bool:
    """Whether what ``expr`` evaluates to is one of ``accepts``. A display or a comprehension is
    judged by its items: mypy inferred it without the channel's type as context (``{"a": 1}`` as
    ``dict[str, int]``, ``[("user", "hi")]`` as ``list[tuple[str, str]]``, ``[x for x in names]`` as
    ``list[Any]``), and a display is a value of any type its items fit (a TypedDict,
    ``list[MessageLikeRepresentation]``). ``a if c else b`` fits when both do."""
    a = proper_type(accepts)
    if isinstance(a, AnyType):
        return True
    if isinstance(expr, ConditionalExpr):
        return expr_fits(expr.if_expr, a, type_of) and expr_fits(expr.else_expr, a, type_of)
    displayed = isinstance(expr, (DictExpr, ListExpr, SetExpr, TupleExpr))
    if displayed and isinstance(a, UnionType):
        return any(expr_fits(expr, item, type_of) for item in a.items)
    written = type_of(expr)
    if written is None:
        return True
    if isinstance(expr, DictExpr) and isinstance(a, TypedDictType):
        return _missing_key(expr, a) is None and all(
            expr_fits(value, a, type_of)
            if key is None
            else isinstance(key, StrExpr) and key.value in a.items
            and expr_fits(value, a.items[key.value], type_of)
            for key, value in expr.items
        )
    if isinstance(expr, (DictExpr, DictionaryComprehension)) and isinstance(a, Instance):
        if len(a.args) == 2 and _container_fits(written, a):
            return all(
                expr_fits(value, a, type_of)
                if key is None
                else expr_fits(key, a.args[0], type_of) and expr_fits(value, a.args[1], type_of)
                for key, value in _dict_items(expr)
            )
    if isinstance(expr, TupleExpr) and isinstance(a, TupleType):
        return len(expr.items) == len(a.items) and all(
            expr_fits(item, typ, type_of) for item, typ in zip(expr.items, a.items)
        )
    items = _items(expr)
    if items is not None and isinstance(a, Instance) and a.args:
        starred = any(isinstance(item, StarExpr) for item in items)
        if _container_fits(written, a) and not starred:
            return all(expr_fits(item, a.args[0], type_of) for item in items)
    return fits(written, a)


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


def _items(expr: Expression) -> list[Expression] | None:
    """The items of a list, set or tuple display, or the one item a list or set comprehension
    makes (``None`` for any other expression)."""
    if isinstance(expr, (ListExpr, SetExpr, TupleExpr)):
        return expr.items
    if isinstance(expr, (ListComprehension, SetComprehension)):
        return [expr.generator.left_expr]
    return None


def _dict_items(
    expr: DictExpr | DictionaryComprehension,
) -> list[tuple[Expression | None, Expression]]:
    if isinstance(expr, DictExpr):
        return expr.items
    return [(expr.key, expr.value)]


def shown_type(expr: Expression, type_of: Callable[[Expression], Type | None]) -> Type | None:
    """The type to name for what ``expr`` writes: a display or a comprehension passed where
    LangGraph expects ``Any`` is inferred with ``Any`` items (``dict[Any, Any]``); its items' own
    types say more."""
    if isinstance(expr, ConditionalExpr):
        branches = [shown_type(expr.if_expr, type_of), shown_type(expr.else_expr, type_of)]
        known = [typ for typ in branches if typ is not None]
        return make_simplified_union(known) if len(known) == 2 else type_of(expr)
    written = type_of(expr)
    proper = proper_type(written)
    if not isinstance(proper, Instance):
        return written
    if isinstance(expr, (DictExpr, DictionaryComprehension)):
        pairs = _dict_items(expr)
        keys = [type_of(key) if key is not None else None for key, _ in pairs]
        parts = [keys, [type_of(value) for _, value in pairs]]
    else:
        items = _items(expr)
        if items is None or isinstance(expr, TupleExpr):
            return written
        parts = [[type_of(item) if not isinstance(item, StarExpr) else None for item in items]]
    if not parts[0] or len(parts) != len(proper.args):
        return written
    joined = []
    for part in parts:
        known = [typ for typ in part if typ is not None]
        if len(known) != len(part):
            return written
        joined.append(join_type_list(known))
    return proper.copy_modified(args=joined)


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
    if any(base.fullname in _LIBRARY_BASES for base in info.mro):
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
) -> str | None:
    """The message for ``expr`` written to channel ``key``, when none of its declarations
    accepts it (``None`` when one does, or when nothing is known)."""
    if not declared:
        return None
    overwrite = _is_overwrite(expr)
    first = declared[0]
    if overwrite and all(channel.stores_as_given for channel in declared):
        # Only a reducer unwraps it: LangGraph stores the Overwrite object (langgraph#9019).
        return codes.overwrite_message(
            writer,
            key,
            declared_name(first.declared, type_name),
            first.schema.name,
            state_kind(first.schema),
            json_profile and not first.untracked,
        )
    if overwrite:
        assert isinstance(expr, CallExpr)
        expr = expr.args[0]
    accepts = accepted(declared, overwrite)
    written = type_of(expr)
    if accepts is None or written is None or isinstance(proper_type(written), AnyType):
        return None
    if any(expr_fits(expr, typ, type_of) for typ in accepts):
        return None
    reducer = None if overwrite else first.reducer
    shown = shown_type(expr, type_of) or written
    proper = proper_type(shown)
    if isinstance(proper, Instance) and proper.last_known_value is not None and any(
        _names_literals(typ) for typ in accepts
    ):
        shown = proper.last_known_value  # the member it is not: ``Literal['archived']``
    return codes.channel_type_message(
        writer,
        key,
        type_name(shown),
        declared_name(first.declared, type_name),
        first.schema.name,
        state_kind(first.schema),
        reducer.rpartition(".")[2] if reducer is not None else None,
        declared_name(accepts[0], type_name),
        missing=missing_key(expr, accepts[0]) if len(accepts) == 1 else None,
        raises=_concatenation_raises(reducer, accepts[0], written),
    )


def _names_literals(typ: Type) -> bool:
    return any(isinstance(proper_type(item), LiteralType) for item in flatten_nested_unions([typ]))


# Reducers that concatenate: ``current + value``, which raises TypeError unless ``value`` is of the
# current value's sequence class (measured: tests/test_verdicts_runtime.py).
_CONCATENATING: Final = frozenset(
    f"{module}.{name}" for module in ("operator", "_operator") for name in ("add", "concat")
)
_CONCATENATED: Final = {"builtins.list": "list", "builtins.tuple": "tuple"}


def _concatenation_raises(reducer: str | None, accepts: Type, written: Type) -> str | None:
    """``list`` when ``reducer`` concatenates a list channel with a value that is no list (every
    value of ``written``): the step raises TypeError (likewise ``tuple``)."""
    a = proper_type(accepts)
    sequence = _CONCATENATED.get(a.type.fullname) if isinstance(a, Instance) else None
    if reducer not in _CONCATENATING or sequence is None:
        return None
    assert isinstance(a, Instance)
    for item in flatten_nested_unions([written]):
        proper = proper_type(item)
        if isinstance(proper, TupleType):
            proper = proper.partial_fallback
        elif isinstance(proper, LiteralType):
            proper = proper.fallback
        if not isinstance(proper, Instance) or proper.type.has_base(a.type.fullname):
            return None
    return sequence


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


def update_items(expr: Expression) -> list[tuple[StrExpr, Expression]]:
    """The channels an update display writes: ``{"key": value}``, or ``[("key", value), ...]``."""
    if isinstance(expr, DictExpr):
        return [(key, value) for key, value in expr.items if isinstance(key, StrExpr)]
    found: list[tuple[StrExpr, Expression]] = []
    if isinstance(expr, (ListExpr, TupleExpr)):
        for item in expr.items:
            if isinstance(item, TupleExpr) and len(item.items) == 2:
                key, value = item.items
                if isinstance(key, StrExpr):
                    found.append((key, value))
    return found


class Special(NamedTuple):
    """The keys of a graph whose channels do not store what is written as it is written."""

    messages: frozenset[str]  # ``add_messages``: stores messages, whatever the field declares
    untracked: frozenset[str]  # ``UntrackedValue``: never checkpointed from node writes


def special_keys(schemas: Sequence[TypeInfo], modules: dict[str, MypyFile]) -> Special:
    messages: set[str] = set()
    untracked: set[str] = set()
    for info in schemas:
        for key, (kind, fullname) in (specs_of(info, modules) or {}).items():
            if kind == "reducer" and fullname == ADD_MESSAGES:
                messages.add(key)
            elif kind == "channel" and fullname == UNTRACKED:
                untracked.add(key)
    return Special(frozenset(messages), frozenset(untracked))
