"""The channel each field of a schema class declares: ``Annotated[T, reducer]`` hands what is
written to the reducer, ``Annotated[T, SomeChannel]`` makes a channel class of its own; any other
field is a plain channel.

mypy strips ``Annotated[...]`` metadata from the types it keeps (a TypedDict's items, a field's
``Var.type``), and no class hook fires for a TypedDict. The metadata is therefore read from the
class's syntax (``AssignmentStmt.unanalyzed_type``) while it is there: ``record_module`` runs at the
end of each module's check, before mypy writes the module's cache, and stores the facts in each
schema class's ``TypeInfo.metadata``, which mypy caches with the class; a warm run, a parallel worker
and the daemon read them back. A class whose module is still being checked (the graph in the same
module, or the same import cycle) still has its syntax, read directly. A class with neither (never
seen by this plugin version) is not known: whether it has reducers is unknown.

A module that imports no ``Annotated`` and nothing of LangGraph or LangChain
(``state_modules.may_declare_channels``), the user's or a library's, declares no channel of its own:
of its classes only the TypedDicts are read (their bases are in their syntax alone), and a model or
dataclass of it has the channels of its bases. The standard library's stubs are not read at all.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, NamedTuple

from mypy.nodes import (
    ARG_POS,
    MDEF,
    AssignmentStmt,
    Block,
    ClassDef,
    Decorator,
    ExpressionStmt,
    FakeInfo,
    FuncDef,
    IfStmt,
    IndexExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    SymbolNode,
    SymbolTableNode,
    TryStmt,
    TypeInfo,
    Var,
)
from mypy.server.trigger import make_trigger
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    RawExpressionType,
    Type,
    TypeVarType,
    UnboundType,
)

from mypy_lgstate.core import rules
from mypy_lgstate.routes import channel_calls, discovery
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.state_modules import is_stdlib_stub, may_declare_channels

METADATA_KEY: Final = "mypy_lgstate.routes.channel_specs"
BASE_CHANNEL: Final = "langgraph.channels.base.BaseChannel"
UNTRACKED: Final = "langgraph.channels.untracked_value.UntrackedValue"
ADD_MESSAGES: Final = "langgraph.graph.message.add_messages"
# How mypy keeps a call in ``Annotated[...]`` metadata (``UntrackedValue(httpx.Client)``): an invalid
# type whose note names the callee.
_CALL_NOTE: Final = re.compile(
    r"Suggestion: use (?P<name>[\w.]+)\[\.\.\.\] instead of (?P=name)\(\.\.\.\)"
)
_ANNOTATED: Final = frozenset({"Annotated"})
_WRAPPERS: Final = frozenset({"Required", "NotRequired", "ReadOnly"})

# A field's channel, as recorded: ``("reducer", fullname)``, ``("keep", fullname)`` for a reducer
# that returns what is written (a lambda's fullname is ""), ``("channel", fullname)`` for a channel
# class, or ``("unknown", "")`` for metadata the plugin cannot resolve.
Spec = tuple[str, str]


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
    if info.typeddict_type is None and (file.is_cache_skeleton or not may_declare_channels(file)):
        # A model or dataclass without a record declares no channel of its own (or is one
        # ``_class_defs`` does not reach): read alike from the cache and from its syntax.
        return _inherited_specs(info, modules)
    if is_stdlib_stub(file.path):
        return None  # the standard library's TypedDicts are not read, from syntax or cache alike
    if info.defn.defs.body:
        return _specs_from_syntax(info.defn, file, modules)
    return None


def _inherited_specs(info: TypeInfo, modules: dict[str, MypyFile]) -> dict[str, Spec] | None:
    """The channels of a model or dataclass of a module that declares no channel of its own, which
    records none: those of its bases (its MRO), whether it has the syntax or comes from
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
        spec = _annotation_spec(stmt.unanalyzed_type, file, stmt)
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
        if discovery.is_schema(base) and base.fullname not in rules.PYDANTIC_MODELS:
            yield base


