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
    ConditionalExpr,
    DictExpr,
    DictionaryComprehension,
    Expression,
    ListComprehension,
    ListExpr,
    SetComprehension,
    SetExpr,
    StarExpr,
    StrExpr,
    TupleExpr,
)
from mypy.typeops import make_simplified_union
from mypy.types import Instance, Type

from mypy_lgstate.routes.aliases import proper_type


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
