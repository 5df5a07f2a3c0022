"""mypy entry point: ``plugins = ["mypy_lgstate.plugin"]``.

The plugin class only dispatches: each hook is an O(1) lookup of the callee's fullname, and the work
is done by ``discovery`` (where state is declared), ``walker`` (what the serializer does with a type),
``allowlist`` (strict msgpack) and ``report`` (where an error goes).
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import weakref
from collections.abc import Callable, Iterable
from typing import Final

from mypy.nodes import CallExpr, ClassDef, FuncDef, MemberExpr, MypyFile, RefExpr, TypeInfo
from mypy.options import Options
from mypy.server.trigger import make_trigger, make_wildcard_trigger
from mypy.checker import TypeChecker
from mypy.plugin import (
    CheckerPluginInterface,
    FunctionContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import AnyType, Type, TypeOfAny, get_proper_type

import mypy_lgstate
from mypy_lgstate import discovery, sites
from mypy_lgstate import errorcodes as codes
from mypy_lgstate.allowlist import derive_allowlist
from mypy_lgstate.config import ConfigError, LGStateConfig, load_config
from mypy_lgstate.report import fail, report
from mypy_lgstate.walker import Findings, Walker

# mypy records this (with a hash of this file) in its cache, and discards every cached module when it
# changes; __init__ refines it (see ``_version``).
__version__ = mypy_lgstate.__version__

GRAPH_STATE_DECORATOR: Final = "mypy_lgstate.graph_state"
STATE_GRAPH: Final = "langgraph.graph.state.StateGraph"
ADD_NODE: Final = "langgraph.graph.state.StateGraph.add_node"
ADD_SEQUENCE: Final = "langgraph.graph.state.StateGraph.add_sequence"
# Write sites whose payloads langgraph types as Any: callee -> {parameter: root of the reported path}.
FUNCTION_WRITE_SITES: Final = {
    "langgraph.types.Command": {"update": "Command.update", "resume": "Command.resume"},
    "langgraph.types.Send": {"arg": "Send.arg"},
    "langgraph.types.interrupt": {"value": "interrupt.value"},
}
_GRAPH_INPUTS: Final = {
    "invoke": {"input": "invoke.input"},
    "ainvoke": {"input": "ainvoke.input"},
    "stream": {"input": "stream.input"},
    "astream": {"input": "astream.input"},
    "batch": {"inputs": "batch.inputs"},
    "abatch": {"inputs": "abatch.inputs"},
    "update_state": {"values": "update_state.values"},
    "aupdate_state": {"values": "aupdate_state.values"},
}
# mypy names a method after the class of the receiver: a compiled StateGraph, or a plain Pregel.
METHOD_WRITE_SITES: Final = {
    f"{owner}.{method}": params
    for owner in ("langgraph.graph.state.CompiledStateGraph", "langgraph.pregel.main.Pregel")
    for method, params in _GRAPH_INPUTS.items()
}

_LIBRARY_DIRS: Final = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}", f"{os.sep}typeshed{os.sep}")


class LGStatePlugin(Plugin):
    walker: Walker

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        try:
            self.config: LGStateConfig = load_config(options.config_file)
        except ConfigError as error:
            # One line, like mypy's own configuration errors, and no traceback.
            print(error, file=sys.stderr)
            raise SystemExit(2) from None
        global __version__
        __version__ = _version(self.config, daemon=_IN_DAEMON in sys.modules)
        # dmypy keeps checking with the plugin object of its first build, but makes a new one on
        # every run: that is the moment to drop verdicts memoized from classes edited since.
        for earlier in _LIVE_PLUGINS:
            earlier.walker.forget()
        _LIVE_PLUGINS.add(self)
        self.walker = Walker(self.config, options)
        self._strict = self.config.profile == "msgpack" and self.config.strict_msgpack
        self._state_classes_by_module: dict[str, list[str]] = {}
        for fullname in self.config.state_classes:
            module, _, name = fullname.rpartition(".")
            self._state_classes_by_module.setdefault(module, []).append(name)
        # Modules whose classes a check in module M read, by M: returned to mypy as M's indirect
        # dependencies once M is checked, so that an edit to them rechecks M.
        self._read_modules: dict[str, set[str]] = {}
        self._function_hooks: dict[str, Callable[[FunctionContext], Type]] = {
            STATE_GRAPH: self._state_graph,
            GRAPH_STATE_DECORATOR: self._graph_state_decorator,
            **{name: self._function_write_site for name in FUNCTION_WRITE_SITES},
        }
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {
            ADD_NODE: self._add_node,
            ADD_SEQUENCE: self._add_sequence,
            **{name: self._graph_input for name in METHOD_WRITE_SITES},
        }

    # Dispatch ------------------------------------------------------------------------------------

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return self._function_hooks.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return self._method_hooks.get(fullname)

    def report_config_data(self, ctx: ReportConfigContext) -> object:
        # Library and typeshed modules never hold findings: keep their caches across option changes.
        if any(part in ctx.path for part in _LIBRARY_DIRS):
            return None
        return self.config.to_data()

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        # Called once a module is checked: the one moment a class named in ``state_classes`` can
        # be checked in its own module, whatever else uses it.
        names = self._state_classes_by_module.get(file.fullname)
        if names:
            self._check_configured_state_classes(file, names)
        return self._read_modules.pop(file.fullname, set())

    # Hooks ---------------------------------------------------------------------------------------

    def _state_graph(self, ctx: FunctionContext) -> Type:
        checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def _graph_state_decorator(self, ctx: FunctionContext) -> Type:
        if isinstance(ctx.context, ClassDef) and discovery.is_schema(ctx.context.info):
            self._check_state(ctx, [ctx.context.info], allowlist_from=[ctx.context.info])
        return ctx.default_return_type

    def _add_node(self, ctx: MethodContext) -> Type:
        graph = discovery.graph_type_schemas(ctx.type)
        schema = discovery.node_input_schema(ctx)
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=[*graph, schema])
        self._check_nodes(ctx, sites.nodes_of_add_node(ctx))
        return ctx.default_return_type

    def _add_sequence(self, ctx: MethodContext) -> Type:
        self._check_nodes(ctx, sites.nodes_of_add_sequence(ctx))
        return ctx.default_return_type

    def _function_write_site(self, ctx: FunctionContext) -> Type:
        assert isinstance(ctx.api, TypeChecker) and isinstance(ctx.context, CallExpr)
        callee = ctx.context.callee
        params = FUNCTION_WRITE_SITES[callee.fullname] if isinstance(callee, RefExpr) else None
        if params is None:
            return ctx.default_return_type
        # The graph is not known here: a node's declared state parameter stands in for its schema.
        state = sites.state_schema_of_enclosing_node(ctx.api)
        self._check_values(ctx, params, allowlist_from=[state] if state is not None else [])
        return ctx.default_return_type

    def _graph_input(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, MemberExpr)
        params = _GRAPH_INPUTS[ctx.context.callee.name]
        self._check_values(ctx, params, allowlist_from=discovery.graph_type_schemas(ctx.type))
        return ctx.default_return_type

    # Checks --------------------------------------------------------------------------------------

    def _check_state(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Iterable[TypeInfo],
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        allowed = self._allowlist(allowlist_from)
        for info in schemas:
            findings = self.walker.check_state_class(info)
            self._record_reads(ctx.api, findings)
            report(
                ctx.api,
                findings,
                ctx.context,
                allowed=allowed,
                configured=self.config.allowed_msgpack_modules,
            )

    def _check_configured_state_classes(self, file: MypyFile, names: list[str]) -> None:
        infos = [
            sym.node
            for sym in map(file.names.get, names)
            if sym is not None and isinstance(sym.node, TypeInfo) and discovery.is_schema(sym.node)
        ]
        checker = _checker_of(file, self._modules) if infos else None
        if checker is None:
            return
        for info in infos:
            findings = self.walker.check_state_class(info)
            self._record_reads(checker, findings)
            report(checker, findings, info, allowed=self._allowlist([info]),
                   configured=self.config.allowed_msgpack_modules)

    def _check_nodes(self, ctx: MethodContext, nodes: list[sites.Node]) -> None:
        api = ctx.api
        assert isinstance(api, TypeChecker)
        schemas = discovery.graph_type_schemas(ctx.type)
        channels = sites.graph_channels(ctx.type)
        allowed = self._allowlist(schemas)
        for node in nodes:
            ret = sites.node_return_type(node.type, api)
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
                self._record_reads(api, findings)
                report(api, findings, ctx.context, at_fields=False, allowed=allowed,
                       configured=self.config.allowed_msgpack_modules)
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
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        api = ctx.api
        assert isinstance(api, TypeChecker)
        allowed = self._allowlist(allowlist_from)
        for expr, root in sites.call_values(ctx, params):
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
                self._record_reads(api, findings)
                report(api, findings, value.expr, at_fields=False, allowed=allowed,
                       configured=self.config.allowed_msgpack_modules)

    def _allowlist(self, schemas: Iterable[TypeInfo]) -> frozenset[str] | None:
        """The derived allowlist in strict msgpack mode (``None`` when the mode is off)."""
        if not self._strict:
            return None
        if not self.config.derive_allowlist:
            return frozenset()
        return derive_allowlist(discovery.schema_type(info) for info in schemas)

    def _record_reads(self, api: CheckerPluginInterface, findings: Findings) -> None:
        """Tell mypy which classes this check read, so that an edit to one rechecks this module:
        as indirect module dependencies (incremental runs), and as fine-grained triggers on the
        classes for the code being checked (the daemon)."""
        assert isinstance(api, TypeChecker)
        tree = api.tree
        function = api.scope.top_level_function()
        target = function.fullname if isinstance(function, FuncDef) else tree.fullname
        reads = self._read_modules.setdefault(tree.fullname, set())
        for module, fullname in findings.touched:
            if module == "builtins":
                continue
            if module != tree.fullname:
                reads.add(module)
            # The class itself changed (a TypedDict's items), or one of its members did.
            for trigger in (make_trigger(fullname), make_wildcard_trigger(fullname)):
                tree.plugin_deps.setdefault(trigger, set()).add(target)


_LIVE_PLUGINS: weakref.WeakSet[LGStatePlugin] = weakref.WeakSet()
# Imported in the daemon process only, before it first loads plugins. Not
# ``options.fine_grained_incremental``: ``dmypy run`` compares the snapshot of the daemon's first
# build (where it is true) with one taken from the options of the run (where it is false), so the
# versions would always differ and every ``dmypy run`` would restart the daemon.
_IN_DAEMON: Final = "mypy.dmypy_server"


def _version(config: LGStateConfig, *, daemon: bool) -> str:
    """The version mypy records for this plugin.

    It includes a hash of the package's own source: mypy hashes only this file, and an edit to
    another module of the package must not replay stale cached errors. In the daemon it also folds in
    the options, so that ``dmypy run`` restarts when they change (the daemon ignores
    ``report_config_data``). A plain mypy run leaves them out: there, ``report_config_data`` rechecks
    exactly the user's modules, where folding them in would discard the cache of every library too.
    """
    package = os.path.dirname(os.path.abspath(__file__))
    source = hashlib.sha256()
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), "rb") as f:
                source.update(f.read())
    version = f"{mypy_lgstate.__version__}+{source.hexdigest()[:12]}"
    return f"{version}.{config.digest()}" if daemon else version


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


def plugin(version: str) -> type[LGStatePlugin]:
    return LGStatePlugin
