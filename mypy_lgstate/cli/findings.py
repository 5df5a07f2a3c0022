"""The findings of ``lgstate check`` and the formats it prints them in: text, json, github, sarif,
gitlab, each with the run's coverage (``coverage_records.Coverage``: the graph nodes checked, and why the
others are not).

Each problem is one finding for the whole run (``once_per_problem``): mypy reports a class used by
graphs in several files once in each of them, and the plugin tags those messages with the problem's
identity under the command (``report.tagging``). The finding is shown at its best location, the
field's own line when its file is checked, else the first call in file order, and lists the others.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from mypy.errorcodes import error_codes

import mypy_lgstate
from mypy_lgstate.routes.coverage_records import Coverage
from mypy_lgstate.core.messages import TAG_END, TAG_START

CODE_PREFIX: Final = "lgstate-"
PROJECT_URL: Final = "https://github.com/mypy-lgstate/mypy-lgstate"
DOCS_URL: Final = PROJECT_URL + "/blob/main/docs/errors/{code}.md"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"


class Location(NamedTuple):
    file: str
    line: int
    column: int


class Finding(NamedTuple):
    file: str
    line: int
    column: int  # 1-based, as editors, GitHub and SARIF count (mypy's own JSON counts from 0)
    code: str
    message: str
    severity: str  # "error": the plugin reports nothing else
    # The other places the same problem is reported from (other files' calls).
    related: tuple[Location, ...] = ()
    # The problem's identity, when it may be reported from several files; and whether this is its
    # own line (the field's), rather than a call that reached it.
    problem: str | None = None
    home: bool = False
    # Where the value or key is written, when the finding is reported at the call that registers a
    # node of another module (the message names it too).
    written: Location | None = None

    def shown(self) -> dict[str, Any]:
        """The finding as ``--format json`` prints it (``written`` only for a finding reported away
        from the value or key it is about)."""
        shown = {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "related": [location._asdict() for location in self.related],
        }
        if self.written is not None:
            shown["written"] = self.written._asdict()
        return shown

    def text(self) -> str:
        """The message, with the other locations when there are some (text and github)."""
        if not self.related:
            return self.message
        others = ", ".join(f"{location.file}:{location.line}" for location in self.related)
        return f"{self.message} (also reached from {others})"


def parse_mypy_json(line: str) -> Finding | None:
    """One line of mypy's ``--output json``, when it is a finding of this plugin."""
    try:
        error = json.loads(line)
    except ValueError:
        return None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, str) or not code.startswith(CODE_PREFIX):
        return None
    message, problem, home, written = _untagged(error["message"])
    return Finding(
        file=error["file"],
        line=error["line"],
        column=max(error["column"], 0) + 1,
        code=code,
        message=message,
        severity=error["severity"],
        problem=problem,
        home=home,
        written=written,
    )


def _untagged(message: str) -> tuple[str, str | None, bool, Location | None]:
    """The message without the problem's tag, the problem's identity, whether it is at home, and
    where the value it is about is written, when that is another place (``file:line``)."""
    start = message.rfind(TAG_START)
    if start < 0 or not message.endswith(TAG_END):
        return message, None, False, None
    identity, _, place = message[start + len(TAG_START):-len(TAG_END)].partition(" ")
    place, _, written = place.partition(" ")
    file, _, line = written.rpartition(":")
    at = Location(file, int(line), 1) if file and line.isdigit() else None
    return message[:start], identity, place == "home", at


