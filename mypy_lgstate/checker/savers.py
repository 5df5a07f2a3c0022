"""What the saver a graph is compiled with changes: a PostgreSQL saver (``PostgresSaver``,
``AsyncPostgresSaver``) stores a channel's whole value inline as JSON when it is a ``str``, ``int``
or ``float``, so an enum member with such a mixin comes back as its bare value
(``Walker.inlined``). The ``saver`` option says so of every graph; ``compile(checkpointer=...)``
and ``create_agent(checkpointer=...)`` with such a saver say it of their own graph, where the
option does not (docs/rules.md, "Measured against the savers").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Context, FuncDef, MemberExpr, TypeInfo
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import Instance, Type

from mypy_lgstate.checker.emit import Emitter
from mypy_lgstate.checker.findings import outside
from mypy_lgstate.checker.graphs import Graphs
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.routes import discovery, factories
from mypy_lgstate.routes.aliases import proper_type

# The savers that keep a str, int or float channel value inline (not the shallow ones, which
# serialize every value).
POSTGRES_SAVERS: Final = (
    "langgraph.checkpoint.postgres.PostgresSaver",
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
)


def is_postgres_saver(typ: Type) -> bool:
    proper = proper_type(typ)
    return isinstance(proper, Instance) and any(
        proper.type.has_base(saver) for saver in POSTGRES_SAVERS
    )


class Savers:
    """The checks a graph's own saver adds, for one plugin object."""

    def __init__(
        self, walker: Walker, graphs: Graphs, emit: Emitter, built: factories.BuiltGraphs
    ) -> None:
        self._walker = walker
        self._graphs = graphs
        self._emit = emit
        self._built = built

    def _applies(self, ctx: FunctionContext | MethodContext) -> bool:
        """Whether the call gives a PostgreSQL saver that the options do not already name (under
        json every enum member is written as its value anyway)."""
        if self._walker.profile != "msgpack" or self._walker.inlines:
            return False
        checkpointer = discovery.bound_arguments(ctx).get("checkpointer")
        return checkpointer is not None and is_postgres_saver(checkpointer[1])

    def compile(self, ctx: MethodContext, api: TypeChecker) -> Type:
        """``builder.compile(checkpointer=saver)``; mypy's own type."""
        if not self._applies(ctx):
            return ctx.default_return_type
        schemas = self._graphs.schemas(ctx.type)
        if not schemas:  # a builder a factory returns, declared without type arguments
            assert isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, MemberExpr)
            function = api.scope.current_function()
            scope = function if isinstance(function, FuncDef) else api.tree
            schemas, _ = self._built.of(ctx.context.callee.expr, scope, api.tree)
        self.check(api, ctx.context, schemas)
        return ctx.default_return_type

    def agent(
        self, ctx: FunctionContext, api: TypeChecker, states: Iterable[TypeInfo]
    ) -> None:
        """``create_agent(..., checkpointer=saver)``: its state classes."""
        if self._applies(ctx):
            self.check(api, ctx.context, states)

    def check(self, api: TypeChecker, context: Context, schemas: Iterable[TypeInfo]) -> None:
        for info in schemas:
            findings = self._walker.inlined(info).under(info.name)
            untracked = self._graphs.special_keys(api, (info,)).untracked
            if untracked:  # never checkpointed
                findings = outside(findings, [f"{info.name}.{key}" for key in untracked])
            self._emit(api, findings, context, allowed=None)
