"""The functional API (``langgraph.func``, docs/discovery.md): what an ``@entrypoint`` or ``@task``
function checkpoints, read from its declared signature.

- ``@entrypoint(...)``: its first parameter (the input, written when the run starts) and its return
  value; for ``entrypoint.final[R, S]`` both the value returned (``R``) and the value saved for
  ``previous`` (``S``).
- ``@task``: its return value, written as a pending write (a tuple comes back as a list when the
  task is replayed). Task arguments are not checkpointed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_OPT,
    ARG_POS,
    Block,
    CallExpr,
    ClassDef,
    Decorator,
    Expression,
    FuncDef,
    IfStmt,
    MypyFile,
    Statement,
)
from mypy.types import CallableType, Instance, Type

from mypy_lgstate.routes import bodies, sites
from mypy_lgstate.routes.aliases import proper_type

ENTRYPOINT_FINAL: Final = "langgraph.func.entrypoint.final"


def entrypoint_values(function: FuncDef) -> list[tuple[str, Type]]:
    """``(path, type)`` of each value an ``@entrypoint`` function checkpoints."""
    signature = function.type
    if not isinstance(signature, CallableType):
        return []
    name = function.name
    found: list[tuple[str, Type]] = []
    if signature.arg_kinds and signature.arg_kinds[0] in (ARG_POS, ARG_OPT):
        found.append((f"{name}({signature.arg_names[0]})", signature.arg_types[0]))
    returned = sites.node_return_type(signature)
    if returned is None:
        return found
    proper = proper_type(returned)
    if isinstance(proper, Instance) and proper.type.fullname == ENTRYPOINT_FINAL:
        if len(proper.args) == 2:
            found.append((f"{name}().value", proper.args[0]))
            found.append((f"{name}().save", proper.args[1]))
    else:
        found.append((f"{name}()", returned))
    return found


def returns_loose(function: FuncDef) -> bool:
    """Whether the function's declared return type leaves what it checkpoints unchecked (``-> dict``,
    none at all): then its body tells, once the module is checked (the decorator and the function
    are always in the same module)."""
    if not isinstance(function.type, CallableType) or not function.body.body:
        return False
    returned = sites.node_return_type(function.type)
    if returned is None:
        return False
    proper = proper_type(returned)
    if isinstance(proper, Instance) and proper.type.fullname == ENTRYPOINT_FINAL:
        # ``entrypoint.final[R, S]``: the value returned and the value saved, each may be loose.
        return any(bodies.is_loose(half) for half in proper.args)
    return bodies.is_loose(returned)


def returned_values(
    expressions: list[Expression], root: str, api: TypeChecker
) -> Iterator[sites.Value]:
    """The values a functional-API function's returns checkpoint: the returned expressions, or for
    ``entrypoint.final(value=..., save=...)`` its two arguments (under ``root.value``, ``root.save``)."""
    for expr in expressions:
        typ = api.lookup_type_or_none(expr)
        proper = proper_type(typ) if typ is not None else None
        if not (isinstance(proper, Instance) and proper.type.fullname == ENTRYPOINT_FINAL):
            yield from sites.values_of(expr, root, api)
        elif isinstance(expr, CallExpr):
            positional = iter(("value", "save"))
            for name, arg in zip(expr.arg_names, expr.args):
                half = name if name is not None else next(positional, None)
                if half in ("value", "save"):
                    yield from sites.values_of(arg, f"{root}.{half}", api)


def task_values(function: FuncDef) -> list[tuple[str, Type]]:
    """``(path, type)`` of the value a ``@task`` function checkpoints: its return value."""
    if not isinstance(function.type, CallableType):
        return []
    returned = sites.node_return_type(function.type)
    return [(f"{function.name}()", returned)] if returned is not None else []


def decorated_functions(tree: MypyFile) -> dict[CallExpr, FuncDef]:
    """Each decorator call in the module (``@task(name=...)``), with the function it decorates.

    mypy applies such a decorator without telling plugins which function it is applied to; the
    hook of the call ``task(name=...)`` only sees the call. The module's own syntax tree, kept while
    the module is checked, says which function follows.
    """
    found: dict[CallExpr, FuncDef] = {}
    _collect_decorated(tree.defs, found)
    return found


def _collect_decorated(body: list[Statement], found: dict[CallExpr, FuncDef]) -> None:
    for stmt in body:
        if isinstance(stmt, Decorator):
            for decorator in stmt.decorators:
                if isinstance(decorator, CallExpr):
                    found[decorator] = stmt.func
            _collect_decorated(stmt.func.body.body, found)
        elif isinstance(stmt, FuncDef):
            _collect_decorated(stmt.body.body, found)
        elif isinstance(stmt, ClassDef):
            _collect_decorated(stmt.defs.body, found)
        elif isinstance(stmt, IfStmt):
            for block in (*stmt.body, stmt.else_body):
                if isinstance(block, Block):
                    _collect_decorated(block.body, found)
