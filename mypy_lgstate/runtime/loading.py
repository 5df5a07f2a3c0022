"""What the serializer did not rebuild when ``CheckedSaver`` loads a checkpoint: LangGraph's
serializer emits an event when it does not rebuild a class it stored (strict msgpack blocks a class
missing from its allowlist, or a method it does not call), and a load that meets one raises, since
the graph would go on with raw data."""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from langchain_core.runnables import RunnableConfig

from mypy_lgstate.core.messages import allowlist_what_fix, not_called_lossy, problem_message
from mypy_lgstate.runtime.findings import ALLOWLIST, LOSSY, CheckpointValueError, Problem

# The events of the serializer's loads while this saver loads, in this context (None otherwise).
_load_events: ContextVar[list[Mapping[str, object]] | None] = ContextVar(
    "lgstate_load_events", default=None
)
# msgpack_unregistered_allowed is not used: the class is rebuilt (only strict mode would block it,
# which the checker's own strict_msgpack rules report at the write).
_NOT_REBUILT: Final = frozenset({"msgpack_blocked", "msgpack_method_blocked"})
_listening = False


def listen_to_serde_events() -> None:
    """Listen, once per process, to the events LangGraph's serializer emits (langgraph-checkpoint
    4.3 and later; older versions emit none)."""
    global _listening
    if _listening:
        return
    try:
        from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
    except ImportError:  # pragma: no cover - an older langgraph-checkpoint
        return
    register_serde_event_listener(_on_serde_event)
    _listening = True


def _on_serde_event(event: Mapping[str, object]) -> None:
    collected = _load_events.get()
    if collected is not None and event.get("kind") in _NOT_REBUILT:
        collected.append(event)


@contextmanager
def loading(config: RunnableConfig | None) -> Iterator[None]:
    """A load of the wrapped saver: raises when the serializer did not rebuild a value it stored,
    which the graph would otherwise go on with as raw data."""
    __tracebackhide__ = True
    events: list[Mapping[str, object]] = []
    token = _load_events.set(events)
    try:
        yield
    finally:
        _load_events.reset(token)
    if events:
        configurable = (config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        where = f'a checkpoint of thread "{thread}"' if thread is not None else "a checkpoint"
        problems = list({_not_rebuilt(event): None for event in events})
        raise CheckpointValueError(
            problems, channel=None, node=None, source="", target="",
            summary=f"Loading {where}: the serializer did not rebuild every value it stored:",
        )


def _not_rebuilt(event: Mapping[str, object]) -> Problem:
    module, name = str(event.get("module", "")), str(event.get("name", ""))
    method = event.get("method")
    if method is not None:
        what, fix = not_called_lossy(name, str(method))
        return Problem("", LOSSY, problem_message("a stored value", name, what, fix, None))
    what, fix = allowlist_what_fix(_kind(module, name), f"{module}.{name}")
    return Problem("", ALLOWLIST, problem_message("a stored value", name, what, fix, None))


def _kind(module: str, name: str) -> str:
    """The kind of class the allowlist message names (the loader imported its module already)."""
    cls = getattr(sys.modules.get(module), name, None)
    if not isinstance(cls, type):
        return "subclass"
    if issubclass(cls, enum.Enum):
        return "Enum"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "NamedTuple"
    if hasattr(cls, "model_fields"):
        return "pydantic model"
    return "subclass"
