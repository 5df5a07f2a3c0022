"""Checkpoint coverage for ``lgstate report`` and the coverage line of ``lgstate check``: what the
checks saw, graph by graph.

``checks.recorder`` holds a ``CoverageRecorder`` during the command line's own build (and ``None`` in
mypy runs). The checks tell it about each ``StateGraph(...)`` call, each node registered with
``add_node`` / ``add_sequence`` and each write-site argument, at the moment they check them, so the
report lists exactly what ``lgstate check`` checks, by the same rules.

A node is *checked* from its declared return type, or from its *body* once the checks have read it
(``NodeRecord.read``); else it is *unchecked* or *opaque*, with a reason in words the user can act on
and a category (a key of ``NOT_CHECKED``) that the coverage line counts it under (a new kind of
reason adds a row there).

A graph is the ``StateGraph(...)`` call; a node belongs to the graph assigned to the variable its
``add_node`` is called on (``builder = StateGraph(State)``). A node added to a builder that no checked
call assigned (a factory's result, an attribute) is grouped by the schema classes of the builder's
type, and a graph input (``graph.invoke(...)``) names its graph by its state schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, NamedTuple

from mypy.checker import TypeChecker
from mypy.messages import format_type_bare
from mypy.nodes import (
    GDEF,
    LDEF,
    CallExpr,
    Decorator,
    Expression,
    MemberExpr,
    NameExpr,
    RefExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import AnyType, Instance, Type, TypedDictType, TypeOfAny, get_proper_type

from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import bodies, discovery, exported, shaped_nodes, sites

# "checked": from its declared return type; "body": from what its body returns (``bodies``).
NodeStatus = Literal["checked", "body", "unchecked", "opaque"]
NODE_STATUSES: Final[tuple[NodeStatus, ...]] = ("checked", "body", "unchecked", "opaque")


class Category(NamedTuple):
    """How the coverage line counts the nodes of one kind that are not checked."""

    one: str  # after "1"
    many: str  # after any other count


# Why nodes are not checked, by category: the coverage line reads "not checked: 3 defined in another
# module, 1 compiled subgraph". In the order the line lists them.
NOT_CHECKED: Final[dict[str, Category]] = {
    "wrapper": Category("through an Any-typed wrapper", "through an Any-typed wrapper"),
    "other module": Category("defined in another module", "defined in another module"),
    "unannotated": Category("unannotated", "unannotated"),
    "built elsewhere": Category(
        "returning a dict built elsewhere", "returning a dict built elsewhere"
    ),
    "loose": Category("typed loosely, with no body to read", "typed loosely, with no body to read"),
    "unread": Category("whose body was not read", "whose body was not read"),
    "library": Category("of an installed library", "of installed libraries"),
    "any": Category("typed Any", "typed Any"),
    "subgraph": Category("compiled subgraph", "compiled subgraphs"),
    "prebuilt": Category("prebuilt node", "prebuilt nodes"),
    "runnable": Category("Runnable", "Runnables"),
    "no signature": Category("with no call signature", "with no call signature"),
}


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
    reason: str | None  # why it is unchecked or opaque; for a body, how much of it was read
    category: str | None = None  # a key of NOT_CHECKED, for a node that is unchecked or opaque
    any_values: int = 0  # values typed Any in a body that was read (lgstate-any, opt-in, says which)


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
    ) -> NodeRecord | None:
        """A node added by ``builder.add_node(...)`` & co., or a middleware hook of the agent that
        ``create_agent(...)`` makes (that call declares the graph). ``elsewhere``: a node of
        another module, and what its module recorded of it.

        For a node to read from its body (``from_body``), returns its ``NodeRecord``: it stays
        unchecked ("its body was not read") until the checks say they read it."""
        api = _checker(ctx)
        status, reason, category = _node_status(node, return_type, api, from_body, elsewhere)
        if reason is not None:
            reason += _through(node)
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
        entry = NodeCoverage(node.name, location, status, reason, category)
        graph.nodes[(location, node.name)] = entry
        if not from_body:
            return None
        declared = _declared(return_type, api)
        return NodeRecord(graph.nodes, (location, node.name), declared, _through(node))

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

    def coverage(self) -> Coverage:
        """What ``lgstate check`` says of the run: the nodes checked, and why the others are not."""
        self._merge_undeclared()
        nodes = [node for graph in self.graphs.values() for node in graph.nodes.values()]
        by_category: dict[str, int] = {}
        for node in nodes:
            if node.status in ("unchecked", "opaque"):
                category = node.category or "no signature"
                by_category[category] = by_category.get(category, 0) + 1
        order = list(NOT_CHECKED)
        return Coverage(
            nodes=len(nodes),
            checked=sum(node.status in ("checked", "body") for node in nodes),
            from_bodies=sum(node.status == "body" for node in nodes),
            not_checked=dict(sorted(by_category.items(), key=lambda item: order.index(item[0]))),
            values_typed_any=sum(node.any_values for node in nodes),
        )


class Coverage(NamedTuple):
    """The nodes of a run: how many, how many checked (from their bodies among them), and the
    others by category (keys of ``NOT_CHECKED``)."""

    nodes: int
    checked: int
    from_bodies: int
    not_checked: dict[str, int]
    values_typed_any: int  # in the bodies read

    def percent(self) -> float:
        """The share of nodes checked; 100 with no node at all, as coverage.py counts a run with
        no statement (nothing to check is not a gap)."""
        return 100.0 * self.checked / self.nodes if self.nodes else 100.0

    def line(self) -> str:
        """``nodes checked 7/8 (from bodies 2); not checked: 1 defined in another module; see
        lgstate report``."""
        line = f"nodes checked {self.checked}/{self.nodes} (from bodies {self.from_bodies})"
        if not self.not_checked:
            return line
        kinds = ", ".join(
            f"{count} {NOT_CHECKED[category].one if count == 1 else NOT_CHECKED[category].many}"
            for category, count in self.not_checked.items()
        )
        return f"{line}; not checked: {kinds}; see lgstate report"

    def data(self) -> dict[str, Any]:
        """The coverage as ``--format json`` and SARIF's run properties give it."""
        return {
            "nodes": self.nodes,
            "checked": self.checked,
            "from_bodies": self.from_bodies,
            "not_checked": self.not_checked,
            "percent": round(self.percent(), 1),
            "values_typed_any": self.values_typed_any,
            "summary": self.line(),
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


class NodeRecord:
    """A node the checks read from its body, once its module is checked: they say whether they read
    it (``read``) or why not (``not_read``). Until then it is unchecked."""

    def __init__(
        self,
        nodes: dict[tuple[Location, str], NodeCoverage],
        key: tuple[Location, str],
        declared: str,
        through: str = "",
    ) -> None:
        self._nodes = nodes
        self._key = key
        self._declared = declared
        self._through = through  # " (decorated with @traced, ...)", or ""
        nodes[key] = nodes[key]._replace(
            status="unchecked",
            reason=f"{declared}, and its body was not read{through}",
            category="unread",
        )

    def read(self, any_values: int = 0) -> None:
        """The body's returned values were checked; ``any_values`` of them are typed ``Any``, which
        the checks trust (``lgstate-any`` reports them when it is enabled)."""
        typed_any = f", {_plural(any_values, 'value')} typed Any" if any_values else ""
        self._nodes[self._key] = self._nodes[self._key]._replace(
            status="body", reason=f"read from its body{typed_any}{self._through}", category=None,
            any_values=any_values,
        )

    def not_read(self) -> None:
        """The body does not tell what the node returns: it returns a dict built elsewhere."""
        reason = (
            f"{self._declared}, and its body returns a dict built elsewhere: return a dict display"
            f' ({{"key": value}}) or {_DECLARE}{self._through}'
        )
        self._nodes[self._key] = self._nodes[self._key]._replace(
            status="unchecked", reason=reason, category="built elsewhere"
        )


_DECLARE: Final = "declare its update type (a TypedDict)"


def _declared(return_type: Type | None, api: TypeChecker) -> str:
    proper = get_proper_type(return_type) if return_type is not None else None
    if proper is None or isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated:
        return "has no return type"
    return f'returns "{format_type_bare(proper, api.options)}"'


def _through(node: sites.Node) -> str:
    """``add_node("n", traced(fn))``: the node is ``fn`` (``builders.registered_node``)."""
    if node.through is None:
        return ""
    return f" ({node.through}, whose result is typed Any)"


def _node_status(
    node: sites.Node,
    return_type: Type | None,
    api: TypeChecker,
    from_body: bool,
    elsewhere: exported.Elsewhere | None,
) -> tuple[NodeStatus, str | None, str | None]:
    if return_type is None:
        return ("opaque", *_opaque_reason(node, api))
    if from_body:
        return "body", None, None  # unchecked until read (NodeRecord)
    if elsewhere is not None and not elsewhere.recorded.why:
        return "body", f"read from its body, in {elsewhere.path}", None
    if not sites.update_shape(return_type, node.name).untyped:
        return "checked", None, None
    declared = _declared(return_type, api)
    if elsewhere is not None:
        why = elsewhere.recorded.why
        reason = f"{declared}, and its body in {elsewhere.path} is not read: {shaped_nodes.WHY[why]}"
        return "unchecked", reason, "unannotated" if why == "untyped" else "other module"
    defn = bodies.definition(node)
    module = bodies.module_of(defn) if defn is not None else None
    if module is not None and module != api.tree.fullname:
        file = api.modules.get(module)
        if file is None or is_library(file.path):
            return "unchecked", f"{declared}, and its body is in an installed library", "library"
        path = api.msg.errors.simplify_path(file.path)
        reason = (
            f"{declared}, and its body in {path} is not read: name its first parameter state,"
            f" or {_DECLARE}"
        )
        return "unchecked", reason, "other module"
    if defn is None and _defined_elsewhere(node, api):
        reason = (
            f"{declared}, and it is defined in another module, whose body is not read here:"
            f" {_DECLARE}, or define it in the module that adds it"
        )
        return "unchecked", reason, "other module"
    if defn is not None and defn.is_dynamic() and not api.options.check_untyped_defs:
        return "unchecked", f"{declared}: {shaped_nodes.WHY['untyped']}", "unannotated"
    reason = f"{declared}, and no body of it can be read: {_DECLARE}"
    return "unchecked", reason, "loose"


def _defined_elsewhere(node: sites.Node, api: TypeChecker) -> bool:
    """Whether the node is defined in another module than the one that adds it, by the name it is
    added under (``Nodes.static``, ``nodes.cached`` wrapped by ``functools.lru_cache``), which may
    name no function definition."""
    expr = node.expr
    if isinstance(expr, RefExpr) and expr.fullname:
        return not expr.fullname.startswith(api.tree.fullname + ".")
    if isinstance(expr, MemberExpr) and isinstance(expr.expr, RefExpr):
        owner = expr.expr.node  # a class's method: Nodes.static
        return isinstance(owner, TypeInfo) and owner.module_name != api.tree.fullname
    return False


def _opaque_reason(node: sites.Node, api: TypeChecker) -> tuple[str, str]:
    """Why a node's return type cannot be read, and its category."""
    proper = get_proper_type(node.type)
    if isinstance(proper, Instance) and proper.type.has_base(discovery.RUNNABLE):
        name = proper.type.fullname
        if name.startswith("langgraph.prebuilt."):
            return f"a prebuilt node ({proper.type.name})", "prebuilt"
        if name.startswith(("langgraph.graph.state.Compiled", "langgraph.pregel.")):
            return "a compiled subgraph: its own nodes are listed under its graph", "subgraph"
        return f'a Runnable ("{format_type_bare(node.type, api.options)}")', "runnable"
    if isinstance(proper, AnyType):
        wrapper = _wrapper_name(node.expr)
        if wrapper is not None:
            return (
                f"{wrapper}, whose result is typed Any, so what the node writes is not known: type"
                f" {wrapper.split()[-1]} to return what it wraps (Callable[P, R] of its argument),"
                " or add the function itself",
                "wrapper",
            )
        return "typed Any, so what the node writes is not known: give it a type", "any"
    shown = format_type_bare(node.type, api.options)
    return f'its type "{shown}" is not a callable with a signature', "no signature"


def _wrapper_name(expr: Expression | None) -> str | None:
    """How a node typed Any came from a function: ``registered through traced_node()`` for
    ``traced_node(fn)``, ``decorated with @traced`` for a function so decorated."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, (NameExpr, MemberExpr)):
        return f"registered through {expr.callee.name}()"
    target = expr.node if isinstance(expr, RefExpr) else None
    if isinstance(target, Decorator) and target.original_decorators:
        decorator = target.original_decorators[0]
        if isinstance(decorator, CallExpr):
            decorator = decorator.callee
        if isinstance(decorator, (NameExpr, MemberExpr)):
            return f"decorated with @{decorator.name}"
    return None


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
                        "category": node.category,
                        "values_typed_any": node.any_values,
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
        "coverage": recorder.coverage().data(),
    }


def as_text(recorder: CoverageRecorder, findings: int) -> str:
    lines: list[str] = []
    graphs = recorder.sorted_graphs()
    for graph in graphs:
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
            lines.append(f"  {_no_nodes(graph, graphs)}")
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
    graphs = recorder.sorted_graphs()
    for graph in graphs:
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
            no_nodes = _no_nodes(graph, graphs)
            lines += [f"{no_nodes[0].upper()}{no_nodes[1:]}.", ""]
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


def _no_nodes(graph: GraphCoverage, graphs: list[GraphCoverage]) -> str:
    """Why a graph lists no node (one needs a node to compile). Nodes added by a function the
    builder is passed to are recorded under that function's parameter, which joins this entry only
    when it is its state's one graph: the entry they are listed under, when there is one."""
    elsewhere = [
        other for other in graphs
        if other.declared_at is None and other.state == graph.state and other.nodes
    ]
    if elsewhere:
        return (
            "no nodes found here: the nodes of a builder of this state that is passed to a"
            f" function are listed under graph {_graph_title(elsewhere[0])}"
        )
    if graph.state is not None and graph.state.startswith("langchain.agents."):
        # create_agent's own nodes (the model, the tools) are LangChain's, and write messages.
        return "no middleware hooks: the agent's own nodes are LangChain's"
    return "no nodes found: no add_node call on this builder in the checked code"


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
