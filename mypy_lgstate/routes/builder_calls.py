"""The builder calls of a scope, read from the module's syntax tree rather than from the call
being checked (docs/discovery.md): the classes the calls on each builder variable add, so that the
channels known at an ``add_node`` are the whole graph's (``BuilderClasses``), and the graph classes
of each node function of a module (``node_graph_classes``: the strict allowlist of the ``Command``
and ``Send`` its body builds).

LangGraph adds the keys of a node's first-parameter class (and of an ``add_conditional_edges`` path
function's) to the graph's channels, so a node that writes such a key writes a real channel, even
when another node or path function declared it. The scope is the function the call is in, or the
module's top level; each callable is resolved from its declaration (``builders.declared_callable``),
the same in cold, warm and daemon runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    Expression,
    ExpressionStmt,
    ForStmt,
    FuncDef,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    TryStmt,
    TypeInfo,
    WhileStmt,
    WithStmt,
)

from mypy_lgstate.routes import builders, discovery, factories
from mypy_lgstate.routes.builders import Scope
from mypy_lgstate.routes.lists import statements

# Builder methods that add a class to the graph's channels.
ADDING_METHODS: Final = frozenset({"add_node", "add_conditional_edges", "add_sequence"})


def receiver_name(expr: Expression) -> str | None:
    """The builder a method is called on: ``builder`` in ``builder.add_node(...).add_edge(...)``,
    ``self.graph`` in ``self.graph.add_node(...)``, the call that made it in
    ``StateGraph(S).add_node(...)``; ``None`` for anything else."""
    while isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        expr = expr.callee.expr  # a chained call on the builder returns the builder
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, CallExpr):
        # ``StateGraph(S).add_node(...).add_node(...)``: the chain's calls share the builder
        # that call makes, named by where it is.
        return f"<builder@{expr.line}:{expr.column}>"
    if isinstance(expr, MemberExpr):
        owner = receiver_name(expr.expr)
        return f"{owner}.{expr.name}" if owner is not None else None
    return None


def scope_classes(scope: Scope, tree: MypyFile) -> dict[str, list[TypeInfo]]:
    """For each builder in ``scope``, the classes its ``add_node`` / ``add_conditional_edges`` /
    ``add_sequence`` calls add to the graph (input schemas, first-parameter classes)."""
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    found: dict[str, list[TypeInfo]] = {}
    for call, method in _builder_calls(body):
        assert isinstance(call.callee, MemberExpr)
        name = receiver_name(call.callee.expr)
        if name is None:
            continue
        classes = found.setdefault(name, [])
        for info in _classes_added(call, method, scope, tree):
            if info not in classes:
                classes.append(info)
    return found


class BuilderClasses:
    """Every class a builder's graph declares, so far as a scope shows, with each scope read once
    (a graph has several builder calls)."""

    def __init__(self) -> None:
        # The classes each builder variable of a scope adds, by (module, scope name, scope line).
        self._scopes: dict[tuple[str, str, int], dict[str, list[TypeInfo]]] = {}

    def clear(self) -> None:
        self._scopes.clear()

    def of(
        self,
        call: Context,
        scope: Scope,
        tree: MypyFile,
        graph: Sequence[TypeInfo],
        added: Sequence[TypeInfo],
    ) -> tuple[TypeInfo, ...]:
        """The classes of the graph ``call``'s builder builds: the graph type's schemas (state
        first), then the ones ``call`` adds, and the classes of every node and path added to the
        same builder variable in ``scope``."""
        assert isinstance(call, CallExpr)
        callee = call.callee
        receiver = receiver_name(callee.expr) if isinstance(callee, MemberExpr) else None
        scanned: list[TypeInfo] = []
        if receiver is not None:
            key = (tree.fullname, scope.fullname, scope.line)
            by_builder = self._scopes.get(key)
            if by_builder is None:
                by_builder = self._scopes[key] = scope_classes(scope, tree)
            scanned = by_builder.get(receiver, [])
        return tuple(dict.fromkeys((*graph, *added, *scanned)))


def _builder_calls(body: list[Statement]) -> Iterator[tuple[CallExpr, str]]:
    """The calls of the builder methods in these statements, nested blocks included, but not in
    nested functions or classes (scopes of their own)."""
    for stmt in body:
        if isinstance(stmt, ExpressionStmt):
            yield from _chain(stmt.expr)
        elif isinstance(stmt, AssignmentStmt):
            yield from _chain(stmt.rvalue)
        elif isinstance(stmt, ReturnStmt) and stmt.expr is not None:
            yield from _chain(stmt.expr)  # a factory's ``return StateGraph(S).add_node(...)``
        elif isinstance(stmt, IfStmt):
            for block in (*stmt.body, stmt.else_body):
                yield from _block_calls(block)
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            yield from _block_calls(stmt.body)
            yield from _block_calls(stmt.else_body)
        elif isinstance(stmt, WithStmt):
            yield from _block_calls(stmt.body)
        elif isinstance(stmt, TryStmt):
            for block in (stmt.body, *stmt.handlers, stmt.else_body, stmt.finally_body):
                yield from _block_calls(block)


def _block_calls(block: Block | None) -> Iterator[tuple[CallExpr, str]]:
    if block is not None:
        yield from _builder_calls(block.body)


def _chain(expr: Expression) -> Iterator[tuple[CallExpr, str]]:
    while isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        if expr.callee.name in ADDING_METHODS:
            yield expr, expr.callee.name
        expr = expr.callee.expr


def _classes_added(
    call: CallExpr, method: str, scope: Scope, tree: MypyFile
) -> Iterator[TypeInfo]:
    arguments = call_arguments(call, _POSITIONAL[method])
    if method == "add_node":
        schema = arguments.get("input_schema")
        if schema is not None:
            info = discovery.schema_class(schema, discovery.NO_TYPE)
            if info is not None:
                yield info
            return
        action = node_callable(arguments)
        callables = [builders.declared_unwrapped(action)] if action is not None else []
    elif method == "add_conditional_edges":
        path = arguments.get("path")
        callables = [path] if path is not None else []
    else:
        nodes = arguments.get("nodes")
        items = builders.sequence_items(nodes, scope, tree) if nodes is not None else []
        callables = [item.fn for item in items]
    for expr in callables:
        typ = builders.declared_callable(expr, scope)
        info = discovery.first_parameter_schema(typ) if typ is not None else None
        if info is not None:
            yield info


# The positional parameters of the builder methods read from their calls' syntax.
_POSITIONAL: Final = {
    "add_node": ("node", "action"),
    "add_conditional_edges": ("source", "path"),
    "add_sequence": ("nodes",),
}


def call_arguments(call: CallExpr, positional: tuple[str, ...]) -> dict[str, Expression]:
    """A call's arguments by parameter name, read from its syntax: its first positional ones named
    by ``positional``, keywords by their own (``*args`` and ``**kwargs`` are not placed)."""
    found: dict[str, Expression] = {}
    index = 0
    for arg, kind, name in zip(call.args, call.arg_kinds, call.arg_names):
        if kind == ARG_POS:
            if index < len(positional):
                found[positional[index]] = arg
            index += 1
        elif kind == ARG_NAMED and name is not None:
            found[name] = arg
    return found


def node_callable(arguments: dict[str, Expression]) -> Expression | None:
    """What an ``add_node`` call (its ``call_arguments``) runs: its ``action``, else its ``node``
    when that is not the node's name (``add_node(fn)``)."""
    action, node = arguments.get("action"), arguments.get("node")
    if action is None and node is not None and not isinstance(node, StrExpr):
        return node
    return action


