"""The audit's run: the store streamed thread by thread, in batches, in one process or ``--jobs N``.

The main process lists the threads (``(thread_id, checkpoint_ns)``, in order, a page at a time)
and hands them out in batches; each batch is audited (here, or in a worker process with its own
read-only connection) into a ``Tally``, and the tallies are merged in batch order: the output does
not depend on the number of processes. Memory holds one batch's checkpoints at a time (one page of
a thread's checkpoints with ``--all-checkpoints``) and one entry per distinct problem.

A store named ``MODULE:ATTR`` cannot list its threads: it is read with its own ``list(None)``, in
one process, remembering which threads it has seen.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, NamedTuple

from mypy_lgstate.core import config as lgconfig
from mypy_lgstate.runtime.audit import wording
from mypy_lgstate.runtime.audit.checkpoints import CHECKPOINT, Auditor, ThreadGraph
from mypy_lgstate.runtime.audit.compiler import Compiler
from mypy_lgstate.runtime.audit.graphs import (
    AuditInputError,
    GraphSpec,
    error_line,
    load_graph,
    strict_allowlist,
)
from mypy_lgstate.runtime.audit.problems import Example, Finding, Tally
from mypy_lgstate.runtime.audit.stores import (
    Store,
    ThreadKey,
    configured_allowlist,
    kind_of,
    open_store,
)

BATCH: Final = 50  # threads per batch handed to a process
PAGE: Final = 1000  # thread keys read per query


class AuditOptions(NamedTuple):
    store: str
    graphs: tuple[str, ...]
    all_checkpoints: bool = False
    examples: int = 5  # example threads per problem
    jobs: int = 1
    config_file: str | None = None  # the project's configuration (None: found upward)
    cwd: str = ""  # where --graph and MODULE:ATTR are imported from


class Result(NamedTuple):
    tally: Tally
    options: AuditOptions


Progress = Callable[[Tally], None]


def run_audit(options: AuditOptions, progress: Progress | None = None) -> Result:
    session = _Session(options)
    try:
        tally = Tally(options.examples)
        if not session.store.keyed:
            _audit_unkeyed(session, tally, progress)
        elif options.jobs > 1:
            context = multiprocessing.get_context("spawn")  # no inherited connections
            with context.Pool(options.jobs, _start_worker, (options,)) as pool:
                for part in pool.imap(_audit_batch_in_worker, _batches(session.store)):
                    tally.merge(part)
                    if progress is not None:
                        progress(tally)
        else:
            for batch in _batches(session.store):
                tally.merge(session.audit_batch(batch))
                if progress is not None:
                    progress(tally)
        return Result(tally, options)
    finally:
        session.close()


class _Session:
    """What a process audits with: today's graphs, the store, the serializer."""

    def __init__(self, options: AuditOptions) -> None:
        if options.cwd:
            os.chdir(options.cwd)
        self.options = options
        config = _project_config(options.config_file)
        compiler = Compiler()
        self.graphs: list[GraphSpec] = [load_graph(spec, compiler) for spec in options.graphs]
        allowed: set[tuple[str, ...]] | None = None
        if config.profile == "msgpack" and config.strict_msgpack:
            allowed = configured_allowlist(config)
            if config.derive_allowlist:
                allowed |= strict_allowlist(self.graphs)
        with _quiet_serializer():
            self.store: Store = open_store(options.store, config, allowed)
        if kind_of(options.store) == "object":
            allowed = _allowlist_of(self.store.serde.inner)
        self.auditor = Auditor(
            self.graphs, self.store.serde, allowed,
            inline_primitives=kind_of(options.store) == "postgres",
        )

    def audit_batch(self, keys: list[ThreadKey]) -> Tally:
        """``keys`` in order: a thread's namespaces follow each other, in one batch."""
        tally = Tally(self.options.examples)
        seen: set[Any] = set()
        with _quiet_serializer():
            for index, key in enumerate(keys):
                if index == 0 or key.thread_id != keys[index - 1].thread_id:
                    tally.threads += 1
                    seen = set()
                tally.namespaces += 1
                self._audit_namespace(key, tally, seen)
        return tally

    def _audit_namespace(self, key: ThreadKey, tally: Tally, seen: set[Any]) -> None:
        thread = ThreadGraph()
        checkpoints = self.store.checkpoints(key, all_checkpoints=self.options.all_checkpoints)
        while True:
            try:
                checkpoint_tuple = next(checkpoints)
            except StopIteration:
                return
            except Exception as error:  # the saver itself failed on this thread's rows
                message = wording.unreadable(CHECKPOINT, error_line(error))
                finding = Finding(wording.UNREADABLE, CHECKPOINT, CHECKPOINT, message)
                tally.add(finding, Example(key.thread_id, key.checkpoint_ns, "", CHECKPOINT), seen)
                return
            self.audit_checkpoint(checkpoint_tuple, tally, seen, thread)

    def audit_checkpoint(
        self, checkpoint_tuple: Any, tally: Tally, seen: set[Any], thread: ThreadGraph
    ) -> None:
        """``seen``: what the checkpoint's thread has shown so far; ``thread``: the graph its
        namespace is audited against, chosen by its first (latest) checkpoint."""
        configurable = checkpoint_tuple.config["configurable"]
        findings = self.auditor.audit(checkpoint_tuple, thread)
        if findings is None:
            tally.skipped += 1
            return
        tally.checkpoints += 1
        for finding, path in findings:
            example = Example(
                str(configurable.get("thread_id", "")), str(configurable.get("checkpoint_ns", "")),
                str(configurable.get("checkpoint_id", "")), path,
            )
            tally.add(finding, example, seen)

    def close(self) -> None:
        self.store.close()


