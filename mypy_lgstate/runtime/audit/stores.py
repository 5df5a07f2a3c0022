"""Checkpoint stores, opened read-only, read through the saver's own ``list()``.

- A SQLite file (``path`` or ``sqlite:///path``): ``mode=ro``, through ``SqliteSaver``, whose
  ``setup()`` (which writes) is never run.
- A PostgreSQL URL: every transaction read-only (``default_transaction_read_only``), through
  ``PostgresSaver``, whose ``setup()`` (which migrates) is never run.
- ``MODULE:ATTR``: a checkpointer object, or a function of no arguments that returns one; only its
  ``list()`` is called.

The saver reads with ``AuditSerde`` around the serializer the application runs: a value whose
bytes the serializer cannot read becomes ``Unreadable`` (one finding, the rest of the store is still
read), and the bytes of each value read are kept, until the next checkpoint, for the values the
audit must explain (``stored.py``).
"""

from __future__ import annotations

import importlib
import os
import sqlite3
from collections.abc import Iterator
from typing import Any, Final, NamedTuple
from urllib.parse import quote, urlsplit, urlunsplit

from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.runtime.audit.graphs import AuditInputError, error_line, import_object

PAGE: Final = 100  # checkpoints per list() call with --all-checkpoints (bounded memory)


class Unreadable(NamedTuple):
    """A value the serializer raised on."""

    error: str


