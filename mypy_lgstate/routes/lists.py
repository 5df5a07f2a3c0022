"""Lists built in code: the items of a ``middleware=`` or ``add_sequence(...)`` argument, followed
through the module being checked (docs/discovery.md, "Middleware lists built in code").

Applications rarely write such a list in the call. They build it: ``steps = [a, b]`` then
``steps.append(c)``, ``.insert(0, x)``, ``.extend([...])`` or ``+= [...]`` in the same function,
``[*base, c]``, ``base + [c]``, ``a if flag else b``, ``[cls() for cls in CLASSES]``, or a call of the
project's function that ends with ``return [...]``. mypy joins such a list to one item type, which
names no class: each item is found here instead, from the syntax tree of the module being checked,
which mypy keeps whole while it checks the module. The caller reads each item by its declaration,
never by the inferred types of other statements (a helper's body may not be checked yet when the
call is), so cold, warm and daemon runs see the same items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final, NamedTuple

from mypy.nodes import (
    ARG_POS,
    GDEF,
    LDEF,
    AssignmentStmt,
    Block,
    CallExpr,
    ConditionalExpr,
    Decorator,
    Expression,
    ExpressionStmt,
    FakeInfo,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    ListComprehension,
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

# How many variables and helper functions a list is followed through (a guard against cycles such
# as ``a = b; b = a``).
DEPTH: Final = 6

Scope = FuncItem | MypyFile

# Calls that copy the list they are given.
_COPIES: Final = frozenset({"builtins.list", "builtins.tuple"})


class Item(NamedTuple):
    expr: Expression
    in_call: bool  # written in the call itself (its type is the one mypy has just inferred)


class Listed(NamedTuple):
    """The items of a list, as far as the module tells, and why the rest is not known."""

    items: list[Item]
    unresolved: list[str]
    # Recording a summary (``deferring``): the calls of other modules' functions and the parameters
    # whose lists the function returns, for the module that reads the summary.
    deferred: list[Expression]


class Recorded(NamedTuple):
    """The middleware of the lists a function of another module returns, as its module recorded
    them: each item (a name bound to what it names), the indexes of the parameters whose lists it
    returns, and why the rest is not known."""

    items: list[Expression]
    parameters: list[int]
    unresolved: list[str]


# A function of another module that returns the list: what its module recorded, or None.
Elsewhere = Callable[[FuncDef], "Recorded | None"]


def listed(
    expr: Expression,
    tree: MypyFile,
    scope: Scope,
    before: int,
    what: str,
    elsewhere: Elsewhere | None = None,
) -> Listed:
    """The items of the list ``expr`` (an argument of a call at line ``before`` in ``scope``), and why
    some are not known (``what`` names the list in those reasons: "the middleware list")."""
    reader = _Reader(tree, what, elsewhere)
    reader.list_items(expr, scope, before, DEPTH, in_call=True)
    return Listed(reader.items, reader.unresolved, [])


def returned_items(
    function: FuncDef, tree: MypyFile, what: str, *, deferring: bool = False
) -> Listed:
    """The items of every list ``function`` (of ``tree``) returns. ``deferring``: a call of another
    module's function, or a parameter of ``function``, is kept as it is (``Listed.deferred``)."""
    reader = _Reader(tree, what, None, deferring=function if deferring else None)
    reader.returns(function, DEPTH)
    return Listed(reader.items, reader.unresolved, reader.deferred)


