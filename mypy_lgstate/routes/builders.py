"""The calls on a graph builder (docs/discovery.md): the nodes an ``add_node`` / ``add_sequence`` /
``add_conditional_edges`` call adds, the classes LangGraph reads from them, and the classes the other
calls on the same builder collect.

LangGraph adds the keys of a node's first-parameter class (and of an ``add_conditional_edges`` path
function's) to the graph's channels. A node that writes such a key writes a real channel, even when
another node or path function declared it. So the channels known at an ``add_node`` call are the
classes of every node and path added to the same builder variable (``builder``, ``self.graph``) in
the same scope: the function the call is in, or the module's top level.

The scope is read from the module's own syntax tree, which mypy keeps while it checks the module,
and each callable is resolved from its declaration (a function's signature, a callable class's
``__call__``), never from inferred types of other expressions: those may not exist yet (mypy checks
top-level statements before function bodies) and differ between cold, warm and daemon runs. See
docs/discovery.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple

from mypy.checker import TypeChecker

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    DictExpr,
    Expression,
    ExpressionStmt,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    LambdaExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    SymbolNode,
    TryStmt,
    TupleExpr,
    TypeInfo,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.plugin import MethodContext
from mypy.typeops import bind_self, function_type
from mypy.types import AnyType, CallableType, FunctionLike, Instance, Type
from mypy.typevars import fill_typevars

from mypy_lgstate.routes import discovery, factories, lists, sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements

# Builder methods that add a class to the graph's channels.
ADDING_METHODS: Final = frozenset({"add_node", "add_conditional_edges", "add_sequence"})

Scope = FuncItem | MypyFile


class Added(NamedTuple):
    """What one builder call adds to its graph: its nodes, and the classes LangGraph reads from them
    that the graph's type does not name (an input schema, given or inferred)."""

    nodes: list[sites.Node]
    inputs: list[TypeInfo]


def added_by_add_node(ctx: MethodContext, scope: Scope, graph: Sequence[TypeInfo]) -> Added:
    """``add_node("name", fn)`` or ``add_node(fn)``: the node, and its ``input_schema=`` class, else
    the class of its first parameter (LangGraph infers the node's input schema from it)."""
    assert isinstance(ctx.api, TypeChecker)
    bound = discovery.bound_arguments(ctx)
    nodes = _nodes_of_add_node(bound, ctx.api, scope)
    schema = discovery.given_schema(bound, "input_schema")
    if schema is None and nodes:
        inferred = input_class(nodes[0], scope)
        schema = inferred if inferred not in graph else None
    return Added(nodes, [schema] if schema is not None else [])


def added_by_add_sequence(ctx: MethodContext, scope: Scope, graph: Sequence[TypeInfo]) -> Added:
    """``add_sequence([fn, ("name", fn), ...])``: each node, and the class of its first parameter."""
    nodes = _nodes_of_add_sequence(ctx, scope)
    inputs = [
        info
        for info in dict.fromkeys(input_class(node, scope) for node in nodes)
        if info is not None and info not in graph
    ]
    return Added(nodes, inputs)


def added_by_add_conditional_edges(
    ctx: MethodContext, scope: Scope, graph: Sequence[TypeInfo]
) -> Added:
    """``add_conditional_edges(source, path)``: no node, but the class of the path function's first
    parameter."""
    path = discovery.bound_arguments(ctx).get("path")
    schema = input_class(sites.Node("", path[1], path[0]), scope) if path is not None else None
    return Added([], [schema] if schema is not None and schema not in graph else [])


def input_class(node: sites.Node, scope: Scope) -> TypeInfo | None:
    """The class LangGraph infers as a node's (or path function's) input schema: its declared
    first parameter. A lambda has no annotations at run time, whatever mypy infers for it."""
    if node.expr is None or isinstance(node.expr, LambdaExpr):
        return None
    declared = declared_callable(node.expr, scope)
    return discovery.first_parameter_schema(declared if declared is not None else node.type)


