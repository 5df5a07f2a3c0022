"""``lgstate report``: each graph's schemas, channels and nodes (checked, unchecked or opaque, and
why), and the write sites, as the checks saw them (``routes/coverage.py``), in text, JSON or
Markdown."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, Final

from mypy_lgstate.cli.mypy_build import run_mypy
from mypy_lgstate.cli.subcommands import Subcommand, output
from mypy_lgstate.routes.coverage import CoverageRecorder
from mypy_lgstate.routes.coverage_records import (
    GraphCoverage,
    Location,
    NodeCoverage,
    WriteSite,
    plural,
)


def as_json(recorder: CoverageRecorder, findings: int) -> str:
    return json.dumps(_as_data(recorder, findings), indent=2)


def _as_data(recorder: CoverageRecorder, findings: int) -> dict[str, Any]:
    return {
        "graphs": [
            {
                "state": graph.state,
                "title": graph.title,
                "declared_at": graph.declared_at._asdict() if graph.declared_at else None,
                "schemas": [
                    {"class": s.fullname, "roles": list(s.roles), "file": s.file}
                    for s in graph.schemas
                ],
                "channels": list(graph.channels),
                "nodes": [
                    {
                        "name": node.name,
                        **node.location._asdict(),
                        "status": node.status,
                        "reason": node.reason,
                        "category": node.category,
                        "values_typed_any": node.any_values,
                    }
                    for node in _sorted_nodes(graph)
                ],
                "unresolved": list(graph.unresolved),
                "nodes_checked": graph.checked(),
                "nodes_total": len(graph.nodes),
            }
            for graph in recorder.sorted_graphs()
        ],
        "write_sites": [
            {
                "site": site.site,
                **site.location._asdict(),
                "graph": site.graph,
                "unresolved": site.unresolved,
            }
            for site in recorder.sorted_write_sites()
        ],
        "totals": recorder.totals(findings),
        "coverage": recorder.coverage().data(),
    }


def as_text(recorder: CoverageRecorder, findings: int) -> str:
    lines: list[str] = []
    graphs = recorder.sorted_graphs()
    for graph in graphs:
        lines.append(f"graph {_graph_title(graph)}")
        for schema in graph.schemas:
            where = f" ({schema.file})" if schema.file else ""
            lines.append(f"  {'/'.join(schema.roles)} schema: {schema.fullname}{where}")
        if graph.channels or graph.title is None:  # the functional API's tasks have none
            lines.append(f"  channels: {', '.join(graph.channels) or '(none known)'}")
        for node in _sorted_nodes(graph):
            reason = f": {node.reason}" if node.reason else ""
            lines.append(
                f"  {node.status:<9} node {node.name} ({_at(node.location)}){reason}"
            )
        lines.extend(f"  unresolved: {reason}" for reason in graph.unresolved)
        if not graph.nodes and not graph.unresolved:
            lines.append(f"  {_no_nodes(graph, graphs)}")
        lines.append(f"  nodes checked {graph.checked()}/{len(graph.nodes)}")
        lines.append("")
    write_sites = recorder.sorted_write_sites()
    if write_sites:
        lines.append("write sites")
        for site in write_sites:
            written = f" (graph {site.graph})" if site.graph else _unknown_graph(site)
            lines.append(f"  {site.site} ({_at(site.location)}){written}")
        lines.append("")
    lines.append(_totals_line(recorder.totals(findings)))
    return "\n".join(lines)


def as_markdown(recorder: CoverageRecorder, findings: int) -> str:
    lines = ["# Checkpoint coverage", ""]
    graphs = recorder.sorted_graphs()
    for graph in graphs:
        lines += [f"## Graph {_graph_title(graph)}", ""]
        lines += ["| schema | role | file |", "|---|---|---|"]
        lines += [
            f"| `{s.fullname}` | {', '.join(s.roles)} | {s.file or ''} |" for s in graph.schemas
        ]
        channels = ", ".join(f"`{channel}`" for channel in graph.channels) or "(none known)"
        lines += ["", f"Channels: {channels}", ""] if graph.channels or graph.title is None else [""]
        if graph.nodes:
            lines += ["| node | status | where | why |", "|---|---|---|---|"]
            lines += [
                f"| `{node.name}` | {node.status} | {_at(node.location)} | {node.reason or ''} |"
                for node in _sorted_nodes(graph)
            ]
            lines.append("")
        if graph.unresolved:
            lines += [*(f"- Unresolved: {reason}" for reason in graph.unresolved), ""]
        elif not graph.nodes:
            no_nodes = _no_nodes(graph, graphs)
            lines += [f"{no_nodes[0].upper()}{no_nodes[1:]}.", ""]
        lines += [f"Nodes checked {graph.checked()}/{len(graph.nodes)}", ""]
    write_sites = recorder.sorted_write_sites()
    if write_sites:
        lines += ["## Write sites", "", "| site | where | graph |", "|---|---|---|"]
        lines += [
            f"| `{site.site}` | {_at(site.location)} |"
            f" {f'`{site.graph}`' if site.graph else _unknown_graph(site).strip()} |"
            for site in write_sites
        ]
        lines.append("")
    lines += ["## Totals", "", _totals_line(recorder.totals(findings))]
    return "\n".join(lines)


def _no_nodes(graph: GraphCoverage, graphs: list[GraphCoverage]) -> str:
    """Why a graph lists no node (one needs a node to compile). Nodes added by a function the
    builder is passed to are recorded under that function's parameter, which joins this entry only
    when it is its state's one graph: the entry they are listed under, when there is one."""
    elsewhere = [
        other for other in graphs
        if other.declared_at is None and other.state == graph.state and other.nodes
    ]
    if elsewhere:
        return (
            "no nodes found here: the nodes of a builder of this state that is passed to a"
            f" function are listed under graph {_graph_title(elsewhere[0])}"
        )
    if graph.state is not None and graph.state.startswith("langchain.agents."):
        # create_agent's own nodes (the model, the tools) are LangChain's, and write messages.
        return "no middleware hooks: the agent's own nodes are LangChain's"
    return "no nodes found: no add_node call on this builder in the checked code"