class _Reader:
    def __init__(
        self,
        tree: MypyFile,
        what: str,
        elsewhere: Elsewhere | None,
        *,
        deferring: FuncDef | None = None,
    ) -> None:
        self.tree = tree
        self.what = what
        self.elsewhere = elsewhere
        self.deferring = deferring
        self.items: list[Item] = []
        self.unresolved: list[str] = []
        self.deferred: list[Expression] = []
        # The parameters of the functions of this module being followed, bound to the arguments of
        # the call that is followed (``normalize(build(cfg))``): where to read their lists.
        self.bound: dict[Var, tuple[Expression, Scope, int]] = {}

    def list_items(
        self, expr: Expression, scope: Scope, before: int, depth: int, *, in_call: bool = False
    ) -> None:
        """Add the items of the list ``expr`` evaluates to."""
        if depth <= 0:
            self.unresolved.append(f"{self.what} is built through too many variables")
        elif isinstance(expr, (ListExpr, TupleExpr)):
            for item in expr.items:
                if isinstance(item, StarExpr):
                    self.list_items(item.expr, scope, before, depth - 1)
                else:
                    self.items.append(Item(item, in_call))
        elif isinstance(expr, OpExpr) and expr.op == "+":
            self.list_items(expr.left, scope, before, depth - 1)
            self.list_items(expr.right, scope, before, depth - 1)
        elif isinstance(expr, ConditionalExpr):
            self.list_items(expr.if_expr, scope, before, depth - 1)
            self.list_items(expr.else_expr, scope, before, depth - 1)
        elif isinstance(expr, ListComprehension):
            self.comprehension(expr, scope, before, depth)
        elif isinstance(expr, NameExpr) and isinstance(expr.node, Var):
            self.variable(expr, scope, before, depth)
        elif isinstance(expr, MemberExpr) and _self_of(expr, scope) is not None:
            self.attribute(expr, scope, depth)
        elif (
            isinstance(expr, CallExpr)
            and isinstance(expr.callee, RefExpr)
            and expr.callee.fullname in _COPIES
            and len(expr.args) == 1
        ):
            self.list_items(expr.args[0], scope, before, depth - 1)  # ``list(base)``: a copy
        elif isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
            self.helper(expr, expr.callee, scope, before, depth)
        else:
            self.unresolved.append(f"{self.what} is built by an expression not followed")

    def comprehension(self, expr: ListComprehension, scope: Scope, before: int, depth: int) -> None:
        """``[x for x in items]`` (its conditions aside) and ``[cls() for cls in classes]``: the items,
        or each item called."""
        generator = expr.generator
        index = generator.indices[0] if len(generator.indices) == 1 else None
        made = generator.left_expr
        call = made if isinstance(made, CallExpr) else None
        if call is not None:
            made = call.callee
        if not (isinstance(index, NameExpr) and isinstance(made, NameExpr) and made.node is index.node):
            self.unresolved.append(f"{self.what} is built by a comprehension not followed")
            return
        source = _Reader(self.tree, self.what, self.elsewhere, deferring=self.deferring)
        source.bound = self.bound
        source.list_items(generator.sequences[0], scope, before, depth - 1)
        self.unresolved.extend(source.unresolved)
        self.deferred.extend(source.deferred)
        for item in source.items:
            if call is not None:  # ``cls(settings)`` for each class: an instance of each
                made_call = CallExpr(item.expr, call.args, call.arg_kinds, call.arg_names)
                made_call.set_line(item.expr)
                self.items.append(Item(made_call, False))
            else:
                self.items.append(Item(item.expr, False))

    def variable(self, name: NameExpr, scope: Scope, before: int, depth: int) -> None:
        """A list variable: what is assigned to it, appended and extended, in its own scope
        before the call (a module-level list used in a function: the whole module)."""
        var = name.node
        assert isinstance(var, Var)
        bound = self.bound.get(var)
        if bound is not None:  # a parameter of a helper being followed: its argument
            self.list_items(bound[0], bound[1], bound[2], depth - 1)
            return
        if self.deferring is not None and any(
            arg.variable is var for arg in self.deferring.arguments
        ):
            self.deferred.append(name)  # the list the function is given: its caller's
            return
        tree = self.tree
        if name.kind == GDEF and var.fullname.rpartition(".")[0] == tree.fullname:
            if scope is not tree:
                scope, before = tree, 1 << 30
        elif name.kind != LDEF:
            self.unresolved.append(f'{self.what} "{name.name}" is defined in another module')
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
            self.unresolved.append(f'{self.what} "{name.name}" is not assigned in this scope')

    def attribute(self, expr: MemberExpr, scope: Scope, depth: int) -> None:
        """``self.middleware``: what every method of the class assigns to it, appends to it and
        extends it with (a subagent executor builds its list in ``__init__``, conditionally)."""
        info = _self_of(expr, scope)
        assert info is not None
        found = False
        for method in _methods(info):
            if not method.arguments:
                continue
            owner = method.arguments[0].variable
            for stmt in statements(method.body.body):
                if isinstance(stmt, AssignmentStmt) and any(
                    _is_attribute(lvalue, owner, expr.name) for lvalue in stmt.lvalues
                ):
                    self.list_items(stmt.rvalue, method, stmt.line, depth - 1)
                    found = True
                elif (
                    isinstance(stmt, OperatorAssignmentStmt)
                    and stmt.op == "+"
                    and _is_attribute(stmt.lvalue, owner, expr.name)
                ):
                    self.list_items(stmt.rvalue, method, stmt.line, depth - 1)
                elif (
                    isinstance(stmt, ExpressionStmt)
                    and isinstance(stmt.expr, CallExpr)
                    and isinstance(stmt.expr.callee, MemberExpr)
                    and _is_attribute(stmt.expr.callee.expr, owner, expr.name)
                    and stmt.expr.args
                ):
                    if stmt.expr.callee.name in ("append", "insert"):
                        self.items.append(Item(stmt.expr.args[-1], False))
                    elif stmt.expr.callee.name == "extend":
                        self.list_items(stmt.expr.args[0], method, stmt.line, depth - 1)
        if not found:
            self.unresolved.append(f'{self.what} "self.{expr.name}" is not assigned in its class')

    def method_call(self, expr: Expression, var: Var, scope: Scope, depth: int) -> None:
        """``items.append(x)``, ``.insert(0, x)``, ``.extend([...])``."""
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
            self.items.append(Item(expr.args[-1], False))
        elif method == "extend":
            self.list_items(expr.args[0], scope, expr.line, depth - 1)

    def helper(
        self, call: CallExpr, callee: RefExpr, scope: Scope, before: int, depth: int
    ) -> None:
        """A function that returns the list: each ``return`` it has, when it is this module's (its
        parameters read as the call's arguments); what its module recorded, when it is another's."""
        node = callee.node.func if isinstance(callee.node, Decorator) else callee.node
        function = node if isinstance(node, FuncDef) else None
        arguments = _positional(call)
        if function is not None and _defined_in(function, self.tree) and function.body.body:
            for argument, given in zip(function.arguments, arguments):
                self.bound[argument.variable] = (given, scope, before)
            self.returns(function, depth)
            return
        if self.deferring is not None and function is not None:
            self.deferred.append(call)  # read from its own module's summary by the reader
            return
        recorded = self.elsewhere(function) if self.elsewhere and function is not None else None
        if recorded is not None and function is not None:
            self.items.extend(Item(item, False) for item in recorded.items)
            self.unresolved.extend(recorded.unresolved)
            for index in recorded.parameters:
                if index < len(arguments):
                    self.list_items(arguments[index], scope, before, depth - 1)
                else:
                    self.unresolved.append(f"{self.what} is given to {function.name}() by keyword")
            return
        name = callee.fullname or (callee.name if isinstance(callee, (NameExpr, MemberExpr)) else "")
        self.unresolved.append(f"{self.what} comes from {name}(), whose body is not in this module")

    def returns(self, function: FuncDef, depth: int) -> None:
        for stmt in statements(function.body.body):
            if isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                self.list_items(stmt.expr, function, stmt.line + 1, depth - 1)


