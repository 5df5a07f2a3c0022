"""The audit's output: text, json, markdown, sarif. Each starts from the counts (per kind, per
channel), then lists the problems, most threads first, each once with its example threads."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

import mypy_lgstate
from mypy_lgstate.runtime.audit.problems import Problem, Tally
from mypy_lgstate.runtime.audit.run import Result
from mypy_lgstate.runtime.audit.stores import shown
from mypy_lgstate.runtime.audit.wording import KINDS

DOCS_URL: Final = "https://github.com/mypy-lgstate/mypy-lgstate/blob/main/docs/audit.md"
_KIND_HELP: Final = {
    "unreadable": "the serializer raises on the stored bytes",
    "unimportable": "the stored class no longer imports (or is not on the strict allowlist): the value comes back as a dict or its raw value",
    "fallback": "the loader could not rebuild the stored class from its fields (a model rebuilt with model_construct, a dataclass as a dict)",
    "missing": "a required channel, key or field the stored value lacks",
    "enum": "a stored enum value that is no longer a member",
    "type": "a stored value that does not match today's declared type",
    "dropped": "a stored channel today's graph no longer has: its value is ignored",
}


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def summary(result: Result) -> str:
    tally, options = result.tally, result.options
    subgraphs = tally.namespaces - tally.threads  # a subgraph's namespaces: its own checkpoints
    each = "each thread and subgraph namespace" if subgraphs else "each thread"
    which = "every checkpoint" if options.all_checkpoints else f"the latest checkpoint of {each}"
    graphs = ", ".join(options.graphs)
    threads = _plural(tally.threads, "thread")
    if subgraphs:
        threads += f" (and {_plural(subgraphs, 'subgraph namespace')} in them)"
    line = (
        f"audited {threads}, {_plural(tally.checkpoints, 'checkpoint')}"
        f" ({which}) of {shown(options.store)} against {graphs}"
    )
    if tally.skipped:
        line += (
            f"; {_plural(tally.skipped, 'checkpoint')} of subgraphs no --graph reaches not audited"
        )
    return line


def verdict(tally: Tally) -> str:
    if not tally.problems:
        return f"Success: every audited thread ({tally.threads:,}) resumes on the state it saved"
    return (
        f"Found {_plural(len(tally.problems), 'problem')} in {tally.affected:,} of"
        f" {_plural(tally.threads, 'thread')}"
    )


def _counts(counts: dict[str, list[int]], order: tuple[str, ...] = ()) -> list[tuple[str, int, int]]:
    rank = {item: i for i, item in enumerate(order)}
    items = sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), -kv[1][0], kv[0]))
    return [(item, threads, findings) for item, (threads, findings) in items]


def _also_at(problem: Problem) -> list[str]:
    """The other places a problem of a class was found at (its message names the first)."""
    return [pattern for _, pattern in problem.places[1:]]


def _examples(problem: Problem) -> str:
    return ", ".join(
        example.thread_id + (f" ({example.checkpoint_ns})" if example.checkpoint_ns else "")
        for example in problem.examples
    )


def as_text(result: Result) -> str:
    tally = result.tally
    lines = [summary(result)]
    if tally.problems:
        kinds = ", ".join(
            f"{kind} {_plural(threads, 'thread')}" for kind, threads, _ in _counts(tally.kinds, KINDS)
        )
        channels = ", ".join(
            f"{channel} {_plural(threads, 'thread')}" for channel, threads, _ in _counts(tally.channels)
        )
        lines += [f"by kind: {kinds}", f"by channel: {channels}", ""]
        for problem in tally.sorted_problems():
            finding = problem.finding
            more = problem.threads - len(problem.examples)
            examples = _examples(problem) + (f" and {more:,} more" if more > 0 else "")
            lines.append(f"{finding.kind}: {finding.message}")
            if len(problem.places) > 1:
                lines.append(f"  also at {', '.join(_also_at(problem))}")
            lines.append(
                f"  {_plural(problem.threads, 'thread')} ({_plural(problem.findings, 'finding')}):"
                f" {examples}"
            )
        lines.append("")
    lines.append(verdict(tally))
    return "\n".join(lines)


def as_json(result: Result) -> str:
    tally, options = result.tally, result.options
    document = {
        "store": shown(options.store),
        "graphs": list(options.graphs),
        "checkpoints": "all" if options.all_checkpoints else "latest",
        "threads": tally.threads,
        "namespaces": tally.namespaces,
        "checkpoints_audited": tally.checkpoints,
        "checkpoints_skipped": tally.skipped,
        "affected_threads": tally.affected,
        "kinds": {kind: {"threads": t, "findings": f} for kind, t, f in _counts(tally.kinds, KINDS)},
        "channels": {channel: {"threads": t, "findings": f} for channel, t, f in _counts(tally.channels)},
        "problems": [_problem_json(problem) for problem in tally.sorted_problems()],
    }
    return json.dumps(document, indent=2)


def _problem_json(problem: Problem) -> dict[str, Any]:
    finding = problem.finding
    return {
        "kind": finding.kind,
        "channel": finding.channel,
        "path": finding.pattern,
        "places": [{"channel": channel, "path": path} for channel, path in problem.places],
        "message": finding.message,
        "threads": problem.threads,
        "findings": problem.findings,
        "examples": [example._asdict() for example in problem.examples],
    }


def as_markdown(result: Result) -> str:
    tally = result.tally
    lines = ["# lgstate audit", "", summary(result) + ".", "", f"**{verdict(tally)}**"]
    if tally.problems:
        lines += ["", "| kind | threads | findings |", "|---|---:|---:|"]
        lines += [f"| {kind} | {t:,} | {f:,} |" for kind, t, f in _counts(tally.kinds, KINDS)]
        lines += ["", "| channel | threads | findings |", "|---|---:|---:|"]
        lines += [f"| `{channel}` | {t:,} | {f:,} |" for channel, t, f in _counts(tally.channels)]
        lines += ["", "## Problems", ""]
        for problem in tally.sorted_problems():
            finding = problem.finding
            also = "".join(f", `{pattern}`" for pattern in _also_at(problem))
            lines.append(
                f"- **{finding.kind}** `{finding.pattern}`{also}: {_plural(problem.threads, 'thread')}"
                f" (for example {_examples(problem)})  "
            )
            lines.append(f"  {finding.message}")
    return "\n".join(lines)


def as_sarif(result: Result) -> str:
    """SARIF 2.1.0: one rule per kind, one result per problem. A problem is in the data, not in a
    file: it is located at the class that declares it, where the source is known."""
    tally = result.tally
    rules = [
        {
            "id": f"lgstate-audit-{kind}",
            "name": f"lgstate-audit-{kind}",
            "shortDescription": {"text": _KIND_HELP[kind]},
            "helpUri": DOCS_URL,
            "defaultConfiguration": {"level": "error"},
        }
        for kind in KINDS
    ]
    index = {kind: i for i, kind in enumerate(KINDS)}
    results = []
    for problem in tally.sorted_problems():
        finding = problem.finding
        entry: dict[str, Any] = {
            "ruleId": f"lgstate-audit-{finding.kind}",
            "ruleIndex": index[finding.kind],
            "level": "error",
            "message": {
                "text": f"{finding.message} ({_plural(problem.threads, 'thread')}, for example"
                f" {_examples(problem)})"
            },
            "locations": [
                {
                    "logicalLocations": [
                        {"fullyQualifiedName": pattern, "kind": "member"}
                        for _, pattern in problem.places
                    ]
                }
            ],
            "properties": {
                "channel": finding.channel,
                "path": finding.pattern,
                "places": [{"channel": channel, "path": path} for channel, path in problem.places],
                "threads": problem.threads,
                "findings": problem.findings,
                "examples": [example._asdict() for example in problem.examples],
            },
        }
        if finding.source:
            file, line = finding.source
            entry["locations"][0]["physicalLocation"] = {
                "artifactLocation": {"uri": file.replace("\\", "/"), "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": line},
            }
        results.append(entry)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "lgstate audit",
                        "version": mypy_lgstate.__version__,
                        "informationUri": DOCS_URL,
                        "rules": rules,
                    }
                },
                "results": results,
                "properties": {
                    "threads": tally.threads,
                    "namespaces": tally.namespaces,
                    "checkpoints": tally.checkpoints,
                    "affected_threads": tally.affected,
                },
            }
        ],
    }
    return json.dumps(log, indent=2)


FORMATS: Final[dict[str, Callable[[Result], str]]] = {
    "text": as_text,
    "json": as_json,
    "markdown": as_markdown,
    "sarif": as_sarif,
}