def node_graph_classes(tree: MypyFile) -> dict[str, tuple[TypeInfo, ...]]:
    """For each function of ``tree`` added as a node (or path function) in ``tree``, the classes its graph's strict
    allowlist derives from: the ``StateGraph(...)`` call's schemas (the context schema included) and
    every class the same builder's nodes and path functions add (docs/discovery.md). Read once per
    module from its syntax tree and declarations: the same in every mode, wherever the node's own
    body is checked from."""
    found: dict[str, dict[TypeInfo, None]] = {}
    for scope in _module_scopes(tree):
        body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
        declared = _declared_builders(body, tree, scope)
        added = scope_classes(scope, tree)
        for call, method in _builder_calls(body):
            assert isinstance(call.callee, MemberExpr)
            receiver = receiver_name(call.callee.expr)
            function = _node_function(call, method)
            if receiver is None or function is None:
                continue
            classes = found.setdefault(function, {})
            for info in (*declared.get(receiver, ()), *added.get(receiver, ())):
                classes[info] = None
    return {name: tuple(classes) for name, classes in found.items()}


def _module_scopes(tree: MypyFile) -> Iterator[Scope]:
    """The module's top level, its functions, and the methods of its classes."""
    yield tree
    for defn in tree.defs:
        if isinstance(defn, Decorator):
            defn = defn.func
        if isinstance(defn, FuncDef):
            yield defn
        elif isinstance(defn, ClassDef):
            for member in defn.defs.body:
                if isinstance(member, Decorator):
                    member = member.func
                if isinstance(member, FuncDef):
                    yield member


