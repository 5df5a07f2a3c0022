"""``CheckedSaver``: a LangGraph checkpointer that checks what it is given before its wrapped saver
serializes it. Imported on first use of ``mypy_lgstate.runtime.CheckedSaver``: it needs LangGraph.

What LangGraph hands a checkpointer, and what each part is checked as:

- ``put_writes``: the writes of one task, a node (its path is ``~__pregel_pull, <node>``) or a
  ``Send`` target (``~__pregel_push, <index>, ...``: the index of the ``Send`` in the checkpoint's
  ``__pregel_tasks`` channel). Each write is checked as written by that node; ``Send`` payloads,
  ``interrupt()`` values and resume values by what they are.
- ``put``: the channels of a new checkpoint that changed (``new_versions``), each as a whole
  channel value; the ``__start__`` channel holds the graph's input.

A value is blamed on the task that put it into state: a node that writes back what it read, a
subgraph's input and what the subgraph writes back are the same object as the first write, found
in the thread's namespace or its parents' (a subgraph runs in ``parent_node:task_id``).

A load of this saver raises when the serializer did not rebuild a value it stored (``loading``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Sequence
from inspect import signature
from pathlib import Path
from typing import Any, Final, NamedTuple

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import Interrupt, Send

from mypy_lgstate.core.config import ConfigError, load_config
from mypy_lgstate.core.messages import key_part
from mypy_lgstate.runtime.loading import listen_to_serde_events, loading
from mypy_lgstate.runtime.project import find_config_file
from mypy_lgstate.runtime.values import ValueChecker
from mypy_lgstate.runtime.findings import CheckpointValueError, Finding, Problem

# LangGraph's reserved channel and task names (langgraph._internal._constants, a private module).
_START: Final = "__start__"
_TASKS: Final = "__pregel_tasks"
_INTERRUPT: Final = "__interrupt__"
_RESUME: Final = "__resume__"
_PULL: Final = "__pregel_pull"
_PUSH: Final = "__pregel_push"
_NULL_TASK_ID: Final = "00000000-0000-0000-0000-000000000000"
# LangGraph's own bookkeeping: an error a node raised and where; never a value of the user's state.
_BOOKKEEPING: Final = frozenset({"__error__", "__error_source_node__", "__no_writes__"})
# Functional API: what a @task or an @entrypoint returns.
_RESULTS: Final = frozenset({"__return__", "__end__"})

# A subgraph's namespace is its parent's, then "|", then "node:task_id" (langgraph's NS_SEP, NS_END).
_NS_SEP: Final = "|"
_NS_END: Final = ":"
# Values whose identity tells nothing of who wrote them (equal ones may be one object), and which
# are never reported.
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
# How long a subgraph input's problem waits for the write that put the value there to be recorded
# (``CheckedSaver._awaited_origin``): LangGraph saves a step's writes in a background thread.
_WRITER_WAIT: Final = 1.0

_Thread = tuple[str, str]  # (thread_id, checkpoint_ns)


def _thread(config: RunnableConfig) -> _Thread:
    configurable = config.get("configurable") or {}
    return (str(configurable.get("thread_id", "")), str(configurable.get("checkpoint_ns", "")))


def _parent(namespace: str) -> str:
    return namespace.rpartition(_NS_SEP)[0]


def _subgraph_node(namespace: str) -> str:
    """The parent's node that runs the subgraph of ``namespace``."""
    return namespace.rpartition(_NS_SEP)[2].partition(_NS_END)[0]


class _Written(NamedTuple):
    writer: str  # the task that put ``value`` into state
    value: object


