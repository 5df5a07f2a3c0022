"""What ``lgstate audit`` costs, against reading the same checkpoints with the saver's own
``list()`` and touching every value; and its peak memory against the store's size.

    python benchmarks/audit.py [--threads 5000] [--store PATH] [--repeat 3] [--quick]

The store: ``--threads`` threads of ``benchmarks/audit_app.py`` (ten checkpoints each), written by
the real graph with ``SqliteSaver`` into ``--store`` (default ``benchmarks/_work/audit.db``; an
existing file of the right size is reused). The reference reads the threads in the audit's order
(one ``list()`` per thread: ``limit=1`` for the latest checkpoint, all of them otherwise) and walks
every value it gets; the audit is ``run_audit`` in one process. Both alternate ``--repeat`` times;
the medians of the per-pair ratios are printed (goals: at most 1.5 for the latest checkpoints, 2
with ``--all-checkpoints``). Peak memory: each side in a fresh process, its maximum resident size.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

GOALS = {False: 1.5, True: 2.0}  # all_checkpoints -> the ratio not to exceed


def generate(path: Path, threads: int) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    import audit_app

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous=OFF")
    graph = audit_app.builder.compile(checkpointer=saver)
    for thread in range(threads):
        graph.invoke(audit_app.first_input(thread), {"configurable": {"thread_id": f"t{thread:06}"}})
    conn.close()


def touch(value: Any) -> int:
    """Visits every value, as code that uses the state would: containers and models' fields."""
    count = 1
    if isinstance(value, dict):
        for item in value.values():
            count += touch(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            count += touch(item)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for item in vars(value).values():
            count += touch(item)
    return count


def read_with_list(store: str, all_checkpoints: bool) -> int:
    """The reference: the saver's own list(), thread by thread, every value touched."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.is_setup = True
    keys = conn.execute(
        "SELECT thread_id, checkpoint_ns FROM checkpoints GROUP BY thread_id, checkpoint_ns"
        " ORDER BY thread_id, checkpoint_ns"
    ).fetchall()
    touched = 0
    for thread_id, ns in keys:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
        for found in saver.list(config, limit=None if all_checkpoints else 1):
            touched += touch(found.checkpoint["channel_values"]) + touch(found.pending_writes)
    conn.close()
    return touched


def audit(store: str, all_checkpoints: bool) -> int:
    from mypy_lgstate.runtime.audit.run import AuditOptions, run_audit

    options = AuditOptions(store, ("audit_app:builder",), all_checkpoints=all_checkpoints, cwd=str(HERE))
    result = run_audit(options)
    assert not result.tally.problems, [p.finding.message for p in result.tally.problems.values()]
    return result.tally.checkpoints


def timed(function: Any, *args: Any) -> float:
    gc.collect()
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def peak_memory(side: str, store: str, all_checkpoints: bool) -> int:
    """The maximum resident size (bytes) of a fresh process that runs one side once."""
    command = [sys.executable, __file__, "--store", store, "--run-side", side]
    if all_checkpoints:
        command.append("--all-checkpoints")
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{side} failed")
    return usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=5000)
    parser.add_argument("--store", default=str(HERE / "_work" / "audit.db"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 threads, one pair: checks it works")
    parser.add_argument("--all-checkpoints", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run-side", choices=("list", "audit"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    # LangGraph's serializer logs a warning per class it reads; the reference reads many.
    logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)
    if args.run_side:  # a child of peak_memory()
        (read_with_list if args.run_side == "list" else audit)(args.store, args.all_checkpoints)
        return
    if args.quick:
        args.threads, args.repeat = 200, 1
        args.store = str(HERE / "_work" / "audit-quick.db")
    store = Path(args.store)
    expected = args.threads * 10
    if not store.exists() or _checkpoints(store) != expected:
        started = time.perf_counter()
        generate(store, args.threads)
        print(f"wrote {store}: {expected:,} checkpoints in {time.perf_counter() - started:.0f} s")
    size = store.stat().st_size
    print(f"store: {args.threads:,} threads x 10 checkpoints, {size / 2**20:.1f} MiB")
    audit(str(store), False)  # imports and the OS's file cache, before anything is timed
    for all_checkpoints in (False, True):
        label = "all checkpoints" if all_checkpoints else "latest checkpoints"
        ratios, plain, audited = [], [], []
        for _ in range(args.repeat):
            reference = timed(read_with_list, str(store), all_checkpoints)
            cost = timed(audit, str(store), all_checkpoints)
            plain.append(reference)
            audited.append(cost)
            ratios.append(cost / reference)
        ratio = statistics.median(ratios)
        print(
            f"{label}: list() and touch {statistics.median(plain):.2f} s, audit"
            f" {statistics.median(audited):.2f} s, ratio {ratio:.2f} (goal: at most"
            f" {GOALS[all_checkpoints]}; pairs: {', '.join(f'{r:.2f}' for r in ratios)})"
        )
        reference_peak = peak_memory("list", str(store), all_checkpoints)
        audit_peak = peak_memory("audit", str(store), all_checkpoints)
        print(
            f"{label}: peak memory list() {reference_peak / 2**20:.0f} MiB, audit"
            f" {audit_peak / 2**20:.0f} MiB, store {size / 2**20:.0f} MiB"
        )


def _checkpoints(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0])
    except sqlite3.Error:
        return -1


if __name__ == "__main__":
    main()
