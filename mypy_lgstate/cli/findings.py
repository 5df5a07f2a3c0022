"""The findings of ``lgstate check`` and the formats it prints them in: text, json, github, sarif,
gitlab."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from mypy.errorcodes import error_codes

import mypy_lgstate

CODE_PREFIX: Final = "lgstate-"
PROJECT_URL: Final = "https://github.com/mypy-lgstate/mypy-lgstate"
DOCS_URL: Final = PROJECT_URL + "/blob/main/docs/errors/{code}.md"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"


class Finding(NamedTuple):
    file: str
    line: int
    column: int  # 1-based, as editors, GitHub and SARIF count (mypy's own JSON counts from 0)
    code: str
    message: str
    severity: str  # "error": the plugin reports nothing else


def parse_mypy_json(line: str) -> Finding | None:
    """One line of mypy's ``--output json``, when it is a finding of this plugin."""
    try:
        error = json.loads(line)
    except ValueError:
        return None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, str) or not code.startswith(CODE_PREFIX):
        return None
    return Finding(
        file=error["file"],
        line=error["line"],
        column=max(error["column"], 0) + 1,
        code=code,
        message=error["message"],
        severity=error["severity"],
    )


def as_text(findings: Sequence[Finding], checked: int) -> str:
    lines = [f"{f.file}:{f.line}: {f.severity}: {f.message}  [{f.code}]" for f in findings]
    sources = _plural(checked, "source file")
    if findings:
        files = len({f.file for f in findings})
        lines.append(
            f"Found {_plural(len(findings), 'error')} in {_plural(files, 'file')}"
            f" (checked {sources})"
        )
    else:
        lines.append(f"Success: no issues found in {sources}")
    return "\n".join(lines)


def as_json(findings: Sequence[Finding], checked: int) -> str:
    return json.dumps([f._asdict() for f in findings], indent=2)


def as_github(findings: Sequence[Finding], checked: int) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on its line."""
    return "\n".join(
        f"::error file={_property(f.file)},line={f.line},col={f.column},"
        f"title={_property(f.code)}::{_data(f.message)}"
        for f in findings
    )


def as_sarif(findings: Sequence[Finding], checked: int) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: one rule per error code, each linking to the
    code's documentation page."""
    codes = sorted(name for name in error_codes if name.startswith(CODE_PREFIX))
    index = {code: i for i, code in enumerate(codes)}
    rules = [_sarif_rule(code) for code in codes]
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {
                            "uri": f.file.replace("\\", "/"),
                            "uriBaseId": "%SRCROOT%",
                        },
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }
            ],
        }
        for f in findings
    ]
    driver = {
        "name": "lgstate",
        "version": mypy_lgstate.__version__,
        "informationUri": PROJECT_URL,
        "rules": rules,
    }
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return json.dumps(log, indent=2)


def as_gitlab(findings: Sequence[Finding], checked: int) -> str:
    """A GitLab code quality report (``artifacts: reports: codequality``): GitLab shows each finding
    in the merge request. The fingerprint leaves the line out, so that a finding keeps its identity
    when code above it moves; the same finding twice in a file is told apart by a counter."""
    seen: dict[str, int] = {}
    issues = []
    for f in findings:
        identity = f"{f.code}\0{f.file}\0{f.message}"
        seen[identity] = seen.get(identity, 0) + 1
        fingerprint = hashlib.sha256(f"{identity}\0{seen[identity]}".encode()).hexdigest()
        issues.append(
            {
                "description": f.message,
                "check_name": f.code,
                "fingerprint": fingerprint,
                "severity": "major",
                "location": {"path": f.file.replace("\\", "/"), "lines": {"begin": f.line}},
            }
        )
    return json.dumps(issues, indent=2)


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


FORMATS: Final[dict[str, Callable[[Sequence[Finding], int], str]]] = {
    "text": as_text,
    "json": as_json,
    "github": as_github,
    "sarif": as_sarif,
    "gitlab": as_gitlab,
}