def once_per_problem(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per problem: the same problem reported from several files is shown once, at its
    own line when one file reports it there, else at the first call in file order, with the other
    locations as ``related``. The findings stay in mypy's order otherwise."""
    by_problem: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.problem is not None:
            by_problem.setdefault((finding.code, finding.problem), []).append(finding)
    shown: list[Finding] = []
    done: set[tuple[str, str]] = set()
    for finding in findings:
        if finding.problem is None:
            shown.append(finding)
            continue
        key = (finding.code, finding.problem)
        if key in done:
            continue
        done.add(key)
        places = sorted(by_problem[key], key=lambda f: (not f.home, f.file, f.line, f.column))
        best, others = places[0], places[1:]
        related = tuple(dict.fromkeys(Location(f.file, f.line, f.column) for f in others))
        shown.append(best._replace(related=related))
    return shown


def as_text(findings: Sequence[Finding], checked: int, coverage: Coverage) -> str:
    lines = [f"{f.file}:{f.line}: {f.severity}: {_one_line(f.text())}  [{f.code}]" for f in findings]
    sources = _plural(checked, "source file")
    if findings:
        files = len({f.file for f in findings})
        lines.append(
            f"Found {_plural(len(findings), 'error')} in {_plural(files, 'file')}"
            f" (checked {sources})"
        )
    else:
        lines.append(f"Success: no issues found in {sources}")
    lines.append(coverage.line())
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """A message on one line: a newline inside a key (``"first\\nsecond"``) is shown escaped."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def as_json(findings: Sequence[Finding], checked: int, coverage: Coverage) -> str:
    return json.dumps(
        {"findings": [f.shown() for f in findings], "coverage": coverage.data()}, indent=2
    )


def as_github(findings: Sequence[Finding], checked: int, coverage: Coverage) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on its line; nodes not
    checked, a notice in the run's summary. Nothing at all when there is nothing to report."""
    lines = [
        f"::error file={_property(f.file)},line={f.line},col={f.column},"
        f"title={_property(f.code)}::{_data(f.text())}"
        for f in findings
    ]
    if coverage.not_checked:
        lines.append(f"::notice title=lgstate coverage::{_data(coverage.line())}")
    return "\n".join(lines)


def as_sarif(findings: Sequence[Finding], checked: int, coverage: Coverage) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: one rule per error code, each linking to the
    code's documentation page."""
    codes = sorted(name for name in error_codes if name.startswith(CODE_PREFIX))
    index = {code: i for i, code in enumerate(codes)}
    rules = [_sarif_rule(code) for code in codes]
    results = [_sarif_result(f, index[f.code]) for f in findings]
    driver = {
        "name": "lgstate",
        "version": mypy_lgstate.__version__,
        "informationUri": PROJECT_URL,
        "rules": rules,
    }
    run = {
        "tool": {"driver": driver},
        "results": results,
        # A property bag (SARIF 2.1.0, section 3.8): code scanning keeps it with the run.
        "properties": {"coverage": coverage.data()},
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2)


def as_gitlab(findings: Sequence[Finding], checked: int, coverage: Coverage) -> str:
    """A GitLab code quality report (``artifacts: reports: codequality``): GitLab shows each finding
    in the merge request. The fingerprint leaves the line out, so that a finding keeps its identity
    when code above it moves (and the locations it is also reached from); the same finding twice in
    a file is told apart by a counter. The report has no place for the coverage: the command prints
    its line on stderr, in the job's log."""
    seen: dict[str, int] = {}
    issues = []
    for f in findings:
        identity = f"{f.code}\0{f.file}\0{f.message}"
        seen[identity] = seen.get(identity, 0) + 1
        fingerprint = hashlib.sha256(f"{identity}\0{seen[identity]}".encode()).hexdigest()
        issues.append(
            {
                "description": f.text(),
                "check_name": f.code,
                "fingerprint": fingerprint,
                "severity": "major",
                "location": {"path": f.file.replace("\\", "/"), "lines": {"begin": f.line}},
            }
        )
    return json.dumps(issues, indent=2)


def _sarif_result(f: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": "error",
        "message": {"text": f.message},
        "locations": [_sarif_location(f)],
    }
    related = [
        (location, "also reached from here") for location in f.related  # other files' calls
    ]
    if f.written is not None:
        related.insert(0, (f.written, "written here"))
    if related:
        result["relatedLocations"] = [
            {"id": i, **_sarif_location(location), "message": {"text": text}}
            for i, (location, text) in enumerate(related, start=1)
        ]
    return result


def _sarif_location(at: Finding | Location) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": at.file.replace("\\", "/"), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": at.line, "startColumn": at.column},
        }
    }


def _sarif_rule(code: str) -> dict[str, Any]:
    description = error_codes[code].description
    url = DOCS_URL.format(code=code)
    return {
        "id": code,
        "name": code,
        "shortDescription": {"text": description},
        "helpUri": url,
        "help": {
            "text": f"{description}. See {url}",
            "markdown": f"{description}. [{code}]({url})",
        },
        "defaultConfiguration": {"level": "error"},
    }


def _data(text: str) -> str:
    """Escapes for a workflow command's message (the runner decodes them)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


FORMATS: Final[dict[str, Callable[[Sequence[Finding], int, Coverage], str]]] = {
    "text": as_text,
    "json": as_json,
    "github": as_github,
    "sarif": as_sarif,
    "gitlab": as_gitlab,
}
