"""A call on a graph builder (docs/discovery.md): the nodes an ``add_node`` / ``add_sequence`` /
``add_conditional_edges`` call adds, the functions they run (through a wrapper or a registration
loop), and the classes LangGraph reads from them. The other calls on the same builder are read by
``builder_calls``.

Each callable is resolved from its declaration (a function's signature, a callable class's
``__call__``), never from inferred types of other expressions: those may not exist yet (mypy checks
top-level statements before function bodies) and differ between cold, warm and daemon runs. See
docs/discovery.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    GDEF,
    AssignmentStmt,
    Block,
    CallExpr,
    Decorator,
    DictExpr,
    Expression,
    ForStmt,
    FuncDef,
    FuncItem,
    LambdaExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    StrExpr,
    SymbolNode,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import MethodContext
from mypy.typeops import bind_self, function_type
from mypy.types import AnyType, CallableType, FunctionLike, Instance, Type
from mypy.typevars import fill_typevars

from mypy_lgstate.routes import discovery, lists, sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements

Scope = FuncItem | MypyFile


class Added(NamedTuple):
    """What one builder call adds to its graph: its nodes, and the classes LangGraph reads from them
    that the graph's type does not name (an input schema, given or inferred)."""

    nodes: list[sites.Node]
    inputs: list[TypeInfo]


# The functions of a node table another module recorded (``exported``), by the table's fullname:
# each with the name it is added under, as a reference bound to it.
Tables = Callable[[str], "list[tuple[str, RefExpr]] | None"]


def added_by_add_node(
    ctx: MethodContext, scope: Scope, graph: Sequence[TypeInfo], tables: Tables | None = None
) -> Added:
    """``add_node("name", fn)`` or ``add_node(fn)``: the node, and its ``input_schema=`` class, else
    the class of its first parameter (LangGraph infers the node's input schema from it)."""
    assert isinstance(ctx.api, TypeChecker)
    bound = discovery.bound_arguments(ctx)
    nodes = _nodes_of_add_node(bound, ctx.api, scope, tables)
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
    bound: discovery.BoundArguments, api: TypeChecker, scope: Scope, tables: Tables | None
) -> list[sites.Node]:
    """``add_node("name", fn)`` or ``add_node(fn)``; in a registration loop (``for name, fn in
    [...]: builder.add_node(name, fn)``), each function the loop goes through."""
    node_arg = bound.get("node")
    action_arg = bound.get("action")
    if node_arg is None:
        return []
    name, (action, action_type) = node_arg[0], action_arg or node_arg
    looped = _loop_items(name if action_arg is not None else None, action, scope, api.tree, tables)
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
    name: Expression | None,
    action: Expression,
    scope: Scope,
    tree: MypyFile,
    tables: Tables | None = None,
) -> list[tuple[str, Expression]] | None:
    """``(label, function)`` for each item of the display a ``for`` loop of ``scope`` goes through,
    when ``action`` is that loop's variable: ``for fn in (a, b)``, ``for name, fn in [("a", a),
    ...]``, ``for name, fn in {"a": a}.items()`` (or a variable bound to the display: of this scope,
    of the module, or a node table of another module, as that module recorded it)."""
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
        for item in _iterated(stmt.expr, scope, tree, tables):
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


def _iterated(
    expr: Expression, scope: Scope, tree: MypyFile, tables: Tables | None
) -> list[Expression]:
    """The items of a display a loop goes through; a dict's ``.items()`` as ``(key, value)``, its
    ``.values()`` as its values."""
    method = expr.callee.name if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr) else None
    if method in ("items", "values"):
        assert isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr)
        mapping = expr.callee.expr
        table = _table(mapping, tables, tree)
        if table is not None:
            return [TupleExpr([StrExpr(label), fn]) if method == "items" else fn for label, fn in table]
        if isinstance(mapping, NameExpr):
            mapping = _assigned(mapping, scope, (DictExpr,)) or _module_display(mapping, tree, (DictExpr,)) or mapping
        if isinstance(mapping, DictExpr):
            pairs = [(key, value) for key, value in mapping.items if key is not None]
            return [TupleExpr([key, value]) if method == "items" else value for key, value in pairs]
        return []
    if isinstance(expr, NameExpr):
        table = _table(expr, tables, tree)
        if table is not None:
            return [fn for _, fn in table]
        expr = _assigned_display(expr, scope) or _module_display(expr, tree, (ListExpr, TupleExpr)) or expr
    return list(expr.items) if isinstance(expr, (ListExpr, TupleExpr)) else []


def _table(expr: Expression, tables: Tables | None, tree: MypyFile) -> list[tuple[str, RefExpr]] | None:
    """A node table of another module (``from app.nodes import NODES``), as it recorded it."""
    if tables is None or not isinstance(expr, RefExpr) or not isinstance(expr.node, Var):
        return None
    fullname = expr.node.fullname
    if not fullname or fullname.rpartition(".")[0] == tree.fullname:
        return None
    return tables(fullname)


def _module_display(
    name: NameExpr, tree: MypyFile, kinds: tuple[type[Expression], ...]
) -> Expression | None:
    """The display a module-level variable of this module is bound to, read from a function."""
    if name.kind != GDEF or not isinstance(name.node, Var):
        return None
    if name.node.fullname.rpartition(".")[0] != tree.fullname:
        return None
    return _assigned(name, tree, kinds)


def registered_node(label: str, expr: Expression, typ: Type, api: TypeChecker) -> sites.Node:
    """The node ``expr`` registers. A wrapper whose result says nothing of what the node writes
    (typed ``Any``, or a callable returning ``Any``), applied to one function in the call
    (``traced("deploy", _deploy)``) or as its decorator (``@traced``), runs that function: the
    function is the node, with its own declared signature."""
    runs = _runs(expr)
    if runs is not None:
        function, how = runs
        declared = declared_callable(function, api.tree)
        if declared is not None:
            name = _expr_name(function) if label == "<node>" else label
            return sites.Node(name, declared, function, f"registered through {how}()")
    unwrapped = unwrapped_callable(expr)
    call = expr if isinstance(expr, CallExpr) else None
    if unwrapped is None or not _says_nothing(typ):
        return sites.Node(label, typ, expr, wrapper=call)
    function, wrapper = unwrapped
    declared = api.lookup_type_or_none(function) if isinstance(expr, CallExpr) else None
    if declared is None:
        declared = declared_callable(function, api.tree)
    if declared is None:
        return sites.Node(label, typ, expr, wrapper=call)
    return sites.Node(
        _expr_name(function) if label == "<node>" else label,
        declared,
        function,
        f"{wrapper}, whose result is typed Any",
        wrapper=expr,
    )


# Runnables and partials that run the function they are given, unchanged: the function is the node.
_RUNNING: Final = {
    "langchain_core.runnables.base.RunnableLambda": "RunnableLambda",
    "functools.partial": "functools.partial",
}


def _runs(expr: Expression) -> tuple[RefExpr, str] | None:
    """``RunnableLambda(fn)``, ``functools.partial(fn, ...)``: ``fn``, and how it is wrapped."""
    if not (isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr) and expr.args):
        return None
    how = _RUNNING.get(expr.callee.fullname)
    function = expr.args[0]
    if how is None or not isinstance(function, RefExpr):
        return None
    if not isinstance(function.node, (FuncDef, Decorator)):
        return None
    return function, how


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
