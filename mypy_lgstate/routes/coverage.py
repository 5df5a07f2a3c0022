"""Checkpoint coverage, for ``lgstate report`` and the coverage line of ``lgstate check``: what the
checks saw, graph by graph.

``checks.recorder`` holds a ``CoverageRecorder`` during the command line's own build (and ``None`` in
mypy runs). The checks tell it about each ``StateGraph(...)`` call, each node registered with
``add_node`` / ``add_sequence`` and each write-site argument, at the moment they check them, so the
report lists exactly what ``lgstate check`` checks, by the same rules. Why each node is checked or
not is worded by ``node_status``; the report's formats are the command line's (``cli/report.py``).

A graph is the ``StateGraph(...)`` call; a node belongs to the graph assigned to the variable its
``add_node`` is called on (``builder = StateGraph(State)``). A node added to a builder that no checked
call assigned (a factory's result, an attribute) is grouped by the schema classes of the builder's
type, and a graph input (``graph.invoke(...)``) names its graph by its state schema. An
``@entrypoint`` is a graph of its own (the functional API), whose nodes are the function and the
``@task`` functions its body calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from mypy.checker import TypeChecker
from mypy.nodes import GDEF, LDEF, CallExpr, Expression, FuncDef, MemberExpr, NameExpr, TypeInfo, Var
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import Instance, Type, TypedDictType, TypeVarLikeType, get_proper_type

from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import discovery, sites, workflows
from mypy_lgstate.routes.coverage_records import (
    Coverage,
    GraphCoverage,
    Location,
    NodeCoverage,
    NodeRecord,
    Schema,
    WriteSite,
)
from mypy_lgstate.routes.node_status import (
    NODE_STATUSES,
    NOT_CHECKED,
    declared_return,
    node_status,
    through,
)
from mypy_lgstate.routes.schemas import graph_channels

if TYPE_CHECKING:
    from mypy_lgstate.routes.summary_values import Reached

# The schema roles of the type arguments of ``StateGraph[S, C, I, O]`` (C, the context, is never
# checkpointed).
_ROLES: Final = ((0, "state"), (2, "input"), (3, "output"))


# A graph is known by the location of its ``StateGraph(...)`` call, or, when no such call was checked
# (a builder returned by a factory), by the fullnames of the schema classes its type names.
GraphKey = Location | tuple[str, ...]


class CoverageRecorder:
    """Collects what the checks see. A hook can fire more than once for one call (mypy tries each
    candidate of an overloaded callee), so every entry is keyed by its location."""

    def __init__(self) -> None:
        self.graphs: dict[GraphKey, GraphCoverage] = {}
        self.write_sites: dict[tuple[Location, int, str], WriteSite] = {}
        # The functional API: each @entrypoint's graph with what its body calls, each @task.
        self._calls: dict[Location, set[str]] = {}
        self._tasks: dict[str, dict[tuple[Location, str], NodeCoverage]] = {}

    # Called by the checks ------------------------------------------------------------------------

    def graph(self, ctx: FunctionContext, checkpointed: Sequence[TypeInfo]) -> None:
        api = _checker(ctx)
        location = _location(api, ctx.context.line)
        if location not in self.graphs:
            # The classes the call names, also through the deprecated ``input=`` / ``output=``,
            # which the graph's type does not show.
            infos = dict.fromkeys([*discovery.graph_type_schemas(ctx.default_return_type), *checkpointed])
            self.graphs[location] = _new_graph(
                api, location, ctx.default_return_type, (), list(infos), _call_roles(ctx)
            )

    def agent(
        self, ctx: FunctionContext, classes: Sequence[TypeInfo], unresolved: Sequence[str]
    ) -> None:
        """A ``create_agent(...)`` call: it declares the agent's graph, with its middleware's
        schemas, whether or not a middleware adds hook nodes."""
        api = _checker(ctx)
        location = _location(api, ctx.context.line)
        graph = self.graphs.get(location)
        if graph is None:
            graph = self.graphs[location] = _new_graph(
                api, location, ctx.default_return_type, classes, classes
            )
        graph.agent = True
        for reason in unresolved:
            if reason not in graph.unresolved:
                graph.unresolved.append(reason)

    def node(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Sequence[TypeInfo],
        node: sites.Node,
        return_type: Type | None,
        from_body: bool = False,
        reached: Reached | None = None,
        *,
        builder: Expression | None = None,
    ) -> NodeRecord | None:
        """A node added by ``builder.add_node(...)`` & co., or a middleware hook of the agent that
        ``create_agent(...)`` makes (that call declares the graph). ``from_body``: its body is read
        once this module is checked; ``reached``: what the summaries of the functions that build its
        update told (``reach``); ``builder``: the builder a registration helper is given, whose
        graph the node is added to.

        For a node whose body is read, returns its ``NodeRecord``: it stays unchecked ("its body
        was not read") until the checks say how far they read it."""
        api = _checker(ctx)
        read = from_body or reached is not None
        status, reason, category = node_status(node, return_type, api, read)
        if reason is not None:
            reason += through(node)
        elif status == "checked" and node.through is not None:
            reason = f"by its declared return type{through(node)}"
        location = _location(api, ctx.context.line)
        key: GraphKey | None
        graph_type: Type
        if isinstance(ctx, MethodContext):
            # The graph whose StateGraph(...) call is assigned to the builder variable.
            key, graph_type, declared_at = _builder_location(api, ctx), ctx.type, None
        elif builder is not None:
            key, graph_type, declared_at = _receiver_location(api, builder), api.lookup_type(builder), None
        else:
            key, graph_type, declared_at = location, ctx.default_return_type, location
        if key is None or key not in self.graphs:
            if key is None or declared_at is None:
                key = tuple(info.fullname for info in schemas)
                if not key and _state_variable(graph_type) is not None:
                    key = (f"<{_state_variable(graph_type)}@{location.file}:{location.line}>",)
            if key not in self.graphs:
                # An agent's type names AgentState only: its middleware's schemas add channels.
                given = schemas if declared_at is not None else ()
                self.graphs[key] = _new_graph(api, declared_at, graph_type, schemas, given)
        graph = self.graphs[key]
        if graph.state_unknown is not None:
            # Whatever the node declares or returns, no key of it can be compared with a channel.
            status, reason, category = "unchecked", graph.state_unknown, None
        entry = NodeCoverage(node.name, location, status, reason, category)
        graph.nodes[(location, node.name)] = entry
        if status != "body":
            return None
        declared = declared_return(return_type, api)
        return NodeRecord(
            graph.nodes, (location, node.name), declared, through(node), _read_where(reached)
        )

    def functional(
        self,
        ctx: FunctionContext | MethodContext,
        function: FuncDef,
        values: Sequence[tuple[str, Type]],
        *,
        task: bool,
        from_body: bool,
    ) -> NodeRecord | None:
        """An ``@entrypoint`` (a graph, ``workflows.py``, with the function as a node) or a
        ``@task`` (a node of the entrypoints that call it). A function whose return type does not
        tell is read from its body: its ``NodeRecord`` is returned, as ``node`` returns one."""
        api = _checker(ctx)
        location = _location(api, function.line)
        nodes: dict[tuple[Location, str], NodeCoverage]
        if task:
            nodes = self._tasks.setdefault(function.fullname, {})
        else:
            if location not in self.graphs:
                schemas = tuple(
                    Schema(class_name(info), roles, _module_file(api, info))
                    for info, roles in workflows.schema_roles(values).items()
                )
                title = "@entrypoint " + workflows.name(api, function)
                self.graphs[location] = GraphCoverage(location, schemas, workflows.CHANNELS, title)
                self._calls[location] = workflows.called(function)
            nodes = self.graphs[location].nodes
        key = (location, function.name)
        nodes[key] = NodeCoverage(function.name, location, "checked", None)
        if not from_body:
            return None
        return NodeRecord(nodes, key, declared_return(values[-1][1] if values else None, api))

    def _attach_tasks(self) -> None:
        """Each @task joins the graphs of the @entrypoint functions that call it; those that none
        calls are listed together."""
        uncalled: dict[tuple[Location, str], NodeCoverage] = {}
        for fullname, nodes in self._tasks.items():
            callers = [location for location, calls in self._calls.items() if fullname in calls]
            for location in callers:
                self.graphs[location].nodes.update(nodes)
            if not callers:
                uncalled.update(nodes)
        if uncalled:
            key = (workflows.UNCALLED_TASKS,)
            graph = self.graphs.setdefault(key, GraphCoverage(None, (), (), key[0]))
            graph.nodes.update(uncalled)

    def write_site(
        self,
        ctx: FunctionContext | MethodContext,
        site: str,
        value: Expression,
        schemas: Sequence[TypeInfo] = (),
        unresolved: str | None = None,
    ) -> None:
        """``schemas``: those of the graph written to, as the checks found them; ``unresolved``: why
        they are not known."""
        api = _checker(ctx)
        graph = None
        if isinstance(ctx, MethodContext):  # a compiled graph's input: the receiver names the graph
            graph = class_name(schemas[0]) if schemas else None
        location = _location(api, value.line)
        if _is_command(value):
            # invoke(Command(resume=...)): the Command's own arguments are its write sites, recorded
            # when it was built; they are written to this graph.
            for key, written in self.write_sites.items():
                if written.graph is None and written.site.startswith("Command.") and _within(
                    key, location.file, value
                ):
                    self.write_sites[key] = written._replace(graph=graph)
            return
        self.write_sites[(location, value.column, site)] = WriteSite(site, location, graph, unresolved)

    # What the report shows -----------------------------------------------------------------------

    def sorted_graphs(self) -> list[GraphCoverage]:
        self._merge_undeclared()
        return sorted(self.graphs.values(), key=GraphCoverage.sort_key)

    def _merge_undeclared(self) -> None:
        """A graph appears once, under the call that declares it: nodes added to a builder from
        elsewhere (a factory's result, a helper's parameter) join the one ``StateGraph(...)`` call
        declaring the same state, when there is exactly one. (And each @task joins the graphs of
        its callers.)"""
        self._attach_tasks()
        uncalled = (workflows.UNCALLED_TASKS,)
        for key in [
            key for key in self.graphs
            if isinstance(key, tuple) and key and key != uncalled and not key[0].startswith("<")
        ]:
            state = key[0].partition("@")[0]
            declaring = [
                graph
                for other, graph in self.graphs.items()
                if isinstance(other, Location) and graph.state == state
            ]
            if len(declaring) == 1:
                undeclared = self.graphs.pop(key)
                declaring[0].nodes.update(undeclared.nodes)
                declaring[0].unresolved.extend(
                    reason for reason in undeclared.unresolved if reason not in declaring[0].unresolved
                )

    def sorted_write_sites(self) -> list[WriteSite]:
        return sorted(self.write_sites.values(), key=lambda site: (site.location, site.site))

    def totals(self, findings: int) -> dict[str, int]:
        self._merge_undeclared()
        graphs = self.graphs.values()
        counts: dict[str, int] = {
            status: sum(graph.count(status) for graph in graphs) for status in NODE_STATUSES
        }
        # An agent whose hooks are not known is one node not checked, as the coverage line counts it.
        counts["unchecked"] += sum(bool(graph.agent and graph.unresolved) for graph in graphs)
        return {
            "graphs": len(self.graphs),
            "nodes": sum(counts.values()),
            **counts,
            "write_sites": len(self.write_sites),
            "findings": findings,
        }

    def coverage(self) -> Coverage:
        """What ``lgstate check`` says of the run: the nodes checked, and why the others are not."""
        self._merge_undeclared()
        by_category: dict[str, int] = {}
        nodes = checked = from_bodies = typed_any = apart = 0
        for graph in self.graphs.values():
            if graph.state_unknown is not None:
                # Their keys cannot be checked: counted apart, and named beside the share.
                apart += len(graph.nodes)
                continue
            for node in graph.nodes.values():
                nodes += 1
                typed_any += node.any_values
                if node.status in ("unchecked", "opaque"):
                    category = node.category or "no signature"
                    by_category[category] = by_category.get(category, 0) + 1
                else:
                    checked += 1
                    from_bodies += node.status == "body"
            if graph.agent and graph.unresolved:
                # Its hooks are not known: one unknown at least, so the share never says more.
                nodes += 1
                by_category["unresolved agent"] = by_category.get("unresolved agent", 0) + 1
        order = list(NOT_CHECKED)
        return Coverage(
            nodes=nodes,
            checked=checked,
            from_bodies=from_bodies,
            not_checked=dict(sorted(by_category.items(), key=lambda item: order.index(item[0]))),
            values_typed_any=typed_any,
            unknown_state=apart,
        )


def _new_graph(
    api: TypeChecker,
    declared_at: Location | None,
    graph_type: Type,
    fallback: Sequence[TypeInfo],
    given: Sequence[TypeInfo] = (),
    call_roles: Sequence[tuple[str, str]] = (),
) -> GraphCoverage:
    infos = list(given) or discovery.graph_type_schemas(graph_type) or list(fallback)
    roles = _roles(graph_type)
    given_roles = {role for _, role in call_roles}
    if given_roles:
        # A role the call gives a class explicitly is that class's alone.
        roles = {name: tuple(r for r in had if r not in given_roles) for name, had in roles.items()}
    for fullname, role in call_roles:
        if role not in roles.get(fullname, ()):
            roles[fullname] = (*roles.get(fullname, ()), role)
    order = [role for _, role in _ROLES]
    roles = {name: tuple(sorted(had, key=order.index)) for name, had in roles.items() if had}
    # A class the graph's type does not name: an agent's middleware's, or any when the type names
    # none (a builder from a factory).
    other = ("middleware",) if given else ("graph",)
    schemas = tuple(
        Schema(class_name(info), roles.get(info.fullname, other), _module_file(api, info))
        for info in infos
    )
    channels = graph_channels(infos)
    names = tuple(sorted(channels[0])) if channels is not None else ()
    variable = _state_variable(graph_type) if not infos else None
    unknown = (
        f"its state is the type variable {variable}, so its channels are not known"
        if variable is not None
        else None
    )
    return GraphCoverage(declared_at, schemas, names, state_unknown=unknown)


def _state_variable(graph_type: Type) -> str | None:
    """The type variable a graph's type names as its state (``StateGraph[S]`` in a generic
    function), whose channels no check can know."""
    proper = get_proper_type(graph_type)
    if isinstance(proper, Instance) and proper.args:
        state = get_proper_type(proper.args[0])
        if isinstance(state, TypeVarLikeType):
            return state.name
    return None


# The role of each ``StateGraph(...)`` argument that names a schema (``input`` / ``output``: the
# deprecated spellings).
_ARGUMENT_ROLES: Final = {
    "state_schema": "state",
    "input_schema": "input",
    "input": "input",
    "output_schema": "output",
    "output": "output",
}


def _call_roles(ctx: FunctionContext) -> list[tuple[str, str]]:
    """The role each class has by the ``StateGraph(...)`` argument that names it."""
    call = ctx.context
    found: list[tuple[str, str]] = []
    if not isinstance(call, CallExpr):
        return found
    for index, (arg, name) in enumerate(zip(call.args, call.arg_names)):
        role = "state" if name is None and index == 0 else _ARGUMENT_ROLES.get(name or "")
        info = discovery.schema_class(arg, discovery.NO_TYPE) if role is not None else None
        if info is not None and role is not None:
            found.append((info.fullname, role))
    return found


def _builder_location(api: TypeChecker, ctx: MethodContext) -> Location | None:
    """Where the variable a method is called on was assigned (``builder = StateGraph(State)``), when
    it is a variable of this module or of the function being checked."""
    call = ctx.context
    if not isinstance(call, CallExpr) or not isinstance(call.callee, MemberExpr):
        return None
    return _receiver_location(api, call.callee.expr)


def _receiver_location(api: TypeChecker, receiver: Expression) -> Location | None:
    """Where the builder ``receiver`` names was made: its ``StateGraph(...)`` call, or the
    assignment of its variable."""
    while isinstance(receiver, CallExpr) and isinstance(receiver.callee, MemberExpr):
        receiver = receiver.callee.expr  # a chained call on the builder returns the builder
    if isinstance(receiver, CallExpr):
        # ``StateGraph(S).add_node(...)``: the graph that call declares.
        return _location(api, receiver.line)
    if not isinstance(receiver, NameExpr) or not isinstance(receiver.node, Var):
        return None
    if receiver.kind == LDEF or (
        receiver.kind == GDEF and receiver.node.fullname.rpartition(".")[0] == api.tree.fullname
    ):
        return _location(api, receiver.node.line)
    return None


def _is_command(value: Expression) -> bool:
    return (
        isinstance(value, CallExpr)
        and isinstance(value.callee, (NameExpr, MemberExpr))
        and value.callee.fullname == sites.COMMAND
    )


def _within(key: tuple[Location, int, str], file: str, value: Expression) -> bool:
    """Whether the write site recorded under ``key`` lies inside ``value``'s text."""
    location, column, _ = key
    end_line = value.end_line if value.end_line is not None else value.line
    end_column = value.end_column if value.end_column is not None else column + 1
    return (
        location.file == file
        and (value.line, value.column) <= (location.line, column) < (end_line, end_column)
    )


def _checker(ctx: FunctionContext | MethodContext) -> TypeChecker:
    assert isinstance(ctx.api, TypeChecker)
    return ctx.api


def _location(api: TypeChecker, line: int) -> Location:
    # The same spelling of the path as mypy's own messages (and so as ``lgstate check``).
    return Location(api.msg.errors.simplify_path(api.path), line)


def class_name(info: TypeInfo) -> str:
    # mypy names a class defined in a function ``module.Name@line``; the report shows ``module.Name``.
    return info.fullname.partition("@")[0]


def _module_file(api: TypeChecker, info: TypeInfo) -> str | None:
    """The file of a class of the project; ``None`` for an installed library's (its module name
    says where it is) and for a module mypy has not loaded."""
    module = api.modules.get(info.module_name)
    if module is None or is_library(module.path):
        return None
    return api.msg.errors.simplify_path(module.path)


def _roles(graph_type: Type) -> dict[str, tuple[str, ...]]:
    proper = get_proper_type(graph_type)
    roles: dict[str, tuple[str, ...]] = {}
    if not isinstance(proper, Instance) or len(proper.args) != 4:
        return roles
    for index, role in _ROLES:
        arg = get_proper_type(proper.args[index])
        info = arg.fallback.type if isinstance(arg, TypedDictType) else (
            arg.type if isinstance(arg, Instance) else None
        )
        if info is not None:
            roles[info.fullname] = (*roles.get(info.fullname, ()), role)
    return roles


def _read_where(reached: Reached | None) -> str:
    """Where a node's body was read from, when not (only) here: ``, in app/nodes.py, through
    build_update() in app/helpers.py``."""
    if reached is None or not reached.followed:
        return ""
    first, *rest = reached.followed
    words = f", in {first.path}" if first.path is not None else ""
    seen = {first.function}
    through: list[str] = []
    for origin in rest:
        if origin.function in seen:
            continue
        seen.add(origin.function)
        through.append(f"{origin.name}()" + (f" in {origin.path}" if origin.path else ""))
    if through:
        words += ", through " + ", ".join(through)
    return words