def _unknown_graph(site: WriteSite) -> str:
    return f" (graph unknown: {site.unresolved})" if site.unresolved else ""


def _graph_title(graph: GraphCoverage) -> str:
    declared = graph.declared_at
    if graph.title is not None:  # the functional API's
        return graph.title + (f" ({_at(declared)})" if declared else "")
    where = f" ({_at(declared)})" if declared else " (no StateGraph(...) call in the checked code)"
    return f"{graph.state or '(unknown state)'}{where}"


def _sorted_nodes(graph: GraphCoverage) -> list[NodeCoverage]:
    return sorted(graph.nodes.values(), key=lambda node: (node.location, node.name))


def _at(location: Location) -> str:
    return f"{location.file}:{location.line}"


def _totals_line(totals: dict[str, int]) -> str:
    checked = totals["checked"] + totals["body"]
    return (
        f"{plural(totals['graphs'], 'graph')}, nodes checked {checked}/{totals['nodes']}"
        f" (from bodies {totals['body']}, unchecked {totals['unchecked']},"
        f" opaque {totals['opaque']}),"
        f" {plural(totals['write_sites'], 'write site')}, {plural(totals['findings'], 'finding')}"
    )


FORMATS: Final[dict[str, Callable[[CoverageRecorder, int], str]]] = {
    "text": as_text,
    "json": as_json,
    "markdown": as_markdown,
}


def report(args: argparse.Namespace) -> int:
    recorder = CoverageRecorder()
    # The report does not need the lock file: a broken one must not stop it.
    outcome = run_mypy(args, recorder=recorder, lock_optional=True)
    output(args, FORMATS[args.format](recorder, len(outcome.findings)))
    return 0


COMMAND: Final = Subcommand(
    help="list each graph's schemas, channels, nodes (checked, unchecked, opaque), write sites",
    formats=tuple(FORMATS),
    run=report,
)
