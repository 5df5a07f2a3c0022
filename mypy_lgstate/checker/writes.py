"""The checks of what is written to a graph's channels, shared by every route that writes: a write
site's value (``Command``, ``Send``, ``interrupt``, a graph's input), a node's update by its declared
return type, and what a node's body returns when that type does not tell (``bodies``).

Each value is walked where it is written, and reported there; each channel it writes is compared
with what the channel accepts (``lgstate-channel-type``); a key that is no channel of the graph is
reported on the key (``lgstate-unknown-key``). What a write restates of the graph's own schemas is
not reported again (``repeats``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import Context, Expression, FuncDef, NameExpr, StrExpr, SymbolNode, TypeInfo
from mypy.types import AnyType, CallableType, Instance, Type, TypedDictType, TypeOfAny

from mypy_lgstate.checker import channels, errorcodes as codes, repeats
from mypy_lgstate.checker import report
from mypy_lgstate.checker.emit import Emitter
from mypy_lgstate.checker.findings import naming, outside, repathed
from mypy_lgstate.checker.followed import UNKNOWN_KEY, Followed, Located, is_typed_any
from mypy_lgstate.checker.graphs import Graphs
from mypy_lgstate.checker.pending_bodies import Body
from mypy_lgstate.checker.report import fail, once, reporting_in
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core import write_messages
from mypy_lgstate.core.messages import field_part, key_part
from mypy_lgstate.routes import (
    bodies,
    discovery,
    displays,
    exported,
    functional,
    sites,
    structured_output,
)
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.coverage_records import plural
from mypy_lgstate.routes.lists import Scope
from mypy_lgstate.routes.sites import CHANNEL_TYPE_WRITERS

if TYPE_CHECKING:
    from mypy_lgstate.routes.coverage_records import NodeRecord
    from mypy_lgstate.routes.summary_values import Reached


# Tells ``lgstate report`` what a node is: ``(node, declared return type, whose body is read here
# once the module is checked, what its summaries told)``; for a body read here, returns the record
# to tell whether it was read.
RecordNode = Callable[[sites.Node, Type | None, bool, "Reached | None"], "NodeRecord | None"]


def unread_reason(reached: Reached) -> str | None:
    """Why what the summaries of a node's functions tell is not all it writes (``None``: it is)."""
    if reached.unread:
        return reached.unread[0]
    if reached.unread_values:
        return f"{plural(reached.unread_values, 'value')} whose type only mypy's inference tells"
    return None


def _mypy_checked_keys(ret: Type) -> frozenset[str] | None:
    """The keys of a TypedDict update type, when the node's returned dicts are read to find a key
    it does not declare: mypy reports such a key itself (``typeddict-unknown-key``), which ``lgstate
    check`` does not show, so there, and only there, it is an ``lgstate-unknown-key`` too."""
    if not report.tagging:
        return None
    keys = [
        key
        for part in sites.union_items(proper_type(ret))
        if isinstance(part, TypedDictType)
        for key in part.items
    ]
    return frozenset(keys) if keys else None


def _keyed(ret: Type) -> bool:
    """Whether a declared update type leaves the keys of the dicts a node returns unchecked:
    ``dict[str, V]`` names no key, and a node declared as a whole model or dataclass state may
    still return a dict (LangGraph takes it as an update)."""
    for part in sites.union_items(proper_type(ret)):
        if isinstance(part, Instance) and (
            part.type.fullname in sites.MAPPINGS or discovery.is_schema(part.type)
        ):
            return True
    return False




def _label(node: sites.Node) -> str:
    """How messages about a node's declared return type name the node: by its name, but a
    middleware hook a class inherits (``A.before_model``, declared as ``Base.before_model``) by
    the method that declares it, which is what the user wrote."""
    proper = proper_type(node.type)
    defn = proper.definition if isinstance(proper, CallableType) else None
    if isinstance(defn, FuncDef) and node.name.endswith(f".{defn.name}"):
        return bodies.function_name(defn)
    return node.name


def _declarer(node: sites.Node) -> str:
    """What declares a node's return type: its function, else the node's name."""
    proper = proper_type(node.type)
    if isinstance(proper, CallableType) and isinstance(proper.definition, FuncDef):
        return proper.definition.fullname
    return node.name


class NodeGraph(NamedTuple):
    """The graph a node function of the module being checked belongs to: a ``Command`` its body
    builds writes that graph's channels."""

    function: FuncDef
    channels: tuple[frozenset[str], str]
    schemas: tuple[TypeInfo, ...]


