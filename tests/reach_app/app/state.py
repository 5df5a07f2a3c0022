"""The graph's state, in a module of its own."""

import operator
from typing import Annotated

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import NotRequired, TypedDict


class ResearchState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    sources: Annotated[list[str], operator.add]
    summary: NotRequired[str]
    enriched: NotRequired[bool]
    deployed: NotRequired[str]
