"""The expressions of ``Annotated[...]`` metadata that mypy keeps no trace of: a call
(``BinaryOperatorAggregate(int, operator.add)``, ``functools.partial(capped, limit=3)``,
``Topic(str, accumulate=True)``) is an invalid type to mypy, which keeps at most its callee's name,
and a lambda nothing at all. LangGraph uses such an object as it is: a channel instance is that
channel, a partial or a lambda the reducer. They are read from the module's source text, which is
what mypy parsed: only for the fields whose metadata holds one (rare), when ``channel_specs`` reads
the class (before its module's cache is written, in every mode alike).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from typing import Final

from mypy.nodes import AssignmentStmt, Decorator, FuncDef, OverloadedFuncDef, SymbolNode, TypeInfo

BINARY_OPERATOR: Final = "langgraph.channels.binop.BinaryOperatorAggregate"
_PARTIAL: Final = "functools.partial"
_WRAPPERS: Final = frozenset({"Required", "NotRequired", "ReadOnly"})

Spec = tuple[str, str]
Lookup = Callable[[str], "SymbolNode | None"]


def metadata_source(stmt: AssignmentStmt, path: str) -> list[ast.expr] | None:
    """The metadata expressions of the field ``stmt`` declares (``Annotated[T, *metadata]``), read
    from the source file at ``path``; ``None`` when the source does not read back."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()[stmt.line - 1:stmt.end_line or stmt.line]
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.AnnAssign):
        return None
    annotation = tree.body[0].annotation
    while isinstance(annotation, ast.Subscript) and _name(annotation.value).rpartition(".")[
        2
    ] in _WRAPPERS:
        annotation = annotation.slice
    if not isinstance(annotation, ast.Subscript) or not isinstance(annotation.slice, ast.Tuple):
        return None
    return list(annotation.slice.elts[1:])


def resolve(expr: ast.expr, lookup: Lookup, keeps_written: Callable[[SymbolNode], bool]) -> Spec:
    """What a call or a lambda of the metadata makes of the field: ``("channel", class)``,
    ``("reducer", function)``, ``("keep", function)`` for a reducer that returns what is written,
    else ``("unknown", "")``."""
    if isinstance(expr, ast.Lambda):
        names = [argument.arg for argument in expr.args.args]
        returns_new = len(names) == 2 and isinstance(expr.body, ast.Name) and expr.body.id == names[1]
        return ("keep", "") if returns_new else ("unknown", "")
    if not isinstance(expr, ast.Call):
        return ("unknown", "")
    callee = lookup(_name(expr.func))
    if isinstance(callee, TypeInfo) and callee.fullname == BINARY_OPERATOR:
        operator = expr.args[1] if len(expr.args) > 1 else _keyword(expr, "operator")
        return _function(operator, lookup, keeps_written)
    if isinstance(callee, TypeInfo) and callee.has_base("langgraph.channels.base.BaseChannel"):
        return ("channel", callee.fullname)
    if isinstance(callee, TypeInfo) and callee.fullname == _PARTIAL and len(expr.args) == 1:
        # Keywords bind later parameters: the reducer still takes (current, new).
        return _function(expr.args[0], lookup, keeps_written)
    return ("unknown", "")


def _function(expr: ast.expr | None, lookup: Lookup, keeps_written: Callable[[SymbolNode], bool]) -> Spec:
    node = lookup(_name(expr)) if expr is not None else None
    if isinstance(node, (FuncDef, Decorator, OverloadedFuncDef)):
        return ("keep" if keeps_written(node) else "reducer", node.fullname)
    return ("unknown", "")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _name(expr: ast.expr | None) -> str:
    """A dotted name (``operator.add``), or "" for any other expression."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _name(expr.value)
        return f"{base}.{expr.attr}" if base else ""
    return ""