def _nodes_of_add_node(
    bound: discovery.BoundArguments, api: TypeChecker, scope: Scope
) -> list[sites.Node]:
    """``add_node("name", fn)`` or ``add_node(fn)``; in a registration loop (``for name, fn in
    [...]: builder.add_node(name, fn)``), each function the loop goes through."""
    node_arg = bound.get("node")
    action_arg = bound.get("action")
    if node_arg is None:
        return []
    name, (action, action_type) = node_arg[0], action_arg or node_arg
    looped = _loop_items(name if action_arg is not None else None, action, scope)
    if looped is not None:
        found = []
        for label, fn in looped:
            declared = declared_callable(fn, scope)
            if declared is None and isinstance(fn, RefExpr) and isinstance(fn.node, FuncDef):
                # An unannotated function: its implicit signature, so that it is listed unchecked.
                declared = function_type(fn.node, api.named_type("builtins.function"))
            if declared is not None:
                found.append(registered_node(label, fn, declared, api))
        return found
    label = name.value if isinstance(name, StrExpr) and action_arg is not None else _expr_name(action)
    return [registered_node(label, action, action_type, api)]


def _loop_items(
    name: Expression | None, action: Expression, scope: Scope
) -> list[tuple[str, Expression]] | None:
    """``(label, function)`` for each item of the display a ``for`` loop of ``scope`` goes through,
    when ``action`` is that loop's variable: ``for fn in (a, b)``, ``for name, fn in [("a", a),
    ...]``, ``for name, fn in {"a": a}.items()`` (or a variable of this scope bound to the display)."""
    if not (isinstance(action, NameExpr) and isinstance(action.node, Var)):
        return None
    for stmt in statements(scope.defs if isinstance(scope, MypyFile) else scope.body.body):
        if not (isinstance(stmt, ForStmt) and stmt.line <= action.line <= _last_line(stmt.body)):
            continue
        targets = stmt.index.items if isinstance(stmt.index, TupleExpr) else [stmt.index]
        slot = next(
            (i for i, t in enumerate(targets) if isinstance(t, NameExpr) and t.node is action.node),
            None,
        )
        if slot is None:
            continue
        named = next(
            (
                i
                for i, t in enumerate(targets)
                if isinstance(t, NameExpr) and isinstance(name, NameExpr) and t.node is name.node
            ),
            None,
        )
        found = []
        for item in _iterated(stmt.expr, scope):
            parts = item.items if isinstance(item, TupleExpr) else [item]
            if len(parts) != len(targets):
                return None
            fn = parts[slot]
            label = parts[named] if named is not None else None
            found.append((label.value if isinstance(label, StrExpr) else _expr_name(fn), fn))
        return found or None
    return None


def _last_line(block: Block) -> int:
    if block.end_line is not None:
        return block.end_line
    return max((stmt.end_line or stmt.line for stmt in block.body), default=block.line)


