"""The checks behind the plugin's hooks: where graph state and checkpoint writes are found, walked and
reported. ``plugin.py`` imports this module on the first hook that fires, so a run in which nothing
needs checking (a warm run with nothing changed) does not pay for it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    FuncDef,
    MemberExpr,
    MypyFile,
    RefExpr,
    TypeInfo,
)
from mypy.options import Options
from mypy.plugin import FunctionContext, MethodContext
from mypy.server.trigger import make_trigger, make_wildcard_trigger
from mypy.types import AnyType, Type, TypeOfAny, get_proper_type

from mypy_lgstate import discovery, drift, sites
from mypy_lgstate import errorcodes as codes
from mypy_lgstate.allowlist import derive_allowlist
from mypy_lgstate.config import LGStateConfig
from mypy_lgstate import lockfile
from mypy_lgstate.lockfile import NO_LOCK, Lock
from mypy_lgstate.report import fail, report
from mypy_lgstate.walker import Findings, Walker

if TYPE_CHECKING:
    from mypy_lgstate.coverage import CoverageRecorder

# ``lgstate report`` installs one before its build, to list what the checks saw; in mypy runs it
# stays None, and the checks pay one comparison per graph, node and write site.
recorder: CoverageRecorder | None = None

# Write sites whose payloads langgraph types as Any: callee -> {parameter: root of the reported path}.
FUNCTION_WRITE_SITES: Final = {
    "langgraph.types.Command": {"update": "Command.update", "resume": "Command.resume"},
    "langgraph.types.Send": {"arg": "Send.arg"},
    "langgraph.types.interrupt": {"value": "interrupt.value"},
}
GRAPH_INPUTS: Final = {
    "invoke": {"input": "invoke.input"},
    "ainvoke": {"input": "ainvoke.input"},
    "stream": {"input": "stream.input"},
    "astream": {"input": "astream.input"},
    "batch": {"inputs": "batch.inputs"},
    "abatch": {"inputs": "abatch.inputs"},
    "update_state": {"values": "update_state.values"},
    "aupdate_state": {"values": "aupdate_state.values"},
}


class Checks:
    """Everything the hooks do, for one plugin object (one build, or one daemon session)."""

    def __init__(self, config: LGStateConfig, options: Options, lock: Lock = NO_LOCK) -> None:
        self.config = config
        self.lock = lock
        self.walker = Walker(config, options)
        self._strict = config.profile == "msgpack" and config.strict_msgpack
        # Modules whose classes a check in module M read, by M: returned to mypy as M's indirect
        # dependencies once M is checked, so that an edit to them rechecks M.
        self._read_modules: dict[str, set[str]] = {}
        self._triggers: dict[str, tuple[str, str]] = {}
        # The schemas and the channels of each graph type seen (a graph has several nodes).
        self._graphs: dict[Type, tuple[TypeInfo, ...]] = {}
        self._channels: dict[tuple[TypeInfo, ...], tuple[frozenset[str], str] | None] = {}
        self._allowlists: dict[tuple[TypeInfo, ...], frozenset[str]] = {}  # strict msgpack only
        # The modules of each set of classes read (most checks of a graph read the same set).
        self._modules_of: dict[frozenset[tuple[str, str]], frozenset[str]] = {}
        # mypy reads plugin triggers only when it keeps fine-grained dependencies (the daemon).
        self._fine_grained = options.fine_grained_incremental or options.cache_fine_grained

    def forget(self) -> None:
        """Drop what was memoized from classes (a new ``dmypy`` run: they may have been edited)."""
        self.walker.forget()
        self._graphs.clear()
        self._channels.clear()
        self._allowlists.clear()
        self._modules_of.clear()

    def reads_of(self, module: str) -> set[str]:
        return self._read_modules.pop(module, set())

    # Hooks ---------------------------------------------------------------------------------------

    def state_graph(self, ctx: FunctionContext) -> Type:
        checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
        if recorder is not None:
            recorder.graph(ctx, checkpointed)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def graph_state_decorator(self, ctx: FunctionContext) -> Type:
        if isinstance(ctx.context, ClassDef) and discovery.is_schema(ctx.context.info):
            self._check_state(ctx, [ctx.context.info], allowlist_from=[ctx.context.info])
        return ctx.default_return_type

    def add_node(self, ctx: MethodContext) -> Type:
        graph = self._graph_schemas(ctx.type)
        bound = discovery.bound_arguments(ctx)
        schema = discovery.node_input_schema(bound)
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=[*graph, schema])
        self._check_nodes(ctx, graph, sites.nodes_of_add_node(bound))
        return ctx.default_return_type

    def add_sequence(self, ctx: MethodContext) -> Type:
        graph = self._graph_schemas(ctx.type)
        self._check_nodes(ctx, graph, sites.nodes_of_add_sequence(ctx))
        return ctx.default_return_type

    def function_write_site(self, ctx: FunctionContext) -> Type:
        assert isinstance(ctx.api, TypeChecker) and isinstance(ctx.context, CallExpr)
        callee = ctx.context.callee
        params = FUNCTION_WRITE_SITES[callee.fullname] if isinstance(callee, RefExpr) else None
        if params is None:
            return ctx.default_return_type
        allowed = None
        if self._strict:
            # The graph is not known here: a node's declared state parameter stands in for its schema.
            state = sites.state_schema_of_enclosing_node(ctx.api)
            allowed = self._allowlist([state] if state is not None else [])
        self._check_values(ctx, params, allowed)
        return ctx.default_return_type

    def graph_input(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, MemberExpr)
        params = GRAPH_INPUTS[ctx.context.callee.name]
        allowed = self._allowlist(self._graph_schemas(ctx.type)) if self._strict else None
        self._check_values(ctx, params, allowed)
        return ctx.default_return_type

    # Checks --------------------------------------------------------------------------------------

    def _graph_schemas(self, graph: Type) -> tuple[TypeInfo, ...]:
        """The schema classes of a ``StateGraph[...]`` type (memoized: a graph has several nodes)."""
        schemas = self._graphs.get(graph)
        if schemas is None:
            schemas = self._graphs[graph] = tuple(discovery.graph_type_schemas(graph))
        return schemas

    def _graph_channels(self, schemas: tuple[TypeInfo, ...]) -> tuple[frozenset[str], str] | None:
        """The channel names of a graph and its state schema's name (memoized like its schemas)."""
        if schemas not in self._channels:
            self._channels[schemas] = sites.graph_channels(schemas)
        return self._channels[schemas]

    def _check_state(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Iterable[TypeInfo],
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        assert isinstance(ctx.api, TypeChecker)
        self._check_state_classes(ctx.api, ctx.context, schemas, self._allowlist(allowlist_from))

    def check_configured_state_classes(
        self, file: MypyFile, names: list[str], modules: object
    ) -> None:
        infos = [
            sym.node
            for sym in map(file.names.get, names)
            if sym is not None and isinstance(sym.node, TypeInfo) and discovery.is_schema(sym.node)
        ]
        checker = _checker_of(file, modules) if infos else None
        if checker is None:
            return
        for info in infos:
            self._check_state_classes(checker, info, [info], self._allowlist([info]))

    def _check_state_classes(
        self,
        api: TypeChecker,
        context: Context,
        schemas: Iterable[TypeInfo],
        allowed: frozenset[str] | None,
    ) -> None:
        for info in schemas:
            self._emit(api, self.walker.check_state_class(info), context, allowed=allowed)
            self._check_drift(api, info, context)

    def _check_drift(self, api: TypeChecker, info: TypeInfo, context: Context) -> None:
        """Compare a graph-state root with the lock file (``lgstate lock``: record it instead)."""
        if lockfile.collected is not None:
            lockfile.collected[info.fullname] = drift.snapshot(info)
            return
        locked = self.lock.roots.get(info.fullname)
        if locked is not None:
            drift.check_root(
                api, info, context, locked, json_profile=self.config.profile == "json"
            )

    def _check_nodes(
        self, ctx: MethodContext, schemas: tuple[TypeInfo, ...], nodes: list[sites.Node]
    ) -> None:
        if not nodes:
            return
        api = ctx.api
        assert isinstance(api, TypeChecker)
        channels = self._graph_channels(schemas)
        allowed = self._allowlist(schemas)
        for node in nodes:
            ret = sites.node_return_type(node.type, api)
            if recorder is not None:
                recorder.node(ctx, schemas, node, ret)
            if ret is None:
                continue
            shape = sites.update_shape(ret, node.name)
            if shape.untyped:
                proper = get_proper_type(ret)
                unannotated = isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated
                shown = None if unannotated else self.walker.type_name(ret)
                fail(api, codes.untyped_node_message(node.name, shown), ctx.context, codes.UNTYPED_NODE)
            for path, typ in shape.checked:
                findings = self.walker.check_value(typ, path)
                self._emit(api, findings, ctx.context, at_fields=False, allowed=allowed)
            if channels is None:
                continue
            names, state = channels
            for key, update_name in shape.keys:
                if key not in names:
                    fail(
                        api,
                        codes.unknown_key_message(node.name, key, update_name, state),
                        ctx.context,
                        codes.UNKNOWN_KEY,
                    )

    def _check_values(
        self,
        ctx: FunctionContext | MethodContext,
        params: dict[str, str],
        allowed: frozenset[str] | None,
    ) -> None:
        api = ctx.api
        assert isinstance(api, TypeChecker)
        for expr, root in sites.call_values(ctx, params):
            if recorder is not None:
                recorder.write_site(ctx, root, expr)
            for value in sites.values_of(expr, root, api):
                if sites.is_unchecked(value.type) or sites.is_control_object(value.type):
                    continue
                schema = sites.channels_schema(value, root)
                if schema is not None:  # a model or dataclass whose fields update the channels
                    findings = sites.rerooted(
                        self.walker.check_state_class(schema), schema.name, value.path
                    )
                else:
                    findings = self.walker.check_value(value.type, value.path)
                if value.shown is not None:
                    findings = sites.naming(findings, value.path, self.walker.type_name(value.shown))
                self._emit(api, findings, value.expr, at_fields=False, allowed=allowed)

    def _allowlist(self, schemas: Iterable[TypeInfo]) -> frozenset[str] | None:
        """The derived allowlist in strict msgpack mode (``None`` when the mode is off)."""
        if not self._strict:
            return None
        if not self.config.derive_allowlist:
            return frozenset()
        key = tuple(schemas)
        allowed = self._allowlists.get(key)
        if allowed is None:
            allowed = self._allowlists[key] = derive_allowlist(map(discovery.schema_type, key))
        return allowed

    def _emit(
        self,
        api: TypeChecker,
        findings: Findings,
        context: Context,
        *,
        at_fields: bool = True,
        allowed: frozenset[str] | None,
    ) -> None:
        """Record what the check read, then report what it found."""
        self._record_reads(api, findings)
        if not findings.problems and (allowed is None or not findings.user_classes):
            return
        report(
            api,
            findings,
            context,
            at_fields=at_fields,
            allowed=allowed,
            configured=self.config.allowed_msgpack_modules,
        )

    def _record_reads(self, api: TypeChecker, findings: Findings) -> None:
        """Tell mypy which classes this check read, so that an edit to one rechecks this module:
        as indirect module dependencies (incremental runs), and, when mypy keeps fine-grained
        dependencies (the daemon), as triggers on the classes for the code being checked."""
        if not findings.touched:
            return
        tree = api.tree
        modules = self._modules_of.get(findings.touched)
        if modules is None:
            modules = self._modules_of[findings.touched] = frozenset(
                module for module, _ in findings.touched
            )
        reads = self._read_modules.setdefault(tree.fullname, set())
        reads |= modules
        reads.discard(tree.fullname)
        if not self._fine_grained:
            return
        function = api.scope.top_level_function()
        target = function.fullname if isinstance(function, FuncDef) else tree.fullname
        deps = tree.plugin_deps
        for _, fullname in findings.touched:
            triggers = self._triggers.get(fullname)
            if triggers is None:
                # The class itself changed (a TypedDict's items), or one of its members did.
                triggers = self._triggers[fullname] = (
                    make_trigger(fullname),
                    make_wildcard_trigger(fullname),
                )
            for trigger in triggers:
                deps.setdefault(trigger, set()).add(target)


def _checker_of(file: MypyFile, modules: object) -> TypeChecker | None:
    """The type checker that has just checked ``file``.

    mypy hands ``get_additional_indirect_deps`` only the file. Its checker is still alive then (and
    set to report into that file), and it refers to the build's module table, which mypy gave this
    plugin through ``set_modules``: it is found among the referrers of that table. This runs only for
    modules that define a class named in ``state_classes``.
    """
    for referrer in gc.get_referrers(modules):
        if isinstance(referrer, TypeChecker) and referrer.tree is file:
            return referrer
    return None
