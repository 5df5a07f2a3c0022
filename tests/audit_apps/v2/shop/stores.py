"""The application's own checkpointer, for ``lgstate audit shop.stores:open_saver``."""

from __future__ import annotations

import os
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver


def open_saver() -> SqliteSaver:
    conn = sqlite3.connect(f"file:{os.environ['AUDIT_STORE']}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.is_setup = True  # read-only: the tables are there
    return saver
