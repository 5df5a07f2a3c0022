"""Nodes registered away from their graph's builder calls, made into what a builder call would
give: the node, bound to the function it runs.

- A project's function given the builder (``def add_research_nodes(builder: StateGraph[S]) ->
  None``) adds nodes to a graph whose state its signature leaves open; its module's summary names
  them (``routes/summaries.py``), and they are checked where it is called with a builder of a known
  state.
- A node table of another module (``for name, fn in NODES.items(): builder.add_node(name, fn)``)
  lists functions of that module, as the module recorded them (``routes/exported.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from mypy.checker import TypeChecker
from mypy.nodes import GDEF, CallExpr, Decorator, Expression, FuncDef, NameExpr, RefExpr, SymbolNode
from mypy.plugin import FunctionContext
from mypy.types import Instance, Type, TypeVarLikeType, get_proper_type

from mypy_lgstate.routes import builders, sites

Lookup = Callable[[str], "SymbolNode | None"]


def state_is_variable(graph: Type) -> bool:
    """``StateGraph[S]`` in a generic function: no channel of it is known there."""
    proper = get_proper_type(graph)
    return (
        isinstance(proper, Instance)
        and bool(proper.args)
        and isinstance(get_proper_type(proper.args[0]), TypeVarLikeType)
    )


def table_functions(rows: list[tuple[str, str]], lookup: Lookup) -> list[tuple[str, RefExpr]] | None:
    """The functions of a node table, each with the name it is added under; ``None`` when one of
    them is not known here."""
    found: list[tuple[str, RefExpr]] = []
    for label, function in rows:
        node = lookup(function)
        if node is None:
            return None
        found.append((label, _bound(function, node)))
    return found


def helper_called(ctx: FunctionContext) -> FuncDef | None:
    """The project's function a registration helper's call calls."""
    callee = ctx.context.callee if isinstance(ctx.context, CallExpr) else None
    node = callee.node if isinstance(callee, RefExpr) else None
    defn = node.func if isinstance(node, Decorator) else node
    return defn if isinstance(defn, FuncDef) else None


def helper_nodes(
    ctx: FunctionContext, adds: Sequence[tuple[int, str, object]], index: int, lookup: Lookup, api: TypeChecker
) -> Iterator[sites.Node]:
    """The nodes a registration helper's summary says it adds to the builder given as its argument
    ``index``: a function it names, or one it is given."""
    scope = api.scope.current_function() or api.tree
    for parameter, name, runs in adds:
        if parameter != index:
            continue
        expr: Expression | None = None
        if isinstance(runs, list) and runs[:1] == ["g"]:
            target = lookup(runs[1])
            if isinstance(target, (FuncDef, Decorator)):
                expr = _bound(runs[1], target)
        elif isinstance(runs, list) and runs[:1] == ["p"] and runs[1] < len(ctx.args):
            given = ctx.args[runs[1]]
            expr = given[0] if given else None
        typ = builders.declared_callable(expr, scope) if expr is not None else None
        if expr is not None and typ is not None:
            yield builders.registered_node(name, expr, typ, api)


def _bound(fullname: str, node: SymbolNode) -> NameExpr:
    """A reference to ``node``, a function of another module, as if written here."""
    ref = NameExpr(fullname.rpartition(".")[2])
    ref.node, ref.fullname, ref.kind = node, fullname, GDEF
    return ref
