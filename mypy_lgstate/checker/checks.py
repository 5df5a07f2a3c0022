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
from typing import TYPE_CHECKING

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
    SymbolNode,
    TypeInfo,
)
from mypy.options import Options
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import CallableType, Type

from mypy_lgstate.checker import drift, registrations, sends, subgraph_inputs
from mypy_lgstate.checker.allowlist import Allowlists
from mypy_lgstate.checker.emit import Emitter
from mypy_lgstate.checker.findings import Findings, outside
from mypy_lgstate.checker.functional import FunctionalChecks
from mypy_lgstate.checker.graphs import Graphs
from mypy_lgstate.checker.pending_bodies import Pending
from mypy_lgstate.checker.report import method_site
from mypy_lgstate.checker.savers import Savers
from mypy_lgstate.checker.tree_index import TreeIndex
from mypy_lgstate.checker.walker import AGENT_STATE, Walker
from mypy_lgstate.checker.writes import NodeGraph, RecordNode, Writes
from mypy_lgstate.core.config import LGStateConfig, option_error
from mypy_lgstate.core.lockfile import NO_LOCK, Lock
from mypy_lgstate.routes import (
    agents,
    bodies,
    builder_calls,
    builders,
    discovery,
    displays,
    exported,
    factories,
    functional,
    lists,
    sites,
)
from mypy_lgstate.routes.sites import FUNCTION_WRITE_SITES, GRAPH_INPUTS

if TYPE_CHECKING:
    from mypy_lgstate.routes.coverage import CoverageRecorder

