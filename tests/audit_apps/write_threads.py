"""Runs v1 (the tree on sys.path): writes the threads the audit tests read into a store.

python write_threads.py sqlite PATH | postgres URL
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from shop.graph import builder, profile_builder

SHARED = 40  # threads with every problem of the scenarios


@contextmanager
def saver(kind: str, where: str) -> Iterator[Any]:
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(where, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(where) as found:
            found.setup()
            yield found


def main() -> None:
    kind, where = sys.argv[1], sys.argv[2]
    with saver(kind, where) as checkpointer:
        graph = builder.compile(checkpointer=checkpointer)
        for i in range(SHARED):
            graph.invoke({"case": "shared"}, {"configurable": {"thread_id": f"shared-{i:03}"}})
        graph.invoke({"case": "history"}, {"configurable": {"thread_id": "history"}})
        profiles = profile_builder.compile(checkpointer=checkpointer)
        profiles.invoke({"name": "ada"}, {"configurable": {"thread_id": "profile"}})


if __name__ == "__main__":
    main()
