"""What LangGraph does with a ``Send(node, arg)`` payload that does not fit the target node's input:
the run-time facts behind ``lgstate-channel-type`` at ``Send`` (test-data/test_send_payloads.yml), on
a real compiled graph with a real checkpointer.

A ``Send`` runs its node as a push task with ``arg`` as the node's input, as it is: LangGraph checks
it against nothing. The node's input schema (its first parameter's annotation, or ``add_node(...,
input_schema=...)``) neither validates nor converts it, whatever kind of class it is; a key the
schema does not declare is handed over too, and no reducer of its fields runs. The payload is
checkpointed as it is and comes back from the checkpoint the same. So a TypedDict node reads the
value of the wrong type itself, and a pydantic model or dataclass node sent a dict gets that dict,
on which reading a field raises AttributeError.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Send
from typing_extensions import NotRequired


class State(TypedDict, total=False):
    sends: list[Any]


class Job(TypedDict):
    n: int
    tags: NotRequired[Annotated[list[str], operator.add]]


class ModelJob(pydantic.BaseModel):
    n: int


@dataclass
class DataJob:
    n: int


WORKERS = ("typed", "model", "data", "declared", "model_reads", "data_reads")


def _graph(seen: dict[str, list[Any]], **compile_args: Any) -> Any:
    """Workers annotated with each kind of input schema (``declared``: by ``input_schema=`` only),
    each recording what it received; ``model_reads`` and ``data_reads`` read the field ``n``."""

    def typed(job: Job) -> dict[str, Any]:
        seen.setdefault("typed", []).append(job)
        return {}

    def model(job: ModelJob) -> dict[str, Any]:
        seen.setdefault("model", []).append(job)
        return {}

    def data(job: DataJob) -> dict[str, Any]:
        seen.setdefault("data", []).append(job)
        return {}

    def declared(job):  # type: ignore[no-untyped-def]
        seen.setdefault("declared", []).append(job)
        return {}

    def model_reads(job: ModelJob) -> dict[str, Any]:
        seen.setdefault("model_reads", []).append(job.n)
        return {}

    def data_reads(job: DataJob) -> dict[str, Any]:
        seen.setdefault("data_reads", []).append(job.n)
        return {}

    def fan_out(state: State) -> list[Send]:
        return [Send(node, arg) for node, arg in state["sends"]]

    builder = StateGraph(State)
    builder.add_node("plan", lambda state: {})
    for worker in (typed, model, data, model_reads, data_reads):
        builder.add_node(worker.__name__, worker)
    builder.add_node("declared", declared, input_schema=ModelJob)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, list(WORKERS))
    return builder.compile(checkpointer=InMemorySaver(), **compile_args)


def _run(sends: list[tuple[str, Any]], **compile_args: Any) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {}
    graph = _graph(seen, **compile_args)
    config: Any = {"configurable": {"thread_id": "1"}}
    graph.invoke({"sends": sends}, config)
    if compile_args:  # interrupted before the workers: they run from the checkpoint
        assert not seen
        graph.invoke(None, config)
    return seen


MISFIT = {"n": "x"}


@pytest.mark.parametrize("resumed", [False, True], ids=["direct", "from_the_checkpoint"])
def test_a_send_payload_reaches_its_node_unchanged_whatever_its_input_schema(resumed: bool) -> None:
    """Not validated, not coerced (not even ``"5"`` for a model's ``int``), not converted to the
    node's model or dataclass, also by ``input_schema=``; an undeclared key is not dropped; a
    field's reducer does not run."""
    sends = [
        ("typed", MISFIT),
        ("typed", {"m": 1}),
        ("typed", {"n": 1, "tags": "a"}),
        ("model", MISFIT),
        ("model", {"n": "5"}),
        ("data", MISFIT),
        ("declared", MISFIT),
    ]
    seen = _run(sends, **({"interrupt_before": list(WORKERS)} if resumed else {}))
    assert seen["typed"] == [MISFIT, {"m": 1}, {"n": 1, "tags": "a"}]
    assert seen["model"] == [MISFIT, {"n": "5"}]
    assert seen["data"] == [MISFIT]
    assert seen["declared"] == [MISFIT]
    assert all(type(arg) is dict for args in seen.values() for arg in args)


@pytest.mark.parametrize("worker", ["model_reads", "data_reads"])
def test_a_model_or_dataclass_node_sent_a_dict_raises_attribute_error(worker: str) -> None:
    """Even a dict whose values fit: the node gets the dict, not its class."""
    with pytest.raises(AttributeError, match="'dict' object has no attribute 'n'"):
        _run([(worker, {"n": 1})])


def test_a_model_or_dataclass_node_sent_an_instance_reads_it() -> None:
    seen = _run([("model_reads", ModelJob(n=1)), ("data_reads", DataJob(n=2))])
    assert seen == {"model_reads": [1], "data_reads": [2]}