# ``lgstate check`` and ``report`` install one before their build, to say what the checks
# saw; in mypy runs it stays None, and the checks pay one comparison per graph, node and write site.
recorder: CoverageRecorder | None = None

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
        self._graphs = Graphs(lookup, daemon=options.fine_grained_incremental)
        self._emit = Emitter(config, options)
        # What the modules of node functions defined elsewhere recorded of them.
        self._records = exported.Records(lookup)
        self._writes = Writes(self.walker, self._graphs, self._emit, self._records, lookup)
        self._allowlists = Allowlists(config)
        # Each module's decorator calls and the functions they decorate.
        self._decorator_calls = TreeIndex(functional.decorated_functions)
        self._factories = TreeIndex(discovery.called_factories)  # reported at their calls
        # Each module's node functions and the classes of their graphs (strict msgpack).
        self._node_graph_classes = TreeIndex(builder_calls.node_graph_classes)
        self._builder_classes = builder_calls.BuilderClasses()
        # The graph a variable or factory of the module evaluates to, when its type names no schema.
        self._built = factories.BuiltGraphs()
        self._savers = Savers(self.walker, self._graphs, self._emit, self._built)
        self._bodies = Pending(daemon=options.fine_grained_incremental)
        self._functional = FunctionalChecks(self.walker, self._emit, self._bodies, config, lock)
        # The graph of each node function of the module being checked, by fullname, recorded as
        # the node is registered (see ``_enclosing_graph``).
        self._node_graphs: dict[str, NodeGraph] = {}
        # The input schema of each node this module's builders add, for the ``Send``s to it.
        self._sends = sends.Sends()
        # The checker of each module a hook fired in, for the checks at the end of its check (mypy
        # hands that moment the module alone).
        self._checkers: dict[str, TypeChecker] = {}

    def forget(self) -> None:
        """Drop what was memoized from classes (a new ``dmypy`` run: they may have been edited)."""
        self.walker.forget()
        self._graphs.forget()
        self._allowlists.forget()
        self._emit.forget()
        self._decorator_calls.clear()
        self._factories.clear()
        self._node_graph_classes.clear()
        self._builder_classes.clear()
        self._built.clear()
        self._sends.forget()
        self._records.forget()
        self._writes.forget()

    def reads_of(self, module: str) -> set[str]:
        return self._emit.reads_of(module)

    def finish_module(
        self, file: MypyFile, modules: object, *, deprecated_sends: bool = False
    ) -> None:
        """The module is checked, its bodies and their types still there: read the node bodies its
        hooks asked for, and the payloads of its ``Send`` calls when it imports ``Send`` from
        ``langgraph.constants`` (``deprecated_sends``)."""
        pending, _ = self._bodies.finished(file)
        for body in pending:
            self._writes.check_body(body)
        checker = self._checkers.pop(file.fullname, None)
        sends = sites.deprecated_sends(file) if deprecated_sends else []
        if not sends:
            return
        if pending:
            checker = pending[0].api
        if checker is None or checker.tree is not file:
            # No hook fired in the module: its checker is found the slow way.
            checker = discovery.checker_of(file, modules)
            if checker is None:
                return
        # ``Send`` imported from ``langgraph.constants`` (a module ``__getattr__``): mypy types it as
        # Any and fires no hook, but the call's payload has its types now.
        allowed = self._allowlists.of_schemas(())
        for payload in sends:
            self._writes.check_update(checker, payload, "Send.arg", "Send.arg", (), allowed, None, {})

    # Graphs and their state ----------------------------------------------------------------------

    def state_graph(self, ctx: FunctionContext) -> Type:
        api, scope = _checker(ctx), _scope(_checker(ctx))
        checkpointed, run_scoped = factories.graph_call_schemas(ctx, scope)
        if recorder is not None:
            recorder.graph(ctx, checkpointed)
        at_call = self._factories.of(api.tree).get(scope.fullname, [])
        checked = [info for info in checkpointed if info not in at_call]
        self._check_state(ctx, checked, allowlist_from=[*checkpointed, *run_scoped])
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
        self, file: MypyFile, names: list[str], modules: object, config_file: str | None = None
    ) -> None:
        infos = discovery.configured_schemas(file, names)
        problems = [
            problem for problem in (discovery.configured_problem(file, name) for name in names)
            if problem is not None
        ]
        checker = discovery.checker_of(file, modules) if infos or problems else None
        if checker is None:
            return
        for problem in problems:  # line 1: the module the entry names (lgstate check: exit 2)
            checker.fail(option_error(config_file, "state_classes", problem), Context(line=1))
        for info in infos:
            self._check_state_classes(checker, info, [info], self._allowlists.of_schemas([info]))

    def add_node(self, ctx: MethodContext) -> Type:
        api, graph = _checker(ctx), self._graphs.schemas(ctx.type)
        whole = subgraph_inputs.whole_state_findings(ctx, api, graph, self.walker, self._graphs)
        if whole is not None:
            self._emit(api, whole, ctx.context, at_fields=False, allowed=None)
        tables = functools.partial(self._table, api)
        return self._builder_call(ctx, functools.partial(builders.added_by_add_node, tables=tables))

    def _table(self, api: TypeChecker, fullname: str) -> list[tuple[str, RefExpr]] | None:
        """The functions of a node table of another module, as its module recorded them; the record
        is what this check reads of that module."""
        self._emit.record_record_read(api, fullname.rpartition(".")[0])
        rows = self._records.table(fullname)
        return None if rows is None else registrations.table_functions(rows, self.walker.lookup)

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
        graph = self._graphs.schemas(ctx.type)
        added = added_by(ctx, scope, graph)
        if not graph and registrations.state_is_variable(ctx.type):
            # ``StateGraph[S]`` in a generic function: no channel is known here. Its nodes are
            # checked where a registration helper is called with a builder of a known state
            # (``builder_helper``); the report lists them under a graph of unknown state.
            if recorder is not None:
                for node in added.nodes:
                    recorder.node(ctx, graph, node, sites.node_return_type(node.type))
            return ctx.default_return_type
        if added.inputs or added.nodes:
            classes = self._builder_classes.of(ctx.context, scope, api.tree, graph, added.inputs)
            self._check_state(ctx, added.inputs, allowlist_from=classes)
            self._check_nodes(ctx, graph, classes, added.nodes)
        return ctx.default_return_type

    def compile(self, ctx: MethodContext) -> Type:
        return self._savers.compile(ctx, _checker(ctx))

    def builder_helper(self, ctx: FunctionContext) -> Type:
        """A project's function given a builder whose state its signature leaves open
        (``add_research_nodes(builder)``, declared ``(builder: StateGraph[S])``), called with a
        builder of a known state: the nodes its summary says it adds are this graph's."""
        api = _checker(ctx)
        defn = registrations.helper_called(ctx)
        summary = self._writes.followed.summary(api, defn) if defn is not None else None
        if summary is None or not summary.adds:
            return ctx.default_return_type
        for index, types in enumerate(ctx.arg_types):
            graph = self._graphs.schemas(types[0]) if len(types) == 1 else ()
            if not graph:
                continue
            nodes = list(registrations.helper_nodes(ctx, summary.adds, index, self.walker.lookup, api))
            if not nodes:
                continue
            builder = ctx.args[index][0]
            inputs = [
                info for info in (builders.input_class(n, _scope(api)) for n in nodes)
                if info is not None and info not in graph
            ]
            classes = tuple(dict.fromkeys((*graph, *inputs)))
            self._check_state(ctx, inputs, allowlist_from=classes)
            record = (
                functools.partial(recorder.node, ctx, graph, builder=builder)
                if recorder is not None
                else None
            )
            self._check_graph_nodes(api, ctx.context, nodes, classes, self._allowlists.of_schemas(classes), record)
        return ctx.default_return_type

    # Functional API ------------------------------------------------------------------------------

    def entrypoint(self, ctx: MethodContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            values = functional.entrypoint_values(function)
            # compile() derives the strict allowlist from the input, return and save types.
            allowed = self._allowlists.of_types([typ for _, typ in values])
            self._functional.check(ctx, function, values, allowed, recorder, task=False)
        return ctx.default_return_type

    def task(self, ctx: FunctionContext) -> Type:
        function = self._decorated(ctx)
        if function is not None:
            # The entrypoint that runs the task is not known here: nothing counts as derived.
            allowed = self._allowlists.of_schemas([])
            values = functional.task_values(function)
            self._functional.check(ctx, function, values, allowed, recorder, task=True)
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

    # LangChain agents ----------------------------------------------------------------------------

    def create_agent(self, ctx: FunctionContext) -> Type:
        api = _checker(ctx)
        agent = agents.create_agent_graph(ctx, _scope(api), functools.partial(self._middleware, api))
        if recorder is not None:
            recorder.agent(ctx, agent.classes, agent.unresolved)
        self._check_state(ctx, agent.states, allowlist_from=agent.classes)
        self._savers.agent(ctx, api, agent.states)
        allowed = self._allowlists.of_schemas(agent.classes)
        if agent.structured_response is not None:
            # Its channel is declared with a type variable, so compile() never derives the
            # response's class for the strict allowlist.
            findings = self.walker.check_value(
                agent.structured_response, agents.STRUCTURED_RESPONSE, channel=True
            )
            self._emit(api, findings, ctx.context, at_fields=False, allowed=allowed)
        if agent.nodes:
            record = (
                functools.partial(recorder.node, ctx, agent.classes) if recorder is not None else None
            )
            self._check_graph_nodes(api, ctx.context, agent.nodes, agent.classes, allowed, record)
        return ctx.default_return_type

    def _middleware(self, api: TypeChecker, function: FuncDef) -> lists.Recorded | None:
        """What the module of ``function`` recorded of the middleware lists it returns (and the
        modules of the functions whose lists those return); each record is what this check reads of
        its module."""
        return self._records.middleware(
            function, functools.partial(self._emit.record_record_read, api)
        )

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
            # Without ``state_schema=``, LangChain gives the middleware ``AgentState``.
            state = schema if schema is not None else self.walker.lookup(AGENT_STATE)
            schemas = (state,) if isinstance(state, TypeInfo) else ()
            allowed = self._allowlists.of_schemas(schemas)
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
            self._allowlists.of_schemas((*schemas, *self._enclosing_graph_classes(ctx.api)))
            if self._allowlists.strict
            else None
        )
        graph = self._enclosing_graph(ctx.api) if "update" in params else None
        reported = self._check_values(ctx, params, schemas, allowed, graph=graph)
        if "arg" in params:  # a Send: its payload against its node's input, when known
            self._sends.check(ctx.api, ctx.context, reported, self.walker)
        return ctx.default_return_type

    def _enclosing_graph_classes(self, api: TypeChecker) -> tuple[TypeInfo, ...]:
        """The classes of the graph the function being checked is a node of, when this module adds
        it: read from the module's syntax (``builder_calls.node_graph_classes``), the same whatever
        order mypy checks the module's functions in."""
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return ()
        return self._node_graph_classes.of(api.tree).get(function.fullname, ())

    def _enclosing_graph(self, api: TypeChecker) -> NodeGraph | None:
        """The graph of the node whose body is being checked, as recorded when this module
        registered the node (``_check_node_returns``).

        Not the syntax index of ``_enclosing_graph_classes``: a ``Command``'s keys and channel types
        are compared with the graph's channels, which come from what only the registering hook
        sees (the graph's type at ``add_node``, also for a builder a factory returns; the nodes of
        ``add_sequence``; the middleware of ``create_agent``), and the index's classes include the
        context schema, which is no channel. Recorded as the hooks fire, this misses a node whose
        body mypy checks before the call that registers it (defined above the graph's factory)."""
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return None
        found = self._node_graphs.get(function.fullname)
        return found if found is not None and found.function is function else None

    def graph_input(self, ctx: MethodContext) -> Type:
        assert isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, MemberExpr)
        params = GRAPH_INPUTS[ctx.context.callee.name]
        schemas = self._graphs.schemas(ctx.type)
        unresolved = None
        if not schemas:  # a factory declared ``-> CompiledStateGraph`` without type arguments
            api = _checker(ctx)
            schemas, unresolved = self._built.of(ctx.context.callee.expr, _scope(api), api.tree)
        self._check_values(ctx, params, schemas, self._allowlists.of_schemas(schemas), unresolved)
        return ctx.default_return_type

    # Node bodies in the daemon -------------------------------------------------------------------

    def dict_display(self, ctx: FunctionContext) -> Type:
        """A dict display being checked against a type context (``return {...}``): the checker of
        its module is remembered for the end of the module's check. In the daemon, which rechecks a
        node's body alone when something it uses changed, without that end-of-module moment, what
        the node returns is also checked as soon as mypy has inferred it."""
        api = _checker(ctx)
        self._checkers[api.tree.fullname] = api
        body = self._bodies.being_checked(api)
        if body is not None:
            only = bodies.returned_display(body.function, ctx.context)
            if only is not None:
                self._writes.check_body(body, _checker(ctx), only)
        return ctx.default_return_type

    def dict_item(self, ctx: MethodContext) -> Type:
        """``update["key"] = value`` being checked (the daemon only; see ``dict_display``)."""
        body = self._bodies.being_checked(ctx.api)
        if body is not None:
            only = bodies.returned_item(body.function, ctx.args)
            if only is not None:
                self._writes.check_body(body, _checker(ctx), only)
        return ctx.default_return_type

    # The checks ----------------------------------------------------------------------------------

    def _check_state(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Iterable[TypeInfo],
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        allowed = self._allowlists.of_schemas(allowlist_from)
        self._check_state_classes(_checker(ctx), method_site(ctx.context), schemas, allowed)

    def _check_state_classes(
        self,
        api: TypeChecker,
        context: Context,
        schemas: Iterable[TypeInfo],
        allowed: frozenset[str] | None,
    ) -> None:
        for info in schemas:
            findings = self.walker.check_state_class(info)
            special = self._graphs.special_keys(api, (info,))
            if special.messages or special.untracked:
                # add_messages stores messages, whatever the field declares; an untracked channel
                # is never checkpointed from node writes.
                fields = [f"{info.name}.{key}" for key in (*special.messages, *special.untracked)]
                findings = outside(findings, fields)
            self._emit(api, findings, context, allowed=allowed)
            self._check_drift(api, info, context)

    def _check_drift(self, api: TypeChecker, info: TypeInfo, context: Context) -> None:
        """Compare a graph-state root with the lock file (``lgstate lock``: record it instead)."""
        drift.root(
            api, drift.stable_name(info.fullname), functools.partial(drift.snapshot, info),
            context, self.lock, json_profile=self.config.profile == "json",
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
        channels = self._graphs.channel_names(classes) if graph else None
        if classes != graph:
            # The channels came from classes no walk reads: an edit to one must recheck this call.
            self._emit.record_reads(api, Findings(touched=_class_names(classes)))
        record = functools.partial(recorder.node, ctx, graph) if recorder is not None else None
        self._check_node_returns(
            api, method_site(ctx.context), nodes, channels, self._allowlists.of_schemas(classes), record, classes
        )

    def _check_graph_nodes(
        self,
        api: TypeChecker,
        context: Context,
        nodes: list[sites.Node],
        classes: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        record: RecordNode | None,
    ) -> None:
        """The nodes of a graph whose channels come from ``classes`` that no walk of this call
        reads (an agent's, a registration helper's): an edit to one must recheck the call."""
        self._emit.record_reads(api, Findings(touched=_class_names(classes)))
        channels = self._graphs.channel_names(classes)
        self._check_node_returns(api, context, nodes, channels, allowed, record, classes)

    def _check_node_returns(
        self,
        api: TypeChecker,
        context: Context,
        nodes: list[sites.Node],
        channels: tuple[frozenset[str], str] | None,
        allowed: frozenset[str] | None,
        record: RecordNode | None = None,
        schemas: tuple[TypeInfo, ...] = (),
    ) -> None:
        """What the nodes write (``Writes.check_node_returns``). Each node function of this module
        is remembered with its graph (its body is checked after the module's top level, where the
        node is registered), and read from its body once the module is checked when its declared
        return type does not tell."""
        if channels is not None:
            for node in nodes:
                function = bodies.local_function(node, api)
                if function is not None:
                    self._node_graphs[function.fullname] = NodeGraph(function, channels, schemas)
        for body in self._writes.check_node_returns(
            api, context, nodes, channels, allowed, record, schemas
        ):
            self._bodies.add(body)

    def _check_values(
        self,
        ctx: FunctionContext | MethodContext,
        params: dict[str, str],
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        unresolved: str | None = None,
        graph: NodeGraph | None = None,
    ) -> set[str]:
        """Check what a write site adds to the checkpoint. ``schemas`` are the graph-state classes
        of the graph being written (as far as the call tells): an instance of one of them was checked
        where it became graph state, and is not reported again at every call that passes it.
        ``graph``: the graph of the node whose body builds this ``Command``. Returns the paths of the
        values it reported."""
        api = _checker(ctx)
        reported: set[str] = set()
        for argument, site in sites.call_values(ctx, params):
            if recorder is not None:
                recorder.write_site(ctx, site, argument, schemas, unresolved)
            declared = self._writes.restating(api, schemas)
            for expr, root in sites.bulk_updates(argument, site):
                # A variable bound to a display before the call: each item by its own type.
                local: list[Expression] | None = None
                found = bodies.local_displays(expr, _scope(api), ctx.context.line)
                if found is not None:
                    local = list(found)
                elif root == "Command.update":  # a local list of (key, value) pairs
                    pairs = displays.local_pairs(expr, _scope(api), ctx.context.line)
                    local = [pairs] if pairs is not None else None
                for written in local if local is not None else [expr]:
                    reported |= self._writes.check_update(
                        api, written, root, site, schemas, allowed, graph, declared
                    )
        return reported


def _checker(ctx: FunctionContext | MethodContext) -> TypeChecker:
    """The checker behind a hook's context (mypy's one implementation of the plugin's API)."""
    assert isinstance(ctx.api, TypeChecker)
    return ctx.api


def _scope(api: TypeChecker) -> builders.Scope:
    """The function being checked, or the module at its top level."""
    return api.scope.current_function() or api.tree


def _class_names(classes: Iterable[TypeInfo]) -> frozenset[tuple[str, str]]:
    return frozenset((info.module_name, info.fullname) for info in classes)
