"""The checks of what a node writes through the functions that build its update, read from their
summaries (``routes/reach.py``): a node of another module, the helpers a node's ``return`` calls
(``return await helper(state)``), the closure a wrapper or a factory makes. Each item is judged as an
item of a body read here is: its key against the graph's channels, its value by the profile's
rules and against what its channel accepts (``writes``).

Where it is reported (docs/checks.md, "Where errors are reported"): an item of a function of the
file being checked on its own line; an item of another file at the call that registers the node,
naming the item's ``file:line``, since mypy reports into the file it checks. A problem is identified
by the function that writes it and its path there: one file reports it once, however many nodes or
registrations reach it, and ``lgstate check`` once for the run, with the item's place attached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    Context,
    Decorator,
    Expression,
    FuncDef,
    MypyFile,
    RefExpr,
    SymbolNode,
    TypeInfo,
)
from mypy.types import AnyType, Instance, Type

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.emit import Emitter
from mypy_lgstate.checker.findings import Findings
from mypy_lgstate.checker.graphs import Graphs
from mypy_lgstate.checker.report import once
from mypy_lgstate.core import write_messages
from mypy_lgstate.core.messages import key_part
from mypy_lgstate.routes import bodies, discovery, exported, reach, sites, summary_values
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.summaries import Summary

# The identity of a key a node returns that is no channel of its graph's state (``report.once``).
UNKNOWN_KEY = "unknown key"


class Located(NamedTuple):
    """Where the values of an update read from a summary are reported: on their own line when the
    function that writes them is in the file being checked, else at the call that registers the
    node, naming their ``file:line``; and the function that writes them, which identifies each
    problem (reported once per file)."""

    registration: Context
    path: str | None  # the file of the function that writes them; ``None``: this file
    declarer: str

    def place(self, line: int) -> tuple[Context, str | None]:
        if self.path is None:
            return Context(line=line), None
        return self.registration, f"{self.path}:{line}"


class WriteChecks(Protocol):
    """What these checks share with the other checks of writes (``writes.Writes``)."""

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
    ) -> set[str]: ...

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
    ) -> None: ...

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
    ) -> None: ...


class Followed:
    """Follows and judges node updates through summaries, for one plugin object."""

    def __init__(
        self,
        lookup: Callable[[str], SymbolNode | None],
        records: exported.Records,
        emit: Emitter,
        graphs: Graphs,
    ) -> None:
        self._lookup = lookup
        self._records = records
        self._emit = emit
        self._graphs = graphs
        self._followers: dict[str, tuple[MypyFile, reach.Follower]] = {}

    def forget(self) -> None:
        self._followers.clear()

    def _follower(self, api: TypeChecker) -> reach.Follower:
        tree = api.tree
        known = self._followers.get(tree.fullname)
        if known is None or known[0] is not tree:
            errors = api.msg.errors
            modules = api.modules

            def path_of(module: str) -> str:
                file = modules.get(module)
                return errors.simplify_path(file.path) if file is not None else module

            known = self._followers[tree.fullname] = (
                tree, reach.Follower(self._lookup, self._records, tree, modules, path_of)
            )
        return known[1]

    def summary(self, api: TypeChecker, defn: FuncDef) -> Summary | None:
        """The summary of ``defn``, recorded as read by this check."""
        reads: set[tuple[str, str]] = set()
        found = self._follower(api).summary(defn, reads)
        self._emit.record_reads(api, Findings(touched=frozenset(reads)))
        return found

    def through_wrapper(self, api: TypeChecker, node: sites.Node) -> bool:
        """Whether ``node`` is registered through a wrapper whose body can be read (what it
        returns, not the function it wraps, is then what the node writes)."""
        wrapper = _wrapper(node.wrapper)
        return wrapper is not None and self._follower(api).has_summary(wrapper[0])

    def follow(
        self,
        api: TypeChecker,
        node: sites.Node,
        schemas: tuple[TypeInfo, ...],
        *,
        own_items: bool,
    ) -> summary_values.Reached | None:
        """What ``node`` writes, read from the summaries of the functions that build it; ``None``
        when no function of it is known (a lambda, a ``functools.partial``, a value typed Any).
        ``own_items``: whether the node function's own items are read from its summary (else its
        body is read with mypy's types, in this module)."""
        follower = self._follower(api)
        state = discovery.schema_type(schemas[0]) if schemas else None
        defn = bodies.definition(node)
        skip = None if own_items else defn
        wrapper = _wrapper(node.wrapper)
        if wrapper is not None:
            function, arguments = wrapper
            if follower.has_summary(function):
                return follower.wrapped(function, arguments, state, skip=skip)
        if defn is None:
            return None
        return follower.node(defn, state, skip=skip)

    def check(
        self,
        api: TypeChecker,
        context: Context,
        node_name: str,
        reached: summary_values.Reached,
        channels: tuple[frozenset[str], str] | None,
        schemas: tuple[TypeInfo, ...],
        allowed: frozenset[str] | None,
        writes: WriteChecks,
        *,
        values: bool,
        exempt: frozenset[str] = frozenset(),
    ) -> int:
        """Judge what ``reached`` found: the keys against ``channels`` (``exempt``: keys mypy itself
        reports), and, with ``values``, each value and what its channel accepts; the declared update
        types of the helpers it reached. Returns how many values are typed ``Any``."""
        self._emit.record_reads(api, Findings(touched=frozenset(reached.reads)))
        names, state = channels if channels is not None else (None, "")
        dropped: dict[str, set[str]] = {}
        for item in reached.items:
            if item.key is None or names is None or item.key in names or item.key in exempt:
                continue
            dropped.setdefault(item.origin.function, set()).add(item.key)
            located = Located(context, item.origin.path, item.origin.function)
            where_context, where = located.place(item.key_line)
            message = write_messages.unknown_body_key_message(node_name, item.key, state, where)
            identity = (UNKNOWN_KEY, item.origin.function, item.key, state)
            once(api, identity, message, where_context, codes.UNKNOWN_KEY, declared=None, written=where)
        for key, line, origin in reached.commands:
            if names is None or key in names:
                continue
            located = Located(context, origin.path, origin.function)
            where_context, where = located.place(line)
            message = write_messages.unknown_command_key_message(origin.name, key, state, where)
            identity = (UNKNOWN_KEY, origin.function, key, state)
            once(api, identity, message, where_context, codes.UNKNOWN_KEY, declared=None, written=where)
        if not values:
            return 0
        for typ, origin in reached.declared:
            writes.check_declared(
                api, context, origin.name, origin.function, typ, channels, schemas, allowed
            )
        untracked = set(self._graphs.special_keys(api, schemas).untracked)
        declared = self._graphs.declared_types(schemas)
        typer = reached.typer
        typed_any = 0
        for item in reached.items:
            origin = item.origin
            skipped = dropped.get(origin.function, set()) | untracked
            if item.key is not None and item.key in skipped:
                continue
            root = f"{origin.name}()"
            path = root + (key_part(item.key) if item.key is not None else "{**}")
            found = list(sites.values_of(item.value, path, typer))
            typed_any += sum(is_typed_any(value) for value in found)
            located = Located(context, origin.path, origin.function)
            reported = writes.check_written(
                api, found, root, schemas, allowed, updates=True, dotted=True, declared=declared,
                located=located,
            )
            if item.key is not None:
                writes.check_channel_types(
                    api, f'Node "{origin.name}"', [(item.key, item.value)], schemas, root, reported,
                    typer.lookup_type_or_none, located,
                )
        return typed_any


