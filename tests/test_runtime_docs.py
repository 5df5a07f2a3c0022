"""The error that README.md and docs/runtime.md quote is the one CheckedSaver raises."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
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
