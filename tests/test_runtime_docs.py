"""The errors that README.md and docs/runtime.md quote are the ones CheckedSaver raises."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from mypy_lgstate.runtime import CheckedSaver, CheckpointValueError

ROOT = Path(__file__).resolve().parent.parent


class Ticket(TypedDict, total=False):
    subject: str
    lookup: dict  # type: ignore[type-arg]


def lookup_customer(state: Ticket) -> dict:  # type: ignore[type-arg]
    return {"lookup": {"customer": "c-42", "since": datetime(2021, 3, 1, tzinfo=timezone.utc)}}


def _quoted_errors(page: Path) -> list[str]:
    """The ```text blocks of ``page`` that quote a CheckpointValueError."""
    blocks = re.findall(r"```text\n(.*?)```", page.read_text(), re.S)
    return [block.removeprefix("CheckpointValueError: ") for block in blocks if "checkpoint:\n" in block]


@pytest.mark.parametrize("page", ["README.md", "docs/runtime.md"])
def test_the_quoted_error_is_real(page: str) -> None:
    builder = StateGraph(Ticket)
    builder.add_node("lookup_customer", lookup_customer)
    builder.add_edge(START, "lookup_customer")
    graph = builder.compile(checkpointer=CheckedSaver(InMemorySaver()))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"subject": "refund"}, {"configurable": {"thread_id": "t1"}})
    assert _quoted_errors(ROOT / page) == [str(raised.value) + "\n"]


def test_the_quoted_load_error_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The user's module ``app``, a strict serializer whose allowlist leaves its class out.
    (tmp_path / "app.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from typing import Any

        from langgraph.graph import START, StateGraph
        from langgraph.types import interrupt
        from typing_extensions import TypedDict


        @dataclass
        class Job:
            title: str


        class Plan(TypedDict, total=False):
            job: Any
            answer: str


        def plan(state: Plan) -> dict[str, Any]:
            return {"job": Job("refund")}


        def ask(state: Plan) -> dict[str, Any]:
            return {"answer": interrupt("ok?")}


        builder = StateGraph(Plan)
        builder.add_node("plan", plan)
        builder.add_node("ask", ask)
        builder.add_edge(START, "plan")
        builder.add_edge("plan", "ask")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    app = importlib.import_module("app")
    try:
        serde = JsonPlusSerializer(allowed_msgpack_modules=[("app", "Plan")])
        saver = CheckedSaver(InMemorySaver(serde=serde), profile="msgpack")
        graph = app.builder.compile(checkpointer=saver)
        graph.invoke({}, {"configurable": {"thread_id": "t"}})
        with pytest.raises(CheckpointValueError) as raised:
            graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": "t"}})
    finally:
        del sys.modules["app"]
    blocks = re.findall(r"```text\n(.*?)```", (ROOT / "docs" / "runtime.md").read_text(), re.S)
    assert str(raised.value) + "\n" in blocks
