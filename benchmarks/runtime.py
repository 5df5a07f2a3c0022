"""What CheckedSaver costs a graph: a 150-step chat graph with CheckedSaver(InMemorySaver()) and
with InMemorySaver() alone, run alternately in one go.

    python benchmarks/runtime.py [--steps 150] [--pairs 21] [--profile msgpack] [--quick]

Each run builds a fresh saver, compiles the graph and invokes it once: the user and the assistant
take turns, each step appends one message (with some metadata) to an ``add_messages`` channel and
updates a few scalar channels, so every checkpoint holds the whole conversation so far. Prints the
median wall time of each configuration and the median of the per-pair ratios checked / plain
(target: at most 1.5). Needs langgraph and langchain-core (the project's ``test`` extras).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from mypy_lgstate.runtime import CheckedSaver  # noqa: E402

TARGET = 1.5


class Chat(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    turn: int
    topic: str
    scores: dict[str, float]


def build_graph(steps: int) -> StateGraph[Chat, Any, Chat, Chat]:
    def user(state: Chat) -> Chat:
        turn = state.get("turn", 0) + 1
        message = HumanMessage(content=f"question {turn} about {state['topic']}", id=f"u{turn}")
        return {"messages": [message], "turn": turn}

    def assistant(state: Chat) -> Chat:
        turn = state["turn"]
        message = AIMessage(
            content=f"answer {turn}: " + "lorem ipsum " * 20,
            id=f"a{turn}",
            response_metadata={"model": "bench", "tokens": {"in": 40, "out": 80}},
        )
        return {"messages": [message], "scores": {**state.get("scores", {}), f"t{turn}": 0.5}}

    def next_step(state: Chat) -> str:
        return "user" if len(state["messages"]) < steps else END

    builder = StateGraph(Chat)
    builder.add_node("user", user)
    builder.add_node("assistant", assistant)
    builder.add_edge(START, "user")
    builder.add_edge("user", "assistant")
    builder.add_conditional_edges("assistant", next_step, ["user", END])
    return builder


def run_once(builder: StateGraph[Chat, Any, Chat, Chat], checked: bool, profile: str, steps: int) -> float:
    saver: Any = InMemorySaver()
    if checked:
        saver = CheckedSaver(saver, profile=profile)
    graph = builder.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "bench"}, "recursion_limit": steps + 10}
    gc.collect()
    start = time.perf_counter()
    result = graph.invoke({"topic": "checkpoints"}, config)
    elapsed = time.perf_counter() - start
    assert len(result["messages"]) == steps, len(result["messages"])
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=150, help="graph steps per run (default 150)")
    parser.add_argument("--pairs", type=int, default=21, help="plain/checked pairs (default 21)")
    parser.add_argument("--profile", choices=("json", "msgpack"), default="msgpack")
    parser.add_argument("--quick", action="store_true", help="3 pairs: checks that it runs")
    args = parser.parse_args()
    pairs = 3 if args.quick else args.pairs
    builder = build_graph(args.steps)
    run_once(builder, True, args.profile, args.steps)  # warm-up: imports, first compile
    run_once(builder, False, args.profile, args.steps)
    plain: list[float] = []
    checked: list[float] = []
    for index in range(pairs):
        # Alternate which one goes first, so that drift on a shared machine hits both alike.
        order = (False, True) if index % 2 == 0 else (True, False)
        for is_checked in order:
            (checked if is_checked else plain).append(
                run_once(builder, is_checked, args.profile, args.steps)
            )
    ratios = [c / p for c, p in zip(checked, plain)]
    ratio = statistics.median(ratios)
    print(f"{args.steps}-step chat graph, profile {args.profile}, {pairs} pairs")
    print(f"InMemorySaver():                median {statistics.median(plain) * 1000:8.1f} ms")
    print(f"CheckedSaver(InMemorySaver()):  median {statistics.median(checked) * 1000:8.1f} ms")
    print(f"ratio checked / plain:          median {ratio:.3f}"
          f" (pairs {min(ratios):.3f} to {max(ratios):.3f}); target <= {TARGET}")
    if args.quick:
        return 0
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
