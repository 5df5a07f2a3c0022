"""Runs a version of the application (the tree on ``sys.path``) on a copy of a store and prints,
as JSON, what the graph gives each thread named: what the node after the interrupt gets when the
thread resumes (or what resuming raises), or with ``--checkpoint ID`` the state LangGraph rebuilds
from that checkpoint of the first thread.

python resume.py PATH GRAPH [--allow mod.Class,...] [--checkpoint ID] THREAD...
"""

from __future__ import annotations

import argparse
import enum
import json
import sqlite3

import pydantic
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from shop import graph as app


def describe(value: object) -> object:
    """What a node reading ``value`` gets: its type, and which declared fields it lacks."""
    if isinstance(value, pydantic.BaseModel):
        fields = type(value).model_fields
        return {
            "type": type(value).__name__,
            "unset": sorted(name for name in fields if name not in value.__dict__),
            "fields": {name: describe(value.__dict__[name]) for name in fields if name in value.__dict__},
        }
    if isinstance(value, list):
        return [describe(item) for item in value]
    if isinstance(value, dict):
        return {"type": "dict", "keys": sorted(value), "items": {k: describe(v) for k, v in value.items()}}
    if isinstance(value, enum.Enum):
        return {"type": type(value).__name__, "value": value.value}
    return {"type": type(value).__name__, "value": value if isinstance(value, (str, int)) else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("graph")
    parser.add_argument("threads", nargs="+")
    parser.add_argument("--allow", default="")
    parser.add_argument("--checkpoint")
    args = parser.parse_args()
    serde = None
    if args.allow:
        pairs = [tuple(entry.rsplit(".", 1)) for entry in args.allow.split(",")]
        serde = JsonPlusSerializer(allowed_msgpack_modules=pairs)
    conn = sqlite3.connect(args.path, check_same_thread=False)
    graph = getattr(app, args.graph).compile(checkpointer=SqliteSaver(conn, serde=serde))
    seen: dict[str, object] = {}
    if args.checkpoint:
        config = {"configurable": {"thread_id": args.threads[0], "checkpoint_id": args.checkpoint}}
        seen[args.threads[0]] = describe(dict(graph.get_state(config).values))
    for thread in () if args.checkpoint else args.threads:
        got: list[object] = []
        app.RECORD = lambda state: got.append(describe(state))
        try:
            graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": thread}})
        except pydantic.ValidationError as error:
            where = sorted([".".join(map(str, e["loc"])), e["type"]] for e in error.errors())
            seen[thread] = {"raised": "ValidationError", "errors": where}
        except Exception as error:
            seen[thread] = {"raised": type(error).__name__}
        else:
            seen[thread] = got[-1] if got else None
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
