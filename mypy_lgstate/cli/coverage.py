"""Checkpoint coverage for ``lgstate report``: what the checks saw, graph by graph.

``checks.recorder`` holds a ``CoverageRecorder`` during the command line's own build (and ``None`` in
mypy runs). The checks tell it about each ``StateGraph(...)`` call, each node registered with
``add_node`` / ``add_sequence`` and each write-site argument, at the moment they check them, so the
report lists exactly what ``lgstate check`` checks, by the same rules.

A graph is the ``StateGraph(...)`` call; a node belongs to the graph assigned to the variable its
``add_node`` is called on (``builder = StateGraph(State)``). A node added to a builder that no checked
call assigned (a factory's result, an attribute) is grouped by the schema classes of the builder's
type, and a graph input (``graph.invoke(...)``) names its graph by its state schema.
"""

from __future__ import annotations

import functools

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, NamedTuple

from mypy.checker import TypeChecker
from mypy.messages import format_type_bare
from mypy.nodes import GDEF, LDEF, CallExpr, Expression, MemberExpr, NameExpr, TypeInfo, Var
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import AnyType, Instance, Type, TypedDictType, TypeOfAny, get_proper_type

from mypy_lgstate.core.libraries import LIBRARY_DIRS
from mypy_lgstate.routes import bodies, discovery, exported, shaped_nodes, sites

# "checked": from its declared return type; "body": from what its body returns (``bodies``).
NodeStatus = Literal["checked", "body", "unchecked", "opaque"]
NODE_STATUSES: Final[tuple[NodeStatus, ...]] = ("checked", "body", "unchecked", "opaque")
# The schema roles of the type arguments of ``StateGraph[S, C, I, O]`` (C, the context, is never
# checkpointed).
_ROLES: Final = ((0, "state"), (2, "input"), (3, "output"))


class Location(NamedTuple):
    file: str
    line: int


class Schema(NamedTuple):
    fullname: str
    roles: tuple[str, ...]
    file: str | None  # None when mypy has not loaded its module


class NodeCoverage(NamedTuple):
    name: str
    location: Location
    status: NodeStatus
    reason: str | None  # why it is unchecked or opaque


class WriteSite(NamedTuple):
    site: str  # the root of the reported path: ``Command.update``, ``invoke.input``, ...
    location: Location
    graph: str | None  # the state schema of the graph written to, when the call names it
    unresolved: str | None = None  # why the graph written to is not known


class GraphCoverage:
    def __init__(
        self, declared_at: Location | None, schemas: tuple[Schema, ...], channels: tuple[str, ...]
    ) -> None:
        self.declared_at = declared_at  # None: a builder from elsewhere (a factory, a parameter)
        self.schemas = schemas
        self.channels = channels
        self.nodes: dict[tuple[Location, str], NodeCoverage] = {}
        # Why part of the graph is not known (a middleware list built in another module).
        self.unresolved: list[str] = []

    @property
    def state(self) -> str | None:
        return self.schemas[0].fullname if self.schemas else None

    def count(self, status: NodeStatus) -> int:
        return sum(node.status == status for node in self.nodes.values())

    def checked(self) -> int:
        """Nodes whose writes are checked, from their declared types or from their bodies."""
        return self.count("checked") + self.count("body")

    def sort_key(self) -> tuple[Location, str]:
        first = self.declared_at or min(
            (node.location for node in self.nodes.values()), default=Location("", 0)
        )
        return first, self.state or ""


# A graph is known by the location of its ``StateGraph(...)`` call, or, when no such call was checked
# (a builder returned by a factory), by the fullnames of the schema classes its type names.
GraphKey = Location | tuple[str, ...]


