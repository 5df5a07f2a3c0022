"""The middleware a ``create_agent(..., middleware=...)`` call is given, when the list is built in
code (docs/discovery.md, "Middleware lists built in code"): the list is followed through the module
being checked (``lists``), and each item's class is read from its declaration (``Budget()`` names the
class ``Budget``; a decorator-made middleware ``audit`` is a name with its declared type), never from
the inferred types of other statements. A helper of another module is read from what its module
recorded of the lists it returns (its summary, ``exported``); one that records nothing keeps the list's
declared item type, and the reason goes to ``lgstate report``.
"""

from __future__ import annotations

from typing import NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Decorator, Expression, FuncDef, RefExpr, TypeInfo, Var
from mypy.types import AnyType, CallableType, Instance, Type
from mypy.typevars import fill_typevars

from mypy_lgstate.routes import lists
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import Scope


class Middleware(NamedTuple):
    """What a ``middleware=`` argument holds, as far as the module tells."""

    types: list[Type]  # each item's type, in list order
    unresolved: list[str]  # why some items are not known (for ``lgstate report``)


def middleware_items(
    expr: Expression,
    api: TypeChecker,
    scope: Scope,
    before: int,
    elsewhere: lists.Elsewhere | None = None,
) -> Middleware:
    """The items of the ``middleware=`` argument ``expr`` of a call at line ``before`` in ``scope``.
    Items written in the call itself are taken by their own types, which mypy has just inferred."""
    found = lists.listed(expr, api.tree, scope, before, "the middleware list", elsewhere)
    types: list[Type] = []
    unresolved = list(found.unresolved)
    for item in found.items:
        typ = api.lookup_type_or_none(item.expr) if item.in_call else _declared_item(item.expr)
        if typ is None:
            unresolved.append("an item of the middleware list has no declared class")
        else:
            types.append(typ)
    return Middleware(types, unresolved)


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
            returned = proper_type(node.type.ret_type)
            return returned if isinstance(returned, Instance) else None
        return None
    if isinstance(expr, RefExpr):
        node = expr.node
        if isinstance(node, Decorator):
            node = node.var
        if isinstance(node, Var) and node.type is not None:
            declared = proper_type(node.type)
            return None if isinstance(declared, AnyType) else declared
    return None
