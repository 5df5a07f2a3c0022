"""One checkpoint against today's graph: each stored channel value, each pending write, and each
channel the state requires.

LangGraph's own channels (``__start__``, ``__pregel_tasks``, ``branch:to:node``...) are not the
application's state and are not checked. A checkpoint of a subgraph (``checkpoint_ns``
``"node:<task id>"``) is checked against that node's subgraph.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Collection, Iterable
from typing import Any

from mypy_lgstate.core.messages import key_part
from mypy_lgstate.runtime.audit import stored as stored_bytes
from mypy_lgstate.runtime.audit import wording
from mypy_lgstate.runtime.audit.conformance import CLASS, Mismatch, Node
from mypy_lgstate.runtime.audit.graphs import GraphSpec
from mypy_lgstate.runtime.audit.problems import Finding
from mypy_lgstate.runtime.audit.stores import AuditSerde, Unreadable

CHECKPOINT = "(checkpoint)"  # the channel a finding about the whole checkpoint names
START = "__start__"  # the graph's input, before it is applied


def is_internal(channel: str) -> bool:
    """LangGraph's bookkeeping channels: ``__start__``, ``branch:to:node``, ``join:...``."""
    return channel.startswith("__") or ":" in channel


class Auditor:
    def __init__(
        self,
        graphs: list[GraphSpec],
        serde: AuditSerde,
        allowed: Collection[tuple[str, ...]] | None,
        *,
        inline_primitives: bool = False,
    ) -> None:
        self.graphs = graphs
        self.inline_primitives = inline_primitives  # PostgresSaver: plain values are stored as JSON
        self.serde = serde
        self.allowed = allowed  # the strict allowlist, None when permissive
        self._decoded: dict[int, Any] = {}
        self._sources: dict[type, tuple[str, int] | None] = {}
        self._state: type | None = None  # the state schema of the checkpoint being audited

    def graph_for(self, checkpoint_ns: str, channels: Iterable[str]) -> GraphSpec | None:
        if checkpoint_ns:
            node_path = "|".join(part.partition(":")[0] for part in checkpoint_ns.split("|"))
            for graph in self.graphs:
                found = graph.subgraphs.get(node_path)
                if found is not None:
                    return found
            return None
        if len(self.graphs) == 1:
            return self.graphs[0]
        names = {name for name in channels if not is_internal(name)}
        return max(self.graphs, key=lambda graph: len(names & graph.channels.keys()))

    def audit(self, checkpoint_tuple: Any) -> list[tuple[Finding, str]] | None:
        """The findings of one checkpoint, each with its exact path; ``None`` when no graph given
        has its namespace (a subgraph no ``--graph`` reaches)."""
        self._decoded.clear()
        try:
            return self._audit(checkpoint_tuple)
        finally:
            self.serde.forget()
            self._decoded.clear()

    def _audit(self, checkpoint_tuple: Any) -> list[tuple[Finding, str]] | None:
        checkpoint = checkpoint_tuple.checkpoint
        ns = checkpoint_tuple.config["configurable"].get("checkpoint_ns", "")
        found: list[tuple[Finding, str]] = []
        if isinstance(checkpoint, Unreadable):
            message = wording.unreadable(CHECKPOINT, checkpoint.error)
            found.append((Finding(wording.UNREADABLE, CHECKPOINT, CHECKPOINT, message), CHECKPOINT))
            return found
        values: dict[str, Any] = checkpoint.get("channel_values") or {}
        writes = checkpoint_tuple.pending_writes or ()
        start = values.get(START)
        graph = self.graph_for(
            ns, [*values, *(write[1] for write in writes), *(start if isinstance(start, dict) else ())]
        )
        if graph is None:
            return None
        self._state = graph.state
        state = graph.state.__name__ if graph.state is not None else "the graph's state"
        checked = {name: value for name, value in values.items() if not is_internal(name)}
        if graph.state_kind == "pydantic model" and START not in values:
            self._pydantic_state(graph, state, checked, found)
        elif START not in values:  # else the input is still to be applied: the state is not built
            for name in sorted(graph.required - checked.keys()):
                place = wording.Place(name, state, graph.state_kind, write=False)
                path = key_part(name)
                found.append((
                    Finding(
                        wording.MISSING, name, path, wording.missing_channel(path, place),
                        self._source(None),
                    ),
                    path,
                ))
        for name, value in checked.items():
            place = wording.Place(name, state, graph.state_kind, write=False)
            spec = graph.channels.get(name)
            if spec is None:
                self._dropped(name, place, found)
            else:
                self._value(spec.value, value, place, checkpoint, found)
        if isinstance(start, dict):  # the graph's input, applied to its channels on resume
            for name, value in start.items():
                spec = graph.channels.get(name) if isinstance(name, str) else None
                if spec is not None:
                    place = wording.Place(name, state, graph.state_kind, write=True)
                    self._value(spec.write, value, place, checkpoint, found, inside=(START, name))
        for _, name, value in writes:
            if is_internal(name) and not isinstance(value, Unreadable):
                continue
            place = wording.Place(name, state, graph.state_kind, write=True)
            spec = graph.channels.get(name)
            if spec is None and not isinstance(value, Unreadable):
                self._dropped(name, place, found)
            elif spec is not None:
                self._value(spec.write, value, place, None, found)
            else:
                self._value(None, value, place, None, found)
        return found

    def _pydantic_state(
        self,
        graph: GraphSpec,
        state: str,
        values: dict[str, Any],
        found: list[tuple[Finding, str]],
    ) -> None:
        """LangGraph validates a pydantic state (``State(**values)``) before each node: a value
        that does not validate raises there, and one that does (a dict where a model is declared)
        is what the node gets. Channels the state does not declare are checked one by one."""
        assert graph.state is not None
        fields = graph.state.__pydantic_fields__  # type: ignore[attr-defined]
        own = {name: value for name, value in values.items() if name in fields}
        if any(isinstance(value, Unreadable) for value in own.values()):
            return  # reported below, value by value
        try:
            validated = graph.state.__pydantic_validator__.validate_python(own)  # type: ignore[attr-defined]
        except Exception as error:
            errors = getattr(error, "errors", None)
            for problem in errors() if callable(errors) else ():
                loc = problem.get("loc") or ()
                if not loc or not isinstance(loc[0], str):
                    continue
                name = loc[0]
                place = wording.Place(name, state, graph.state_kind, write=False)
                path = key_part(name)
                if problem.get("type") == "missing" and len(loc) == 1:
                    message = wording.missing_channel(path, place)
                    kind = wording.MISSING
                else:
                    declared = fields[name].annotation if name in fields else None
                    mismatch = Mismatch(
                        "", "", wording.TYPE, declared, state,
                        type(own.get(name)).__name__, (), own.get(name),
                    )
                    kind, message = wording.mismatch(path, mismatch, place)
                found.append((Finding(kind, name, path, message, self._source(None)), path))
            for name in own:
                values.pop(name, None)
            return
        for name in own:  # what the nodes get: check inside it (models kept unvalidated)
            values[name] = getattr(validated, name, values[name])

    def _dropped(self, name: str, place: wording.Place, found: list[tuple[Finding, str]]) -> None:
        path = key_part(name)
        message = wording.dropped(path, place)
        found.append((Finding(wording.DROPPED, name, path, message, self._source(None)), path))

    def _value(
        self,
        node: Node | None,
        value: Any,
        place: wording.Place,
        checkpoint: Any,
        found: list[tuple[Finding, str]],
        inside: tuple[str, str] | None = None,
    ) -> None:
        """``inside``: the value is an item of a channel's value (the input's key), not one."""
        if isinstance(value, Unreadable):
            root = key_part(place.channel)
            message = wording.unreadable(root, value.error)
            found.append((Finding(wording.UNREADABLE, place.channel, root, message), root))
            return
        if node is None:
            return
        mismatches: list[Mismatch] = []
        node.check(value, None, mismatches, 0)
        root = key_part(place.channel) if mismatches else ""
        for mismatch in mismatches:
            pattern = root + mismatch.pattern
            if mismatch.kind == CLASS:
                holder = self._stored(value, checkpoint, *(inside or (place.channel,)))
                stored = stored_bytes.find(holder, mismatch.segments)
                explained = stored_bytes.explain(stored, self.allowed, mismatch.value)
                if (
                    explained.why == stored_bytes.UNKNOWN
                    and self.inline_primitives
                    and not mismatch.segments
                    and isinstance(mismatch.value, (str, int, float, bool))
                ):
                    explained = stored_bytes.Explanation(stored_bytes.INLINE, None, value=mismatch.value)
                kind, message = wording.class_mismatch(pattern, mismatch, explained, place)
            else:
                kind, message = wording.mismatch(pattern, mismatch, place)
            source = self._source(mismatch.declared if mismatch.owner or mismatch.kind == CLASS else None)
            found.append((Finding(kind, place.channel, pattern, message, source), root + mismatch.path))

    def _source(self, cls: Any) -> tuple[str, int] | None:
        """Where ``cls`` (else the state schema) is defined, for SARIF."""
        cls = cls if isinstance(cls, type) else self._state
        if cls is None:
            return None
        if cls not in self._sources:
            try:
                file = inspect.getsourcefile(cls)
                line = inspect.getsourcelines(cls)[1]
            except (OSError, TypeError):
                self._sources[cls] = None
            else:
                self._sources[cls] = (os.path.relpath(file), line) if file else None
        return self._sources[cls]

    def _stored(self, value: Any, checkpoint: Any, *keys: str) -> Any:
        """The stored form of a channel's value (or write): its own bytes, or the checkpoint's
        (``keys``: where in its channel values)."""
        steps = (("k", "channel_values"), *(("k", key) for key in keys))
        for holder, inside in ((value, ()), (checkpoint, steps)):
            if holder is None:
                continue
            decoded = self._decoded.get(id(holder))
            if decoded is None:
                data = self.serde.bytes_of(holder)
                if data is None:
                    continue
                decoded = self._decoded[id(holder)] = stored_bytes.decode_stored(data, self.serde.cipher)
            return stored_bytes.find(decoded, inside)
        return stored_bytes.NOT_FOUND
