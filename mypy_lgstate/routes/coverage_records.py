"""What the coverage of a run says: the records of its graphs, their nodes and its write sites
(``coverage.CoverageRecorder`` makes them as the checks run), the coverage line of ``lgstate check``
and ``--fail-under``, and the record the checks keep of a node they read from its body.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mypy_lgstate.routes.node_status import DECLARE, NOT_CHECKED, NodeStatus


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
        self,
        declared_at: Location | None,
        schemas: tuple[Schema, ...],
        channels: tuple[str, ...],
        title: str | None = None,
        *,
        state_unknown: str | None = None,
        agent: bool = False,
    ) -> None:
        self.declared_at = declared_at  # None: a builder from elsewhere (a factory, a parameter)
        self.schemas = schemas
        self.channels = channels
        self.title = title  # what names a graph of the functional API (no state schema does)
        self.nodes: dict[tuple[Location, str], NodeCoverage] = {}
        # Why part of the graph is not known (a middleware list built in another module).
        self.unresolved: list[str] = []
        # Why its state is not known (a type variable): its nodes' keys cannot be checked.
        self.state_unknown = state_unknown
        self.agent = agent  # a ``create_agent(...)`` graph

    @property
    def state(self) -> str | None:
        # A graph of the functional API has none: its schemas are its values' classes.
        return self.schemas[0].fullname if self.schemas and self.title is None else None

    def count(self, status: NodeStatus) -> int:
        return sum(node.status == status for node in self.nodes.values())

    def checked(self) -> int:
        """Nodes whose writes are checked, from their declared types or from their bodies (none of
        a graph whose state is not known: their keys are not)."""
        if self.state_unknown is not None:
            return 0
        return self.count("checked") + self.count("body")

    def sort_key(self) -> tuple[Location, str]:
        first = self.declared_at or min(
            (node.location for node in self.nodes.values()), default=Location("", 0)
        )
        return first, self.state or ""


class Coverage(NamedTuple):
    """The nodes of a run: how many, how many checked (from their bodies among them), and the
    others by category (keys of ``NOT_CHECKED``)."""

    nodes: int
    checked: int
    from_bodies: int
    not_checked: dict[str, int]
    values_typed_any: int  # in the bodies read
    # Nodes of graphs whose state is not known (a type variable): counted apart, their keys unread.
    unknown_state: int = 0

    def percent(self) -> float:
        """The share of nodes checked, the nodes of graphs of unknown state counted as not
        checked (their keys are not); 100 with no node at all, as coverage.py counts a run with no
        statement (nothing to check is not a gap)."""
        every = self.nodes + self.unknown_state
        return 100.0 * self.checked / every if every else 100.0

    def line(self) -> str:
        """``nodes checked 7/8 (from bodies 2); not checked: 1 defined in another module; see
        lgstate report``."""
        line = f"nodes checked {self.checked}/{self.nodes} (from bodies {self.from_bodies})"
        if self.unknown_state:
            line += (
                f"; {plural(self.unknown_state, 'node')} of graphs whose state is not known"
                " (a type variable), counted apart"
            )
        if not self.not_checked:
            return line if not self.unknown_state else f"{line}; see lgstate report"
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
            **({"unknown_state": self.unknown_state} if self.unknown_state else {}),
            "summary": self.line(),
        }


class NodeRecord:
    """A node the checks read from its body, here once its module is checked or from summaries:
    they say whether they read it (``read``) or why not (``not_read``). Until then it is
    unchecked."""

    def __init__(
        self,
        nodes: dict[tuple[Location, str], NodeCoverage],
        key: tuple[Location, str],
        declared: str,
        through: str = "",
        where: str = "",
    ) -> None:
        self._nodes = nodes
        self._key = key
        self._declared = declared
        self._through = through  # " (decorated with @traced, ...)", or ""
        self._where = where  # ", in app/nodes.py, through helper() in app/helpers.py", or ""
        nodes[key] = nodes[key]._replace(
            status="unchecked",
            reason=f"{declared}, and its body was not read{through}",
            category="unread",
        )

    def read(self, any_values: int = 0) -> None:
        """The body's returned values were checked; ``any_values`` of them are typed ``Any``, which
        the checks trust (``lgstate-any`` reports them when it is enabled)."""
        typed_any = f", {plural(any_values, 'value')} typed Any" if any_values else ""
        self._nodes[self._key] = self._nodes[self._key]._replace(
            status="body",
            reason=f"read from its body{self._where}{typed_any}{self._through}",
            category=None,
            any_values=any_values,
        )

    def not_read(self, why: str) -> None:
        """The body does not tell all the node returns: ``why``."""
        inferred = "inference" in why
        fix = (
            "declare the types of the values it writes" if inferred
            else f'return a dict display ({{"key": value}}) or {DECLARE}'
        )
        where = self._where.removeprefix(",")
        reason = f"{self._declared}, and its body{where} is not read whole: {why}: {fix}{self._through}"
        self._nodes[self._key] = self._nodes[self._key]._replace(
            status="unchecked",
            reason=reason,
            category="inferred" if inferred else "built elsewhere",
        )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
