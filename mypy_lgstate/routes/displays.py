"""What a display or a comprehension holds, read from its syntax and the types mypy inferred for its
parts: its items, the channels an update display writes, and the type to name for what it writes.

LangGraph types what it is given as ``Any``, so mypy infers a display passed there with ``Any``
items (``dict[Any, Any]``, ``list[Any]``): its items' own types say more, for the routes that read a
write and for the checks that word what it writes.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.join import join_type_list
from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ConditionalExpr,
    DictExpr,
    DictionaryComprehension,
    Expression,
    ExpressionStmt,
    ForStmt,
    ListComprehension,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    OperatorAssignmentStmt,
    SetComprehension,
    SetExpr,
    StarExpr,
    Statement,
    StrExpr,
    TupleExpr,
    Var,
    WithStmt,
)
from mypy.typeops import make_simplified_union
from mypy.types import Instance, Type

from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import Scope, statements


def items(expr: Expression) -> list[Expression] | None:
    """The items of a list, set or tuple display, or the one item a list or set comprehension
    makes (``None`` for any other expression)."""
    if isinstance(expr, (ListExpr, SetExpr, TupleExpr)):
        return expr.items
    if isinstance(expr, (ListComprehension, SetComprehension)):
        return [expr.generator.left_expr]
    return None


def dict_items(
    expr: DictExpr | DictionaryComprehension,
) -> list[tuple[Expression | None, Expression]]:
    if isinstance(expr, DictExpr):
        return expr.items
    return [(expr.key, expr.value)]


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
        pairs = dict_items(expr)
        keys = [type_of(key) if key is not None else None for key, _ in pairs]
        parts = [keys, [type_of(value) for _, value in pairs]]
    else:
        listed = items(expr)
        if listed is None or isinstance(expr, TupleExpr):
            return written
        parts = [[type_of(item) if not isinstance(item, StarExpr) else None for item in listed]]
    if not parts[0] or len(parts) != len(proper.args):
        return written
    joined = []
    for part in parts:
        known = [typ for typ in part if typ is not None]
        if len(known) != len(part):
            return written
        joined.append(join_type_list(known))
    return proper.copy_modified(args=joined)


def literal_assignments(name: NameExpr, scope: Scope) -> frozenset[str] | None:
    """The str literals a local variable of ``scope`` is given, when every assignment of it there
    gives one (``status = "closed"``, ``status = "a" if x else "b"``), which mypy widens to ``str``;
    ``None`` for any other value (computed at run time, a parameter, a loop's variable)."""
    var = name.node
    if not isinstance(var, Var):
        return None
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    found: set[str] = set()
    for stmt in statements(body):
        if isinstance(stmt, AssignmentStmt) and any(
            isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in stmt.lvalues
        ):
            values = _str_literals(stmt.rvalue)
            if values is None:
                return None
            found |= values
        elif _binds_otherwise(stmt, var):
            return None
    return frozenset(found) if found else None


def _str_literals(expr: Expression) -> set[str] | None:
    if isinstance(expr, StrExpr):
        return {expr.value}
    if isinstance(expr, ConditionalExpr):
        left, right = _str_literals(expr.if_expr), _str_literals(expr.else_expr)
        return left | right if left is not None and right is not None else None
    return None


def _binds_otherwise(stmt: Statement, var: Var) -> bool:
    """Whether ``stmt`` binds ``var`` other than by an assignment (``+=``, a loop, ``with ... as``)."""
    if isinstance(stmt, OperatorAssignmentStmt):
        targets: list[Expression | None] = [stmt.lvalue]
    elif isinstance(stmt, ForStmt):
        targets = [stmt.index]
    elif isinstance(stmt, WithStmt):
        targets = list(stmt.target)
    else:
        return False
    return any(isinstance(target, NameExpr) and target.node is var for target in targets)


def local_pairs(expr: Expression, scope: Scope, before: int) -> ListExpr | None:
    """The ``(key, value)`` pairs a local list passed as ``Command(update=pairs)`` holds, as one
    list display: bound to a display (``pairs = [("k", v), ...]``) and grown with ``append``,
    ``extend`` and ``+=`` before the call, every pair a display with a literal key. Each value is
    then read by its own inferred type, as the pairs written in place are (``None`` otherwise)."""
    if not isinstance(expr, NameExpr) or not isinstance(expr.node, Var):
        return None
    var = expr.node
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    pairs: list[Expression] = []
    for stmt in statements(body):
        if stmt.line >= before:
            continue
        if isinstance(stmt, AssignmentStmt) and any(
            isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in stmt.lvalues
        ):
            if not isinstance(stmt.rvalue, ListExpr):
                return None
            pairs = list(stmt.rvalue.items)
        elif isinstance(stmt, OperatorAssignmentStmt) and _names(stmt.lvalue, var):
            if stmt.op != "+" or not isinstance(stmt.rvalue, ListExpr):
                return None
            pairs += stmt.rvalue.items
        elif isinstance(stmt, ExpressionStmt) and isinstance(stmt.expr, CallExpr):
            callee = stmt.expr.callee
            if isinstance(callee, MemberExpr) and _names(callee.expr, var):
                added = stmt.expr.args[0] if len(stmt.expr.args) == 1 else None
                if callee.name == "append" and added is not None:
                    pairs.append(added)
                elif callee.name == "extend" and isinstance(added, ListExpr):
                    pairs += added.items
                else:
                    return None
        elif _binds_otherwise(stmt, var):
            return None
    if not pairs or not all(
        isinstance(pair, TupleExpr) and len(pair.items) == 2 and isinstance(pair.items[0], StrExpr)
        for pair in pairs
    ):
        return None
    display = ListExpr(pairs)
    display.set_line(expr)
    return display


def _names(expr: Expression, var: Var) -> bool:
    return isinstance(expr, NameExpr) and expr.node is var