def _annotation_spec(
    annotation: UnboundType, file: MypyFile, stmt: AssignmentStmt
) -> Spec | None:
    """What ``Annotated[T, ...]`` makes of a field, the way LangGraph reads it: a channel class
    anywhere in the metadata, else a reducer as its last item (``_get_channel``)."""
    last = annotation.name.rpartition(".")[2]
    if last in _WRAPPERS and annotation.args and isinstance(annotation.args[0], UnboundType):
        return _annotation_spec(annotation.args[0], file, stmt)
    if last not in _ANNOTATED or len(annotation.args) < 2:
        return None
    metadata = annotation.args[1:]
    source: list[ast.expr] | None = None
    if any(_is_expression(item) for item in metadata):
        # A call or a lambda, whose arguments mypy keeps nowhere: read from the source.
        source = channel_calls.metadata_source(stmt, file.path)
        if source is not None and len(source) != len(metadata):
            source = None
    resolved = [
        _resolve(item, file, source[index] if source is not None else None)
        for index, item in enumerate(metadata)
    ]
    for kind, fullname in resolved:
        if kind == "channel":
            return (kind, fullname)
    kind, fullname = resolved[-1]
    return None if kind == "inert" else (kind, fullname)


def _is_expression(item: Type) -> bool:
    return isinstance(item, RawExpressionType) and item.literal_value is None


def _resolve(item: Type, file: MypyFile, source: ast.expr | None) -> Spec:
    if isinstance(item, RawExpressionType):
        # A string or number is inert; an instance of a channel class (``UntrackedValue(T)``, which
        # LangGraph uses as it is) is that channel, a call that makes a reducer (a partial, a
        # ``BinaryOperatorAggregate``) or a lambda that reducer; anything else is not known.
        if item.literal_value is not None:
            return ("inert", "")
        if source is not None:
            return channel_calls.resolve(
                source, lambda name: _lookup_name(name, file), keeps_written
            )
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
        return ("keep" if keeps_written(node) else "reducer", node.fullname)
    if isinstance(node, Var):
        proper = proper_type(node.type)
        if isinstance(proper, Instance) and proper.type.has_base(BASE_CHANNEL):
            return ("channel", proper.type.fullname)
        if isinstance(proper, Instance) and proper.type.get_method("__call__") is None:
            return ("inert", "")  # ``PrivateStateAttr`` and other markers
        if isinstance(proper, Instance):
            return ("reducer", node.fullname)  # a callable instance: its ``__call__``
    return ("unknown", "")


def keeps_written(node: SymbolNode) -> bool:
    """Whether reducer ``node`` returns what is written, so that the channel stores it as it is
    ("last write wins"): declared ``(current: T, new: T) -> T``, or, where its body is there (a
    reducer of the module being read), ``return new``."""
    if isinstance(node, Decorator):
        node = node.func
    if not isinstance(node, FuncDef):
        return False
    signature = proper_type(node.type)
    if isinstance(signature, CallableType):
        positional = [
            typ for kind, typ in zip(signature.arg_kinds, signature.arg_types) if kind == ARG_POS
        ]
        returned = proper_type(signature.ret_type)
        if (
            len(positional) >= 2
            and isinstance(returned, TypeVarType)
            and returned == proper_type(positional[1])
        ):
            return True
    body = [
        stmt for stmt in node.body.body
        if not (isinstance(stmt, ExpressionStmt) and isinstance(stmt.expr, StrExpr))
    ]
    # A function of a module loaded from the cache has no body, nor ``arguments`` to read.
    if len(body) != 1 or not isinstance(body[0], ReturnStmt):
        return False
    value = body[0].expr
    return (
        isinstance(value, NameExpr)
        and len(node.arguments) >= 2
        and value.name == node.arguments[1].variable.name
    )


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
