"""The middleware a ``create_agent(..., middleware=...)`` call is given, when the list is built in
code (docs/discovery.md, "Middleware lists built in code").

Applications rarely write the list in the call. They build it: ``middleware = [A()]`` then
``middleware.append(B())`` or ``.extend([...])`` or ``+= [...]`` in the same function, ``[*base, C()]``,
``base + [C()]``, or ``middleware=build_middleware()`` where the project's function ends with
``return [...]``. mypy joins such a list to ``list[AgentMiddleware[...]]``, which names no
middleware class: each item is found here instead, from the syntax tree of the module being checked,
which mypy keeps whole while it checks the module.

Each item's class is read from its declaration (``Budget()`` names the class ``Budget``; a
decorator-made middleware ``audit`` is a module-level name with its declared type), never from the
inferred types of other statements: a helper function's body may not be checked yet when the call
is, and cold, warm and daemon runs would then see different things. Only the module being checked
is read: a helper of another module is a declared signature (its body is freed once its module is
checked, and absent from a cached module), so its list stays the join, and the reason is given to
``lgstate report``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    GDEF,
    LDEF,
    AssignmentStmt,
    Block,
    CallExpr,
    ConditionalExpr,
    Decorator,
    Expression,
    ExpressionStmt,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    ListExpr,
    MatchStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    OperatorAssignmentStmt,
    OpExpr,
    RefExpr,
    ReturnStmt,
    StarExpr,
    Statement,
    TryStmt,
    TupleExpr,
    TypeInfo,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.types import AnyType, CallableType, Instance, Type, get_proper_type
from mypy.typevars import fill_typevars

# How many variables and helper functions a list is followed through (a guard against cycles such
# as ``a = b; b = a``).
_DEPTH: Final = 6

Scope = FuncItem | MypyFile
# Calls whose result holds the items of their one argument.
_COPIES: Final = frozenset({"builtins.list", "builtins.tuple"})


class Middleware(NamedTuple):
    """What a ``middleware=`` argument holds, as far as the module tells."""

    types: list[Type]  # each item's type, in list order
    unresolved: list[str]  # why some items are not known (for ``lgstate report``)


def middleware_items(expr: Expression, api: TypeChecker, scope: Scope, before: int) -> Middleware:
    """The items of the ``middleware=`` argument ``expr`` of a call at line ``before`` in ``scope``.
    Items written in the call itself are taken by their own types, which mypy has just inferred."""
    reader = _Reader(api)
    reader.list_items(expr, scope, before, _DEPTH, in_call=True)
    return Middleware(reader.types, reader.unresolved)


class _Reader:
    def __init__(self, api: TypeChecker) -> None:
        self.api = api
        self.types: list[Type] = []
        self.unresolved: list[str] = []

    def list_items(
        self, expr: Expression, scope: Scope, before: int, depth: int, *, in_call: bool = False
    ) -> None:
        """Add the items of the list ``expr`` evaluates to."""
        if depth <= 0:
            self.unresolved.append("the middleware list is built through too many variables")
        elif isinstance(expr, (ListExpr, TupleExpr)):
            for item in expr.items:
                if isinstance(item, StarExpr):
                    self.list_items(item.expr, scope, before, depth - 1)
                else:
                    self.item(item, in_call=in_call)
        elif isinstance(expr, OpExpr) and expr.op == "+":
            self.list_items(expr.left, scope, before, depth - 1)
            self.list_items(expr.right, scope, before, depth - 1)
        elif isinstance(expr, ConditionalExpr):
            self.list_items(expr.if_expr, scope, before, depth - 1)
            self.list_items(expr.else_expr, scope, before, depth - 1)
        elif isinstance(expr, NameExpr) and isinstance(expr.node, Var):
            self.variable(expr, scope, before, depth)
        elif isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
            if expr.callee.fullname in _COPIES and len(expr.args) == 1:
                # list(build()): the items of its argument
                self.list_items(expr.args[0], scope, before, depth - 1)
            else:
                self.helper(expr.callee, depth)
        else:
            self.unresolved.append("the middleware list is built by an expression not followed")

    def variable(self, name: NameExpr, scope: Scope, before: int, depth: int) -> None:
        """A list variable: what is assigned to it, appended and extended, in its own scope
        before the call (a module-level list used in a function: the whole module)."""
        var = name.node
        assert isinstance(var, Var)
        tree = self.api.tree
        if name.kind == GDEF and var.fullname.rpartition(".")[0] == tree.fullname:
            if scope is not tree:
                scope, before = tree, 1 << 30
        elif name.kind != LDEF:
            self.unresolved.append(f'the middleware list "{name.name}" is defined in another module')
            return
        found = False
        for stmt in statements(_body(scope)):
            if stmt.line >= before:
                continue
            if isinstance(stmt, AssignmentStmt) and _binds(stmt.lvalues, var):
                self.list_items(stmt.rvalue, scope, stmt.line, depth - 1)
                found = True
            elif isinstance(stmt, OperatorAssignmentStmt) and stmt.op == "+" and _binds([stmt.lvalue], var):
                self.list_items(stmt.rvalue, scope, stmt.line, depth - 1)
            elif isinstance(stmt, ExpressionStmt):
                self.method_call(stmt.expr, var, scope, depth)
        if not found:
            self.unresolved.append(f'the middleware list "{name.name}" is not assigned in this scope')

    def method_call(self, expr: Expression, var: Var, scope: Scope, depth: int) -> None:
        """``middleware.append(X())``, ``.insert(0, X())``, ``.extend([...])``."""
        if not (
            isinstance(expr, CallExpr)
            and isinstance(expr.callee, MemberExpr)
            and isinstance(expr.callee.expr, NameExpr)
            and expr.callee.expr.node is var
            and expr.args
        ):
            return
        method = expr.callee.name
        if method in ("append", "insert"):
            self.item(expr.args[-1])
        elif method == "extend":
            self.list_items(expr.args[0], scope, expr.line, depth - 1)

    def helper(self, callee: RefExpr, depth: int) -> None:
        """A function of this module that returns the list: each ``return`` it has."""
        function = _module_function(callee, self.api.tree)
        if function is None:
            name = callee.fullname or (callee.name if isinstance(callee, (NameExpr, MemberExpr)) else "")
            self.unresolved.append(
                f"the middleware list comes from {name}(), whose body is not in this module"
            )
            return
        for stmt in statements(function.body.body):
            if isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                self.list_items(stmt.expr, function, stmt.line + 1, depth - 1)

    def item(self, expr: Expression, *, in_call: bool = False) -> None:
        typ = self.api.lookup_type_or_none(expr) if in_call else _declared_item(expr)
        if typ is None:
            self.unresolved.append("an item of the middleware list has no declared class")
        else:
            self.types.append(typ)


def _declared_item(expr: Expression) -> Type | None:
    """A middleware item's type from its declaration: ``Budget(...)`` (the class), a function call
    declared to return a middleware, or a name with a declared type (``audit``, made by a
    decorator)."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        node = expr.callee.node
        if isinstance(node, TypeInfo):
            return fill_typevars(node)
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, FuncDef) and isinstance(node.type, CallableType):
            returned = get_proper_type(node.type.ret_type)
            return returned if isinstance(returned, Instance) else None
        return None
    if isinstance(expr, RefExpr):
        node = expr.node
        if isinstance(node, Decorator):
            node = node.var
        if isinstance(node, Var) and node.type is not None:
            declared = get_proper_type(node.type)
            return None if isinstance(declared, AnyType) else declared
    return None


