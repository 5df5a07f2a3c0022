"""``CheckedSaver``: a LangGraph checkpointer that checks what it is given before its wrapped saver
serializes it. Imported on first use of ``mypy_lgstate.runtime.CheckedSaver``: it needs LangGraph.

What LangGraph hands a checkpointer, and what each part is checked as:

- ``put_writes``: the writes of one task, a node (its path is ``~__pregel_pull, <node>``) or a
  ``Send`` target (``~__pregel_push, <index>, ...``: the index of the ``Send`` in the checkpoint's
  ``__pregel_tasks`` channel). Each write is checked as written by that node; ``Send`` payloads,
  ``interrupt()`` values and resume values by what they are.
- ``put``: the channels of a new checkpoint that changed (``new_versions``), each as a whole
  channel value; the ``__start__`` channel holds the graph's input.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Sequence
from inspect import signature
from pathlib import Path
from typing import Any, Final

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
from mypy_lgstate.runtime.project import find_config_file
from mypy_lgstate.runtime.values import CheckpointValueError, Finding, Problem, ValueChecker

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

_Thread = tuple[str, str]  # (thread_id, checkpoint_ns)


def _thread(config: RunnableConfig) -> _Thread:
    configurable = config.get("configurable") or {}
    return (str(configurable.get("thread_id", "")), str(configurable.get("checkpoint_ns", "")))


class CheckedSaver(BaseCheckpointSaver[Any]):
    """Wraps ``saver``; raises :class:`CheckpointValueError` for a value that will not survive it.

    The options are the plugin's (``[tool.mypy_lgstate]``); :meth:`from_project` reads them from
    the project's configuration file. Everything else is the wrapped saver's: a graph whose values
    are all fine runs and stores exactly what it would with ``saver`` alone.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        *,
        profile: str = "json",
        strict_msgpack: bool = False,
        allowed_msgpack_modules: Iterable[str] = (),
        safe_types: Iterable[str] = (),
        pickle_fallback: bool = False,
    ) -> None:
        # No super().__init__(): the serializer is the wrapped saver's (see ``serde``).
        self.saver = saver
        self.options: dict[str, Any] = {
            "profile": profile,
            "strict_msgpack": strict_msgpack,
            "allowed_msgpack_modules": tuple(allowed_msgpack_modules),
            "safe_types": tuple(safe_types),
            "pickle_fallback": pickle_fallback,
        }
        self.checker = ValueChecker(**self.options)
        # LangGraph passes task_path only to savers whose put_writes takes it.
        self._put_writes_takes_path = "task_path" in signature(saver.put_writes).parameters
        self._aput_writes_takes_path = "task_path" in signature(saver.aput_writes).parameters
        # Who wrote each channel last, per thread: the node a put() problem is blamed on.
        self._writers: dict[_Thread, dict[str, str]] = {}
        # The targets of the Sends in each thread's latest checkpoint, by their index.
        self._sends: dict[_Thread, tuple[str, list[str]]] = {}

    @classmethod
    def from_project(
        cls,
        saver: BaseCheckpointSaver[Any],
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
        config = load_config(str(path) if path is not None else None)
        return cls(
            saver,
            profile=config.profile,
            strict_msgpack=config.strict_msgpack,
            allowed_msgpack_modules=config.allowed_msgpack_modules,
            safe_types=config.safe_types,
            pickle_fallback=config.pickle_fallback,
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

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.saver.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.saver.list(config, filter=filter, before=before, limit=limit)

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
        return await self.saver.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for found in self.saver.alist(config, filter=filter, before=before, limit=limit):
            yield found

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
            if channel == _START:
                self._raise_for(value, "input", channel, None, "The graph input", "a value")
            elif channel == _TASKS:
                for send in value:
                    if isinstance(send, Send):
                        node = writers.get(channel)
                        self._raise_for(
                            send.arg, "Send.arg", channel, node, _by(node), _send_target(send)
                        )
            else:
                node = writers.get(channel)
                self._raise_for(
                    value, channel, channel, node, _by(node), f'a value to channel "{channel}"',
                    whole_channel=True,
                )

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
                if isinstance(value, Send):
                    self._raise_for(
                        value.arg, "Send.arg", channel, node, source, _send_target(value)
                    )
            else:
                if channel in _RESULTS:
                    root = f"{node}()" if node is not None else "task()"
                elif node == _START:
                    root = "input" + key_part(channel)
                elif by_update_state:
                    root = "update_state.values" + key_part(channel)
                elif node is not None:
                    root = f"{node}().{channel}"
                else:
                    root = channel
                target = "a return value" if channel in _RESULTS else f'a value to channel "{channel}"'
                self._raise_for(value, root, channel, node, source, target, whole_channel=True)
            if node is not None:
                writers[channel] = node

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
    ) -> None:
        found = self.checker.check(value, whole_channel=whole_channel)
        if found:
            __tracebackhide__ = True  # pytest: the failure is the user's value, not this frame
            raise CheckpointValueError(
                _worded(found, root), channel=channel, node=node, source=source, target=target
            )


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