def _iterated(expr: Expression, scope: Scope) -> list[Expression]:
    """The items of a display a loop goes through; a dict's ``.items()`` as ``(key, value)``."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr) and expr.callee.name == "items":
        mapping = expr.callee.expr
        if isinstance(mapping, NameExpr):
            mapping = _assigned(mapping, scope, (DictExpr,)) or mapping
        if isinstance(mapping, DictExpr):
            return [TupleExpr([key, value]) for key, value in mapping.items if key is not None]
        return []
    if isinstance(expr, NameExpr):
        expr = _assigned_display(expr, scope) or expr
    return list(expr.items) if isinstance(expr, (ListExpr, TupleExpr)) else []


def registered_node(label: str, expr: Expression, typ: Type, api: TypeChecker) -> sites.Node:
    """The node ``expr`` registers. A wrapper whose result says nothing of what the node writes
    (typed ``Any``, or a callable returning ``Any``), applied to one function in the call
    (``traced("deploy", _deploy)``) or as its decorator (``@traced``), runs that function: the
    function is the node, with its own declared signature."""
    unwrapped = unwrapped_callable(expr)
    if unwrapped is None or not _says_nothing(typ):
        return sites.Node(label, typ, expr)
    function, wrapper = unwrapped
    declared = api.lookup_type_or_none(function) if isinstance(expr, CallExpr) else None
    if declared is None:
        declared = declared_callable(function, api.tree)
    if declared is None:
        return sites.Node(label, typ, expr)
    return sites.Node(_expr_name(function) if label == "<node>" else label, declared, function, wrapper)


def unwrapped_callable(expr: Expression) -> tuple[RefExpr, str] | None:
    """The function a wrapper call or a decorator applies to, with how it is wrapped ("registered
    through traced()", "decorated with @traced"): the one function named among the call's arguments
    (wrapper calls nest), or a decorated function."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        functions: list[RefExpr] = []
        for arg in expr.args:
            if isinstance(arg, RefExpr) and isinstance(arg.node, (FuncDef, Decorator)):
                functions.append(arg)
            else:
                inner = unwrapped_callable(arg)
                if inner is not None:
                    functions.append(inner[0])
        if len(functions) == 1:
            return functions[0], f"registered through {_ref_name(expr.callee)}()"
        return None
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator) and expr.node.decorators:
        decorator = expr.node.decorators[0]
        if isinstance(decorator, CallExpr):
            decorator = decorator.callee
        name = f"@{_ref_name(decorator)}" if isinstance(decorator, RefExpr) else "a decorator"
        return expr, f"decorated with {name}"
    return None


def _ref_name(expr: RefExpr) -> str:
    return expr.name if isinstance(expr, (NameExpr, MemberExpr)) else expr.fullname


def declared_unwrapped(expr: Expression) -> Expression:
    """What a node expression runs, read from declarations alone (the scan of a scope's builder
    calls): the function a wrapper or decorator applies to, when the wrapper's declared return type
    says nothing of it (``registered_node``); else the expression itself."""
    unwrapped = unwrapped_callable(expr)
    if unwrapped is None:
        return expr
    wrapper: Expression | None = None
    if isinstance(expr, CallExpr):
        wrapper = expr.callee
    elif isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        wrapper = expr.node.decorators[0]
        if isinstance(wrapper, CallExpr):
            wrapper = wrapper.callee
    node = wrapper.node if isinstance(wrapper, RefExpr) else None
    if isinstance(node, Decorator):
        node = node.func
    if not isinstance(node, FuncDef):
        return expr
    signature = proper_type(node.type) if node.type is not None else None
    if signature is None or (
        isinstance(signature, CallableType) and _says_nothing(signature.ret_type)
    ):
        return unwrapped[0]
    return expr


def _says_nothing(typ: Type) -> bool:
    """Whether a wrapper's result type tells nothing of what the node writes: ``Any``, or a
    callable whose return type is ``Any``."""
    proper = proper_type(typ)
    if isinstance(proper, AnyType):
        return True
    return isinstance(proper, CallableType) and isinstance(proper_type(proper.ret_type), AnyType)


def _nodes_of_add_sequence(ctx: MethodContext, scope: Scope) -> list[sites.Node]:
    """``add_sequence([fn, ("name", fn), ...])``, item by item: a display in the call (each item by
    its type), or a variable assigned a display in the same scope (each item by its declaration:
    the types of another statement's expressions may not exist yet)."""
    assert isinstance(ctx.api, TypeChecker)
    nodes_arg = discovery.bound_arguments(ctx).get("nodes")
    if nodes_arg is None:
        return []
    found: list[sites.Node] = []
    for item in sequence_items(nodes_arg[0], scope, ctx.api.tree):
        label = item.label.value if isinstance(item.label, StrExpr) else _expr_name(item.fn)
        if item.in_call:
            fn_type = ctx.api.lookup_type_or_none(item.fn)
        else:
            fn_type = declared_callable(item.fn, scope)
        if fn_type is not None:
            found.append(registered_node(label, item.fn, fn_type, ctx.api))
    return found


