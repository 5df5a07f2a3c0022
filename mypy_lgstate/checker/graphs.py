"""What the checks read of a graph's channels, memoized by its schema classes: a graph has several
nodes and write sites, and each asks for the same channel names, declared types and reducers.

Everything here is read from declared classes, so ``forget()`` drops it when they may have changed
(a new ``dmypy`` run).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.checker import TypeChecker
from mypy.nodes import SymbolNode, TypeInfo
from mypy.types import Type

from mypy_lgstate.checker import channels
from mypy_lgstate.routes import channel_specs, discovery, sites
from mypy_lgstate.routes.schemas import channel_types, graph_channels

Schemas = tuple[TypeInfo, ...]


class Graphs:
    """What the checks know of each graph, by its schema classes (state first)."""

    def __init__(self, lookup: Callable[[str], SymbolNode | None], *, daemon: bool) -> None:
        self._lookup = lookup
        self._daemon = daemon
        self._schemas: dict[Type, Schemas] = {}
        self._channels: dict[Schemas, tuple[frozenset[str], str] | None] = {}
        self._messages: dict[Schemas, frozenset[str]] = {}
        # The declared types of each graph's channels, by key (a write's items are compared).
        self._declared: dict[Schemas, dict[str, list[Type]]] = {}
        # What each graph's channels accept (``channels``).
        self._accepting: dict[Schemas, dict[str, list[channels.Channel]]] = {}
        self._special: dict[Schemas, channel_specs.Special] = {}
        self._reduced: dict[Schemas, frozenset[str]] = {}

    def forget(self) -> None:
        self._schemas.clear()
        self._channels.clear()
        self._messages.clear()
        self._declared.clear()
        self._accepting.clear()
        self._special.clear()
        self._reduced.clear()

    def schemas(self, graph: Type) -> Schemas:
        """The schema classes of a ``StateGraph[...]`` type."""
        found = self._schemas.get(graph)
        if found is None:
            found = self._schemas[graph] = tuple(discovery.graph_type_schemas(graph))
        return found

    def channel_names(self, schemas: Schemas) -> tuple[frozenset[str], str] | None:
        """The channel names of a graph and its state schema's name."""
        if schemas not in self._channels:
            self._channels[schemas] = graph_channels(schemas)
        return self._channels[schemas]

    def declared_types(self, schemas: Schemas) -> dict[str, list[Type]]:
        """The declared types of the graph's channels, by key."""
        found = self._declared.get(schemas)
        if found is None:
            found = self._declared[schemas] = channel_types(schemas)
        return found

    def accepting(self, api: TypeChecker, schemas: Schemas) -> dict[str, list[channels.Channel]]:
        """What each channel accepts: its declared type, or its reducer's second parameter."""
        self._follow_channels(api, schemas)
        found = self._accepting.get(schemas)
        if found is None:
            found = self._accepting[schemas] = channels.graph_channels(
                schemas, api.modules, self._lookup
            )
        return found

    def reduced_keys(self, api: TypeChecker, schemas: Schemas) -> frozenset[str]:
        """The keys whose every declaration has a reducer: it gets what is written, and stores
        what it returns (not a reducer that returns what is written: that is stored)."""
        found = self._reduced.get(schemas)
        if found is None:
            found = self._reduced[schemas] = frozenset(
                key
                for key, declarations in self.accepting(api, schemas).items()
                if all(
                    channel.reducer is not None and not channel.keeps_written
                    for channel in declarations
                )
            )
        return found

    def special_keys(self, api: TypeChecker, schemas: Schemas) -> channel_specs.Special:
        """The keys whose channel stores messages (``add_messages``) or is never checkpointed."""
        self._follow_channels(api, schemas)
        found = self._special.get(schemas)
        if found is None:
            found = self._special[schemas] = channel_specs.special_keys(schemas, api.modules)
        return found

    def _follow_channels(self, api: TypeChecker, schemas: Schemas) -> None:
        """In the daemon, recheck what is being checked when the channels of ``schemas`` change:
        an edit to a reducer alone changes no type dmypy compares
        (``channel_specs.DAEMON_MEMBER``)."""
        if self._daemon:
            target = api.tscope.current_target()
            for info in schemas:
                trigger = channel_specs.channels_trigger(info)
                api.tree.plugin_deps.setdefault(trigger, set()).add(target)

    def messages_channels(self, schemas: Schemas) -> frozenset[str]:
        """The keys declared as a list of LangChain messages."""
        found = self._messages.get(schemas)
        if found is None:
            found = self._messages[schemas] = sites.messages_channels(schemas)
        return found