class AuditSerde:
    """The application's serializer, as the saver calls it, keeping the bytes of what it read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cipher = getattr(inner, "cipher", None)  # EncryptedSerializer
        self._read: dict[int, tuple[object, tuple[str, bytes]]] = {}

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)  # type: ignore[no-any-return]

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            value = self.inner.loads_typed(data)
        except Exception as error:
            return Unreadable(error_line(error))
        # The value is kept too, so that its id names it until the next checkpoint.
        self._read[id(value)] = (value, data)
        return value

    def bytes_of(self, value: object) -> tuple[str, bytes] | None:
        found = self._read.get(id(value))
        return found[1] if found is not None and found[0] is value else None

    def forget(self) -> None:
        self._read.clear()


class ThreadKey(NamedTuple):
    thread_id: str
    checkpoint_ns: str


class Store:
    """An open store: its saver, and (for SQLite and PostgreSQL) its threads, in order."""

    def __init__(self, saver: Any, serde: AuditSerde, *, keyed: bool, close: Any = None) -> None:
        self.saver = saver
        self.serde = serde
        self.keyed = keyed  # threads can be listed (and audited in parallel)
        self._close = close

    def thread_keys(self, after: ThreadKey | None, limit: int) -> list[ThreadKey]:
        raise NotImplementedError

    def checkpoints(self, key: ThreadKey, *, all_checkpoints: bool) -> Iterator[Any]:
        config = {"configurable": {"thread_id": key.thread_id, "checkpoint_ns": key.checkpoint_ns}}
        if not all_checkpoints:
            yield from self.saver.list(config, limit=1)
            return
        before = None
        while True:
            read = 0
            # One at a time: the saver reads a checkpoint's values as it hands it out, and the
            # bytes kept for explaining them are those of the checkpoint being audited.
            for checkpoint_tuple in self.saver.list(config, before=before, limit=PAGE):
                read += 1
                before = checkpoint_tuple.config
                yield checkpoint_tuple
            if read < PAGE:
                return

    def close(self) -> None:
        if self._close is not None:
            self._close()


class _SqlStore(Store):
    placeholder = "?"

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def thread_keys(self, after: ThreadKey | None, limit: int) -> list[ThreadKey]:
        p = self.placeholder
        where = f"WHERE (thread_id, checkpoint_ns) > ({p}, {p}) " if after is not None else ""
        sql = (
            f"SELECT thread_id, checkpoint_ns FROM checkpoints {where}"
            f"GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns LIMIT {p}"
        )
        params = (*(after or ()), limit)
        return [ThreadKey(str(row[0]), str(row[1])) for row in self._query(sql, params)]


class SqliteStore(_SqlStore):
    def __init__(self, saver: Any, serde: AuditSerde, conn: sqlite3.Connection) -> None:
        super().__init__(saver, serde, keyed=True, close=conn.close)
        self.conn = conn

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self.saver.lock:
            return self.conn.execute(sql, params).fetchall()


class PostgresStore(_SqlStore):
    placeholder = "%s"

    def __init__(self, saver: Any, serde: AuditSerde, conn: Any) -> None:
        super().__init__(saver, serde, keyed=True, close=conn.close)
        self.conn = conn

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self.saver.lock, self.conn.cursor(row_factory=_tuple_row()) as cur:
            cur.execute(sql, params)
            return cur.fetchall()  # type: ignore[no-any-return]


def _tuple_row() -> Any:
    from psycopg.rows import tuple_row

    return tuple_row


def kind_of(store: str) -> str:
    """``postgres``, ``sqlite`` or ``object``, as the command line names the store."""
    scheme = urlsplit(store).scheme if "://" in store else ""
    if scheme in ("postgres", "postgresql") or scheme.startswith("postgresql+"):
        return "postgres"
    if scheme == "sqlite":
        return "sqlite"
    if scheme:
        raise AuditInputError(
            f"{shown(store)}: not a store this audit reads (a SQLite file, sqlite:///path, a"
            " postgresql:// URL, or MODULE:ATTR naming a checkpointer)"
        )
    if ":" in store and not os.path.exists(store) and not store.endswith((".db", ".sqlite", ".sqlite3")):
        module = store.partition(":")[0]
        if module.replace(".", "").replace("_", "").isalnum() and not module[:1].isdigit():
            return "object"
    return "sqlite"


def shown(store: str) -> str:
    """The store as messages show it: a URL without its password."""
    if "://" not in store:
        return store
    parts = urlsplit(store)
    if parts.password is None:
        return store
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def open_store(store: str, config: LGStateConfig, allowed: set[tuple[str, ...]] | None) -> Store:
    """``allowed``: the strict allowlist (``None``: permissive), for the serializer built here."""
    kind = kind_of(store)
    if kind == "object":
        return _open_object(store)
    serde = AuditSerde(project_serializer(config, allowed))
    if kind == "postgres":
        return _open_postgres(store, serde)
    return _open_sqlite(store, serde)


def project_serializer(config: LGStateConfig, allowed: set[tuple[str, ...]] | None) -> Any:
    """The serializer the application runs: ``JsonPlusSerializer`` with the project's options,
    encrypted when ``LANGGRAPH_AES_KEY`` is set (as LangGraph's server does)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    allowlist: Any = True if allowed is None else (tuple(allowed) or None)
    serde: Any = JsonPlusSerializer(
        pickle_fallback=config.pickle_fallback, allowed_msgpack_modules=allowlist
    )
    if os.environ.get("LANGGRAPH_AES_KEY"):
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

        try:
            serde = EncryptedSerializer.from_pycryptodome_aes(serde)
        except (ImportError, ValueError) as error:
            raise AuditInputError(f"LANGGRAPH_AES_KEY is set, but {error_line(error)}") from None
    return serde


def configured_allowlist(config: LGStateConfig) -> set[tuple[str, ...]]:
    """``allowed_msgpack_modules`` as the serializer takes it: ``"pkg.mod.Class"`` is the pair
    ``("pkg.mod", "Class")``; a bare module stands for every class it defines."""
    pairs: set[tuple[str, ...]] = set()
    for entry in config.allowed_msgpack_modules:
        try:
            module = importlib.import_module(entry)
        except Exception:
            module_name, _, name = entry.rpartition(".")
            pairs.add((module_name, name))
            continue
        pairs |= {
            (entry, name)
            for name, value in vars(module).items()
            if isinstance(value, type) and value.__module__ == entry
        }
    return pairs


def _open_sqlite(store: str, serde: AuditSerde) -> Store:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = store[len("sqlite:///"):] if store.startswith("sqlite:///") else store
    if store.startswith("sqlite://") and not store.startswith("sqlite:///"):
        raise AuditInputError(f"{store}: a SQLite URL is sqlite:///path/to/file")
    if not os.path.exists(path):
        raise AuditInputError(f"{store}: no such file")
    if os.path.isdir(path):
        raise AuditInputError(f"{store}: is a directory, not a SQLite file")
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        columns = (
            {row[1] for row in conn.execute("PRAGMA table_info(writes)")} if "writes" in tables else set()
        )
    except sqlite3.Error as error:
        raise AuditInputError(f"{store}: not a SQLite database ({error})") from None
    if not {"checkpoints", "writes"} <= tables:
        conn.close()
        raise AuditInputError(
            f"{store}: not a checkpoint store (no checkpoints and writes tables, as SqliteSaver"
            " writes them)"
        )
    saver = SqliteSaver(conn, serde=serde)
    saver.is_setup = True  # setup() creates tables and switches the journal: it writes
    saver._has_task_path = "task_path" in columns
    return SqliteStore(saver, serde, conn)


def _open_postgres(store: str, serde: AuditSerde) -> Store:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as error:
        # mypy-lgstate is installed from a checkout (it is on no registry): its drivers are.
        raise AuditInputError(
            f"{shown(store)}: reading PostgreSQL needs langgraph-checkpoint-postgres and psycopg"
            f" (pip install langgraph-checkpoint-postgres 'psycopg[binary]'): {error}"
        ) from None
    url = store.replace("postgresql+psycopg://", "postgresql://", 1)
    try:
        conn = psycopg.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row,
            options="-c default_transaction_read_only=on",
        )
    except Exception as error:
        raise AuditInputError(f"{shown(store)}: cannot connect: {error_line(error)}") from None
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT to_regclass('checkpoints') IS NOT NULL AND"
                " to_regclass('checkpoint_blobs') IS NOT NULL AND"
                " to_regclass('checkpoint_writes') IS NOT NULL AS found"
            )
            row = cur.fetchone()
    except Exception as error:
        conn.close()
        raise AuditInputError(f"{shown(store)}: {error_line(error)}") from None
    if not row or not row["found"]:
        conn.close()
        raise AuditInputError(
            f"{shown(store)}: not a checkpoint store (no checkpoints, checkpoint_blobs and"
            " checkpoint_writes tables, as PostgresSaver writes them)"
        )
    saver = PostgresSaver(conn, serde=serde)
    return PostgresStore(saver, serde, conn)


def _open_object(store: str) -> Store:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    obj = import_object(store, "STORE")
    if not isinstance(obj, BaseCheckpointSaver) and callable(obj):
        try:
            obj = obj()
        except Exception as error:
            raise AuditInputError(f"{store}: calling it raised {error_line(error)}") from None
    if not isinstance(obj, BaseCheckpointSaver):
        raise AuditInputError(
            f"{store}: not a LangGraph checkpointer (BaseCheckpointSaver), but {type(obj).__name__}"
        )
    serde = AuditSerde(obj.serde)
    obj.serde = serde  # this process's copy of the saver reads through it
    return Store(obj, serde, keyed=False)