def _module_function(callee: RefExpr, tree: MypyFile) -> FuncDef | None:
    """The module-level function ``callee`` names, when it is defined in ``tree``."""
    node = callee.node
    if isinstance(node, Decorator):
        node = node.func
    if not isinstance(node, FuncDef):
        return None
    sym = tree.names.get(node.name)
    here = sym is not None and (
        sym.node is node or (isinstance(sym.node, Decorator) and sym.node.func is node)
    )
    return node if here and node.body.body else None


def _binds(lvalues: list[Expression], var: Var) -> bool:
    return any(isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in lvalues)


def _body(scope: Scope) -> list[Statement]:
    return scope.defs if isinstance(scope, MypyFile) else scope.body.body


def statements(body: list[Statement]) -> Iterator[Statement]:
    """Every statement of a scope, nested blocks included, but not those of the functions and
    classes it defines (scopes of their own)."""
    for stmt in body:
        yield stmt
        blocks: list[Block | None] = []
        if isinstance(stmt, IfStmt):
            blocks = [*stmt.body, stmt.else_body]
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            blocks = [stmt.body, stmt.else_body]
        elif isinstance(stmt, WithStmt):
            blocks = [stmt.body]
        elif isinstance(stmt, TryStmt):
            blocks = [stmt.body, *stmt.handlers, stmt.else_body, stmt.finally_body]
        elif isinstance(stmt, MatchStmt):
            blocks = list(stmt.bodies)
        for block in blocks:
            if block is not None:
                yield from statements(block.body)
