"""The checks behind the plugin's hooks: where graph state and checkpoint writes are found, walked and
reported. ``plugin.py`` imports this module on the first hook that fires, so a run in which nothing
needs checking (a warm run with nothing changed) does not pay for it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    DictExpr,
    Expression,
    FuncDef,
    LambdaExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
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
from mypy_lgstate.routes import agents, bodies, builders, discovery, factories, functional, sends, sites

if TYPE_CHECKING:
    from mypy_lgstate.cli.coverage import CoverageRecorder

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
    "stream_events": {"input": "stream_events.input"},
    "astream_events": {"input": "astream_events.input"},
    "batch_as_completed": {"inputs": "batch_as_completed.inputs"},
    "abatch_as_completed": {"inputs": "abatch_as_completed.inputs"},
    "update_state": {"values": "update_state.values"},
    "aupdate_state": {"values": "aupdate_state.values"},
    "bulk_update_state": {"supersteps": "bulk_update_state.supersteps"},
    "abulk_update_state": {"supersteps": "abulk_update_state.supersteps"},
}

# Write sites whose values update channels one key at a time, with how messages name the writer.
CHANNEL_TYPE_WRITERS: Final = {
    "Command.update": "Command.update",
    "update_state.values": "update_state",
    "aupdate_state.values": "aupdate_state",
    # Each update of a bulk update (``sites.bulk_updates`` roots it under its superstep and index).
    "bulk_update_state.supersteps": "bulk_update_state",
    "abulk_update_state.supersteps": "abulk_update_state",
}


class _NodeGraph(NamedTuple):
    function: FuncDef
    channels: tuple[frozenset[str], str]
    schemas: tuple[TypeInfo, ...]


class _Body(NamedTuple):
    """A node whose body is read once its module is checked (``bodies``): what it is checked with."""

    api: TypeChecker
    function: FuncDef
    context: Context  # the call that registers the node
    label: str  # the node's name in the graph, for lgstate-untyped-node
    shown: str | None  # its declared return type, for the same message
    channels: tuple[frozenset[str], str] | None
    schemas: tuple[TypeInfo, ...]
    allowed: frozenset[str] | None
    whole: bool = False  # a functional-API function: its returned value is checkpointed as it is
    unchecked: Callable[[], None] | None = None  # tells lgstate report when the body does not tell


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
        # The classes each builder variable of a scope adds, by (module, scope name, scope line).
        self._scopes: dict[tuple[str, str, int], dict[str, list[TypeInfo]]] = {}
        # Each module's decorator calls and the functions they decorate (kept with the tree they
        # were read from: a daemon run re-parses an edited module).
        self._decorated_by_module: dict[str, tuple[MypyFile, dict[CallExpr, FuncDef]]] = {}
        # mypy reads plugin triggers only when it keeps fine-grained dependencies (the daemon).
        self._fine_grained = options.fine_grained_incremental or options.cache_fine_grained
        # Node bodies to read once their module is checked, by module.
        self._bodies: dict[str, list[_Body]] = {}
        # The daemon: every node body seen, by function, for ``dict_display``.
        self._daemon = options.fine_grained_incremental
        self._known_bodies: dict[str, _Body] = {}
        # The declared types of each graph's channels, by key (a node body's items are compared).
        self._declared: dict[tuple[TypeInfo, ...], dict[str, list[Type]]] = {}
        # The graph a variable or factory of the module evaluates to, when its type names no schema.
        self._built: dict[SymbolNode, factories.Built] = {}
        # Each module's node functions and the classes of their graphs (strict msgpack).
        self._graph_classes: dict[str, tuple[MypyFile, dict[str, tuple[TypeInfo, ...]]]] = {}
        self._lookup = lookup
        # What each graph's channels accept (``channels``), by its schemas.
        self._accepting: dict[tuple[TypeInfo, ...], dict[str, list[channels.Channel]]] = {}
        self._special: dict[tuple[TypeInfo, ...], channels.Special] = {}
        # The graph of each node function of the module being checked, by fullname: a
        # ``Command(update=...)`` its body builds writes that graph's channels.
        self._node_graphs: dict[str, _NodeGraph] = {}
        # The input schema of each node this module's builders add, for the ``Send``s to it.
        self._sends = sends.Sends()

    def forget(self) -> None:
        """Drop what was memoized from classes (a new ``dmypy`` run: they may have been edited)."""
        self.walker.forget()
        self._graphs.clear()
        self._channels.clear()
        self._allowlists.clear()
        self._messages.clear()
        self._declared.clear()
        self._built.clear()
        self._graph_classes.clear()
        self._accepting.clear()
        self._special.clear()
        self._modules_of.clear()
        self._scopes.clear()
        self._decorated_by_module.clear()
        self._sends.forget()

    def reads_of(self, module: str) -> set[str]:
        return self._read_modules.pop(module, set())

    def finish_module(self, file: MypyFile) -> None:
        """The module is checked, its bodies and their types still there: read the node bodies
        its hooks asked for."""
        pending = self._bodies.pop(file.fullname, [])
        # In the daemon, a recheck of the module's top level alone registers nodes without this
        # moment following: only the ones registered by the module's current checker are read.
        current = pending[-1].api if pending else None
        for body in pending:
            if body.api is current and body.api.tree is file:
                self._check_body(body)

    # Hooks ---------------------------------------------------------------------------------------

    def state_graph(self, ctx: FunctionContext) -> Type:
        checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
        if isinstance(ctx.context, CallExpr):
            assert isinstance(ctx.api, TypeChecker)
            # ``StateGraph(SCHEMAS[kind])``: each class of the mapping may be the state.
            for info in factories.picked_schemas(ctx.context, ctx.api.tree, _scope(ctx.api)):
                if info not in checkpointed:
                    checkpointed.append(info)
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
        graph (``def create_graph(state: type[S]) -> StateGraph[S]``): the schemas its type names."""
        checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
        for info in discovery.graph_type_schemas(ctx.default_return_type):
            if info not in checkpointed:
                checkpointed.append(info)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def add_node(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.api, TypeChecker)
        graph = self._graph_schemas(ctx.type)
        scope = _scope(ctx.api)
        bound = discovery.bound_arguments(ctx)
        nodes = sites.nodes_of_add_node(bound)
        schema = discovery.node_input_schema(bound)
        if schema is None and nodes:
            # LangGraph infers the node's input schema from its first parameter.
            inferred = _first_parameter_class(nodes[0], scope)
            schema = inferred if inferred not in graph else None
        classes = self._builder_classes(ctx, scope, graph, schema)
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=classes)
        self._check_nodes(ctx, graph, classes, nodes)
        return ctx.default_return_type

    def add_sequence(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.api, TypeChecker)
        graph = self._graph_schemas(ctx.type)
        scope = _scope(ctx.api)
        nodes = sites.nodes_of_add_sequence(ctx, scope)
        inputs = [
            info
            for info in dict.fromkeys(_first_parameter_class(node, scope) for node in nodes)
            if info is not None and info not in graph
        ]
        classes = self._builder_classes(ctx, scope, graph, *inputs)
        self._check_state(ctx, inputs, allowlist_from=classes)
        self._check_nodes(ctx, graph, classes, nodes)
        return ctx.default_return_type

    def add_conditional_edges(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.api, TypeChecker)
        graph = self._graph_schemas(ctx.type)
        path = discovery.bound_arguments(ctx).get("path")
        if path is None:
            return ctx.default_return_type
        scope = _scope(ctx.api)
        schema = _first_parameter_class(sites.Node("", path[1], path[0]), scope)
        if schema is not None and schema not in graph:
            classes = self._builder_classes(ctx, scope, graph, schema)
            self._check_state(ctx, [schema], allowlist_from=classes)
        return ctx.default_return_type

    # Functional API -----------------------------------------------------------------------------

    def entrypoint(self, ctx: MethodContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            values = functional.entrypoint_values(function)
            # compile() derives the strict allowlist from the input, return and save types.
            allowed = self._allowlist_of_types([typ for _, typ in values])
            self._check_function_values(ctx, function, values, allowed)
            self._check_function_body(ctx, function, allowed)
        return ctx.default_return_type

    def task(self, ctx: FunctionContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            # The entrypoint that runs the task is not known here: nothing counts as derived.
            allowed = self._allowlist([])
            self._check_function_values(ctx, function, functional.task_values(function), allowed)
            self._check_function_body(ctx, function, allowed)
        return ctx.default_return_type

    # LangChain agents -----------------------------------------------------------------------------

    def create_agent(self, ctx: FunctionContext) -> Type:
        assert isinstance(ctx.api, TypeChecker)
        bound = discovery.bound_arguments(ctx)
        given = bound.get("state_schema")
        base = discovery.schema_class(*given) if given is not None else None
        # The graph's own type names AgentState and its input and output schemas.
        defaults = discovery.graph_type_schemas(ctx.default_return_type)
        states: list[TypeInfo] = [base] if base is not None else []
        channel_classes = [*states, *defaults]
        nodes: list[sites.Node] = []
        given_middleware, unresolved = agents.middleware_of(
            bound.get("middleware"), ctx.api, _scope(ctx.api), ctx.context.line
        )
        for middleware in given_middleware:
            schema = agents.declared_state_schema(middleware)
            if schema is not None:
                states.append(schema)
            else:
                schema = agents.generic_state(middleware)
            if schema is not None:
                channel_classes.append(schema)
            nodes.extend(agents.hook_nodes(middleware))
        classes = tuple(dict.fromkeys(channel_classes))
        if recorder is not None:
            recorder.agent(ctx, classes, unresolved)
        self._check_state(ctx, dict.fromkeys(states), allowlist_from=classes)
        self._check_structured_response(ctx, bound, classes)
        if nodes:
            channels = self._graph_channels(classes)
            self._record_reads(ctx.api, Findings(touched=_class_names(classes)))
            record = functools.partial(recorder.node, ctx, classes) if recorder is not None else None
            self._check_node_returns(
                ctx.api, ctx.context, nodes, channels, self._allowlist(classes), record, classes
            )
        return ctx.default_return_type

    def _check_structured_response(
        self,
        ctx: FunctionContext,
        bound: discovery.BoundArguments,
        classes: tuple[TypeInfo, ...],
    ) -> None:
        """``response_format=Model`` (or ``ToolStrategy(Model)``): the agent checkpoints the parsed
        response in its ``structured_response`` channel. That channel is declared with a type
        variable, so ``compile()`` never derives ``Model`` for the strict allowlist."""
        if "response_format" not in bound:
            return
        response = agents.structured_response(ctx.default_return_type)
        if response is not None:
            assert isinstance(ctx.api, TypeChecker)
            findings = self.walker.check_value(response, agents.STRUCTURED_RESPONSE, channel=True)
            self._emit(ctx.api, findings, ctx.context, at_fields=False, allowed=self._allowlist(classes))

    def create_react_agent(self, ctx: FunctionContext) -> Type:
        given = discovery.bound_arguments(ctx).get("state_schema")
        schema = discovery.schema_class(*given) if given is not None else None
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=[schema])
        return ctx.default_return_type

    def middleware_decorator(self, ctx: FunctionContext) -> Type:
        """``@before_model(state_schema=S)`` & co.: ``S`` is state; the decorated hook runs as a
        node, its return type is checked on its ``def`` line (its keys are not: the agent, and so
        its channels, is not known here)."""
        schema = self._middleware_state_schema(ctx)
        function = self._decorated(ctx)
        if function is not None and isinstance(function.type, CallableType):
            assert isinstance(ctx.api, TypeChecker)
            node = sites.Node(function.name, function.type)
            schemas = (schema,) if schema is not None else ()
            self._check_node_returns(
                ctx.api, function, [node], None, self._allowlist(schemas), schemas=schemas
            )
        return ctx.default_return_type

    def wrap_middleware_decorator(self, ctx: FunctionContext) -> Type:
        """``@wrap_model_call(state_schema=S)`` / ``@wrap_tool_call``: the hook wraps a call and
        writes no state, but ``S`` joins the agent's state."""
        self._middleware_state_schema(ctx)
        return ctx.default_return_type

    def _middleware_state_schema(self, ctx: FunctionContext) -> TypeInfo | None:
        given = discovery.bound_arguments(ctx).get("state_schema")
        schema = discovery.schema_class(*given) if given is not None else None
        if schema is not None:
            self._check_state(ctx, [schema], allowlist_from=[schema])
        return schema

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
        reported = self._check_values(ctx, params, schemas, allowed, graph=graph)
        if "arg" in params:  # a Send: its payload against its node's input, when known
            self._sends.check(ctx.api, ctx.context, reported, self.walker)
        return ctx.default_return_type

    def _enclosing_graph(self, api: TypeChecker) -> _NodeGraph | None:
        """The graph of the node whose body is being checked, when this module registers it."""
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
            schemas, unresolved = self._built_graph(ctx.context.callee.expr, ctx)
        self._check_values(ctx, params, schemas, self._allowlist(schemas), unresolved)
        return ctx.default_return_type

    def _enclosing_graph_classes(self, api: TypeChecker) -> tuple[TypeInfo, ...]:
        """The classes of the graph the function being checked is a node of, when this module adds
        it (indexed once per module tree)."""
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return ()
        tree = api.tree
        known = self._graph_classes.get(tree.fullname)
        if known is None or known[0] is not tree:
            known = self._graph_classes[tree.fullname] = (tree, builders.node_graph_classes(tree))
        return known[1].get(function.fullname, ())

    def _built_graph(
        self, receiver: Expression, ctx: MethodContext
    ) -> tuple[tuple[TypeInfo, ...], str | None]:
        """The schemas of the graph ``receiver`` evaluates to, followed through this module
        (``factories``); memoized by the variable or function it names, which many calls share."""
        assert isinstance(ctx.api, TypeChecker)
        key: SymbolNode | None = None
        if isinstance(receiver, NameExpr):
            key = receiver.node
        elif isinstance(receiver, CallExpr) and isinstance(receiver.callee, RefExpr):
            key = receiver.callee.node
        built = self._built.get(key) if key is not None else None
        if built is None:
            built = factories.built_graph(receiver, _scope(ctx.api), ctx.api.tree)
            if key is not None:
                self._built[key] = built
        return built

    # Checks --------------------------------------------------------------------------------------

    def _decorated(self, ctx: FunctionContext | MethodContext) -> FuncDef | None:
        """The function a decorator is applied to. ``@task`` is applied by a call whose context is
        the decorated definition; ``@task(name=...)`` is a call in its decorator list."""
        context = ctx.context
        if isinstance(context, Decorator):
            return context.func
        if not isinstance(context, CallExpr):
            return None
        assert isinstance(ctx.api, TypeChecker)
        tree = ctx.api.tree
        known = self._decorated_by_module.get(tree.fullname)
        if known is None or known[0] is not tree:
            known = self._decorated_by_module[tree.fullname] = (
                tree,
                functional.decorated_functions(tree),
            )
        return known[1].get(context)

    def _check_function_values(
        self,
        ctx: FunctionContext | MethodContext,
        function: FuncDef,
        values: list[tuple[str, Type]],
        allowed: frozenset[str] | None,
    ) -> None:
        """Values a functional-API function checkpoints, reported on its ``def`` line."""
        assert isinstance(ctx.api, TypeChecker)
        for path, typ in values:
            findings = self.walker.check_value(typ, path, channel=True)
            self._emit(ctx.api, findings, function, at_fields=False, allowed=allowed)

    def _check_function_body(
        self,
        ctx: FunctionContext | MethodContext,
        function: FuncDef,
        allowed: frozenset[str] | None,
    ) -> None:
        """A functional-API function without a usable return type: what its body returns, once
        the module is checked (the decorator and the function are always in the same module)."""
        assert isinstance(ctx.api, TypeChecker)
        if not isinstance(function.type, CallableType) or not function.body.body:
            return
        returned = sites.node_return_type(function.type)
        if returned is not None and bodies.is_loose(returned):
            self._read_later(
                _Body(ctx.api, function, function, function.name, None, None, (), allowed, True)
            )

    def _allowlist_of_types(self, types: list[Type]) -> frozenset[str] | None:
        if not self._strict:
            return None
        return derive_allowlist(types) if self.config.derive_allowlist else frozenset()

    def _graph_schemas(self, graph: Type) -> tuple[TypeInfo, ...]:
        """The schema classes of a ``StateGraph[...]`` type (memoized: a graph has several nodes)."""
        schemas = self._graphs.get(graph)
        if schemas is None:
            schemas = self._graphs[graph] = tuple(discovery.graph_type_schemas(graph))
        return schemas

    def _builder_classes(
        self,
        ctx: MethodContext,
        scope: builders.Scope,
        graph: tuple[TypeInfo, ...],
        *added: TypeInfo | None,
    ) -> tuple[TypeInfo, ...]:
        """Every class the graph built by this call's builder declares, so far as this scope shows:
        the graph type's schemas (state first), then the classes of every node and path added to
        the same builder variable in the same scope, and the ones this call adds."""
        assert isinstance(ctx.api, TypeChecker) and isinstance(ctx.context, CallExpr)
        callee = ctx.context.callee
        receiver = builders.receiver_name(callee.expr) if isinstance(callee, MemberExpr) else None
        scanned: list[TypeInfo] = []
        if receiver is not None:
            key = (ctx.api.tree.fullname, scope.fullname, scope.line)
            by_builder = self._scopes.get(key)
            if by_builder is None:
                by_builder = self._scopes[key] = builders.scope_classes(scope)
            scanned = by_builder.get(receiver, [])
        found = dict.fromkeys(graph)
        for info in (*added, *scanned):
            if info is not None:
                found[info] = None
        return tuple(found)

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
        api = ctx.api
        assert isinstance(api, TypeChecker)
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
                    self._read_later(
                        _Body(
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

    def _read_later(self, body: _Body) -> None:
        """Read ``body`` once its module is checked (``finish_module``); in the daemon, also as
        mypy checks it again alone (``dict_display``)."""
        self._bodies.setdefault(body.api.tree.fullname, []).append(body)
        if self._daemon:
            self._known_bodies[body.function.fullname] = body

    def _shown_return(self, ret: Type) -> str | None:
        proper = get_proper_type(ret)
        unannotated = isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated
        return None if unannotated else self.walker.type_name(ret)

    def _check_body(
        self, body: _Body, api: TypeChecker | None = None, only: bodies.Returned | None = None
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
                values = [
                    value
                    for expr, path in functional.returned_values(returned.expressions, root, api)
                    for value in sites.values_of(expr, path, api)
                ]
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

    def dict_display(self, ctx: FunctionContext) -> Type:
        """A dict display being checked (the daemon only). dmypy rechecks a node's body alone when
        something it uses changed, without the end-of-module moment the body checks wait for: what
        the node returns is checked as soon as mypy has inferred it."""
        body = self._known_body(ctx.api)
        if body is not None and isinstance(ctx.context, DictExpr):
            if any(display is ctx.context for display in bodies.returned(body.function).displays):
                assert isinstance(ctx.api, TypeChecker)
                only = bodies.Returned([ctx.context], [], False, [ctx.context])
                self._check_body(body, ctx.api, only)
        return ctx.default_return_type

    def dict_item(self, ctx: MethodContext) -> Type:
        """``update["key"] = value`` being checked (the daemon only; see ``dict_display``)."""
        body = self._known_body(ctx.api)
        if body is not None and len(ctx.args) == 2 and ctx.args[0] and ctx.args[1]:
            key, value = ctx.args[0][0], ctx.args[1][0]
            if any(k is key for k, _ in bodies.returned(body.function).items):
                assert isinstance(ctx.api, TypeChecker) and isinstance(key, StrExpr)
                self._check_body(body, ctx.api, bodies.Returned([], [(key, value)], False, []))
        return ctx.default_return_type

    def _known_body(self, api: object) -> _Body | None:
        if not self._known_bodies or not isinstance(api, TypeChecker):
            return None
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return None
        body = self._known_bodies.get(function.fullname)
        return body if body is not None and body.function is function else None

    def _channel_types(self, schemas: tuple[TypeInfo, ...]) -> dict[str, list[Type]]:
        found = self._declared.get(schemas)
        if found is None:
            found = self._declared[schemas] = sites.channel_types(schemas)
        return found

    def _check_values(
        self,
        ctx: FunctionContext | MethodContext,
        params: dict[str, str],
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        unresolved: str | None = None,
        graph: _NodeGraph | None = None,
    ) -> set[str]:
        """Check what a write site adds to the checkpoint. ``schemas`` are the graph-state classes
        of the graph being written (as far as the call tells): an instance of one of them was checked
        where it became graph state, and is not reported again at every call that passes it.
        ``graph``: the graph of the node whose body builds this ``Command``. Returns the paths of the
        values it reported."""
        api = ctx.api
        assert isinstance(api, TypeChecker)
        reported: set[str] = set()
        for argument, site in sites.call_values(ctx, params):
            if recorder is not None:
                recorder.write_site(ctx, site, argument, schemas, unresolved)
            declared = self._restating(api, schemas)
            for expr, root in sites.bulk_updates(argument, site):
                reported |= self._check_update(api, expr, root, site, schemas, allowed, graph, declared)
        return reported

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
    ) -> set[str]:
        """One value a write site adds: its serializer findings, then its channel types (returns the
        paths the serializer findings are at)."""
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
        return reported

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


def _scope(api: TypeChecker) -> builders.Scope:
    """The function being checked, or the module at its top level."""
    function = api.scope.current_function()
    return function if function is not None else api.tree


def _first_parameter_class(node: sites.Node, scope: builders.Scope) -> TypeInfo | None:
    """The class LangGraph infers as a node's (or path function's) input schema: its declared
    first parameter. A lambda has no annotations at run time, whatever mypy infers for it."""
    if node.expr is None or isinstance(node.expr, LambdaExpr):
        return None
    declared = builders.declared_callable(node.expr, scope)
    return discovery.first_parameter_schema(declared if declared is not None else node.type)


def _class_names(classes: Iterable[TypeInfo]) -> frozenset[tuple[str, str]]:
    return frozenset((info.module_name, info.fullname) for info in classes)


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
