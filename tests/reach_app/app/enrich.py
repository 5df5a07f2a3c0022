"""A subgraph built by an unannotated function: mypy checks its body only with check_untyped_defs,
which lgstate check and lgstate report set."""

from langgraph.graph import StateGraph

from app.state import ResearchState


def enrich(state: ResearchState):  # type: ignore[no-untyped-def]
    return {"enriched": True}


def build_enrich():  # type: ignore[no-untyped-def]
    builder = StateGraph(ResearchState)
    builder.add_node("enrich", enrich)
    builder.set_entry_point("enrich")
    return builder.compile()
