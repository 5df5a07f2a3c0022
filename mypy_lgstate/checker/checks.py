"""The checks behind the plugin's hooks. Each hook reads its call through the module of its route
(``routes/``): which classes become graph state, which nodes are added, which values are written.
The methods here run the same checks on what the routes found (the walker, the channels, the lock
file), report the findings through one path (``_emit``) and tell mypy what they read.

``plugin.py`` imports this module on the first hook that fires, so a run in which nothing needs
checking (a warm run with nothing changed) does not pay for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    Expression,
    FuncDef,
    MemberExpr,
    MypyFile,
    RefExpr,
    StrExpr,
    SymbolNode,
    TypeInfo,
)
from mypy.options import Options
from mypy.plugin import FunctionContext, MethodContext
from mypy.server.trigger import make_trigger, make_wildcard_trigger
from mypy.types import AnyType, CallableType, Type, TypeOfAny, get_proper_type

from mypy_lgstate.checker import channels, drift, errorcodes as codes, repeats
from mypy_lgstate.checker.allowlist import derive_allowlist
from mypy_lgstate.checker.report import fail, report
from mypy_lgstate.checker.walker import Findings, Walker
from mypy_lgstate.core import lockfile
from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.core.lockfile import NO_LOCK, Lock
from mypy_lgstate.core.messages import key_part
from mypy_lgstate.routes import agents, bodies, builders, discovery, factories, functional, sites
from mypy_lgstate.routes.sites import CHANNEL_TYPE_WRITERS, FUNCTION_WRITE_SITES, GRAPH_INPUTS

if TYPE_CHECKING:
    from mypy_lgstate.cli.coverage import CoverageRecorder

# ``lgstate report`` installs one before its build, to list what the checks saw; in mypy runs it
# stays None, and the checks pay one comparison per graph, node and write site.
recorder: CoverageRecorder | None = None

_Index = TypeVar("_Index")


class _TreeIndex(Generic[_Index]):
    """An index of a module's syntax tree, built once per tree (a daemon run re-parses an edited
    module)."""

    def __init__(self, build: Callable[[MypyFile], _Index]) -> None:
        self._build = build
        self._trees: dict[str, tuple[MypyFile, _Index]] = {}

    def of(self, tree: MypyFile) -> _Index:
        known = self._trees.get(tree.fullname)
        if known is None or known[0] is not tree:
            known = self._trees[tree.fullname] = (tree, self._build(tree))
        return known[1]

    def clear(self) -> None:
        self._trees.clear()


class _NodeGraph(NamedTuple):
    function: FuncDef
    channels: tuple[frozenset[str], str]
    schemas: tuple[TypeInfo, ...]


class Checks:
    """Everything the hooks do, for one plugin object (one build, or one daemon session)."""

    def __init__(
        self,
        config: LGStateConfig,
        options: Options,
        lookup: Callable[[str], SymbolNode | None],
        lock: Lock = NO_LOCK,
        module: Callable[[str], MypyFile | None] = lambda name: None,
    ) -> None:
        self.config = config
        self.lock = lock
        self.walker = Walker(config, options, lookup, module)
        self._strict = config.profile == "msgpack" and config.strict_msgpack
        # Modules whose classes a check in module M read, by M: returned to mypy as M's indirect
        # dependencies once M is checked, so that an edit to them rechecks M.
        self._read_modules: dict[str, set[str]] = {}
        self._triggers: dict[str, tuple[str, str]] = {}
        # The schemas and the channels of each graph type seen (a graph has several nodes).
        self._graphs: dict[Type, tuple[TypeInfo, ...]] = {}
        self._channels: dict[tuple[TypeInfo, ...], tuple[frozenset[str], str] | None] = {}
        self._allowlists: dict[tuple[TypeInfo, ...], frozenset[str]] = {}  # strict msgpack only
        self._messages: dict[tuple[TypeInfo, ...], frozenset[str]] = {}
        # The modules of each set of classes read (most checks of a graph read the same set).
        self._modules_of: dict[frozenset[tuple[str, str]], frozenset[str]] = {}
        # mypy reads plugin triggers only when it keeps fine-grained dependencies (the daemon).
        self._fine_grained = options.fine_grained_incremental or options.cache_fine_grained
        # The declared types of each graph's channels, by key (a node body's items are compared).
        self._declared: dict[tuple[TypeInfo, ...], dict[str, list[Type]]] = {}
        self._lookup = lookup
        # What each graph's channels accept (``channels``), by its schemas.
        self._accepting: dict[tuple[TypeInfo, ...], dict[str, list[channels.Channel]]] = {}
        self._special: dict[tuple[TypeInfo, ...], channels.Special] = {}
        # Each module's decorator calls and the functions they decorate.
        self._decorator_calls = _TreeIndex(functional.decorated_functions)
        # Each module's node functions and the classes of their graphs (strict msgpack).
        self._node_graph_classes = _TreeIndex(builders.node_graph_classes)
        self._builder_classes = builders.BuilderClasses()
        # The graph a variable or factory of the module evaluates to, when its type names no schema.
        self._built = factories.BuiltGraphs()
        self._bodies = bodies.Pending(daemon=options.fine_grained_incremental)
        # The graph of each node function of the module being checked, by fullname, recorded as
        # the node is registered (see ``_enclosing_graph``).
        self._node_graphs: dict[str, _NodeGraph] = {}

    def forget(self) -> None:
        """Drop what was memoized from classes (a new ``dmypy`` run: they may have been edited)."""
        self.walker.forget()
        self._graphs.clear()
        self._channels.clear()
        self._allowlists.clear()
        self._messages.clear()
        self._declared.clear()
        self._accepting.clear()
        self._special.clear()
        self._modules_of.clear()
        self._decorator_calls.clear()
        self._node_graph_classes.clear()
        self._builder_classes.clear()
        self._built.clear()

    def reads_of(self, module: str) -> set[str]:
        return self._read_modules.pop(module, set())

    def finish_module(self, file: MypyFile) -> None:
        """The module is checked, its bodies and their types still there: read the node bodies
        its hooks asked for."""
        for body in self._bodies.finished(file):
            self._check_body(body)

    # Graphs and their state ----------------------------------------------------------------------

    def state_graph(self, ctx: FunctionContext) -> Type:
        checkpointed, run_scoped = factories.graph_call_schemas(ctx, _scope(_checker(ctx)))
        if recorder is not None:
            recorder.graph(ctx, checkpointed)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def graph_state_decorator(self, ctx: FunctionContext) -> Type:
        if isinstance(ctx.context, ClassDef) and discovery.is_schema(ctx.context.info):
            self._check_state(ctx, [ctx.context.info], allowlist_from=[ctx.context.info])
        return ctx.default_return_type

    def declared_graph(self, ctx: FunctionContext) -> Type:
        """A ``StateGraph`` subclass's constructor, or a project's factory declared to return a
        graph: the schemas its type names."""
        checkpointed, run_scoped = discovery.declared_graph_schemas(ctx)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def check_configured_state_classes(
        self, file: MypyFile, names: list[str], modules: object
    ) -> None:
        infos = discovery.configured_schemas(file, names)
        checker = discovery.checker_of(file, modules) if infos else None
        if checker is None:
            return
        for info in infos:
            self._check_state_classes(checker, info, [info], self._allowlist([info]))

    def add_node(self, ctx: MethodContext) -> Type:
        return self._builder_call(ctx, builders.added_by_add_node)

    def add_sequence(self, ctx: MethodContext) -> Type:
        return self._builder_call(ctx, builders.added_by_add_sequence)

    def add_conditional_edges(self, ctx: MethodContext) -> Type:
        return self._builder_call(ctx, builders.added_by_add_conditional_edges)

    def _builder_call(
        self,
        ctx: MethodContext,
        added_by: Callable[[MethodContext, builders.Scope, tuple[TypeInfo, ...]], builders.Added],
    ) -> Type:
        """A builder call: the classes it adds are state, and its nodes' updates are checked
        against the channels of every class of the builder."""
        api = _checker(ctx)
        scope = _scope(api)
        graph = self._graph_schemas(ctx.type)
        added = added_by(ctx, scope, graph)
        if added.inputs or added.nodes:
            classes = self._builder_classes.of(
                ctx.context, scope, api.tree.fullname, graph, added.inputs
            )
            self._check_state(ctx, added.inputs, allowlist_from=classes)
            self._check_nodes(ctx, graph, classes, added.nodes)
        return ctx.default_return_type

    # Functional API ------------------------------------------------------------------------------

    def entrypoint(self, ctx: MethodContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            values = functional.entrypoint_values(function)
            # compile() derives the strict allowlist from the input, return and save types.
            allowed = self._allowlist_of_types([typ for _, typ in values])
            self._check_function(ctx, function, values, allowed)
        return ctx.default_return_type

    def task(self, ctx: FunctionContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            # The entrypoint that runs the task is not known here: nothing counts as derived.
            allowed = self._allowlist([])
            self._check_function(ctx, function, functional.task_values(function), allowed)
        return ctx.default_return_type

    def _decorated(self, ctx: FunctionContext | MethodContext) -> FuncDef | None:
        """The function a decorator is applied to. ``@task`` is applied by a call whose context is
        the decorated definition; ``@task(name=...)`` is a call in its decorator list."""
        context = ctx.context
        if isinstance(context, Decorator):
            return context.func
        if not isinstance(context, CallExpr):
            return None
        return self._decorator_calls.of(_checker(ctx).tree).get(context)

    def _check_function(
        self,
        ctx: FunctionContext | MethodContext,
        function: FuncDef,
        values: list[tuple[str, Type]],
        allowed: frozenset[str] | None,
    ) -> None:
        """What a functional-API function checkpoints, reported on its ``def`` line: its declared
        values, and, when its return type does not tell, what its body returns."""
        api = _checker(ctx)
        for path, typ in values:
            findings = self.walker.check_value(typ, path, channel=True)
            self._emit(api, findings, function, at_fields=False, allowed=allowed)
        if functional.returns_loose(function):
            self._bodies.add(
                bodies.Body(api, function, function, function.name, None, None, (), allowed, True)
            )

    # LangChain agents ----------------------------------------------------------------------------

    def create_agent(self, ctx: FunctionContext) -> Type:
        api = _checker(ctx)
        agent = agents.create_agent_graph(ctx, _scope(api))
        if recorder is not None:
            recorder.agent(ctx, agent.classes, agent.unresolved)
        self._check_state(ctx, agent.states, allowlist_from=agent.classes)
        allowed = self._allowlist(agent.classes)
        if agent.structured_response is not None:
            # Its channel is declared with a type variable, so compile() never derives the
            # response's class for the strict allowlist.
            findings = self.walker.check_value(
                agent.structured_response, agents.STRUCTURED_RESPONSE, channel=True
            )
            self._emit(api, findings, ctx.context, at_fields=False, allowed=allowed)
        if agent.nodes:
            channels = self._graph_channels(agent.classes)
            self._record_reads(api, Findings(touched=_class_names(agent.classes)))
            record = (
                functools.partial(recorder.node, ctx, agent.classes) if recorder is not None else None
            )
            self._check_node_returns(
                api, ctx.context, agent.nodes, channels, allowed, record, agent.classes
            )
        return ctx.default_return_type

    def create_react_agent(self, ctx: FunctionContext) -> Type:
        self._check_given_state(ctx)
        return ctx.default_return_type

    def middleware_decorator(self, ctx: FunctionContext) -> Type:
        """``@before_model(state_schema=S)`` & co.: ``S`` is state; the decorated hook runs as a
        node, its return type is checked on its ``def`` line (its keys are not: the agent, and so
        its channels, is not known here)."""
        schema = self._check_given_state(ctx)
        function = self._decorated(ctx)
        if function is not None and isinstance(function.type, CallableType):
            node = sites.Node(function.name, function.type)
            schemas = (schema,) if schema is not None else ()
            allowed = self._allowlist(schemas)
            self._check_node_returns(_checker(ctx), function, [node], None, allowed, schemas=schemas)
        return ctx.default_return_type

    def wrap_middleware_decorator(self, ctx: FunctionContext) -> Type:
        """``@wrap_model_call(state_schema=S)`` / ``@wrap_tool_call``: the hook wraps a call and
        writes no state, but ``S`` joins the agent's state."""
        self._check_given_state(ctx)
        return ctx.default_return_type

    def _check_given_state(self, ctx: FunctionContext) -> TypeInfo | None:
        """``state_schema=S`` (``create_react_agent``, the middleware decorators): ``S`` is state."""
        schema = discovery.given_schema(discovery.bound_arguments(ctx), "state_schema")
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=[schema])
        return schema

    # Write sites ---------------------------------------------------------------------------------

    def function_write_site(self, ctx: FunctionContext) -> Type:
        assert isinstance(ctx.api, TypeChecker) and isinstance(ctx.context, CallExpr)
        callee = ctx.context.callee
        params = FUNCTION_WRITE_SITES[callee.fullname] if isinstance(callee, RefExpr) else None
        if params is None:
            return ctx.default_return_type
        # A node's declared state parameter stands in for the graph's state schema; the strict
        # allowlist is the whole graph's when this module adds the node (``builders``); a
        # Command's keys and channel types take the graph of the node that builds it, if known.
        state = sites.state_schema_of_enclosing_node(ctx.api)
        schemas = (state,) if state is not None else ()
        allowed = (
            self._allowlist((*schemas, *self._enclosing_graph_classes(ctx.api)))
            if self._strict
            else None
        )
        graph = self._enclosing_graph(ctx.api) if "update" in params else None
        self._check_values(ctx, params, schemas, allowed, graph=graph)
        return ctx.default_return_type

    def _enclosing_graph_classes(self, api: TypeChecker) -> tuple[TypeInfo, ...]:
        """The classes of the graph the function being checked is a node of, when this module adds
        it: read from the module's syntax (``builders.node_graph_classes``), the same whatever order
        mypy checks the module's functions in."""
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return ()
        return self._node_graph_classes.of(api.tree).get(function.fullname, ())

    def _enclosing_graph(self, api: TypeChecker) -> _NodeGraph | None:
        """The graph of the node whose body is being checked, as recorded when this module
        registered the node (``_check_node_returns``).

        Not the syntax index of ``_enclosing_graph_classes``: a ``Command``'s keys and channel types
        are compared with the graph's channels, which come from what only the registering hook
        sees (the graph's type at ``add_node``, also for a builder a factory returns; the nodes of
        ``add_sequence``; the middleware of ``create_agent``), and the index's classes include the
        context schema, which is no channel. Recorded as the hooks fire, this misses a node whose
        body mypy checks before the call that registers it (a function defined above the function
        that builds the graph).
        """
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return None
        found = self._node_graphs.get(function.fullname)
        return found if found is not None and found.function is function else None

    def graph_input(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, MemberExpr)
        params = GRAPH_INPUTS[ctx.context.callee.name]
        schemas = self._graph_schemas(ctx.type)
        unresolved = None
        if not schemas:  # a factory declared ``-> CompiledStateGraph`` without type arguments
            api = _checker(ctx)
            schemas, unresolved = self._built.of(ctx.context.callee.expr, _scope(api), api.tree)
        self._check_values(ctx, params, schemas, self._allowlist(schemas), unresolved)
        return ctx.default_return_type

    # Node bodies in the daemon -------------------------------------------------------------------

    def dict_display(self, ctx: FunctionContext) -> Type:
        """A dict display being checked (the daemon only). dmypy rechecks a node's body alone when
        something it uses changed, without the end-of-module moment the body checks wait for: what
        the node returns is checked as soon as mypy has inferred it."""
        body = self._bodies.being_checked(ctx.api)
        if body is not None:
            only = bodies.returned_display(body.function, ctx.context)
            if only is not None:
                self._check_body(body, _checker(ctx), only)
        return ctx.default_return_type

    def dict_item(self, ctx: MethodContext) -> Type:
        """``update["key"] = value`` being checked (the daemon only; see ``dict_display``)."""
        body = self._bodies.being_checked(ctx.api)
        if body is not None:
            only = bodies.returned_item(body.function, ctx.args)
            if only is not None:
                self._check_body(body, _checker(ctx), only)
        return ctx.default_return_type

    # The checks ----------------------------------------------------------------------------------

    def _check_state(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Iterable[TypeInfo],
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        allowed = self._allowlist(allowlist_from)
        self._check_state_classes(_checker(ctx), ctx.context, schemas, allowed)

    def _check_state_classes(
        self,
        api: TypeChecker,
        context: Context,
        schemas: Iterable[TypeInfo],
        allowed: frozenset[str] | None,
    ) -> None:
        for info in schemas:
            findings = self.walker.check_state_class(info)
            special = self._special_keys(api, (info,))
            if special.messages or special.untracked:
                # add_messages stores messages, whatever the field declares; an untracked channel
                # is never checkpointed from node writes.
                fields = [f"{info.name}.{key}" for key in (*special.messages, *special.untracked)]
                findings = sites.outside(findings, fields)
            self._emit(api, findings, context, allowed=allowed)
            self._check_drift(api, info, context)

    def _check_drift(self, api: TypeChecker, info: TypeInfo, context: Context) -> None:
        """Compare a graph-state root with the lock file (``lgstate lock``: record it instead)."""
        root = drift.stable_name(info.fullname)
        if lockfile.collected is not None:
            lockfile.collected[root] = drift.snapshot(info)
            return
        locked = self.lock.roots.get(root)
        if locked is not None:
            drift.check_root(
                api, info, context, locked, json_profile=self.config.profile == "json"
            )

    def _check_nodes(
        self,
        ctx: MethodContext,
        graph: tuple[TypeInfo, ...],
        classes: tuple[TypeInfo, ...],
        nodes: list[sites.Node],
    ) -> None:
        """Node returns: their values, and their keys against the channels of ``classes`` (only
        when the graph type names its state schema: that names the graph in the message)."""
        if not nodes:
            return
        api = _checker(ctx)
        channels = self._graph_channels(classes) if graph else None
        if classes != graph:
            # The channels came from classes no walk reads: an edit to one must recheck this call.
            self._record_reads(api, Findings(touched=_class_names(classes)))
        record = functools.partial(recorder.node, ctx, graph) if recorder is not None else None
        self._check_node_returns(
            api, ctx.context, nodes, channels, self._allowlist(classes), record, classes
        )

    def _check_node_returns(
        self,
        api: TypeChecker,
        context: Context,
        nodes: list[sites.Node],
        channels: tuple[frozenset[str], str] | None,
        allowed: frozenset[str] | None,
        record: Callable[[sites.Node, Type | None, bool], Callable[[], None] | None] | None = None,
        schemas: tuple[TypeInfo, ...] = (),
    ) -> None:
        """``record`` tells ``lgstate report`` what each node is (checked from its declared type or
        from its body, unchecked, opaque)."""
        for node in nodes:
            if channels is not None:
                self._note_node_graph(api, node, channels, schemas)
            ret = sites.node_return_type(node.type)
            function = (
                bodies.local_function(node, api)
                if ret is not None and bodies.is_loose(ret)
                else None
            )
            unchecked = record(node, ret, function is not None) if record is not None else None
            if ret is None:
                continue
            shape = sites.update_shape(ret, node.name)
            if shape.untyped or function is not None:
                shown = self._shown_return(ret)
                if function is not None:
                    # Read once the module is checked: its bodies are checked after its top level.
                    self._bodies.add(
                        bodies.Body(
                            api, function, context, node.name, shown, channels, schemas, allowed,
                            unchecked=unchecked,
                        )
                    )
                else:
                    fail(api, codes.untyped_node_message(node.name, shown), context, codes.UNTYPED_NODE)
            unknown = []
            if channels is not None:
                names, state = channels
                for key, update_name in shape.keys:
                    if key not in names:
                        unknown.append(f"{node.name}().{key}")
                        fail(
                            api,
                            codes.unknown_key_message(node.name, key, update_name, state),
                            context,
                            codes.UNKNOWN_KEY,
                        )
            # A field of the channel's own declared type was checked with the schema (``repeats``).
            restated = repeats.restated_update_fields(ret, f"{node.name}()", self._channel_types(schemas))
            untracked = [f"{node.name}().{key}" for key in self._special_keys(api, schemas).untracked]
            for path, typ in shape.checked:
                if path in restated:
                    continue
                findings = repeats.revalidated_tuples(
                    self.walker,
                    self.walker.check_value(typ, path, channel=True),
                    f"{node.name}()",
                    schemas,
                    self._channel_types(schemas),
                )
                if unknown or restated or untracked:
                    # LangGraph drops the unknown keys, and never checkpoints untracked ones: what
                    # they hold never reaches a checkpoint.
                    findings = sites.outside(findings, [*unknown, *restated, *untracked])
                self._emit(api, findings, context, at_fields=False, allowed=allowed)

    def _note_node_graph(
        self,
        api: TypeChecker,
        node: sites.Node,
        channels: tuple[frozenset[str], str],
        schemas: tuple[TypeInfo, ...],
    ) -> None:
        """Remember the graph of a node defined in this module (its body is checked after the
        module's top level, where the node is registered)."""
        function = bodies.local_function(node, api)
        if function is not None:
            self._node_graphs[function.fullname] = _NodeGraph(function, channels, schemas)

    def _check_values(
        self,
        ctx: FunctionContext | MethodContext,
        params: dict[str, str],
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        unresolved: str | None = None,
        graph: _NodeGraph | None = None,
    ) -> None:
        """Check what a write site adds to the checkpoint. ``schemas`` are the graph-state classes
        of the graph being written (as far as the call tells): an instance of one of them was checked
        where it became graph state, and is not reported again at every call that passes it.
        ``graph``: the graph of the node whose body builds this ``Command``."""
        api = _checker(ctx)
        for argument, site in sites.call_values(ctx, params):
            if recorder is not None:
                recorder.write_site(ctx, site, argument, schemas, unresolved)
            declared = self._restating(api, schemas)
            for expr, root in sites.bulk_updates(argument, site):
                self._check_update(api, expr, root, site, schemas, allowed, graph, declared)

    def _shown_return(self, ret: Type) -> str | None:
        proper = get_proper_type(ret)
        unannotated = isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated
        return None if unannotated else self.walker.type_name(ret)

    def _check_body(
        self, body: bodies.Body, api: TypeChecker | None = None, only: bodies.Returned | None = None
    ) -> None:
        """What a node's body returns (``bodies``), reported on the line of each item. ``only``: one
        display or item, checked while mypy checks the function (the daemon; see ``dict_display``)."""
        api = api or body.api
        function = body.function
        returned = bodies.returned(function) if only is None else only
        if only is None and returned.opaque and not body.whole:
            if body.unchecked is not None:
                body.unchecked()
            fail(
                api,
                codes.untyped_node_message(body.label, body.shown),
                body.context,
                codes.UNTYPED_NODE,
            )
        name = bodies.function_name(function)
        root = f"{name}()"
        with bodies.reporting_in(api, function):
            if body.whole:
                values = list(functional.returned_values(returned.expressions, root, api))
                self._check_written(api, values, root, body.schemas, body.allowed, updates=False)
                return
            unknown: list[str] = []
            if body.channels is not None:
                names, state = body.channels
                for key in bodies.unknown_keys(returned, names):
                    unknown.append(key.value)
                    message = codes.unknown_body_key_message(name, key.value, state)
                    fail(api, message, key, codes.UNKNOWN_KEY)
            # LangGraph drops the unknown keys; a channel's own declared type was checked there.
            declared = self._channel_types(body.schemas)
            dropped = [*unknown, *self._special_keys(api, body.schemas).untracked]
            values = [
                value
                for value in bodies.values(returned, root, api)
                if not bodies.under_keys(value, root, dropped)
                and not bodies.declared_as(value, root, declared)
            ]
            reported = self._check_written(
                api, values, root, body.schemas, body.allowed, updates=True, dotted=True
            )
            written = [
                (key, expr) for key, expr in bodies.written_items(returned) if key not in unknown
            ]
            self._check_channel_types(api, f'Node "{name}"', written, body.schemas, root, reported)

    def _channel_types(self, schemas: tuple[TypeInfo, ...]) -> dict[str, list[Type]]:
        found = self._declared.get(schemas)
        if found is None:
            found = self._declared[schemas] = sites.channel_types(schemas)
        return found

    def _restating(self, api: TypeChecker, schemas: tuple[TypeInfo, ...]) -> dict[str, list[Type]]:
        """The channels whose declared type an item restates (``repeats``): not the untracked
        ones, whose fields are never reported, so that a graph input holding one still is."""
        declared = self._channel_types(schemas)
        untracked = self._special_keys(api, schemas).untracked if declared else ()
        if not untracked:
            return declared
        return {key: types for key, types in declared.items() if key not in untracked}

    def _check_update(
        self,
        api: TypeChecker,
        expr: Expression,
        root: str,
        site: str,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        graph: _NodeGraph | None,
        declared: dict[str, list[Type]],
    ) -> None:
        """One value a write site adds: its serializer findings, then its channel types."""
        pairs = sites.update_pairs(expr, root, api) if root == "Command.update" else None
        values = [
            value
            for value in pairs or sites.values_of(expr, root, api)
            if not repeats.restated_item(value, root, declared)
        ]
        writer = CHANNEL_TYPE_WRITERS.get(root) or CHANNEL_TYPE_WRITERS.get(site)
        items = channels.update_items(expr) if writer is not None else []
        typed = schemas
        if graph is not None and root == "Command.update":
            typed = graph.schemas
            unknown = self._unknown_command_keys(api, graph, items)
            items = [(key, value) for key, value in items if key.value not in unknown]
            values = [value for value in values if not bodies.under_keys(value, root, unknown)]
        if site in sites.CHANNEL_ROOTS and site not in sites.START_ROOTS:
            # An untracked channel is never checkpointed; a graph input is, whole (__start__).
            untracked = list(self._special_keys(api, typed).untracked)
            values = [value for value in values if not bodies.under_keys(value, root, untracked)]
        reported = self._check_written(
            api, values, root, schemas, allowed, updates=site in sites.CHANNEL_ROOTS
        )
        if items:
            written = [(key.value, value) for key, value in items]
            assert writer is not None
            self._check_channel_types(api, writer, written, typed, root, reported)

    def _unknown_command_keys(
        self, api: TypeChecker, graph: _NodeGraph, items: list[tuple[StrExpr, Expression]]
    ) -> list[str]:
        """The keys of a node's ``Command(update=...)`` that are not channels of its graph,
        reported on the key (LangGraph drops them)."""
        names, state = graph.channels
        node = bodies.function_name(graph.function)
        unknown = []
        for key, _ in items:
            if key.value not in names:
                unknown.append(key.value)
                message = codes.unknown_command_key_message(node, key.value, state)
                fail(api, message, key, codes.UNKNOWN_KEY)
        return unknown

    def _special_keys(self, api: TypeChecker, schemas: tuple[TypeInfo, ...]) -> channels.Special:
        """The keys whose channel stores messages (``add_messages``) or is never checkpointed."""
        found = self._special.get(schemas)
        if found is None:
            found = self._special[schemas] = channels.special_keys(schemas, api.modules)
        return found

    def _check_written(
        self,
        api: TypeChecker,
        values: list[sites.Value],
        root: str,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        *,
        updates: bool,
        dotted: bool = False,
    ) -> set[str]:
        """Check the values written under ``root``, each reported where it is written. ``updates``:
        the value at ``root`` updates the channels key by key (a ``Command.update``, a graph's input,
        what a node returns), rather than being stored whole; ``dotted`` shows a node's keys as
        ``node().key`` (``bodies.dotted``). Returns the paths of the values it reported."""
        messages = self._messages_channels(schemas) | self._special_keys(api, schemas).messages
        reported: set[str] = set()
        for value in values:
            if sites.is_unchecked(value.type) or sites.is_control_object(value.type):
                continue
            if messages and sites.is_message_like(value.shown or value.type):
                if any(value.path.startswith(root + key_part(key)) for key in messages):
                    continue  # add_messages turns it into a message
            schema = sites.channels_schema(value, root) if updates else None
            if schema is not None and root in sites.START_ROOTS:
                start = self.walker.start_input(value.type, value.path)
                self._emit(api, start, value.expr, at_fields=False, allowed=allowed)
            if schema is not None and schema in schemas:
                continue
            if schema is not None:  # a model or dataclass whose fields update the channels
                findings = sites.rerooted(
                    self.walker.check_state_class(schema), schema.name, value.path
                )
            elif updates and sites.is_schema_instance(value, root, schemas):
                continue
            else:
                channel = updates and sites.is_channel_value(value, root)
                findings = self.walker.check_value(value.type, value.path, channel=channel)
            if value.shown is not None:
                findings = sites.naming(findings, value.path, self.walker.type_name(value.shown))
            if dotted:
                findings = sites.repathed(findings, lambda path: bodies.dotted(path, root))
            if findings.problems:
                reported.add(value.path)
            self._emit(api, findings, value.expr, at_fields=False, allowed=allowed)
        return reported

    def _check_channel_types(
        self,
        api: TypeChecker,
        writer: str,
        items: list[tuple[str, Expression]],
        schemas: tuple[TypeInfo, ...],
        root: str,
        reported: set[str],
    ) -> None:
        """``lgstate-channel-type``: each written item against what its channel accepts. An item
        the serializer check already reported (``reported``: paths under ``root``) is not reported
        again: its fix (a list for a tuple, an ISO string for a datetime) is the channel's type."""
        if not schemas or not items:
            return
        accepting = self._accepting.get(schemas)
        if accepting is None:
            accepting = self._accepting[schemas] = channels.graph_channels(
                schemas, api.modules, self._lookup
            )
        for key, expr in items:
            top = root + key_part(key)
            if any(path == top or path.startswith((top + "[", top + "{")) for path in reported):
                continue
            message = channels.mismatch(
                writer, key, expr, accepting.get(key), api.lookup_type_or_none,
                self.walker.type_name,
            )
            if message is not None:
                fail(api, message, expr, codes.CHANNEL_TYPE)

    def _messages_channels(self, schemas: tuple[TypeInfo, ...]) -> frozenset[str]:
        found = self._messages.get(schemas)
        if found is None:
            found = self._messages[schemas] = sites.messages_channels(schemas)
        return found

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

    # The allowlist and the report path -----------------------------------------------------------

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

    def _allowlist_of_types(self, types: list[Type]) -> frozenset[str] | None:
        if not self._strict:
            return None
        return derive_allowlist(types) if self.config.derive_allowlist else frozenset()


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


def _checker(ctx: FunctionContext | MethodContext) -> TypeChecker:
    """The checker behind a hook's context (mypy's one implementation of the plugin's API)."""
    assert isinstance(ctx.api, TypeChecker)
    return ctx.api


def _scope(api: TypeChecker) -> builders.Scope:
    """The function being checked, or the module at its top level."""
    function = api.scope.current_function()
    return function if function is not None else api.tree


def _class_names(classes: Iterable[TypeInfo]) -> frozenset[tuple[str, str]]:
    return frozenset((info.module_name, info.fullname) for info in classes)
