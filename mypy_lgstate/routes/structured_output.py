"""The schema a structured-output call returns an instance of. LangChain types
``model.with_structured_output(Query).invoke(...)`` as ``dict | BaseModel``, whatever the schema:
the value is a ``Query`` (a dict for a TypedDict or JSON schema, or with ``include_raw=True``), which
a message about the value names, read from the source: the call itself, or a local of the function
bound to it, its runnable bound to ``with_structured_output(...)`` in the same function.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    AwaitExpr,
    CallExpr,
    Expression,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    TypeInfo,
    Var,
)

from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.lists import Scope, statements

_RUNS: Final = frozenset({"invoke", "ainvoke"})


def structured_schema(expr: Expression, scope: Scope) -> TypeInfo | None:
    """The model or dataclass whose instance ``expr`` is, when it is what a structured-output
    runnable returns (``None`` otherwise, or when a local is bound more than once)."""
    run = _bound_value(expr, scope)
    if isinstance(run, AwaitExpr):
        run = run.expr
    if not isinstance(run, CallExpr) or not isinstance(run.callee, MemberExpr):
        return None
    if run.callee.name not in _RUNS:
        return None
    made = _bound_value(run.callee.expr, scope)
    if (
        not isinstance(made, CallExpr)
        or not isinstance(made.callee, MemberExpr)
        or made.callee.name != "with_structured_output"
        or not made.args
        or "include_raw" in made.arg_names
    ):
        return None
    schema = made.args[0]
    if isinstance(schema, RefExpr) and isinstance(schema.node, TypeInfo):
        if discovery.is_schema(schema.node) and not schema.node.typeddict_type:
            return schema.node
    return None


def _bound_value(expr: Expression, scope: Scope) -> Expression | None:
    """``expr`` itself, or for a local bound once in ``scope``, the value it is bound to."""
    if not isinstance(expr, NameExpr):
        return expr
    var = expr.node
    if not isinstance(var, Var):
        return None
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    bound = [
        stmt.rvalue
        for stmt in statements(body)
        if isinstance(stmt, AssignmentStmt)
        and any(isinstance(lvalue, NameExpr) and lvalue.node is var for lvalue in stmt.lvalues)
    ]
    return bound[0] if len(bound) == 1 else None
