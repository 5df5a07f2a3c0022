"""One checkpoint against today's graph: each stored channel value, each pending write, and each
channel the state requires.

LangGraph's own channels (``__start__``, ``__pregel_tasks``, ``branch:to:node``...) are not the
application's state and are not checked. A checkpoint of a subgraph (``checkpoint_ns``
``"node:<task id>"``) is checked against that node's subgraph.
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Collection, Iterable
from typing import Any

from mypy_lgstate.runtime.audit import stored as stored_bytes
from mypy_lgstate.runtime.audit import wording
from mypy_lgstate.runtime.audit.conformance import (
    CLASS,
    MISSING,
    ClassNode,
    Mismatch,
    Node,
    format_steps,
)
from mypy_lgstate.runtime.audit.graphs import (
    NO_VALUE,
    GraphSpec,
    apply_write,
    error_line,
    reducer_name,
)
from mypy_lgstate.runtime.audit.problems import Finding, of_class
from mypy_lgstate.runtime.audit.stores import AuditSerde, Unreadable

CHECKPOINT = "(checkpoint)"  # the channel a finding about the whole checkpoint names
START = "__start__"  # the graph's input, before it is applied
_INVALID = object()  # a written value that does not validate (reported)


def is_internal(channel: str) -> bool:
    """LangGraph's bookkeeping channels: ``__start__``, ``branch:to:node``, ``join:...``."""
    return channel.startswith("__") or ":" in channel


def _empty_values(graph: GraphSpec) -> dict[str, Any]:
    """What the reducers' channels hold before any write (LangGraph builds the state with it)."""
    return {
        name: copy.copy(spec.empty) for name, spec in graph.channels.items()
        if spec.empty is not NO_VALUE
    }


def _place(graph: GraphSpec, name: str, state: str, *, write: bool) -> wording.Place:
    spec = graph.channels.get(name)
    return wording.Place(name, state, graph.state_kind, write=write, shown=spec.shown if spec else "")


class ThreadGraph:
    """The graph one thread's checkpoints (of one namespace) are audited against: chosen once,
    from its first checkpoint read, the latest, which names most of the nodes that ran; its
    early checkpoints (the input alone) could be any graph's."""

    __slots__ = ("graph", "chosen")

    def __init__(self) -> None:
        self.graph: GraphSpec | None = None
        self.chosen = False