def _expr_name(expr: Expression) -> str:
    return expr.name if isinstance(expr, (NameExpr, MemberExpr)) else "<node>"


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
        callables = [declared_unwrapped(action)] if action is not None else []
    elif method == "add_conditional_edges":
        path = arguments.get("path")
        callables = [path] if path is not None else []
    else:
        nodes = arguments.get("nodes")
        callables = (
            [item.fn for item in sequence_items(nodes, scope, tree)] if nodes is not None else []
        )
    for expr in callables:
        typ = declared_callable(expr, scope)
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


class SequenceItem(NamedTuple):
    label: Expression | None  # the name in a ``("name", fn)`` item
    fn: Expression
    in_call: bool  # written in the call itself (its type is the one mypy has just inferred)


def sequence_items(nodes: Expression, scope: Scope, tree: MypyFile) -> list[SequenceItem]:
    """The items of an ``add_sequence`` argument, followed through the module (``lists``: a display,
    a variable with what is appended to it, ...)."""
    items: list[SequenceItem] = []
    for item in lists.listed(nodes, tree, scope, nodes.line, "the sequence").items:
        expr = item.expr
        if isinstance(expr, TupleExpr) and len(expr.items) == 2:
            items.append(SequenceItem(expr.items[0], expr.items[1], item.in_call))
        else:
            items.append(SequenceItem(None, expr, item.in_call))
    return items


def _assigned_display(name: NameExpr, scope: Scope) -> ListExpr | TupleExpr | None:
    """The last list or tuple display assigned to ``name`` in ``scope``'s own statements."""
    found = _assigned(name, scope, (ListExpr, TupleExpr))
    assert found is None or isinstance(found, (ListExpr, TupleExpr))
    return found


def _assigned(
    name: NameExpr, scope: Scope, kinds: tuple[type[Expression], ...]
) -> Expression | None:
    """The last display of one of ``kinds`` assigned to ``name`` in ``scope``'s own statements."""
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    found: Expression | None = None
    for stmt in body:
        if (
            isinstance(stmt, AssignmentStmt)
            and isinstance(stmt.rvalue, kinds)
            and any(isinstance(lv, NameExpr) and lv.name == name.name for lv in stmt.lvalues)
        ):
            found = stmt.rvalue
    return found


def declared_callable(expr: Expression, scope: Scope) -> Type | None:
    """The declared type of a node or path callable, from its definition: a function (its
    undecorated signature: LangGraph reads the annotations that ``functools.wraps`` copies), a
    method through an instance (``self.route``, ``router.route``), an instance of a callable class
    (``Router()``), or a variable with a type."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        cls = expr.callee.node
        return fill_typevars(cls) if isinstance(cls, TypeInfo) else None
    if not isinstance(expr, RefExpr):
        return None
    node = expr.node
    through_instance = False
    if node is None and isinstance(expr, MemberExpr):
        node = _method_of_instance(expr, scope)
        through_instance = True
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, (FuncDef, OverloadedFuncDef)):
        if isinstance(node.type, FunctionLike) and through_instance and not node.is_static:
            return bind_self(node.type, is_classmethod=node.is_class)
        return node.type
    if isinstance(node, Var):
        return node.type
    return None


def _method_of_instance(expr: MemberExpr, scope: Scope) -> SymbolNode | None:
    """The method ``expr`` names on an instance: ``self.route`` in a method, or ``router.route`` on
    a variable whose type is a class."""
    owner = expr.expr
    if not (isinstance(owner, NameExpr) and isinstance(owner.node, Var)):
        return None
    info: TypeInfo | None = None
    if owner.node.is_self and isinstance(scope, FuncDef):
        info = scope.info or None
    else:
        typ = proper_type(owner.node.type)
        info = typ.type if isinstance(typ, Instance) else None
    sym = info.get(expr.name) if info is not None else None
    return sym.node if sym is not None else None


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