class CheckedSaver(BaseCheckpointSaver[Any]):
    """Wraps ``saver``; raises :class:`CheckpointValueError` for a value that will not survive it.

    The options are the plugin's (``[tool.mypy_lgstate]``); :meth:`from_project` reads them from
    the project's configuration file. Everything else is the wrapped saver's: a graph whose values
    are all fine runs and stores exactly what it would with ``saver`` alone.
    """

    def __init__(
        self,
        wrapped: BaseCheckpointSaver[Any],
        /,
        *,
        profile: str = "json",
        strict_msgpack: bool = False,
        allowed_msgpack_modules: Iterable[str] = (),
        safe_types: Iterable[str] = (),
        pickle_fallback: bool = False,
        saver: str | None = None,
    ) -> None:
        """``saver``: the plugin's option, the saver whose rules apply (``None``: the default's,
        ``"sqlite"``); a PostgreSQL saver that is wrapped applies its own rules whatever it says."""
        # No super().__init__(): the serializer is the wrapped saver's (see ``serde``).
        self.saver = wrapped
        self.options: dict[str, Any] = {
            "profile": profile,
            "strict_msgpack": strict_msgpack,
            "allowed_msgpack_modules": tuple(allowed_msgpack_modules),
            "safe_types": tuple(safe_types),
            "pickle_fallback": pickle_fallback,
            "saver": "postgres" if is_postgres_saver(wrapped) else saver or "sqlite",
        }
        self.checker = ValueChecker(**self.options)
        listen_to_serde_events()
        # LangGraph passes task_path only to savers whose put_writes takes it.
        self._put_writes_takes_path = "task_path" in signature(wrapped.put_writes).parameters
        self._aput_writes_takes_path = "task_path" in signature(wrapped.aput_writes).parameters
        # Who wrote each channel last, and what, per thread: the node a put() problem is blamed on.
        self._writers: dict[_Thread, dict[str, _Written]] = {}
        self._recorded = threading.Condition()  # notified when a writer is recorded
        # The targets of the Sends in each thread's latest checkpoint, by their index.
        self._sends: dict[_Thread, tuple[str, list[str]]] = {}

    @classmethod
    def from_project(
        cls,
        wrapped: BaseCheckpointSaver[Any],
        /,
        *,
        config_file: str | Path | None = None,
        start: str | Path | None = None,
    ) -> CheckedSaver:
        """A ``CheckedSaver`` with the options of ``config_file``, or of the configuration file
        found from ``start`` (default: the current directory) upward, as mypy finds its own."""
        path = Path(config_file) if config_file is not None else find_config_file(start)
        if path is not None and not path.is_file():
            raise ConfigError(f"{path}: no such configuration file")
        # A file that cannot be parsed, or a bad option, is a ConfigError: never the defaults.
        config = load_config(
            str(path) if path is not None else None, str(start) if start is not None else None
        )
        return cls(
            wrapped,
            profile=config.profile,
            strict_msgpack=config.strict_msgpack,
            allowed_msgpack_modules=config.allowed_msgpack_modules,
            safe_types=config.safe_types,
            pickle_fallback=config.pickle_fallback,
            saver=config.saver,
        )

    # The wrapped saver's own ---------------------------------------------------------------------

    @property
    def serde(self) -> SerializerProtocol:
        return self.saver.serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self.saver.serde = value

    @property
    def config_specs(self) -> list[Any]:
        return self.saver.config_specs

    def __getattr__(self, name: str) -> Any:
        # Called only for names this class lacks: a saver's own API (setup(), conn, storage...).
        if name == "saver":
            raise AttributeError(name)
        return getattr(self.saver, name)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> CheckedSaver:
        """Strict msgpack: ``compile()`` passes the allowlist it derives from the graph's schemas;
        the clone checks against it too."""
        clone = CheckedSaver(self.saver.with_allowlist(extra_allowlist), **self.options)
        clone.checker.allow_derived(self.checker.derived)
        clone.checker.allow_derived(entry[:2] for entry in extra_allowlist)
        return clone

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.saver.get_next_version(current, channel)

    # Loaded through the serializer: what it did not rebuild raises (``loading``).

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        __tracebackhide__ = True  # pytest: the failure is the stored value, not this frame
        with loading(config):
            return self.saver.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        found = self.saver.list(config, filter=filter, before=before, limit=limit)
        while True:
            with loading(config):
                item = next(found, None)
            if item is None:
                return
            yield item

    def delete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)

    def delete_for_runs(self, *args: Any, **kwargs: Any) -> None:
        self.saver.delete_for_runs(*args, **kwargs)

    def copy_thread(self, *args: Any, **kwargs: Any) -> None:
        self.saver.copy_thread(*args, **kwargs)

    def prune(self, *args: Any, **kwargs: Any) -> None:
        self.saver.prune(*args, **kwargs)

    def get_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return self.saver.get_delta_channel_history(*args, **kwargs)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        __tracebackhide__ = True  # pytest: the failure is the stored value, not this frame
        with loading(config):
            return await self.saver.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = self.saver.alist(config, filter=filter, before=before, limit=limit)
        while True:
            with loading(config):
                item = await anext(found, None)
            if item is None:
                return
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await self.saver.adelete_thread(thread_id)

    async def adelete_for_runs(self, *args: Any, **kwargs: Any) -> None:
        await self.saver.adelete_for_runs(*args, **kwargs)

    async def acopy_thread(self, *args: Any, **kwargs: Any) -> None:
        await self.saver.acopy_thread(*args, **kwargs)

    async def aprune(self, *args: Any, **kwargs: Any) -> None:
        await self.saver.aprune(*args, **kwargs)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return await self.saver.aget_delta_channel_history(*args, **kwargs)

    # Checked on the way in -----------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
        self._check_checkpoint(config, checkpoint, new_versions)
        return self.saver.put(config, checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
        self._check_checkpoint(config, checkpoint, new_versions)
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
        self._check_writes(config, writes, task_id, task_path)
        if self._put_writes_takes_path:
            self.saver.put_writes(config, writes, task_id, task_path)
        else:
            self.saver.put_writes(config, writes, task_id)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
        self._check_writes(config, writes, task_id, task_path)
        if self._aput_writes_takes_path:
            await self.saver.aput_writes(config, writes, task_id, task_path)
        else:
            await self.saver.aput_writes(config, writes, task_id)

    def _check_checkpoint(
        self, config: RunnableConfig, checkpoint: Checkpoint, new_versions: ChannelVersions
    ) -> None:
        __tracebackhide__ = True
        thread = _thread(config)
        values = checkpoint["channel_values"]
        sends = values.get(_TASKS)
        if sends:
            targets = [send.node if isinstance(send, Send) else "" for send in sends]
            self._sends[thread] = (checkpoint["id"], targets)
        else:
            self._sends.pop(thread, None)
        writers = self._writers.get(thread, {})
        for channel in new_versions:
            if channel not in values or channel in _BOOKKEEPING:
                continue
            value = values[channel]
            written = writers.get(channel)
            node = written.writer if written is not None else None
            if channel == _START:
                self._check_input(thread, value)
            elif channel == _TASKS:
                for send in value:
                    if isinstance(send, Send):
                        self._raise_for(
                            send.arg, "Send.arg", channel, node, _by(node), _send_target(send)
                        )
            else:
                self._raise_for(
                    value, channel, channel, node, _by(node), f'a value to channel "{channel}"',
                    channel_value=True,
                )

    def _check_input(self, thread: _Thread, value: object) -> None:
        """The ``__start__`` channel: the graph's input, or a subgraph's, whose values its parent's
        tasks wrote (each is blamed on its writer)."""
        __tracebackhide__ = True
        namespace = thread[1]
        if not namespace:
            self._raise_for(
                value, "input", _START, None, "The graph input", "a value", graph_input=True
            )
            return
        source = _subgraph_input(namespace)
        if not isinstance(value, dict):
            self._raise_for(value, "input", _START, None, source, "a value")
            return
        for key, item in value.items():
            origin = self._origin(thread, key, item, same_namespace=False)
            if origin is None and self.checker.check(item, write=True):
                origin = self._awaited_origin(thread, key, item)
            if origin is None:
                self._raise_for(
                    item, "input" + key_part(key), _START, None, source, "a value", write=True
                )
            else:
                root = "input" + key_part(key) if origin == _START else f"{origin}().{key}"
                self._raise_for(
                    item, root, key, origin, _by(origin), f'a value to channel "{key}"',
                    whole_channel=True, write=True,
                )

    def _origin(
        self, thread: _Thread, channel: str, value: object, *, same_namespace: bool
    ) -> str | None:
        """The task that wrote ``value`` itself to ``channel`` before: in this namespace (a node
        that writes back what it read; ``same_namespace``), or a parent's (a subgraph's input, and
        what the subgraph writes back)."""
        if type(value) in _SCALARS:
            return None
        thread_id, namespace = thread
        namespaces = [namespace] if same_namespace else []
        while namespace:
            namespace = _parent(namespace)
            namespaces.append(namespace)
        for looked_in in namespaces:
            written = self._writers.get((thread_id, looked_in), {}).get(channel)
            if written is not None and written.value is value:
                return written.writer
        return None

    def _awaited_origin(self, thread: _Thread, channel: str, value: object) -> str | None:
        """The writer of a subgraph's input value that is about to be reported. A subgraph runs in
        the step after the one that wrote its input, while LangGraph may still be saving that
        step's writes in a background thread: wait for them a moment (only when there is a problem
        to report, and never on an event loop, which would be the one saving them)."""
        try:
            asyncio.get_running_loop()
            return None
        except RuntimeError:
            pass
        deadline = time.monotonic() + _WRITER_WAIT
        with self._recorded:
            while (origin := self._origin(thread, channel, value, same_namespace=False)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._recorded.wait(remaining)
        return origin

    def _check_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> None:
        __tracebackhide__ = True
        thread = _thread(config)
        node = self._node(thread, config, task_id, task_path)
        # update_state() writes as a task of its own, whose path names no node.
        by_update_state = task_path.startswith(f"~{_INTERRUPT},")
        if task_id == _NULL_TASK_ID:
            source = "The caller"
        elif by_update_state:
            source = "update_state()"
        elif task_path.startswith(f"~{_PUSH}, ~{_PULL}, "):
            # A @task called from a function: the path names the caller, not the task.
            caller = task_path.split(", ")[2]
            source = f'A task called by "{caller}"'
        elif task_path and node is None:
            source = f"Task {task_id} ({task_path})"
        elif node == _START and thread[1]:
            source = _subgraph_input(thread[1])
        else:
            source = _by(node)
        writers = self._writers.setdefault(thread, {})
        for channel, value in writes:
            if channel in _BOOKKEEPING:
                continue
            if channel == _INTERRUPT:
                for pending in value if isinstance(value, (list, tuple)) else (value,):
                    if isinstance(pending, Interrupt):
                        self._raise_for(
                            pending.value, "interrupt.value", channel, node, source,
                            "an interrupt() value",
                        )
            elif channel == _RESUME:
                # The caller writes the resume value; the interrupted task, the list of its values.
                resumed = value if task_id != _NULL_TASK_ID and isinstance(value, list) else [value]
                for item in resumed:
                    self._raise_for(
                        item, "Command.resume", channel, node, source,
                        "a resume value (Command(resume=...))",
                    )
            elif channel == _TASKS:
                if node is not None:
                    writers[channel] = _Written(node, value)
                if isinstance(value, Send):
                    self._raise_for(
                        value.arg, "Send.arg", channel, node, source, _send_target(value)
                    )
            else:
                # Recorded first: a later check (a subgraph's input) names the writer even when
                # this one raises in LangGraph's background thread and the graph goes on.
                writer, writer_source = node, source
                if node is not None:
                    origin = self._origin(thread, channel, value, same_namespace=node != _START)
                    if origin is not None and origin != node:
                        writer, writer_source = origin, _by(origin)
                    writers[channel] = _Written(origin or node, value)
                    with self._recorded:
                        self._recorded.notify_all()
                if channel in _RESULTS:
                    root = f"{node}()" if node is not None else "task()"
                elif writer == _START:
                    root = "input" + key_part(channel)
                elif by_update_state:
                    root = "update_state.values" + key_part(channel)
                elif writer is not None:
                    root = f"{writer}().{channel}"
                else:
                    root = channel
                target = "a return value" if channel in _RESULTS else f'a value to channel "{channel}"'
                self._raise_for(
                    value, root, channel, writer, writer_source, target, whole_channel=True,
                    write=channel not in _RESULTS,
                )

    def _node(
        self, thread: _Thread, config: RunnableConfig, task_id: str, task_path: str
    ) -> str | None:
        if task_id == _NULL_TASK_ID or not task_path:
            return None
        parts = task_path.lstrip("~").split(", ")
        if len(parts) >= 2 and parts[0] == _PULL:
            return parts[1]
        if len(parts) >= 2 and parts[0] == _PUSH and parts[1].isdigit():
            checkpoint_id = (config.get("configurable") or {}).get("checkpoint_id")
            recorded = self._sends.get(thread)
            if recorded is not None and recorded[0] == checkpoint_id:
                index = int(parts[1])
                if index < len(recorded[1]) and recorded[1][index]:
                    return recorded[1][index]
        return None

    def _raise_for(
        self,
        value: object,
        root: str,
        channel: str,
        node: str | None,
        source: str,
        target: str,
        *,
        whole_channel: bool = False,
        write: bool = False,
        graph_input: bool = False,
        channel_value: bool = False,
    ) -> None:
        found = self.checker.check(
            value, whole_channel=whole_channel, write=write, graph_input=graph_input,
            channel_value=channel_value,
        )
        if found:
            __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
            raise CheckpointValueError(
                _worded(found, root), channel=channel, node=node, source=source, target=target
            )


# The savers that store a channel's str, int or float value inline as JSON (not the shallow ones),
# recognized by name: langgraph-checkpoint-postgres need not be installed.
_POSTGRES_SAVERS: Final = frozenset(
    {
        ("langgraph.checkpoint.postgres", "PostgresSaver"),
        ("langgraph.checkpoint.postgres.aio", "AsyncPostgresSaver"),
    }
)


def is_postgres_saver(saver: object) -> bool:
    return any(
        (base.__module__, base.__qualname__) in _POSTGRES_SAVERS for base in type(saver).__mro__
    )


def _subgraph_input(namespace: str) -> str:
    return f'The input of subgraph node "{_subgraph_node(namespace)}"'


def _by(node: str | None) -> str:
    if node is None:
        return "An unknown task"
    if node == _START:
        return "The graph input"
    return f'Node "{node}"'


def _send_target(send: Send) -> str:
    return f'a Send("{send.node}", ...) payload'


def _worded(found: list[Finding], root: str) -> list[Problem]:
    return [Problem(root + item.path, item.code, item.message(root)) for item in found]