def _self_of(expr: MemberExpr, scope: Scope) -> TypeInfo | None:
    """The class of a method's ``self``, when ``expr`` is ``self.attribute`` in that method."""
    if not (isinstance(scope, FuncDef) and isinstance(expr.expr, NameExpr)):
        return None
    info = scope.info
    if isinstance(info, FakeInfo) or not scope.arguments or scope.is_static:
        return None
    return info if expr.expr.node is scope.arguments[0].variable else None


def _methods(info: TypeInfo) -> Iterator[FuncDef]:
    for stmt in info.defn.defs.body:
        if isinstance(stmt, Decorator):
            stmt = stmt.func
        if isinstance(stmt, FuncDef):
            yield stmt


def _is_attribute(expr: Expression, owner: Var, name: str) -> bool:
    return (
        isinstance(expr, MemberExpr)
        and expr.name == name
        and isinstance(expr.expr, NameExpr)
        and expr.expr.node is owner
    )


def _positional(call: CallExpr) -> list[Expression]:
    found = []
    for arg, kind in zip(call.args, call.arg_kinds):
        if kind != ARG_POS:
            break
        found.append(arg)
    return found


def _defined_in(function: FuncDef, tree: MypyFile) -> bool:
    return function.fullname.rpartition(".")[0] == tree.fullname


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