def _audit_unkeyed(session: _Session, tally: Tally, progress: Progress | None) -> None:
    seen_threads: dict[str, set[Any]] = {}
    namespaces: dict[tuple[str, str], ThreadGraph] = {}
    latest_only = not session.options.all_checkpoints
    part = Tally(session.options.examples)
    with _quiet_serializer():
        # Newest first (the savers' order): a namespace's first checkpoint is its latest.
        for checkpoint_tuple in session.store.saver.list(None):
            configurable = checkpoint_tuple.config["configurable"]
            thread_id = str(configurable.get("thread_id", ""))
            key = (thread_id, str(configurable.get("checkpoint_ns", "")))
            seen = seen_threads.get(thread_id)
            if seen is None:
                seen = seen_threads[thread_id] = set()
                part.threads += 1
            thread = namespaces.get(key)
            if thread is None:
                thread = namespaces[key] = ThreadGraph()
                part.namespaces += 1
            elif latest_only:
                continue
            session.audit_checkpoint(checkpoint_tuple, part, seen, thread)
            if part.checkpoints >= BATCH:
                tally.merge(part)
                part = Tally(session.options.examples)
                if progress is not None:
                    progress(tally)
    tally.merge(part)


def _batches(store: Store) -> Iterator[list[ThreadKey]]:
    """The thread keys in batches of about ``BATCH``; a thread's namespaces stay in one batch (a
    thread is counted once, in one process)."""
    after: ThreadKey | None = None
    batch: list[ThreadKey] = []
    while True:
        keys = store.thread_keys(after, PAGE)
        for key in keys:
            if len(batch) >= BATCH and key.thread_id != batch[-1].thread_id:
                yield batch
                batch = []
            batch.append(key)
        if len(keys) < PAGE:
            break
        after = keys[-1]
    if batch:
        yield batch


_worker: _Session | None = None


def _start_worker(options: AuditOptions) -> None:
    global _worker
    _worker = _Session(options)


def _audit_batch_in_worker(keys: list[ThreadKey]) -> Tally:
    assert _worker is not None
    return _worker.audit_batch(keys)


def _project_config(config_file: str | None) -> lgconfig.LGStateConfig:
    if config_file is not None and not os.path.isfile(config_file):
        raise AuditInputError(f"--config-file {config_file}: no such file")
    path = config_file if config_file is not None else lgconfig.find_config_file()
    try:
        return lgconfig.read_config(path)
    except lgconfig.ConfigError as error:
        raise AuditInputError(str(error)) from None


def _allowlist_of(serde: Any) -> set[tuple[str, ...]] | None:
    """The strict allowlist of a saver's own serializer (``None``: permissive)."""
    inner = getattr(serde, "serde", serde)  # EncryptedSerializer
    allowed = getattr(inner, "_allowed_msgpack_modules", True)
    if allowed is True:
        return None
    return set(allowed or ())


@contextmanager
def _quiet_serializer() -> Iterator[None]:
    """LangGraph's serializer logs a warning for each class it meets; the audit says what
    matters itself."""
    logger = logging.getLogger("langgraph.checkpoint.serde.jsonplus")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class ProgressLine:
    """One line on stderr, rewritten in place, once a run has taken a few seconds; only when
    stderr is a terminal (a CI log gets the result alone)."""

    def __init__(self, *, quiet: bool, delay: float = 3.0, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False
        self.last = 0.0

    def __call__(self, tally: Tally) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or now - self.last < 0.5:
            return
        self.last = now
        problems = len(tally.problems)
        self.stream.write(
            f"\rlgstate audit: {tally.threads:,} threads, {tally.checkpoints:,} checkpoints,"
            f" {problems:,} problem{'s' if problems != 1 else ''} so far"
        )
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
