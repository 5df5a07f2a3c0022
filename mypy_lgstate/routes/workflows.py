"""The functional API as ``lgstate report`` shows it (``coverage.py``): an ``@entrypoint`` is a graph
of its own (a ``Pregel``), titled by its function, with the classes of its values as its schemas and
LangGraph's channels of a workflow; its nodes are the function and each ``@task`` its body calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, FuncDef, RefExpr, TypeInfo
from mypy.server.subexpr import get_subexpressions
from mypy.types import Instance, Type, TypedDictType, get_proper_type

CHANNELS: Final = ("__start__", "__end__", "__previous__")
# The graph that lists the @task functions no @entrypoint of the checked code calls.
UNCALLED_TASKS: Final = "@task functions no @entrypoint of the checked code calls"

# The roles of an @entrypoint's values, by how ``functional.entrypoint_values`` names them: its
# input, what it returns (``entrypoint.final``'s value), and what it saves for ``previous``.
_ROLES: Final = {
    "(input)": ("input",), "()": ("output", "previous"), ".value": ("output",), ".save": ("previous",)
}


def name(api: TypeChecker, function: FuncDef) -> str:
    """The function's full name as the messages and the lock file name it (``app.flow.summarize``);
    one defined in a function is named by its module and bare name."""
    if function.fullname.startswith(api.tree.fullname + "."):
        return function.fullname
    return f"{api.tree.fullname}.{function.name}"


def schema_roles(values: Sequence[tuple[str, Type]]) -> dict[TypeInfo, tuple[str, ...]]:
    """The class of each of an ``@entrypoint``'s values that is one, with its roles."""
    roles: dict[TypeInfo, tuple[str, ...]] = {}
    for path, typ in values:
        info = _value_class(typ)
        if info is not None:
            roles[info] = (*roles.get(info, ()), *_ROLES[_suffix(path)])
    return roles


def called(function: FuncDef) -> set[str]:
    """The fullnames of the functions the body calls by name (the @task functions among them)."""
    return {
        expr.callee.fullname for expr in get_subexpressions(function)
        if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr)
    }


def _suffix(path: str) -> str:
    """``workflow(inputs)``: ``(input)``; ``workflow()``: ``()``; ``workflow().save``: ``.save``."""
    if path.endswith(")"):
        return "()" if path.endswith("()") else "(input)"
    return path[path.rindex("."):]


def _value_class(typ: Type) -> TypeInfo | None:
    """The class of a functional-API value, when it is one (its input's TypedDict, a model)."""
    proper = get_proper_type(typ)
    if isinstance(proper, TypedDictType):
        return proper.fallback.type
    if isinstance(proper, Instance) and proper.type.module_name not in ("builtins", "typing"):
        return proper.type
    return None
