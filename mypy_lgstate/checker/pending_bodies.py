"""The node bodies the checks read once their module is checked (docs/design.md, "Node bodies"):
what each is checked with (``Body``), and those waiting for the end of their module (``Pending``).
What a body returns is read by ``routes/bodies.py``; here is only when, and with what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import Context, FuncDef, MypyFile, TypeInfo
from mypy.types import Type

if TYPE_CHECKING:
    from mypy_lgstate.routes.coverage_records import NodeRecord
    from mypy_lgstate.routes.summary_values import Reached


class Body(NamedTuple):
    """A node whose body is read once its module is checked: what it is checked with."""

    api: TypeChecker
    function: FuncDef
    context: Context  # the call that registers the node
    label: str  # the node's name in the graph, for lgstate-untyped-node
    # Its declared return type, named in the same message (formatted only if it is given: a type's
    # name costs mypy's formatter, and its garbage, at every node).
    returns: Type | None
    channels: tuple[frozenset[str], str] | None
    schemas: tuple[TypeInfo, ...]
    allowed: frozenset[str] | None
    whole: bool = False  # a functional-API function: its returned value is checkpointed as it is
    coverage: NodeRecord | None = None  # tells lgstate report whether the body was read
    # What the calls it returns write, read from their summaries where the node is registered.
    reached: Reached | None = None
    typed_any: int = 0  # values typed Any among those


class Pending:
    """The node bodies to read once their module is checked, by module; in the daemon, also every
    body seen, by function, for the checks of a display mypy rechecks alone
    (``bodies.returned_display``)."""

    def __init__(self, *, daemon: bool) -> None:
        self._daemon = daemon
        self._by_module: dict[str, list[Body]] = {}
        self._known: dict[str, Body] = {}

    def add(self, body: Body) -> None:
        self._by_module.setdefault(body.api.tree.fullname, []).append(body)
        self.know(body)

    def know(self, body: Body) -> None:
        """In the daemon, remember ``body`` for the checks of a display mypy rechecks alone."""
        if self._daemon:
            self._known[body.function.fullname] = body

    def finished(self, file: MypyFile) -> tuple[list[Body], set[str]]:
        """The bodies to read now that ``file`` is checked, and the fullnames of every function the
        module registered as a node. In the daemon, a recheck of the module's top level alone
        registers nodes without this moment following: only the ones registered by the module's
        current checker are read."""
        pending = self._by_module.pop(file.fullname, [])
        current = pending[-1].api if pending else None
        registered = {body.function.fullname for body in pending}
        return [body for body in pending if body.api is current and body.api.tree is file], registered

    def being_checked(self, api: object) -> Body | None:
        """The known node body mypy is checking (the daemon)."""
        if not self._known or not isinstance(api, TypeChecker):
            return None
        function = api.scope.current_function()
        if not isinstance(function, FuncDef):
            return None
        body = self._known.get(function.fullname)
        return body if body is not None and body.function is function else None