def _declared_builders(
    body: list[Statement], tree: MypyFile, scope: Scope
) -> dict[str, list[TypeInfo]]:
    """The schemas each builder's ``StateGraph(...)`` call names (``builder = StateGraph(S, ...)``,
    or the root of a chain), the context schema included: compile() derives from it too."""
    found: dict[str, list[TypeInfo]] = {}
    for stmt in statements(body):
        exprs: list[Expression] = []
        if isinstance(stmt, AssignmentStmt):
            exprs = [stmt.rvalue]
        elif isinstance(stmt, (ExpressionStmt, ReturnStmt)) and stmt.expr is not None:
            exprs = [stmt.expr]
        for expr in exprs:
            root = expr
            while isinstance(root, CallExpr) and isinstance(root.callee, MemberExpr):
                root = root.callee.expr
            if not (
                isinstance(root, CallExpr)
                and isinstance(root.callee, RefExpr)
                and isinstance(root.callee.node, TypeInfo)
                and factories.is_graph_class(root.callee.node)
            ):
                continue
            schemas = [*factories.call_schemas(root, tree, scope), *_context_schemas(root)]
            if root is not expr or not isinstance(stmt, AssignmentStmt):
                found[f"<builder@{root.line}:{root.column}>"] = schemas
            if isinstance(stmt, AssignmentStmt) and root is expr:
                for lvalue in stmt.lvalues:
                    name = receiver_name(lvalue)
                    if name is not None:
                        found[name] = schemas
    return found


def _context_schemas(call: CallExpr) -> list[TypeInfo]:
    found = []
    for index, (arg, name) in enumerate(zip(call.args, call.arg_names)):
        if name in discovery.RUN_SCOPED_ARGS or (name is None and index == 1):
            info = discovery.schema_class(arg, discovery.NO_TYPE)
            if info is not None:
                found.append(info)
    return found


def _node_function(call: CallExpr, method: str) -> str | None:
    """The fullname of the function an ``add_node`` call adds (``add_node("name", fn)``,
    ``add_node(fn)``), or an ``add_conditional_edges`` call's path function (its ``Send``s)."""
    if method == "add_sequence":
        return None
    arguments = call_arguments(call, _POSITIONAL[method])
    action = arguments.get("path") if method == "add_conditional_edges" else node_callable(arguments)
    if not isinstance(action, RefExpr):
        return None
    node = action.node
    if isinstance(node, Decorator):
        node = node.func
    return node.fullname if isinstance(node, FuncDef) else None


def module_builder_calls(tree: MypyFile) -> Iterator[tuple[Scope, CallExpr, str]]:
    """Every ``add_node`` / ``add_conditional_edges`` / ``add_sequence`` call of the module's
    scopes (``node_graph_classes``'s), with the scope it is in and the method's name."""
    for scope in _module_scopes(tree):
        body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
        for call, method in _builder_calls(body):
            yield scope, call, method
