"""Builds, compiles and runs the triage graph: ``cd examples && python -m triage.graph``."""

import asyncio

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import TypedDict

from triage.assistant import build_assistant, follow_up
from triage.nodes import (
    classify,
    draft_reply,
    escalate,
    fan_out,
    human_review,
    lookup_customer,
    send_reply,
)
from triage.state import DraftTask, TicketInput, TicketState, TriageOutcome


def audit_ticket(ticket_id: str, reviewer: str) -> list[str]:
    """Records who looked at a ticket, in a small graph of its own; returns what was saved."""

    class Reviewer(BaseModel):  # MISTAKE: defined in a function: the loader cannot re-import it
        name: str

    class AuditState(TypedDict):
        ticket_id: str
        reviewers: list[Reviewer]

    class AuditUpdate(TypedDict):
        reviewers: list[Reviewer]

    def audit(state: AuditState) -> AuditUpdate:
        return {"reviewers": [*state["reviewers"], Reviewer(name=reviewer)]}

    builder = StateGraph(AuditState)
    builder.add_node("audit", audit)
    builder.add_edge(START, "audit")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": f"audit-{ticket_id}"}}
    graph.invoke({"ticket_id": ticket_id, "reviewers": []}, config)
    # Read back from the checkpoint: each reviewer is a plain dict now, not a Reviewer.
    return [repr(r) for r in graph.get_state(config).values["reviewers"]]


def build_graph() -> CompiledStateGraph[TicketState, None, TicketInput, TriageOutcome]:
    builder = StateGraph(TicketState, input_schema=TicketInput, output_schema=TriageOutcome)
    builder.add_node("classify", classify)
    builder.add_node("lookup_customer", lookup_customer)
    builder.add_node("draft_reply", draft_reply, input_schema=DraftTask)
    builder.add_node("human_review", human_review, destinations=("send_reply", "escalate"))
    builder.add_node("send_reply", send_reply)
    builder.add_node("escalate", escalate)

    builder.add_edge(START, "classify")
    builder.add_edge("classify", "lookup_customer")
    builder.add_conditional_edges("lookup_customer", fan_out, ["draft_reply"])
    builder.add_edge("draft_reply", "human_review")
    builder.add_edge("send_reply", END)
    builder.add_edge("escalate", END)
    return builder.compile(checkpointer=InMemorySaver())


async def main() -> None:
    graph = build_graph()
    config: RunnableConfig = {"configurable": {"thread_id": "ticket-1042"}}
    ticket = TicketInput(
        ticket_id="1042",
        customer_email="ana@example.com",
        body="I was charged twice, please refund the second invoice.",
    )
    await graph.ainvoke(ticket, config)  # MISTAKE (json): the TicketInput itself is stored as __start__
    # The graph is now paused at human_review's interrupt(); resume it with the reviewer's answer.
    print(await graph.ainvoke(Command(resume="approve"), config))

    # What the default (msgpack) checkpointer gave back: the mistakes that did not raise.
    saved = (await graph.aget_state(config)).values
    print("tags:", type(saved["tags"]).__name__)  # list, not tuple
    print("status saved:", "status" in saved)  # False: the key was dropped
    print("reviewers:", audit_ticket("1042", "ana"))  # plain dicts, not Reviewer

    # The customer-facing agent and the follow-up workflow (triage.assistant).
    assistant = build_assistant()
    answered = await assistant.ainvoke(
        {"messages": [HumanMessage(content="Where is my refund?")]},
        {"configurable": {"thread_id": "chat-1042"}},
    )
    print("assistant:", answered["messages"][-1].content, "| reminders:", answered["reminders"])
    print(await follow_up.ainvoke("1042", {"configurable": {"thread_id": "follow-up-1042"}}))


if __name__ == "__main__":
    asyncio.run(main())
