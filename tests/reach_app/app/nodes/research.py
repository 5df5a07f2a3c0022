"""Nodes, defined apart from the graph that runs them."""

from typing import Any

from app.nodes.deploy import developer_deploy
from app.state import ResearchState


def _prompt_vars(state: ResearchState) -> dict[str, Any]:
    # A helper: it is called below, and its dict goes to a prompt.
    return {"question": state["question"].strip(), "today": "2026-12-01"}


def search(state: ResearchState) -> dict[str, Any]:
    variables = _prompt_vars(state)
    return {"sources": [f"https://example.com/?q={variables['question']}"]}


def summarize(state: ResearchState) -> dict[str, Any]:
    return {"summary": " ".join(state["sources"])}


async def deploy(state: ResearchState) -> dict[str, Any]:
    return await developer_deploy(state)