def is_typed_any(value: sites.Value) -> bool:
    """A value the checks trust: typed ``Any``, or a ``{**x}`` spread of a ``dict[str, Any]``
    (its keys and values are all unknown)."""
    proper = proper_type(value.type)
    if isinstance(proper, AnyType):
        return True
    return (
        value.path.endswith("{**}")
        and isinstance(proper, Instance)
        and proper.type.fullname in sites.MAPPINGS
        and len(proper.args) == 2
        and isinstance(proper_type(proper.args[1]), AnyType)
    )


def _wrapper(expr: Expression | None) -> tuple[FuncDef, list[FuncDef | None]] | None:
    """The wrapper function of a node registered through one (``traced(fn)``, ``@traced``), with
    the functions it is given, by position."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        function = _function(expr.callee.node)
        if function is None:
            return None
        arguments = [
            _function(arg.node) if isinstance(arg, RefExpr) else None for arg in expr.args
        ]
        return function, arguments
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        decorators = expr.node.original_decorators or expr.node.decorators
        decorator = decorators[0] if decorators else None
        function = _function(decorator.node) if isinstance(decorator, RefExpr) else None
        return (function, [expr.node.func]) if function is not None else None
    return None


def _function(node: SymbolNode | None) -> FuncDef | None:
    if isinstance(node, Decorator):
        node = node.func
    return node if isinstance(node, FuncDef) else None