class CoverageRecorder:
    """Collects what the checks see. A hook can fire more than once for one call (mypy tries each
    candidate of an overloaded callee), so every entry is keyed by its location."""

    def __init__(self) -> None:
        self.graphs: dict[GraphKey, GraphCoverage] = {}
        self.write_sites: dict[tuple[Location, int, str], WriteSite] = {}

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
        elsewhere: exported.Elsewhere | None = None,
    ) -> Callable[[], None] | None:
        """A node added by ``builder.add_node(...)`` & co., or a middleware hook of the agent that
        ``create_agent(...)`` makes (that call declares the graph). For a node read from its body,
        returns what to call when the body turns out not to tell (it is unchecked, then).
        ``elsewhere``: a node of another module, and what its module recorded of it."""
        api = _checker(ctx)
        status, reason = _node_status(node, return_type, api, from_body, elsewhere)
        location = _location(api, ctx.context.line)
        key: GraphKey | None
        graph_type: Type
        if isinstance(ctx, MethodContext):
            # The graph whose StateGraph(...) call is assigned to the builder variable.
            key, graph_type, declared_at = _builder_location(api, ctx), ctx.type, None
        else:
            key, graph_type, declared_at = location, ctx.default_return_type, location
        if key is None or key not in self.graphs:
            if key is None or declared_at is None:
                key = tuple(info.fullname for info in schemas)
            if key not in self.graphs:
                # An agent's type names AgentState only: its middleware's schemas add channels.
                given = schemas if declared_at is not None else ()
                self.graphs[key] = _new_graph(api, declared_at, graph_type, schemas, given)
        graph = self.graphs[key]
        entry = NodeCoverage(node.name, location, status, reason)
        graph.nodes[(location, node.name)] = entry
        if status != "body":
            return None
        # Called when the body turns out not to tell what the node returns.
        declared = _node_status(node, return_type, api, from_body=False)[1]
        unchecked = entry._replace(
            status="unchecked", reason=f"{declared}, and its body returns a value built elsewhere"
        )
        return functools.partial(graph.nodes.__setitem__, (location, node.name), unchecked)

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
            graph = _class_name(schemas[0]) if schemas else None
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
        declaring the same state, when there is exactly one."""
        for key in [key for key in self.graphs if isinstance(key, tuple) and key]:
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
        return {
            "graphs": len(self.graphs),
            "nodes": sum(counts.values()),
            **counts,
            "write_sites": len(self.write_sites),
            "findings": findings,
        }


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
        Schema(_class_name(info), roles.get(info.fullname, other), _module_file(api, info))
        for info in infos
    )
    channels = sites.graph_channels(infos)
    names = tuple(sorted(channels[0])) if channels is not None else ()
    return GraphCoverage(declared_at, schemas, names)


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
    receiver = call.callee.expr
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


def _class_name(info: TypeInfo) -> str:
    # mypy names a class defined in a function ``module.Name@line``; the report shows ``module.Name``.
    return info.fullname.partition("@")[0]


def _module_file(api: TypeChecker, info: TypeInfo) -> str | None:
    """The file of a class of the project; ``None`` for an installed library's (its module name
    says where it is) and for a module mypy has not loaded."""
    module = api.modules.get(info.module_name)
    if module is None or any(part in module.path for part in LIBRARY_DIRS):
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


def _node_status(
    node: sites.Node,
    return_type: Type | None,
    api: TypeChecker,
    from_body: bool,
    elsewhere: exported.Elsewhere | None = None,
) -> tuple[NodeStatus, str | None]:
    status, reason = _declared_status(node, return_type, api, from_body, elsewhere)
    if node.through is not None and reason is not None:
        # ``add_node("n", traced(fn))``: the node is ``fn`` (``builders.registered_node``).
        reason += f" (registered through {node.through}(), whose result is typed Any)"
    return status, reason


def _declared_status(
    node: sites.Node,
    return_type: Type | None,
    api: TypeChecker,
    from_body: bool,
    elsewhere: exported.Elsewhere | None,
) -> tuple[NodeStatus, str | None]:
    if return_type is None:
        return "opaque", _opaque_reason(node.type, api)
    if from_body:
        return "body", "checked from its body"
    if elsewhere is not None:
        why = elsewhere.recorded.why
        if not why:
            return "body", f"checked from its body, in {elsewhere.path}"
        return "unchecked", f"its body in {elsewhere.path} is not read: {shaped_nodes.WHY[why]}"
    if not sites.update_shape(return_type, node.name).untyped:
        return "checked", None
    proper = get_proper_type(return_type)
    if isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated:
        declared = "has no return type"
    else:
        declared = f'returns "{format_type_bare(return_type, api.options)}"'
    defn = bodies.definition(node)
    if defn is None:
        return "unchecked", declared
    if bodies.module_of(defn) != api.tree.fullname:
        module = api.modules.get(bodies.module_of(defn))
        if module is None or any(library in module.path for library in LIBRARY_DIRS):
            return "unchecked", f"{declared}, and its body is in an installed library"
        path = api.msg.errors.simplify_path(module.path)
        return "unchecked", (
            f"{declared}, and its body in {path} is not read: its first parameter is not named state"
        )
    if defn.is_dynamic() and not api.options.check_untyped_defs:
        return "unchecked", f"{declared}: {shaped_nodes.WHY['untyped']}"
    return "unchecked", declared


def _opaque_reason(node_type: Type, api: TypeChecker) -> str:
    proper = get_proper_type(node_type)
    if isinstance(proper, Instance) and proper.type.has_base(discovery.RUNNABLE):
        name = proper.type.fullname
        if name.startswith("langgraph.prebuilt."):
            return f"a prebuilt node ({proper.type.name})"
        if name.startswith(("langgraph.graph.state.Compiled", "langgraph.pregel.")):
            return "a compiled subgraph"
        return f'a Runnable ("{format_type_bare(node_type, api.options)}")'
    shown = format_type_bare(node_type, api.options)
    return f'its type "{shown}" is not a callable with a signature'


# Rendering --------------------------------------------------------------------------------------


def as_json(recorder: CoverageRecorder, findings: int) -> str:
    return json.dumps(_as_data(recorder, findings), indent=2)


def _as_data(recorder: CoverageRecorder, findings: int) -> dict[str, Any]:
    return {
        "graphs": [
            {
                "state": graph.state,
                "declared_at": graph.declared_at._asdict() if graph.declared_at else None,
                "schemas": [
                    {"class": s.fullname, "roles": list(s.roles), "file": s.file}
                    for s in graph.schemas
                ],
                "channels": list(graph.channels),
                "nodes": [
                    {
                        "name": node.name,
                        **node.location._asdict(),
                        "status": node.status,
                        "reason": node.reason,
                    }
                    for node in _sorted_nodes(graph)
                ],
                "unresolved": list(graph.unresolved),
                "nodes_checked": graph.checked(),
                "nodes_total": len(graph.nodes),
            }
            for graph in recorder.sorted_graphs()
        ],
        "write_sites": [
            {
                "site": site.site,
                **site.location._asdict(),
                "graph": site.graph,
                "unresolved": site.unresolved,
            }
            for site in recorder.sorted_write_sites()
        ],
        "totals": recorder.totals(findings),
    }


def as_text(recorder: CoverageRecorder, findings: int) -> str:
    lines: list[str] = []
    for graph in recorder.sorted_graphs():
        lines.append(f"graph {_graph_title(graph)}")
        for schema in graph.schemas:
            where = f" ({schema.file})" if schema.file else ""
            lines.append(f"  {'/'.join(schema.roles)} schema: {schema.fullname}{where}")
        lines.append(f"  channels: {', '.join(graph.channels) or '(none known)'}")
        for node in _sorted_nodes(graph):
            reason = f": {node.reason}" if node.reason else ""
            lines.append(
                f"  {node.status:<9} node {node.name} ({_at(node.location)}){reason}"
            )
        lines.extend(f"  unresolved: {reason}" for reason in graph.unresolved)
        if not graph.nodes and not graph.unresolved:
            lines.append(f"  {NO_NODES}")
        lines.append(f"  nodes checked {graph.checked()}/{len(graph.nodes)}")
        lines.append("")
    write_sites = recorder.sorted_write_sites()
    if write_sites:
        lines.append("write sites")
        for site in write_sites:
            written = f" (graph {site.graph})" if site.graph else _unknown_graph(site)
            lines.append(f"  {site.site} ({_at(site.location)}){written}")
        lines.append("")
    lines.append(_totals_line(recorder.totals(findings)))
    return "\n".join(lines)


def as_markdown(recorder: CoverageRecorder, findings: int) -> str:
    lines = ["# Checkpoint coverage", ""]
    for graph in recorder.sorted_graphs():
        lines += [f"## Graph {_graph_title(graph)}", ""]
        lines += ["| schema | role | file |", "|---|---|---|"]
        lines += [
            f"| `{s.fullname}` | {', '.join(s.roles)} | {s.file or ''} |" for s in graph.schemas
        ]
        channels = ", ".join(f"`{channel}`" for channel in graph.channels) or "(none known)"
        lines += ["", f"Channels: {channels}", ""]
        if graph.nodes:
            lines += ["| node | status | where | why |", "|---|---|---|---|"]
            lines += [
                f"| `{node.name}` | {node.status} | {_at(node.location)} | {node.reason or ''} |"
                for node in _sorted_nodes(graph)
            ]
            lines.append("")
        if graph.unresolved:
            lines += [*(f"- Unresolved: {reason}" for reason in graph.unresolved), ""]
        elif not graph.nodes:
            lines += [f"{NO_NODES[0].upper()}{NO_NODES[1:]}.", ""]
        lines += [f"Nodes checked {graph.checked()}/{len(graph.nodes)}", ""]
    write_sites = recorder.sorted_write_sites()
    if write_sites:
        lines += ["## Write sites", "", "| site | where | graph |", "|---|---|---|"]
        lines += [
            f"| `{site.site}` | {_at(site.location)} |"
            f" {f'`{site.graph}`' if site.graph else _unknown_graph(site).strip()} |"
            for site in write_sites
        ]
        lines.append("")
    lines += ["## Totals", "", _totals_line(recorder.totals(findings))]
    return "\n".join(lines)


# A graph needs a node to compile. Nodes added by a function the builder is passed to are recorded
# under that function's parameter, which joins this entry only when it is its state's one graph.
NO_NODES: Final = (
    "no nodes found: nodes added by a function this builder is passed to are listed under an entry"
    " with no StateGraph(...) call"
)


def _unknown_graph(site: WriteSite) -> str:
    return f" (graph unknown: {site.unresolved})" if site.unresolved else ""


def _graph_title(graph: GraphCoverage) -> str:
    declared = graph.declared_at
    where = f" ({_at(declared)})" if declared else " (no StateGraph(...) call in the checked code)"
    return f"{graph.state or '(unknown state)'}{where}"


def _sorted_nodes(graph: GraphCoverage) -> list[NodeCoverage]:
    return sorted(graph.nodes.values(), key=lambda node: (node.location, node.name))


def _at(location: Location) -> str:
    return f"{location.file}:{location.line}"


def _totals_line(totals: dict[str, int]) -> str:
    checked = totals["checked"] + totals["body"]
    return (
        f"{_plural(totals['graphs'], 'graph')}, nodes checked {checked}/{totals['nodes']}"
        f" (from bodies {totals['body']}, unchecked {totals['unchecked']},"
        f" opaque {totals['opaque']}),"
        f" {_plural(totals['write_sites'], 'write site')}, {_plural(totals['findings'], 'finding')}"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


FORMATS: Final[dict[str, Callable[[CoverageRecorder, int], str]]] = {
    "text": as_text,
    "json": as_json,
    "markdown": as_markdown,
}
