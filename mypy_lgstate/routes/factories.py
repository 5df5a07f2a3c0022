"""The schemas of a graph whose type does not name them (docs/discovery.md, "Graphs whose type
names no schema").

A factory declared ``-> StateGraph`` or ``-> CompiledStateGraph`` without type arguments gives mypy
``CompiledStateGraph[Any, ...]``: the state schema is only in the body's ``StateGraph(S)``. Then a
graph input such as ``make_graph().ainvoke(State(...))`` cannot tell that ``State`` is the graph's
own state, checked where the graph declared it, and would walk the whole class again at every call.

The graph an expression evaluates to is followed here through the module being checked, as mypy
keeps its syntax tree whole while it checks it: a variable's assignments, the builder methods
(``.compile()``, ``.add_node(...)`` return the builder or the graph), and the ``return`` statements
of a function of this module, down to a ``StateGraph(S)`` call (whose arguments name classes) or a
declared type with arguments. A factory of another module is only its declared signature there (its
body is freed once its module is checked, and a cached module has none): it stays unknown, and the
reason is given to ``lgstate report``.

Also here: ``StateGraph(SCHEMAS[kind])``, a class picked out of a mapping display (``SCHEMAS = {"a":
StateA, "b": StateB}``): each class of the display may be the graph's state.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    GDEF,
    LDEF,
    AssignmentStmt,
    CallExpr,
    Decorator,
    DictExpr,
    Expression,
    FuncDef,
    FuncItem,
    IndexExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    ReturnStmt,
    Statement,
    SymbolNode,
    TypeInfo,
    Var,
)
from mypy.plugin import FunctionContext
from mypy.types import CallableType, Instance

from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements

Scope = FuncItem | MypyFile
PREGEL: Final = "langgraph.pregel.main.Pregel"  # what a compiled graph is
# How many variables, methods and functions a graph is followed through.
_DEPTH: Final = 8
# ``StateGraph(...)`` parameters that name checkpointed schema classes, by position too.
_SCHEMA_PARAMETERS: Final = ("state_schema", "input_schema", "output_schema", "input", "output")


class Built(NamedTuple):
    """The schema classes of the graph an expression evaluates to (state first), or why they are not
    known."""

    schemas: tuple[TypeInfo, ...]
    unresolved: str | None


_UNKNOWN: Final = Built((), None)


def graph_call_schemas(
    ctx: FunctionContext, scope: Scope
) -> tuple[list[TypeInfo], list[TypeInfo]]:
    """The checkpointed and the run-scoped classes of a ``StateGraph(...)`` call: its schema
    arguments, and each class a ``StateGraph(SCHEMAS[kind])`` argument may pick out of a mapping."""
    checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
    if isinstance(ctx.context, CallExpr):
        assert isinstance(ctx.api, TypeChecker)
        for info in picked_schemas(ctx.context, ctx.api.tree, scope):
            if info not in checkpointed:
                checkpointed.append(info)
    return checkpointed, run_scoped


class BuiltGraphs:
    """The graph a graph input's receiver evaluates to, memoized by the variable or function it
    names, which many inputs share."""

    def __init__(self) -> None:
        self._built: dict[SymbolNode, Built] = {}

    def clear(self) -> None:
        self._built.clear()

    def of(self, receiver: Expression, scope: Scope, tree: MypyFile) -> Built:
        key: SymbolNode | None = None
        if isinstance(receiver, NameExpr):
            key = receiver.node
        elif isinstance(receiver, CallExpr) and isinstance(receiver.callee, RefExpr):
            key = receiver.callee.node
        built = self._built.get(key) if key is not None else None
        if built is None:
            built = _Follower(tree).graph(receiver, scope, _DEPTH)
            if key is not None:
                self._built[key] = built
        return built


class _Follower:
    def __init__(self, tree: MypyFile) -> None:
        self.tree = tree

    def graph(self, expr: Expression, scope: Scope, depth: int) -> Built:
        if depth <= 0:
            return _UNKNOWN
        if isinstance(expr, CallExpr):
            callee = expr.callee
            if isinstance(callee, MemberExpr):
                # ``builder.compile()``, ``StateGraph(S).add_node(...)``: the same graph.
                return self.graph(callee.expr, scope, depth - 1)
            if isinstance(callee, RefExpr):
                if isinstance(callee.node, TypeInfo) and is_graph_class(callee.node):
                    return Built(tuple(call_schemas(expr, self.tree, scope)), None)
                return self.function(callee, depth)
        elif isinstance(expr, NameExpr) and isinstance(expr.node, Var):
            return self.variable(expr, scope, depth)
        return _UNKNOWN

    def variable(self, name: NameExpr, scope: Scope, depth: int) -> Built:
        var = name.node
        assert isinstance(var, Var)
        declared = discovery.graph_type_schemas(var.type) if var.type is not None else []
        if declared:
            return Built(tuple(declared), None)
        if name.kind == GDEF and var.fullname.rpartition(".")[0] == self.tree.fullname:
            scope = self.tree
        elif name.kind != LDEF:
            return _UNKNOWN
        for stmt in statements(_body(scope)):
            if isinstance(stmt, AssignmentStmt) and any(
                isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in stmt.lvalues
            ):
                found = self.graph(stmt.rvalue, scope, depth - 1)
                if found.schemas or found.unresolved:
                    return found
        return _UNKNOWN

    def function(self, callee: RefExpr, depth: int) -> Built:
        """A factory: its declared return type if that names the schemas, else its ``return``
        statements when its body is in this module."""
        node = callee.node
        if isinstance(node, Decorator):
            node = node.func
        if not isinstance(node, FuncDef) or not isinstance(node.type, CallableType):
            return _UNKNOWN
        declared = discovery.graph_type_schemas(node.type.ret_type)
        if declared:
            return Built(tuple(declared), None)
        if not _returns_graph(node):
            return _UNKNOWN
        if not _in_module(node, self.tree):
            reason = f"{node.fullname}() of another module returns a graph whose type names no state"
            return Built((), reason)
        for stmt in statements(node.body.body):
            if isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                found = self.graph(stmt.expr, node, depth - 1)
                if found.schemas or found.unresolved:
                    return found
        return _UNKNOWN


def call_schemas(call: CallExpr, tree: MypyFile, scope: Scope) -> list[TypeInfo]:
    """The schema classes a ``StateGraph(...)`` call names, read from its expressions alone."""
    found: list[TypeInfo] = []
    for index, (arg, name) in enumerate(zip(call.args, call.arg_names)):
        if name is None and index > 0:
            continue  # the second positional is the context schema
        if name is not None and name not in _SCHEMA_PARAMETERS:
            continue
        info = discovery.schema_class(arg, discovery.NO_TYPE)
        for schema in [info] if info is not None else picked_classes(arg, tree, scope):
            if schema not in found:
                found.append(schema)
    return found


def picked_schemas(call: CallExpr, tree: MypyFile, scope: Scope) -> list[TypeInfo]:
    """The classes a ``StateGraph(SCHEMAS[kind], ...)`` call's schema arguments pick out of a
    mapping."""
    found: list[TypeInfo] = []
    for index, (arg, name) in enumerate(zip(call.args, call.arg_names)):
        if (name is None and index == 0) or name in _SCHEMA_PARAMETERS:
            found.extend(info for info in picked_classes(arg, tree, scope) if info not in found)
    return found


def picked_classes(expr: Expression, tree: MypyFile, scope: Scope) -> list[TypeInfo]:
    """The classes ``SCHEMAS[kind]`` may be: the schema classes of the dict display assigned to
    ``SCHEMAS`` in this module (or in the function being checked)."""
    if not (isinstance(expr, IndexExpr) and isinstance(expr.base, NameExpr)):
        return []
    var = expr.base.node
    if not isinstance(var, Var):
        return []
    if expr.base.kind == GDEF and var.fullname.rpartition(".")[0] == tree.fullname:
        scope = tree
    elif expr.base.kind != LDEF:
        return []
    found: list[TypeInfo] = []
    for stmt in statements(_body(scope)):
        if (
            isinstance(stmt, AssignmentStmt)
            and isinstance(stmt.rvalue, DictExpr)
            and any(isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in stmt.lvalues)
        ):
            for _, value in stmt.rvalue.items:
                info = discovery.schema_class(value, discovery.NO_TYPE)
                if info is not None and info not in found:
                    found.append(info)
    return found


def is_graph_class(info: TypeInfo) -> bool:
    return info.fullname == discovery.STATE_GRAPH or discovery.state_graph_base(info) is not None


def _returns_graph(function: FuncDef) -> bool:
    """Whether a function is declared to return a graph (``StateGraph``, a compiled graph)."""
    assert isinstance(function.type, CallableType)
    returned = proper_type(function.type.ret_type)
    return isinstance(returned, Instance) and (
        is_graph_class(returned.type) or returned.type.has_base(PREGEL)
    )


def _in_module(function: FuncDef, tree: MypyFile) -> bool:
    sym = tree.names.get(function.name)
    here = sym is not None and (
        sym.node is function or (isinstance(sym.node, Decorator) and sym.node.func is function)
    )
    return here and bool(function.body.body)


def _body(scope: Scope) -> list[Statement]:
    return scope.defs if isinstance(scope, MypyFile) else scope.body.body
