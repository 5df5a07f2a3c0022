"""A compiled subgraph added as a node without ``input_schema=``: LangGraph gives it the parent's
whole state, and the subgraph's first checkpoint holds it, so the value of an ``UntrackedValue``
channel, never checkpointed otherwise, is written then (a client raises ``TypeError: Type is not
msgpack serializable``), even when the subgraph's own state has no such field. With
``input_schema=`` of a class without the channel, the subgraph gets only that class's keys.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import StrExpr, TypeInfo
from mypy.plugin import MethodContext
from mypy.types import Instance

from mypy_lgstate.checker.findings import Findings
from mypy_lgstate.checker.graphs import Graphs
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core import messages
from mypy_lgstate.core.messages import field_part
from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import schema_keys

# A compiled graph: ``CompiledStateGraph``, or any other ``Pregel`` (a functional ``@entrypoint``).
PREGEL: Final = "langgraph.pregel.main.Pregel"


def whole_state_findings(
    ctx: MethodContext,
    api: TypeChecker,
    schemas: tuple[TypeInfo, ...],
    walker: Walker,
    graphs: Graphs,
) -> Findings | None:
    """What an ``add_node`` call that adds a compiled subgraph without ``input_schema=`` writes to
    the subgraph's first checkpoint of the untracked channels of ``schemas`` (the parent's)."""
    bound = discovery.bound_arguments(ctx)
    action = bound.get("action") or bound.get("node")
    if action is None or "input_schema" in bound or not schemas:
        return None
    subgraph = proper_type(action[1])
    if not isinstance(subgraph, Instance) or not subgraph.type.has_base(PREGEL):
        return None
    name = bound.get("node")
    node = name[0].value if name is not None and isinstance(name[0], StrExpr) else "subgraph"
    untracked = graphs.special_keys(api, schemas).untracked
    problems = []
    touched: frozenset[tuple[str, str]] = frozenset()
    for info in schemas:
        keys = [key for key in schema_keys(info) if key in untracked]
        if not keys:
            continue
        found = walker.check_state_class(info)
        touched |= found.touched
        for key in keys:
            top = info.name + field_part(key)
            problems += [
                problem._replace(
                    what=messages.subgraph_input_what(node, problem.what),
                    fix=messages.subgraph_input_fix(node, key),
                    anchors=(),
                )
                for problem in found.problems
                if problem.path == top or problem.path.startswith((top + ".", top + "["))
            ]
    return Findings(tuple(problems), touched=touched)