class Writes:
    """The checks of writes, for one plugin object."""

    def __init__(
        self,
        walker: Walker,
        graphs: Graphs,
        emit: Emitter,
        records: exported.Records,
        lookup: Callable[[str], SymbolNode | None],
    ) -> None:
        self._walker = walker
        self._graphs = graphs
        self._emit = emit
        # What nodes write through the functions that build their updates (their summaries).
        self.followed = Followed(lookup, records, emit, graphs)
        # The fields each update class restates of the channels of a graph's schemas
        # (``repeats.restated_keys``): the nodes of a graph mostly share one update class.
        self._restated_keys: dict[tuple[TypeInfo, tuple[TypeInfo, ...]], list[str]] = {}

    def forget(self) -> None:
        self._restated_keys.clear()
        self.followed.forget()

    def _restated(self, ret: Type, node_root: str, schemas: tuple[TypeInfo, ...]) -> list[str]:
        """``repeats.restated_update_fields`` against the channels of ``schemas``, once per update
        class and graph."""
        update = proper_type(ret)
        declared = self._graphs.declared_types(schemas)
        info = repeats.update_class(update)
        if info is None:
            return repeats.restated_update_fields(update, node_root, declared)
        keys = self._restated_keys.get((info, schemas))
        if keys is None:
            keys = self._restated_keys[info, schemas] = repeats.restated_keys(update, declared)
        return [node_root + field_part(key) for key in keys]

    def check_node_returns(
        self,
        api: TypeChecker,
        context: Context,
        nodes: list[sites.Node],
        channels: tuple[frozenset[str], str] | None,
        allowed: frozenset[str] | None,
        record: RecordNode | None = None,
        schemas: tuple[TypeInfo, ...] = (),
    ) -> list[Body]:
        """What each node writes: by its declared return type, and by what its body returns when
        that type does not tell (or to check its keys when the type does not name them). A body of
        this module is read once the module is checked (mypy checks a module's bodies after its top
        level): those are returned; a body of another module, and the functions a body's return
        calls, are read now, from their summaries (``followed``). ``record`` tells ``lgstate
        report`` what each node is (checked from its declared type or from its body, unchecked,
        opaque)."""
        later: list[Body] = []
        for node in nodes:
            ret = sites.node_return_type(node.type)
            if ret is None and isinstance(proper_type(node.type), AnyType):
                if self.followed.through_wrapper(api, node):  # ``make_node(...)`` typed Any
                    ret = node.type
            if ret is None:
                if record is not None:
                    record(node, None, False, None)
                continue
            loose = bodies.is_loose(ret)
            function = (
                bodies.local_function(node, api)
                if loose and not self.followed.through_wrapper(api, node)
                else None
            )
            exempt = _mypy_checked_keys(ret)
            reached = None
            if loose or exempt is not None or _keyed(ret):
                reached = self.followed.follow(api, node, schemas, own_items=function is None)
            typed_any = 0
            if reached is not None:
                typed_any = self.followed.check(
                    api, context, node.name, reached, channels, schemas, allowed, self,
                    values=loose, exempt=exempt or frozenset(),
                )
            coverage = (
                record(node, ret, function is not None, reached) if record is not None else None
            )
            if function is not None:
                later.append(
                    Body(
                        api, function, context, node.name, ret, channels, schemas, allowed,
                        coverage=coverage, reached=reached, typed_any=typed_any,
                    )
                )
            elif loose:
                why = unread_reason(reached) if reached is not None else "no body of it is known"
                if why is not None:
                    shown = self._shown_return(ret)
                    message = write_messages.untyped_node_message(node.name, shown)
                    fail(api, message, context, codes.UNTYPED_NODE)
                if coverage is not None:
                    coverage.read(typed_any) if why is None else coverage.not_read(why)
            self.check_declared(
                api, context, _label(node), _declarer(node), ret, channels, schemas, allowed
            )
        return later

    def check_declared(
        self,
        api: TypeChecker,
        context: Context,
        label: str,
        declarer: str,
        ret: Type,
        channels: tuple[frozenset[str], str] | None,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
    ) -> None:
        """What a declared update type says a node writes (its ``label``, declared by ``declarer``):
        its keys against ``channels``, its values by the profile's rules, reported at ``context``
        once per file (the node's declared type is the same at every call that registers it, under
        any name)."""
        shape = sites.update_shape(ret, label)
        unknown = []
        if channels is not None:
            names, state = channels
            for key, update_name in shape.keys:
                if key not in names:
                    unknown.append(f"{label}().{key}")
                    once(
                        api,
                        (UNKNOWN_KEY, declarer, key, state),
                        write_messages.unknown_key_message(label, key, update_name, state),
                        context,
                        codes.UNKNOWN_KEY,
                        declared=None,
                    )
        # A field of the channel's own declared type was checked with the schema (``repeats``).
        declared = self._graphs.declared_types(schemas)
        restated = self._restated(ret, f"{label}()", schemas)
        untracked = [
            f"{label}().{key}" for key in self._graphs.special_keys(api, schemas).untracked
        ]
        for path, typ in shape.checked:
            if path in restated:
                continue
            findings = repeats.added(
                self._walker,
                self._walker.check_value(typ, path, channel=True),
                f"{label}()",
                declared,
                schemas,
            )
            if unknown or restated or untracked:
                # LangGraph drops the unknown keys, and never checkpoints untracked ones: what
                # they hold never reaches a checkpoint.
                findings = outside(findings, [*unknown, *restated, *untracked])
            self._emit(
                api, findings, context, at_fields=False, once_per_file=(f"{label}()", declarer),
                allowed=allowed,
            )

    def _shown_return(self, ret: Type | None) -> str | None:
        if ret is None:
            return None
        proper = proper_type(ret)
        unannotated = isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated
        return None if unannotated else self._walker.type_name(ret)

    def check_body(
        self, body: Body, api: TypeChecker | None = None, only: bodies.Returned | None = None
    ) -> None:
        """What a node's body returns (``bodies``), reported on the line of each item. ``only``: one
        display or item, checked while mypy checks the function (the daemon: ``Checks.dict_display``)."""
        api = api or body.api
        function = body.function
        returned = bodies.returned(function) if only is None else only
        unread = [f"it returns {why}" for why in returned.why]
        reached = body.reached
        followed = unread_reason(reached) if reached is not None else None
        if followed is not None:
            unread.append(followed)
        elif reached is None and returned.calls:
            unread.append("the calls it returns are not followed")
        if only is None and unread and not body.whole:
            if body.coverage is not None:
                body.coverage.not_read(unread[0])
            fail(
                api,
                write_messages.untyped_node_message(body.label, self._shown_return(body.returns)),
                body.context,
                codes.UNTYPED_NODE,
            )
        name = bodies.function_name(function)
        root = f"{name}()"
        with reporting_in(api, function):
            if body.whole:
                values = list(functional.returned_values(returned.expressions, root, api))
                self.check_written(api, values, root, body.schemas, body.allowed, updates=False)
                if body.coverage is not None and only is None:
                    body.coverage.read(sum(map(is_typed_any, values)))
                return
            unknown: list[str] = []
            if body.channels is not None:
                names, state = body.channels
                for key in bodies.unknown_keys(returned, names):
                    unknown.append(key.value)
                    message = write_messages.unknown_body_key_message(name, key.value, state)
                    fail(api, message, key, codes.UNKNOWN_KEY)
            written = [
                (key, expr) for key, expr in bodies.written_items(returned) if key not in unknown
            ]
            # LangGraph drops the unknown keys, and never checkpoints the untracked ones; a reducer
            # that raises on its value never stores it.
            dropped = [
                *unknown,
                *self._graphs.special_keys(api, body.schemas).untracked,
                *self._raising(api, body.schemas, written, function),
            ]
            values = [
                value
                for value in bodies.values(returned, root, api)
                if not bodies.under_keys(value, root, dropped)
            ]
            reported = self.check_written(
                api, values, root, body.schemas, body.allowed, updates=True, dotted=True,
                declared=self._graphs.declared_types(body.schemas),
            )
            if body.coverage is not None and only is None and not unread:
                body.coverage.read(sum(map(is_typed_any, values)) + body.typed_any)
            self.check_channel_types(
                api, f'Node "{name}"', written, body.schemas, root, reported, scope=function
            )

    def restating(self, api: TypeChecker, schemas: tuple[TypeInfo, ...]) -> dict[str, list[Type]]:
        """The channels whose declared type an item restates (``repeats``): not the untracked
        ones, whose fields are never reported, so that a graph input holding one still is."""
        declared = self._graphs.declared_types(schemas)
        untracked = self._graphs.special_keys(api, schemas).untracked if declared else ()
        if not untracked:
            return declared
        return {key: types for key, types in declared.items() if key not in untracked}

    def check_update(
        self,
        api: TypeChecker,
        expr: Expression,
        root: str,
        site: str,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        graph: NodeGraph | None,
        declared: dict[str, list[Type]],
    ) -> set[str]:
        """One value a write site adds: its serializer findings, then its channel types (returns the
        paths the serializer findings are at)."""
        pairs = sites.update_pairs(expr, root, api) if root == "Command.update" else None
        values = list(pairs or sites.values_of(expr, root, api))
        writer = CHANNEL_TYPE_WRITERS.get(root) or CHANNEL_TYPE_WRITERS.get(site)
        items = displays.update_items(expr) if writer is not None else []
        typed = schemas
        if graph is not None and root == "Command.update":
            typed = graph.schemas
            unknown = self._unknown_command_keys(api, graph, items)
            items = [(key, value) for key, value in items if key.value not in unknown]
            values = [value for value in values if not bodies.under_keys(value, root, unknown)]
        if site in sites.CHANNEL_ROOTS and site not in sites.START_ROOTS:
            # An untracked channel is never checkpointed; a graph input is, whole (__start__).
            untracked = list(self._graphs.special_keys(api, typed).untracked)
            values = [value for value in values if not bodies.under_keys(value, root, untracked)]
        function = api.scope.current_function()
        scope = function if function is not None else api.tree
        raising = self._raising(api, typed, [(key.value, value) for key, value in items], scope)
        if raising:  # the reducer raises on these: their values are never stored
            values = [value for value in values if not bodies.under_keys(value, root, raising)]
        reported = self.check_written(
            api, values, root, schemas, allowed, updates=site in sites.CHANNEL_ROOTS,
            declared=declared if root in repeats.CHANNEL_ITEM_ROOTS else None,
        )
        if items:
            written = [(key.value, value) for key, value in items]
            assert writer is not None
            self.check_channel_types(api, writer, written, typed, root, reported, scope=scope)
        return reported

    def _raising(
        self,
        api: TypeChecker,
        schemas: tuple[TypeInfo, ...],
        items: list[tuple[str, Expression]],
        scope: Scope,
    ) -> list[str]:
        """The keys of ``items`` whose value only the channel-type check judges: the channel's
        reducer raises on it (it is never stored), or it is an object written where a scalar is
        declared (a way to serialize the object is no fix: its field of that type is)."""
        if not schemas or not items:
            return []
        accepting = self._graphs.accepting(api, schemas)
        type_of = api.lookup_type_or_none

        def structured(expr: Expression) -> TypeInfo | None:
            return structured_output.structured_schema(expr, scope)

        judged = []
        for key, expr in items:
            declared = accepting.get(key)
            if channels.reducer_raises_on(expr, declared, type_of):
                judged.append(key)
                continue
            accepts = channels.accepted(declared, overwrite=False) if declared else None
            if accepts and channels.object_in_scalar(expr, accepts, type_of, structured):
                judged.append(key)
        return judged

    def _unknown_command_keys(
        self, api: TypeChecker, graph: NodeGraph, items: list[tuple[StrExpr, Expression]]
    ) -> list[str]:
        """The keys of a node's ``Command(update=...)`` that are not channels of its graph,
        reported on the key (LangGraph drops them)."""
        names, state = graph.channels
        node = bodies.function_name(graph.function)
        unknown = []
        for key, _ in items:
            if key.value not in names:
                unknown.append(key.value)
                message = write_messages.unknown_command_key_message(node, key.value, state)
                fail(api, message, key, codes.UNKNOWN_KEY)
        return unknown

    def check_written(
        self,
        api: TypeChecker,
        values: list[sites.Value],
        root: str,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        *,
        updates: bool,
        dotted: bool = False,
        declared: dict[str, list[Type]] | None = None,
        located: Located | None = None,
    ) -> set[str]:
        """Check the values written under ``root``, each reported where it is written. ``updates``:
        the value at ``root`` updates the channels key by key (a ``Command.update``, a graph's input,
        what a node returns), rather than being stored whole; ``dotted`` shows a node's keys as
        ``node().key`` (``bodies.dotted``); ``declared``: the channels' declared types, whose
        problems a value restates (``repeats``); ``located``: where a value read from a summary is
        reported, and who declares it (``Located``). Returns the paths of the values it reported."""
        special = self._graphs.special_keys(api, schemas)
        messages = self._graphs.messages_channels(schemas) | special.messages
        reduced = self._graphs.reduced_keys(api, schemas) if updates else frozenset()
        reported: set[str] = set()
        for value in values:
            if sites.is_unchecked(value.type) or sites.is_control_object(value.type):
                continue
            place = repeats.channel_of(value.path, root)
            if (
                declared
                and place is not None
                and place[1] == ""
                and repeats.restates_channel(place[0], value.type, declared)
            ):
                continue
            if updates and place is not None and place[0] in special.messages:
                # add_messages stores messages, whatever it takes; what it does not take is the
                # channel-type check's.
                continue
            if (
                place is not None
                and place[0] in messages
                and sites.is_message_like(value.shown or value.type)
            ):
                continue
            schema = sites.channels_schema(value, root) if updates else None
            if schema is not None and root in sites.START_ROOTS:
                start = self._walker.start_input(value.type, value.path)
                self._emit(api, start, value.expr, at_fields=False, allowed=allowed)
            if schema is not None and schema in schemas:
                continue
            if schema is not None:
                # A model or dataclass whose fields update the channels is graph state itself:
                # its fields' problems are its own, reported as a state class's (once per file).
                state = self._walker.check_state_class(schema)
                if any(problem.code is not codes.ANY for problem in state.problems):
                    reported.add(value.path)
                self._emit(api, state, value.expr, allowed=allowed)
                continue
            if updates and sites.is_schema_instance(value, root, schemas):
                continue
            else:
                channel = updates and sites.is_channel_value(value, root)
                findings = self._walker.check_value(value.type, value.path, channel=channel)
            if value.shown is not None:
                findings = naming(findings, value.path, self._walker.type_name(value.shown))
            if declared:
                findings = repeats.added(self._walker, findings, root, declared, schemas)
            if updates and place is not None and place[1] == "" and place[0] in reduced:
                # A reducer gets the value, and stores what it returns: what it takes is the
                # channel-type check's.
                findings = findings._replace(
                    problems=tuple(p for p in findings.problems if p.path != value.path)
                )
            if dotted:
                findings = repathed(findings, lambda path: bodies.dotted(path, root))
            if any(problem.code is not codes.ANY for problem in findings.problems):
                reported.add(value.path)
            if located is None:
                self._emit(api, findings, value.expr, at_fields=False, allowed=allowed)
                continue
            context, where = located.place(value.expr.line)
            self._emit(
                api, findings, context, at_fields=False, allowed=allowed, where=where,
                once_per_file=(root, located.declarer),
            )
        return reported

    def check_channel_types(
        self,
        api: TypeChecker,
        writer: str,
        items: list[tuple[str, Expression]],
        schemas: tuple[TypeInfo, ...],
        root: str,
        reported: set[str],
        type_of: Callable[[Expression], Type | None] | None = None,
        located: Located | None = None,
        *,
        scope: Scope | None = None,
    ) -> None:
        """``lgstate-channel-type``: each written item against what its channel accepts. An item
        the serializer check already reported (``reported``: paths under ``root``) is not reported
        again: its fix (a list for a tuple, an ISO string for a datetime) is the channel's type.
        ``type_of``: where the items' types are read (the checker's type map by default);
        ``located``: where an item read from a summary is reported (``Located``); ``scope``: where
        the items are written, whose locals may hold literals (none for an item of a summary)."""
        if not schemas or not items:
            return
        accepting = self._graphs.accepting(api, schemas)

        def literals(name: NameExpr) -> frozenset[str] | None:
            return displays.literal_assignments(name, scope) if scope is not None else None

        def structured(expr: Expression) -> TypeInfo | None:
            return structured_output.structured_schema(expr, scope) if scope is not None else None

        for key, expr in items:
            top = root + key_part(key)
            if any(path == top or path.startswith((top + "[", top + "{")) for path in reported):
                continue
            named = writer
            if located is not None:
                context, where = located.place(expr.line)
                if where is not None:
                    named = f"{writer} ({where})"
            message = channels.mismatch(
                named, key, expr, accepting.get(key), type_of or api.lookup_type_or_none,
                self._walker.type_name, json_profile=self._walker.profile == "json",
                literals=literals, structured=structured,
            )
            if message is None:
                continue
            if located is None:
                fail(api, message, expr, codes.CHANNEL_TYPE)
            else:
                identity = ("channel type", located.declarer, key, schemas)
                once(api, identity, message, context, codes.CHANNEL_TYPE, declared=None, written=where)