def evidence(checkpoint: Any, writes: Iterable[Any]) -> tuple[set[str], set[str]]:
    """The channels and the nodes a checkpoint names: its channel values, pending writes and
    input keys; the nodes it has run (``versions_seen``) or is to run (``branch:to:node``)."""
    values = checkpoint.get("channel_values") or {}
    start = values.get(START)
    names = [*values, *(write[1] for write in writes), *(start if isinstance(start, dict) else ())]
    channels = {name for name in names if isinstance(name, str) and not is_internal(name)}
    nodes = {name for name in checkpoint.get("versions_seen") or {} if not name.startswith("__")}
    for name in [*(checkpoint.get("channel_versions") or {}), *values]:
        if isinstance(name, str) and name.startswith("branch:to:"):
            nodes.add(name[len("branch:to:"):])
    return channels, nodes


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

    def graph_for(self, checkpoint_ns: str, channels: set[str], nodes: set[str]) -> GraphSpec | None:
        """The graph (or subgraph, for a subgraph's namespace) whose channels and nodes the
        checkpoint names most; of equals, the one with the fewest it does not name, then by its
        ``--graph`` label: never the order of the options."""
        if checkpoint_ns:
            node_path = "|".join(part.partition(":")[0] for part in checkpoint_ns.split("|"))
            candidates = [
                graph.subgraphs[node_path] for graph in self.graphs if node_path in graph.subgraphs
            ]
        else:
            candidates = self.graphs
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        named = channels | nodes

        def score(graph: GraphSpec) -> tuple[int, int, str]:
            own = graph.channels.keys() | graph.nodes
            return (len(named & own), -len(own - named), graph.label)

        return max(candidates, key=score)

    def audit(self, checkpoint_tuple: Any, thread: ThreadGraph) -> list[tuple[Finding, str]] | None:
        """The findings of one checkpoint, each with its exact path; ``None`` when no graph given
        has its namespace (a subgraph no ``--graph`` reaches). ``thread``: the graph of its
        thread, chosen by the first checkpoint read."""
        self._decoded.clear()
        try:
            return self._audit(checkpoint_tuple, thread)
        finally:
            self.serde.forget()
            self._decoded.clear()

    def _audit(self, checkpoint_tuple: Any, thread: ThreadGraph) -> list[tuple[Finding, str]] | None:
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
        if not thread.chosen:
            thread.graph = self.graph_for(ns, *evidence(checkpoint, writes))
            thread.chosen = True
        graph = thread.graph
        if graph is None:
            return None
        self._state = graph.state
        state = graph.state.__name__ if graph.state is not None else graph.declarer
        # The functional API's channels are LangGraph's own (its input, the value saved for
        # ``previous``): today's graph declares them.
        checked = {
            name: value for name, value in values.items()
            if name in graph.channels or not is_internal(name)
        }
        if graph.state_kind == "pydantic model" and START not in values:
            self._pydantic_state(graph, state, checked, found)
        elif START not in values:  # else the input is still to be applied: the state is not built
            for name in sorted(graph.required - checked.keys()):
                place = _place(graph, name, state, write=False)
                path = place.root
                found.append((
                    Finding(
                        wording.MISSING, name, path, wording.missing_channel(path, place),
                        self._source(None),
                    ),
                    path,
                ))
        for name, value in checked.items():
            place = _place(graph, name, state, write=False)
            spec = graph.channels.get(name)
            if spec is None:
                self._dropped(name, place, found)
            else:
                self._value(spec.value, value, place, checkpoint, found)
        if isinstance(start, dict):  # the graph's input, applied to its channels on resume
            for name, value in start.items():
                if isinstance(name, str) and name in graph.channels:
                    place = _place(graph, name, state, write=True)
                    self._write(graph, values, value, place, checkpoint, found, (START, name))
        for _, name, value in writes:
            if is_internal(name) and not isinstance(value, Unreadable):
                continue
            place = _place(graph, name, state, write=True)
            if name in graph.channels:
                self._write(graph, values, value, place, None, found)
            elif not isinstance(value, Unreadable):
                self._dropped(name, place, found)
            else:
                self._value(None, value, place, None, found)
        return found

    def _write(
        self,
        graph: GraphSpec,
        values: dict[str, Any],
        value: Any,
        place: wording.Place,
        checkpoint: Any,
        found: list[tuple[Finding, str]],
        inside: tuple[str, str] | None = None,
    ) -> None:
        """A write to a channel (a pending write, an item of the graph's input), as resuming the
        thread applies it: through the channel's reducer when the reducer declares nothing of
        what it takes (what applying it gives is then the channel's value), and, in a pydantic
        state, validated as LangGraph validates the state before the next node."""
        spec = graph.channels[place.channel]
        node = spec.write
        if spec.reducer is not None and not isinstance(value, Unreadable):
            try:
                value = apply_write(spec.reducer, value)
            except Exception as error:
                root = place.root
                message = wording.rejected_write(root, reducer_name(spec.reducer), error_line(error))
                found.append((Finding(wording.TYPE, place.channel, root, message, self._source(None)), root))
                return
            node, checkpoint, inside = spec.value, None, None
        if (
            graph.state_kind == "pydantic model"
            and node is spec.value
            and not isinstance(value, Unreadable)
        ):
            validated = self._validated_field(graph, values, place, value, found)
            if validated is _INVALID:
                return
            value, checkpoint, inside = validated, None, None
        self._value(node, value, place, checkpoint, found, inside)

    def _validated_field(
        self,
        graph: GraphSpec,
        values: dict[str, Any],
        place: wording.Place,
        value: Any,
        found: list[tuple[Finding, str]],
    ) -> Any:
        """A written value of a pydantic state's field, validated as that field (``_INVALID``,
        reported, when it does not validate)."""
        assert graph.state is not None and isinstance(graph.state_node, ClassNode)
        state = graph.state
        fields = state.__pydantic_fields__  # type: ignore[attr-defined]
        if place.channel not in fields:
            return value
        stored = {
            name: held for name, held in {**_empty_values(graph), **values}.items()
            if name in fields and not isinstance(held, Unreadable)
        }
        try:
            instance = state.model_construct(**stored)  # type: ignore[attr-defined]
            state.__pydantic_validator__.validate_assignment(instance, place.channel, value)  # type: ignore[attr-defined]
        except Exception as error:
            mismatches: list[Mismatch] = []
            graph.state_node.validation_errors(error, None, mismatches)
            mine = [m for m in mismatches if m.segments[:1] == (("f", place.channel),)]
            if not mine:
                return value
            self._state_errors(graph, place.state, mine, value, found, write=True)
            return _INVALID
        return getattr(instance, place.channel, value)

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
        assert graph.state is not None and isinstance(graph.state_node, ClassNode)
        fields = graph.state.__pydantic_fields__  # type: ignore[attr-defined]
        own = {
            name: value for name, value in {**_empty_values(graph), **values}.items()
            if name in fields
        }
        if any(isinstance(value, Unreadable) for value in own.values()):
            return  # reported below, value by value
        try:
            validated = graph.state.__pydantic_validator__.validate_python(own)  # type: ignore[attr-defined]
        except Exception as error:
            mismatches: list[Mismatch] = []
            graph.state_node.validation_errors(error, None, mismatches)
            self._state_errors(graph, state, mismatches, own, found, write=False)
            for name in own:
                values.pop(name, None)
            return
        for name in own.keys() & values.keys():  # what the nodes get: check inside it
            values[name] = getattr(validated, name, values[name])  # (models kept unvalidated)

    def _state_errors(
        self,
        graph: GraphSpec,
        state: str,
        mismatches: list[Mismatch],
        held: Any,
        found: list[tuple[Finding, str]],
        *,
        write: bool,
    ) -> None:
        """What building a pydantic state from the stored values raises, where: a field the
        checkpoint lacks, a field's value of the wrong type, or a place inside a field (a
        model's extra field, a missing or invalid nested one). ``held``: the stored values by
        field, or a written field's value."""
        assert graph.state is not None
        fields = graph.state.__pydantic_fields__  # type: ignore[attr-defined]
        for found_here in mismatches:
            name = found_here.segments[0][1]
            place = _place(graph, name, state, write=write)
            root = place.root
            exact, pattern = format_steps(found_here.segments[1:])
            if found_here.nested:
                kind, message = wording.state_validation(root + pattern, found_here, place)
            elif found_here.kind == MISSING:
                kind, message = wording.MISSING, wording.missing_channel(root, place)
            else:
                value = held.get(name) if isinstance(held, dict) and not write else held
                mismatch = Mismatch(
                    "", "", wording.TYPE, fields[name].annotation, state, type(value).__name__,
                    (), value,
                )
                kind, message = wording.mismatch(root, mismatch, place)
            source = self._source(found_here.holder if found_here.nested else None)
            finding = Finding(kind, name, root + pattern, message, source)
            found.append((of_class(finding) if found_here.nested else finding, root + exact))

    def _dropped(self, name: str, place: wording.Place, found: list[tuple[Finding, str]]) -> None:
        path = place.root
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
            root = place.root
            message = wording.unreadable(root, value.error)
            found.append((Finding(wording.UNREADABLE, place.channel, root, message), root))
            return
        if node is None:
            return
        mismatches: list[Mismatch] = []
        node.check(value, None, mismatches, 0)
        root = place.root if mismatches else ""
        for mismatch in mismatches:
            pattern = root + mismatch.pattern
            # A problem of the class that declares the place (a field of a class), or of the
            # stored class itself, is one problem wherever the class is stored.
            of_a_class = mismatch.holder is not None
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
                of_a_class = of_a_class or explained.why in stored_bytes.CLASS_CAUSES
            else:
                kind, message = wording.mismatch(pattern, mismatch, place)
            declarer = mismatch.holder if mismatch.holder is not None else mismatch.declared
            source = self._source(declarer if mismatch.owner or mismatch.kind == CLASS else None)
            finding = Finding(kind, place.channel, pattern, message, source)
            found.append((of_class(finding) if of_a_class else finding, root + mismatch.path))

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
