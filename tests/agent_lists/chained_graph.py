"""A chained builder in a factory declared without type arguments."""

from typing import TypedDict

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph


class State(TypedDict):
    question: str


class Draft(TypedDict):
    draft: str


def write(state: State) -> Draft:
    return {"draft": ""}


def review(state: Draft) -> State:
    return {"question": ""}


def make() -> CompiledStateGraph:
    return StateGraph(State).add_node("write", write).add_node("review", review).add_edge(START, "write").compile()


def ask(state: State) -> None:
    make().invoke(state)
