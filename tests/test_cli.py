"""The ``lgstate`` command: every subcommand and format, run as a user runs it, on real programs.

Each test writes a small project and runs the installed ``lgstate`` script (or ``python -m
mypy_lgstate``) in it. One mypy cache directory (``MYPY_CACHE_DIR``) is shared by the module's tests,
so langgraph is analysed once; the command keeps its own cache in an ``lgstate`` directory inside it.
"""

from __future__ import annotations

import configparser
import io
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path
from typing import Final

import jsonschema
import mypy.version
import pytest
import yaml

import library_caches
import mypy_lgstate
from mypy_lgstate.cli import command as cli, findings, mypy_build
from mypy_lgstate.routes.coverage_records import Coverage
from mypy_lgstate.core import lockfile
from mypy_lgstate.core.config import LGStateConfig, load_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli before 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LGSTATE = Path(sys.executable).parent / "lgstate"
TIMEOUT = 300  # seconds: a first run analyses langgraph, slowly on a busy machine

# A graph with checkpoint problems, and mypy errors of its own (line 20), in a project that has no
# mypy configuration at all.
APP = """\
from datetime import datetime

from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class Ticket(TypedDict):
    subject: str
    created_at: datetime


def open_ticket(state: Ticket) -> Ticket:
    return {"subject": state["subject"], "created_at": datetime.now()}


def pairs(state: Ticket) -> dict[str, tuple[int, int]]:
    return {}


count: int = "not an int"
builder = StateGraph(Ticket)
builder.add_node("open_ticket", open_ticket)
builder.add_node("pairs", pairs)
graph = builder.compile()
graph.invoke({"subject": "a", "created_at": datetime.now()})
"""
DATETIME = (
    'the JSON serializer raises TypeError when the checkpoint is written. Fix: store an ISO string'
    " (value.isoformat()) and parse it back with fromisoformat()"
)
PAIRS = (
    'pairs(){{}} is "tuple[int, int]": the {serializer} serializer writes it, but it comes back as list.'
    " Fix: store a list and declare it as list[...]"
)
# A node declared -> Ticket and an input of the channel's own declared type add nothing: the field's
# problem is reported once, on its line.
APP_JSON_FINDINGS = [
    (9, 1, "lgstate-unserializable", f'Ticket.created_at is "datetime": {DATETIME}'),
    (23, 1, "lgstate-lossy", PAIRS.format(serializer="JSON")),
]
# Both nodes are checked by their declared return types.
APP_COVERAGE = "nodes checked 2/2 (from bodies 0)"
APP_TEXT = [
    *(f"app.py:{line}: error: {message}  [{code}]" for line, _, code, message in APP_JSON_FINDINGS),
    "Found 2 errors in 1 file (checked 1 source file)",
    APP_COVERAGE,
]
# Under msgpack a datetime round-trips: only the tuples are left.
APP_MSGPACK_TEXT = [
    f"app.py:23: error: {PAIRS.format(serializer='msgpack')}  [lgstate-lossy]",
    "Found 1 error in 1 file (checked 1 source file)",
    APP_COVERAGE,
]
APP_COVERAGE_DATA = {
    "nodes": 2, "checked": 2, "from_bodies": 0, "not_checked": {}, "percent": 100.0,
    "values_typed_any": 0, "summary": APP_COVERAGE,
}

# Nodes of every kind for ``report``: checked, unchecked and opaque, in two graphs with one schema.
GRAPH = """\
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.graph import StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    question: str
    answer: str


class Update(TypedDict):
    answer: str


def answer(state: State) -> Update:
    return {"answer": state["question"]}


def review(state: State) -> Command[Any]:
    approved = interrupt({"answer": state["answer"]})
    return Command(update={"answer": approved})


def legacy(state: State) -> dict[str, Any]:
    return dict(state)


def tally(state: State) -> dict[str, Any]:
    return {"answer": state["question"]}


sub_builder = StateGraph(State)
sub_builder.add_node("answer", answer)
subgraph = sub_builder.compile()

builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_node("review", review)
builder.add_node("legacy", legacy)
builder.add_node("tally", tally)
builder.add_node("sub", subgraph)
builder.add_node("tools", ToolNode([]))
builder.add_node("echo", RunnableLambda(lambda state: state))
graph = builder.compile()
graph.invoke({"question": "why?"})
"""
GRAPH_REPORT = """\
graph graph.State (graph.py:36)
  state/input/output schema: graph.State (graph.py)
  channels: answer, question
  checked   node answer (graph.py:37)
  nodes checked 1/1

graph graph.State (graph.py:40)
  state/input/output schema: graph.State (graph.py)
  channels: answer, question
  checked   node answer (graph.py:41)
  checked   node review (graph.py:42)
  unchecked node legacy (graph.py:43): returns "dict[str, Any]", and its body is not read whole: legacy() returns a dict built elsewhere (a call whose type names no key): return a dict display ({"key": value}) or declare its update type (a TypedDict)
  body      node tally (graph.py:44): read from its body
  opaque    node sub (graph.py:45): a compiled subgraph: its own nodes are listed under its graph
  opaque    node tools (graph.py:46): a prebuilt node (ToolNode)
  opaque    node echo (graph.py:47): a Runnable ("RunnableLambda[Any, Any]")
  nodes checked 3/7

write sites
  interrupt.value (graph.py:24)
  Command.update (graph.py:25)
  invoke.input (graph.py:49) (graph graph.State)

2 graphs, nodes checked 4/8 (from bodies 1, unchecked 1, opaque 3), 3 write sites, 0 findings
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("mypy-cache")
    library_caches.seed(cache, None, lgstate=True)  # most projects here have no configuration
    library_caches.seed(cache / "plain", None)  # mypy itself, without the plugin
    return cache


def lgstate(
    project: Path, cache_dir: Path, *args: str, module: bool = False
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mypy_lgstate"] if module else [str(LGSTATE)]
    result = subprocess.run(
        [*command, *args],
        cwd=project,
        env={**os.environ, "MYPY_CACHE_DIR": str(cache_dir)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    # The progress line comes when the build outlasts PROGRESS_DELAY: on a loaded machine, any run.
    progress = [line for line in result.stderr.splitlines(True) if line.startswith(_PROGRESS)]
    for line in progress:
        result.stderr = result.stderr.replace(line, "", 1)
    return result


_PROGRESS: Final = "lgstate: checking "


@pytest.fixture(autouse=True)
def no_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, no progress line: it comes or not by the machine's load (a test of the line
    sets the delay itself)."""
    monkeypatch.setattr(mypy_build, "PROGRESS_DELAY", 3600.0)


def project_with(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        path = tmp_path / name.replace("__", ".")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


# check ------------------------------------------------------------------------------------------


def test_check_without_mypy_configuration_shows_only_lgstate_findings(
    tmp_path: Path, cache_dir: Path
) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, "check")
    assert result.stdout.splitlines() == APP_TEXT
    assert result.returncode == 1


def test_version() -> None:
    for flag in ("-V", "--version"):
        result = subprocess.run([LGSTATE, flag], capture_output=True, text=True, check=False)
        assert (result.returncode, result.stdout, result.stderr) == (
            0,
            f"lgstate {mypy_lgstate.__version__} (mypy {mypy.version.__version__})\n",
            "",
        )


def test_mypy_errors_alone_never_fail_the_check(tmp_path: Path, cache_dir: Path) -> None:
    code = APP.replace("datetime.now()", '"2024-01-01"').replace(": datetime", ": str")
    code = code.replace("tuple[int, int]", "list[int]")
    project = project_with(tmp_path, app__py=code)
    assert "count: int = " in code  # mypy's own error stays in the program
    result = lgstate(project, cache_dir, "check")
    assert result.stdout.splitlines() == ["Success: no issues found in 1 source file", APP_COVERAGE]
    assert result.returncode == 0
    plain = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache_dir / "plain"), "app.py"],
        cwd=project, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )
    assert "[assignment]" in plain.stdout and plain.returncode == 1


def test_python_dash_m_is_the_same_command(tmp_path: Path, cache_dir: Path) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, "check", "app.py", module=True)
    assert (result.returncode, result.stdout.splitlines()) == (1, APP_TEXT)


def test_profile_option_overrides_the_configuration_and_never_reuses_cached_results(
    tmp_path: Path, cache_dir: Path
) -> None:
    config = "[mypy]\n\n[mypy_lgstate]\nprofile = msgpack\n"
    project = project_with(tmp_path, app__py=APP, setup__cfg=config)
    runs = [
        lgstate(project, cache_dir, "check"),
        lgstate(project, cache_dir, "check", "--profile", "json"),
        lgstate(project, cache_dir, "check"),
        lgstate(project, cache_dir, "check", "--profile", "json"),
    ]
    outputs = [run.stdout.splitlines() for run in runs]
    assert outputs == [APP_MSGPACK_TEXT, APP_TEXT, APP_MSGPACK_TEXT, APP_TEXT]


def test_configured_files_are_the_default_paths(tmp_path: Path, cache_dir: Path) -> None:
    # ``other.py`` is not valid Python: checking it would stop mypy.
    config = '[tool.mypy]\nfiles = ["app.py"]\n'
    project = project_with(tmp_path, app__py=APP, other__py="x = (\n", pyproject__toml=config)
    result = lgstate(project, cache_dir, "check")
    assert (result.returncode, result.stdout.splitlines()) == (1, APP_TEXT)


def test_json_format(tmp_path: Path, cache_dir: Path) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, "check", "--format", "json")
    assert json.loads(result.stdout) == {
        "findings": [
            {"file": "app.py", "line": line, "column": column, "code": code, "message": message,
             "severity": "error", "related": []}
            for line, column, code, message in APP_JSON_FINDINGS
        ],
        "coverage": APP_COVERAGE_DATA,
    }
    assert result.returncode == 1


def test_github_format(tmp_path: Path, cache_dir: Path) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, "check", "--format", "github")
    assert result.stdout.splitlines() == [
        f"::error file=app.py,line={line},col={column},title={code}::{message}"
        for line, column, code, message in APP_JSON_FINDINGS
    ]
    assert result.returncode == 1


def test_github_format_escapes_what_workflow_commands_reserve() -> None:
    finding = findings.Finding("a,b:c.py", 3, 1, "lgstate-lossy", "50% off\nnext", "error")
    assert findings.as_github([finding], 1, NO_NODES) == (
        "::error file=a%2Cb%3Ac.py,line=3,col=1,title=lgstate-lossy::50%25 off%0Anext"
    )


NO_NODES = Coverage(nodes=0, checked=0, from_bodies=0, not_checked={}, values_typed_any=0)


# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that say what is required, for the
# objects the command writes.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"enum": ["2.1.0"]},
        "runs": {"type": "array", "items": {"$ref": "#/definitions/run"}},
    },
    "definitions": {
        "run": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {
                    "type": "object",
                    "required": ["driver"],
                    "properties": {"driver": {"$ref": "#/definitions/toolComponent"}},
                },
                "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
            },
        },
        "toolComponent": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "informationUri": {"type": "string", "format": "uri"},
                "rules": {"type": "array", "items": {"$ref": "#/definitions/reportingDescriptor"}},
            },
        },
        "reportingDescriptor": {
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string"},
                "helpUri": {"type": "string", "format": "uri"},
                "shortDescription": {"$ref": "#/definitions/multiformatMessageString"},
                "help": {"$ref": "#/definitions/multiformatMessageString"},
                "defaultConfiguration": {
                    "type": "object",
                    "properties": {"level": {"enum": ["none", "note", "warning", "error"]}},
                },
            },
        },
        "multiformatMessageString": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
        },
        "result": {
            "type": "object",
            "required": ["message"],
            "properties": {
                "message": {
                    "type": "object",
                    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
                },
                "ruleId": {"type": "string"},
                "ruleIndex": {"type": "integer", "minimum": -1},
                "level": {"enum": ["none", "note", "warning", "error"]},
                "locations": {"type": "array", "items": {"$ref": "#/definitions/location"}},
            },
        },
        "location": {
            "type": "object",
            "properties": {"physicalLocation": {"$ref": "#/definitions/physicalLocation"}},
        },
        "physicalLocation": {
            "type": "object",
            "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string", "format": "uri-reference"},
                        "uriBaseId": {"type": "string"},
                    },
                },
                "region": {
                    "type": "object",
                    "properties": {
                        "startLine": {"type": "integer", "minimum": 1},
                        "startColumn": {"type": "integer", "minimum": 1},
                    },
                },
            },
        },
    },
}


def test_sarif_format(tmp_path: Path, cache_dir: Path) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, "check", "--format", "sarif")
    log = json.loads(result.stdout)
    jsonschema.validate(log, SARIF_REQUIRED, format_checker=jsonschema.FormatChecker())
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    # One rule per error code of the plugin, each linking to the page that documents it.
    pages = sorted(page.stem for page in (ROOT / "docs" / "errors").glob("lgstate-*.md"))
    assert [rule["id"] for rule in rules] == pages
    for rule in rules:
        assert rule["helpUri"] == findings.DOCS_URL.format(code=rule["id"])
        assert rule["helpUri"].endswith(f"/docs/errors/{rule['id']}.md")
    found = [
        (
            r["ruleId"],
            rules[r["ruleIndex"]]["id"],
            r["message"]["text"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in run["results"]
    ]
    assert found == [
        (code, code, message, "app.py", {"startLine": line, "startColumn": column})
        for line, column, code, message in APP_JSON_FINDINGS
    ]
    assert run["properties"] == {"coverage": APP_COVERAGE_DATA}
    assert result.returncode == 1


def test_gitlab_format(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, app__py=APP)
    result = lgstate(project, cache_dir, "check", "--format", "gitlab")
    report = json.loads(result.stdout)
    assert [
        (issue["check_name"], issue["location"], issue["description"], issue["severity"])
        for issue in report
    ] == [
        (code, {"path": "app.py", "lines": {"begin": line}}, message, "major")
        for line, _, code, message in APP_JSON_FINDINGS
    ]
    assert (result.returncode, result.stderr) == (1, APP_COVERAGE + "\n")  # in the job's log
    # A fingerprint per finding, that stays when lines above it move (GitLab tracks issues by it).
    (project / "app.py").write_text("# A comment above everything.\n" + APP)
    moved = json.loads(lgstate(project, cache_dir, "check", "--format", "gitlab").stdout)
    assert [issue["location"]["lines"]["begin"] for issue in moved] == [10, 24]
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in report]
    assert len({issue["fingerprint"] for issue in report}) == len(report)


def test_clean_program_passes_in_every_format(tmp_path: Path, cache_dir: Path) -> None:
    code = APP.replace("datetime.now()", '"2024-01-01"').replace(": datetime", ": str")
    code = code.replace("tuple[int, int]", "list[int]")
    project = project_with(tmp_path, app__py=code)
    for output_format in findings.FORMATS:
        result = lgstate(project, cache_dir, "check", "--format", output_format)
        assert result.returncode == 0, output_format
        if output_format == "json":
            assert json.loads(result.stdout) == {"findings": [], "coverage": APP_COVERAGE_DATA}
        elif output_format == "sarif":
            assert json.loads(result.stdout)["runs"][0]["results"] == []
        elif output_format == "github":
            assert result.stdout == ""  # nothing at all: every node is checked
        elif output_format == "gitlab":
            assert json.loads(result.stdout) == []


# b.py is a dependency of a.py: mypy checks it first, and a warm run may replay them in any order.
SORTED_B = """\
from datetime import datetime

from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class B(TypedDict):
    when: datetime


graph_b = StateGraph(B)
"""
SORTED_A = SORTED_B.replace("class B", "import b\n\n\nclass A").replace("B)", "A)").replace(
    "graph_b", "graph_a"
)


def test_findings_are_sorted_by_file_and_line_in_every_format(
    tmp_path: Path, cache_dir: Path
) -> None:
    project = project_with(tmp_path, a__py=SORTED_A, b__py=SORTED_B)
    where = [("a.py", 11), ("b.py", 8)]
    for run in ("cold", "warm"):
        text = lgstate(project, cache_dir, "check").stdout.splitlines()
        assert [line.split(": ")[0] for line in text[:2]] == ["a.py:11", "b.py:8"], run
        found = json.loads(lgstate(project, cache_dir, "check", "--format", "json").stdout)
        assert [(f["file"], f["line"]) for f in found["findings"]] == where
        github = lgstate(project, cache_dir, "check", "--format", "github").stdout.splitlines()
        assert [line.split(",col=")[0] for line in github] == [
            "::error file=a.py,line=11", "::error file=b.py,line=8"
        ]
        sarif = json.loads(lgstate(project, cache_dir, "check", "--format", "sarif").stdout)
        assert [
            (
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"],
            )
            for r in sarif["runs"][0]["results"]
        ] == where
        gitlab = json.loads(lgstate(project, cache_dir, "check", "--format", "gitlab").stdout)
        assert [(i["location"]["path"], i["location"]["lines"]["begin"]) for i in gitlab] == where


def test_text_format_keeps_a_finding_on_one_line(tmp_path: Path, cache_dir: Path) -> None:
    code = GRAPH.replace('return {"answer": state["question"]}\n\n\nsub_builder', (
        'return {"answer": state["question"], "first\\nsecond": 1}\n\n\nsub_builder'
    ))
    result = lgstate(project_with(tmp_path, graph__py=code), cache_dir, "check", "graph.py")
    assert result.stdout.splitlines()[0] == (
        'graph.py:33: error: Node "tally" returns key "first\\nsecond", which is not a channel of'
        ' graph state "State": LangGraph drops it silently. Fix: add "first\\nsecond" to "State",'
        " or remove it from the returned dict  [lgstate-unknown-key]"
    )
    assert result.returncode == 1


# GRAPH's nodes: 3 checked by their types, 1 from its body, 1 unchecked, 3 opaque.
GRAPH_COVERAGE = (
    "nodes checked 4/8 (from bodies 1); not checked: 1 returning a dict built elsewhere,"
    " 1 compiled subgraph, 1 prebuilt node, 1 Runnable; see lgstate report"
)


def test_every_format_ends_with_the_coverage(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH)
    result = lgstate(project, cache_dir, "check")
    assert (result.returncode, result.stdout.splitlines()) == (
        0, ["Success: no issues found in 1 source file", GRAPH_COVERAGE]
    )
    data = {
        "nodes": 8, "checked": 4, "from_bodies": 1,
        "not_checked": {"built elsewhere": 1, "subgraph": 1, "prebuilt": 1, "runnable": 1},
        "percent": 50.0, "values_typed_any": 0, "summary": GRAPH_COVERAGE,
    }
    result = lgstate(project, cache_dir, "check", "--format", "json")
    assert json.loads(result.stdout) == {"findings": [], "coverage": data}
    result = lgstate(project, cache_dir, "check", "--format", "sarif")
    assert json.loads(result.stdout)["runs"][0]["properties"] == {"coverage": data}
    result = lgstate(project, cache_dir, "check", "--format", "github")
    assert result.stdout == f"::notice title=lgstate coverage::{GRAPH_COVERAGE}\n"
    result = lgstate(project, cache_dir, "check", "--format", "gitlab")
    assert (json.loads(result.stdout), result.stderr) == ([], GRAPH_COVERAGE + "\n")


def test_fail_under_fails_below_the_share_of_nodes_checked(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH, resume__py=RESUME)
    # 4 of 8 nodes: 50% is not under 50.
    result = lgstate(project, cache_dir, "check", "graph.py", "--fail-under", "50")
    assert (result.returncode, result.stderr) == (0, "")
    result = lgstate(project, cache_dir, "check", "graph.py", "--fail-under", "50.5", "--exit-zero")
    assert (result.returncode, result.stdout.splitlines()[-1], result.stderr) == (
        1, GRAPH_COVERAGE,
        "lgstate: 50.0% of the graph nodes are checked, less than --fail-under 50.5\n",
    )
    # No node at all is 100%, as coverage.py counts a run with no statement.
    result = lgstate(project, cache_dir, "check", "resume.py", "--fail-under", "100")
    assert (result.returncode, result.stdout.splitlines()[-1]) == (0, "nodes checked 0/0 (from bodies 0)")


@pytest.mark.parametrize(
    ("nodes", "checked", "threshold", "line"),
    [
        # 14 of 17 is 82.35...%, shown 82.4%: not under 82.4, as coverage.py compares its total.
        (17, 14, "82.4", None),
        (17, 14, "82.36", "82.35% of the graph nodes are checked, less than --fail-under 82.36"),
        (17, 14, "82.5", "82.4% of the graph nodes are checked, less than --fail-under 82.5"),
        # Only every node is 100: 9,999 of 10,000 is shown with the decimals that say so.
        (10_000, 9_999, "100", "99.99% of the graph nodes are checked, less than --fail-under 100"),
        (3, 3, "100", None),
    ],
)
def test_fail_under_compares_the_share_as_it_is_shown(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    nodes: int,
    checked: int,
    threshold: str,
    line: str | None,
) -> None:
    from mypy_lgstate.cli import check

    covered = Coverage(nodes, checked, 0, {"loose": nodes - checked} if nodes > checked else {}, 0)
    outcome = mypy_build.Outcome([], 1, None, LGStateConfig(), lambda name: False)
    monkeypatch.setattr(check, "run_mypy", lambda *args, **kwargs: outcome)
    monkeypatch.setattr(check.CoverageRecorder, "coverage", lambda self: covered)
    status = cli.main(["check", "-q", "--fail-under", threshold])
    err = capsys.readouterr().err
    assert (status, err) == ((0, "") if line is None else (1, f"lgstate: {line}\n"))


# One class, graphs in two files and in its own: plain mypy reports it once in each file (each file's
# diagnostics depend only on it and its imports); lgstate check reports the problem once.
SHARED_STATE = """\
from datetime import datetime

from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class Base(TypedDict):
    started_at: datetime


class State(Base):
    name: str
"""
SHARED_GRAPH = """\
from langgraph.graph import StateGraph

from state import State

first = StateGraph(State)
second = StateGraph(State, input_schema=State)
"""
SHARED_API = """\
from langgraph.graph import StateGraph

from state import State


def build() -> None:
    StateGraph(State)
"""
AWAY = f'State.started_at (state.State in state.py) is "datetime": {DATETIME}'


@pytest.fixture
def shared_in_process(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A class used by graphs in two files, as the current directory, for ``cli.main``."""
    project_with(tmp_path, state__py=SHARED_STATE, graph__py=SHARED_GRAPH, api__py=SHARED_API)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MYPY_CACHE_DIR", str(cache_dir))
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = cli.main(["check", "-q", *args])
    return status, capsys.readouterr().out


def test_a_class_used_in_two_files_is_one_finding_in_every_format(
    shared_in_process: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(capsys) == (1, (
        f"api.py:7: error: {AWAY} (also reached from graph.py:5)  [lgstate-unserializable]\n"
        "Found 1 error in 1 file (checked 3 source files)\n"
        "nodes checked 0/0 (from bodies 0)\n"
    ))
    status, out = _check(capsys, "--format", "json")
    assert (status, json.loads(out)["findings"]) == (1, [
        {"file": "api.py", "line": 7, "column": 5, "code": "lgstate-unserializable",
         "message": AWAY, "severity": "error",
         "related": [{"file": "graph.py", "line": 5, "column": 9}]},
    ])
    status, out = _check(capsys, "--format", "github")
    assert (status, out.splitlines()) == (1, [
        "::error file=api.py,line=7,col=5,title=lgstate-unserializable::"
        f"{AWAY} (also reached from graph.py:5)"
    ])
    status, out = _check(capsys, "--format", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, SARIF_REQUIRED, format_checker=jsonschema.FormatChecker())
    [result] = log["runs"][0]["results"]
    assert status == 1
    assert result["message"]["text"] == AWAY
    assert result["relatedLocations"] == [
        {"id": 1, "message": {"text": "also reached from here"}, "physicalLocation": {
            "artifactLocation": {"uri": "graph.py", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 5, "startColumn": 9},
        }},
    ]
    status, out = _check(capsys, "--format", "gitlab")
    [issue] = json.loads(out)
    assert (status, issue["location"]) == (1, {"path": "api.py", "lines": {"begin": 7}})
    assert issue["description"] == f"{AWAY} (also reached from graph.py:5)"
    # The class's own file has a graph too: the field's line is the best place, for every file.
    (shared_in_process / "state.py").write_text(SHARED_STATE + "\nlocal = StateGraph(State)\n")
    status, out = _check(capsys)
    assert (status, out) == (1, (
        f'state.py:8: error: Base.started_at is "datetime": {DATETIME} (also reached from api.py:7,'
        " graph.py:5)  [lgstate-unserializable]\n"
        "Found 1 error in 1 file (checked 3 source files)\n"
        "nodes checked 0/0 (from bodies 0)\n"
    ))
    # docs/checks.md's "Where errors are reported" quotes this run.
    quoted = "".join(f"  {line}\n" for line in out.splitlines())
    assert f"  ```text\n{quoted}  ```" in (ROOT / "docs" / "checks.md").read_text()
    assert cli.main(["report", "-q"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "4 graphs, nodes checked 0/0 (from bodies 0, unchecked 0, opaque 0), 0 write sites,"
        " 1 finding"
    )


def test_plain_mypy_reports_a_shared_class_once_in_each_file(
    shared_in_process: Path, tmp_path: Path
) -> None:
    config = ROOT / "setup.cfg"
    library_caches.seed(tmp_path / "cache", config.read_text())
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(config), "state.py", "graph.py", "api.py"],
        cwd=shared_in_process, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        env={name: value for name, value in os.environ.items() if name != "MYPY_CACHE_DIR"},
    )
    *errors, summary = result.stdout.splitlines()
    # mypy flushes each module's errors as it finishes it, in an order its cache decides.
    assert sorted(errors) == [
        f"api.py:7: error: {AWAY}  [lgstate-unserializable]",
        f"graph.py:5: error: {AWAY}  [lgstate-unserializable]",
    ]
    assert summary == "Found 2 errors in 2 files (checked 3 source files)"


# Nothing checked is never a pass -----------------------------------------------------------------

MISSING_LANGGRAPH = (
    "lgstate: mypy cannot find langgraph (imported at app.py:3), so nothing was checked: install"
    " langgraph next to mypy-lgstate (pre-commit: list it in the hook's additional_dependencies)"
)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of a new virtual environment with nothing installed: what pre-commit gives a
    hook without ``additional_dependencies``. mypy looks for the code's imports in the
    site-packages of ``--python-executable``, so it finds no langgraph there, as in that hook."""
    env = tmp_path_factory.mktemp("bare-venv")
    venv.create(env, with_pip=False)
    python = env / ("Scripts" if os.name == "nt" else "bin") / "python"
    assert subprocess.run([python, "-c", "import langgraph"], capture_output=True).returncode == 1
    return str(python)


def test_without_langgraph_every_subcommand_stops_with_one_line(
    tmp_path: Path,
    cache_dir: Path,
    bare_python: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lock = lockfile.render({"app.Ticket": {"Ticket": {"class": ["app", "Ticket"], "kind": "TypedDict"}}})
    # A missing subpackage of another distribution is not a missing langgraph.
    project = project_with(tmp_path, app__py=APP, other__py="import langgraph.checkpoint.nowhere\n")
    result = lgstate(project, cache_dir, "check")
    found = APP_TEXT[-2].replace("1 source file", "2 source files")
    assert (result.returncode, result.stdout.splitlines()[-2:]) == (1, [found, APP_COVERAGE])
    assert result.stderr == (
        "lgstate: mypy cannot find langgraph.checkpoint.nowhere (imported at other.py:1), which the"
        " installed langgraph does not have: what the code takes from it is typed Any and not"
        " checked; the rest was checked\n"
    )
    (project / "other.py").unlink()
    (project / "lgstate.lock").write_text(lock)
    # The installed script once; the other subcommands through the same main(), in this process.
    result = lgstate(project, cache_dir, "check", "--", "--python-executable", bare_python)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", MISSING_LANGGRAPH + "\n")
    assert f"```text\n{MISSING_LANGGRAPH}\n```" in (ROOT / "docs" / "cli.md").read_text()
    monkeypatch.chdir(project)
    monkeypatch.setenv("MYPY_CACHE_DIR", str(cache_dir))
    for command in (["report"], ["lock"], ["lock", "--check"]):
        assert cli.main([*command, "--", "--python-executable", bare_python]) == 2
        assert capsys.readouterr() == ("", MISSING_LANGGRAPH + "\n")
    assert (project / "lgstate.lock").read_text() == lock
    # The same, from mypy's configuration, and with mypy's import errors silenced.
    config = f"[mypy]\npython_executable = {bare_python}\nignore_missing_imports = true\n"
    (project / "mypy.ini").write_text(config)
    assert cli.main(["check"]) == 2
    assert capsys.readouterr() == ("", MISSING_LANGGRAPH + "\n")


STALE = APP.replace(
    "from langgraph.graph import StateGraph\n",
    "from langchain.agents.react.agent import create_react_agent\nfrom langgraph.graph import StateGraph\n",
)


def test_a_stale_submodule_is_named_and_the_rest_is_checked(
    tmp_path: Path, cache_dir: Path, bare_python: str
) -> None:
    # langchain 1.x has no langchain.agents.react: an import left from 0.x.
    project = project_with(tmp_path, app__py=STALE)
    result = lgstate(project, cache_dir, "check", "--", "--python-executable", sys.executable)
    shifted = [line.replace("app.py:9:", "app.py:10:").replace("app.py:23:", "app.py:24:") for line in APP_TEXT]
    assert (result.returncode, result.stdout.splitlines()) == (1, shifted)
    assert result.stderr == (
        "lgstate: mypy cannot find langchain.agents.react.agent (imported at app.py:3), which the"
        " installed langchain does not have: what the code takes from it is typed Any and not"
        " checked; the rest was checked\n"
    )
    # Without langchain at all, it is a missing package: nothing could be checked.
    result = lgstate(project, cache_dir, "check", "--", "--python-executable", bare_python)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", (
        "lgstate: mypy cannot find langchain and langgraph (imported at app.py:3), so nothing was"
        " checked: install langchain and langgraph next to mypy-lgstate (pre-commit: list them in"
        " the hook's additional_dependencies)\n"
    ))


def test_langgraph_skipped_by_follow_imports_checks_nothing_and_says_so(
    tmp_path: Path, cache_dir: Path
) -> None:
    config = "[mypy]\n\n[mypy-langgraph.*]\nfollow_imports = skip\n"
    project = project_with(tmp_path, app__py=APP, mypy__ini=config)
    for command in ("check", "report", "lock"):
        result = lgstate(project, cache_dir, command)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", (
            "lgstate: mypy's configuration skips langgraph.graph (follow_imports = skip; imported"
            " at app.py:3), so no graph could be recognized and nothing was checked: set"
            " follow_imports = silent for it instead (mypy still hides its errors)\n"
        )), command


def test_a_skipped_module_matters_when_the_checks_recognize_names_in_it() -> None:
    assert mypy_build._recognized_in("langgraph.graph")
    assert mypy_build._recognized_in("langgraph")
    assert mypy_build._recognized_in("langchain.agents")
    assert not mypy_build._recognized_in("langgraph.checkpoint.postgres")
    assert not mypy_build._recognized_in("langgraph_sdk")


def test_lock_never_replaces_a_lock_with_roots_by_an_empty_one(tmp_path: Path, cache_dir: Path) -> None:
    lock = lockfile.render({"app.Ticket": {"Ticket": {"class": ["app", "Ticket"], "kind": "TypedDict"}}})
    project = project_with(tmp_path, app__py=APP, other__py="x = 1\n", lgstate__lock=lock)
    result = lgstate(project, cache_dir, "lock", "other.py")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "lgstate: lgstate.lock records 1 graph-state root and this run found none, so it was not"
        " replaced: check the paths and mypy's configured files (delete the file to start over)"
    ]
    assert (project / "lgstate.lock").read_text() == lock
    assert lgstate(project, cache_dir, "lock", "app.py").returncode == 0  # a graph: replaced


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        pytest.param(
            "mypy.ini", "[mypy]\n[mypy_lgstate\nprofile = msgpack\n",
            "mypy.ini:2: not valid ini syntax: [mypy_lgstate", id="ini-section",
        ),
        pytest.param(
            "setup.cfg", "profile = msgpack\n",
            "setup.cfg:1: not valid ini syntax (no [section] above it): profile = msgpack",
            id="ini-no-section",
        ),
        pytest.param(
            "pyproject.toml", '[tool.mypy_lgstate\nprofile = "msgpack"\n',
            "pyproject.toml: not valid TOML: Expected ']' at the end of a table declaration"
            " (at line 1, column 19)",
            id="toml",
        ),
        # A misspelled section: its options would be ignored, and the defaults used.
        pytest.param(
            "pyproject.toml", '[tool.mypy_lgstat]\nprofile = "msgpack"\n',
            "pyproject.toml: [tool.mypy_lgstat]: unknown section, did you mean [tool.mypy_lgstate]?",
            id="toml-section-misspelled",
        ),
        pytest.param(
            "mypy.ini", "[mypy]\n[mypy_lgstat]\nprofile = msgpack\n",
            "mypy.ini: [mypy_lgstat]: unknown section, did you mean [mypy_lgstate]?",
            id="ini-section-misspelled",
        ),
        pytest.param(
            "mypy.ini", "[mypy]\n[mypy_lgstate]\npickle = true\n",
            "mypy.ini: [mypy_lgstate]: pickle: unknown option, did you mean pickle_fallback? (known"
            " options: allowed_msgpack_modules, derive_allowlist, lock_file, pickle_fallback,"
            " profile, safe_types, saver, state_classes, strict_msgpack)",
            id="option-misspelled",
        ),
    ],
)
def test_a_configuration_file_that_cannot_be_parsed_or_is_misspelled_is_one_line_and_exit_2(
    tmp_path: Path, cache_dir: Path, name: str, text: str, line: str
) -> None:
    (tmp_path / ".git").mkdir()
    project = project_with(tmp_path, app__py=APP, **{name.replace(".", "__"): text})
    for args in (["check"], ["report"], ["lock", "--check"], ["check", "--config-file", name]):
        result = lgstate(project, cache_dir, *args)
        assert (result.returncode, result.stdout, result.stderr.splitlines()) == (2, "", [line])


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ("app.Tickt", 'state_classes: "app.Tickt" names no class of module app, did you mean app.Ticket?'),
        ("app.datetime", 'state_classes: "app.datetime" is not a TypedDict, a pydantic model or a'
         " dataclass, so it is not graph state"),
        ("ap.Ticket", 'state_classes: "ap.Ticket" names module ap, which mypy cannot find'),
    ],
)
def test_a_state_classes_entry_that_names_no_state_class_is_one_line_and_exit_2(
    tmp_path: Path, cache_dir: Path, entry: str, line: str
) -> None:
    config = f"[mypy]\n[mypy_lgstate]\nstate_classes = {entry}\n"
    project = project_with(tmp_path, app__py=APP, mypy__ini=config)
    result = lgstate(project, cache_dir, "check")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"mypy.ini: [mypy_lgstate]: {line}\n")


def test_the_plugins_section_is_read_without_a_mypy_section(tmp_path: Path, cache_dir: Path) -> None:
    # A team that runs pyright or ty: mypy itself would not read this file at all.
    (tmp_path / ".git").mkdir()
    project = project_with(tmp_path, app__py=APP, pyproject__toml='[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    result = lgstate(project, cache_dir, "check")
    assert (result.returncode, result.stdout.splitlines()) == (1, APP_MSGPACK_TEXT)
    result = lgstate(project, cache_dir, "check", "--config-file", "pyproject.toml")
    assert (result.returncode, result.stdout.splitlines(), result.stderr) == (1, APP_MSGPACK_TEXT, "")
    (project / "pyproject.toml").write_text('[tool.mypy_lgstate]\nprofile = "yaml"\n')
    result = lgstate(project, cache_dir, "check")
    assert (result.returncode, result.stdout, result.stderr.splitlines()) == (
        2, "", ['pyproject.toml: [tool.mypy_lgstate]: profile: must be "json" or "msgpack", not "yaml"']
    )


# Errors: exit status 2 and one line --------------------------------------------------------------


def test_code_mypy_cannot_parse_is_one_line_and_exit_2(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, app__py=APP, broken__py="x = (\n")
    result = lgstate(project, cache_dir, "check")
    assert result.returncode == 2
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if not line.startswith("lgstate: checking")]
    assert errors == [
        "lgstate: mypy cannot analyse broken.py:2, so nothing was checked:"
        " Unexpected EOF while parsing"
    ]


def test_bad_option_is_one_line_and_exit_2(tmp_path: Path, cache_dir: Path) -> None:
    config = "[mypy]\n[mypy_lgstate]\nprofile = yaml\n"
    project = project_with(tmp_path, app__py=APP, setup__cfg=config)
    for command in ("check", "report"):
        result = lgstate(project, cache_dir, command)
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1:] == [
            'setup.cfg: [mypy_lgstate]: profile: must be "json" or "msgpack", not "yaml"'
        ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["check", "--profile", "yaml"],
         "argument --profile: invalid choice: 'yaml' (choose from 'json', 'msgpack')"),
        (["report", "--format", "sarif"],
         "argument --format: invalid choice: 'sarif' (choose from 'text', 'json', 'markdown')"),
        (["check", "--foo"], "unrecognized arguments: --foo (mypy's own flags go after --)"),
        (["lock", "--format", "json"],
         "unrecognized arguments: --format (--format is an option of lgstate check, report,"
         " allowlist and audit)"),
        (["check", "--config-file", "missing.ini"], "--config-file missing.ini: no such file"),
        (["report", "--", "--no-such-flag"], "mypy: unrecognized arguments: --no-such-flag"),
        (["report", "--exit-zero"],
         "unrecognized arguments: --exit-zero (--exit-zero is an option of lgstate check and"
         " audit)"),
        (["lock", "--format=json"],
         "unrecognized arguments: --format=json (--format is an option of lgstate check, report,"
         " allowlist and audit)"),
        (["check", "--fail-under", "120"],
         "argument --fail-under: must be a number from 0 to 100, not '120'"),
    ],
)
def test_usage_errors_are_the_subcommands_usage_and_one_line(
    tmp_path: Path, cache_dir: Path, args: list[str], error: str
) -> None:
    result = lgstate(project_with(tmp_path, app__py=APP), cache_dir, *args)
    lines = result.stderr.splitlines()
    assert (result.returncode, result.stdout) == (2, "")
    assert lines[0].startswith(f"usage: lgstate {args[0]} [-h]")
    assert lines[-1] == f"lgstate {args[0]}: error: {error}"
    assert not [line for line in lines[1:-1] if not line.startswith(" ")]  # the usage goes on


def test_mypys_own_flags_after_a_double_dash(tmp_path: Path, cache_dir: Path) -> None:
    # broken.py stops mypy; mypy's --exclude leaves it out. (A flag that changes the options of
    # every module, such as --disable-error-code, would recheck langgraph: slow, and no more real.)
    project = project_with(tmp_path, app__py=APP, broken__py="x = (\n")
    assert lgstate(project, cache_dir, "check").returncode == 2
    result = lgstate(project, cache_dir, "check", "--", "--exclude", "broken")
    assert (result.returncode, result.stdout.splitlines()) == (1, APP_TEXT)


@pytest.fixture
def app_in_process(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The APP project as the current directory, for ``cli.main`` in this process; the progress
    line that a slow run prints shows at once."""
    project_with(tmp_path, app__py=APP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MYPY_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(mypy_build, "PROGRESS_DELAY", 0.0)
    return tmp_path


def test_output_file_quiet_and_exit_zero(
    app_in_process: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = app_in_process  # --quiet: no progress line, even for a "slow" run
    args = ["check", "--format", "json", "--output-file", "out/findings.json", "--quiet"]
    (tmp_path / "out").mkdir()
    assert cli.main([*args, "--exit-zero"]) == 0  # exit 1 without it: test_json_format
    assert capsys.readouterr() == ("", "")
    written = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert len(written["findings"]) == len(APP_JSON_FINDINGS)
    assert cli.main(["report", "-q", "--output-file", "out/report.txt"]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "out" / "report.txt").read_text().startswith("graph app.Ticket (app.py:21)\n")
    # --exit-zero never hides that nothing could be checked.
    (tmp_path / "broken.py").write_text("x = (\n")
    assert cli.main([*args, "--exit-zero"]) == 2
    assert cli.main(["check", "-q", "--output-file", "missing/findings.txt", "app.py"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "lgstate: missing/findings.txt: cannot write the output file: No such file or directory"
    )


def test_slow_run_says_what_it_does_on_stderr(
    app_in_process: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["check", "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert len(json.loads(out)["findings"]) == len(APP_JSON_FINDINGS)  # stdout stays pure JSON
    cache = os.path.join(str(cache_dir), "lgstate")
    assert err.splitlines() == [
        f"lgstate: checking 1 source file with mypy (cache in {cache}; a first run takes longest)"
    ]


def test_the_command_ends_at_once_with_its_status_and_its_whole_output(
    app_in_process: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The console script leaves through ``os._exit`` (``cli.run``), without freeing mypy's heap:
    what it prints must still all be there, on a pipe and in ``--output-file``, with the status
    ``main`` returns; a reader that closed the pipe changes neither the status nor stderr."""
    project = app_in_process
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # stdout buffered, as users run it
    expected = {}
    for output_format in findings.FORMATS:
        assert cli.main(["check", "-q", "--format", output_format]) == 1
        expected[output_format] = capsys.readouterr()
    assert len(expected["sarif"].out) > io.DEFAULT_BUFFER_SIZE  # over a pipe's buffer: a lost flush shows
    for output_format, (out, err) in expected.items():
        result = lgstate(project, cache_dir, "check", "-q", "--format", output_format)
        assert (result.returncode, result.stdout, result.stderr) == (1, out, err), output_format
    result = lgstate(project, cache_dir, "check", "-q", "--format", "sarif", "--output-file", "out.sarif")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    assert (project / "out.sarif").read_text() == expected["sarif"].out

    read, write = os.pipe()
    os.close(read)  # `lgstate check | true`: the reader is gone before a byte is written
    with subprocess.Popen(
        [LGSTATE, "check", "-q", "--format", "sarif"], cwd=project, stdout=write,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "MYPY_CACHE_DIR": str(cache_dir)},
    ) as closed:
        os.close(write)
        _, err = closed.communicate(timeout=TIMEOUT)
    assert (closed.returncode, err) == (1, "")


# report -----------------------------------------------------------------------------------------


def test_report_text(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH)
    result = lgstate(project, cache_dir, "report")
    assert result.stdout == GRAPH_REPORT
    assert result.returncode == 0


def test_report_after_a_warm_check_still_sees_every_node(tmp_path: Path, cache_dir: Path) -> None:
    # A module loaded from the cache fires no hook: the report must check the user's modules again.
    project = project_with(tmp_path, graph__py=GRAPH)
    assert lgstate(project, cache_dir, "check").returncode == 0
    assert lgstate(project, cache_dir, "check").returncode == 0
    assert lgstate(project, cache_dir, "report").stdout == GRAPH_REPORT
    assert lgstate(project, cache_dir, "report").stdout == GRAPH_REPORT


def test_report_json(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH)
    report = json.loads(lgstate(project, cache_dir, "report", "--format", "json").stdout)
    assert report["totals"] == {
        "graphs": 2, "nodes": 8, "checked": 3, "body": 1, "unchecked": 1, "opaque": 3,
        "write_sites": 3, "findings": 0,
    }
    main_graph = report["graphs"][1]
    assert main_graph["declared_at"] == {"file": "graph.py", "line": 40}
    assert main_graph["schemas"] == [
        {"class": "graph.State", "roles": ["state", "input", "output"], "file": "graph.py"}
    ]
    assert main_graph["channels"] == ["answer", "question"]
    assert [
        (n["name"], n["line"], n["status"], n["reason"], n["category"])
        for n in main_graph["nodes"]
    ] == [
        ("answer", 41, "checked", None, None),
        ("review", 42, "checked", None, None),
        (
            "legacy", 43, "unchecked",
            'returns "dict[str, Any]", and its body is not read whole: legacy() returns a dict built'
            ' elsewhere (a call whose type names no key): return a dict display ({"key": value}) or'
            ' declare its update type (a TypedDict)',
            "built elsewhere",
        ),
        ("tally", 44, "body", "read from its body", None),
        ("sub", 45, "opaque", "a compiled subgraph: its own nodes are listed under its graph", "subgraph"),
        ("tools", 46, "opaque", "a prebuilt node (ToolNode)", "prebuilt"),
        ("echo", 47, "opaque", 'a Runnable ("RunnableLambda[Any, Any]")', "runnable"),
    ]
    assert (main_graph["nodes_checked"], main_graph["nodes_total"]) == (3, 7)
    assert report["write_sites"] == [
        {"site": "interrupt.value", "file": "graph.py", "line": 24, "graph": None, "unresolved": None},
        {"site": "Command.update", "file": "graph.py", "line": 25, "graph": None, "unresolved": None},
        {
            "site": "invoke.input", "file": "graph.py", "line": 49, "graph": "graph.State",
            "unresolved": None,
        },
    ]
    assert main_graph["unresolved"] == []


WORKFLOW = """\
from typing import Any

from langgraph.func import entrypoint, task
from typing_extensions import TypedDict


class Request(TypedDict):
    topic: str


@task
def outline(topic: str) -> list[str]:
    return [topic]


@task
def draft(points: list[str]):
    return {"text": " ".join(points)}


@task
def archive(text: str) -> Any:  # typed Any: read from its body
    return text


@entrypoint()
def write(request: Request) -> str:
    points = outline(request["topic"]).result()
    return draft(points).result()["text"]
"""


def test_report_lists_an_entrypoint_with_the_tasks_it_calls(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, workflow__py=WORKFLOW)
    result = lgstate(project, cache_dir, "report")
    assert result.stdout.splitlines() == [
        "graph @task functions no @entrypoint of the checked code calls",
        "  body      node archive (workflow.py:22): read from its body",
        "  nodes checked 1/1",
        "",
        "graph @entrypoint workflow.write (workflow.py:27)",
        "  input schema: workflow.Request (workflow.py)",
        "  channels: __start__, __end__, __previous__",
        "  checked   node outline (workflow.py:12)",
        "  body      node draft (workflow.py:17): read from its body",
        "  checked   node write (workflow.py:27)",
        "  nodes checked 3/3",
        "",
        "2 graphs, nodes checked 4/4 (from bodies 2, unchecked 0, opaque 0), 0 write sites,"
        " 0 findings",
    ]
    report = json.loads(lgstate(project, cache_dir, "report", "--format", "json").stdout)
    assert [(g["title"], g["state"], g["nodes_total"]) for g in report["graphs"]] == [
        ("@task functions no @entrypoint of the checked code calls", None, 1),
        ("@entrypoint workflow.write", None, 3),
    ]


AGENT = """\
from typing import Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.runtime import Runtime
from typing_extensions import NotRequired


class NoteState(AgentState):
    notes: NotRequired[list[str]]


class NoteUpdate(TypedDict):
    notes: list[str]


class Notes(AgentMiddleware):
    state_schema = NoteState

    def after_model(self, state: AgentState, runtime: Runtime[None]) -> NoteUpdate:  # type: ignore[override]
        return {"notes": []}


class Legacy(AgentMiddleware):
    def before_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any]:  # type: ignore[override]
        return {}


agent = create_agent("openai:gpt-5", middleware=[Notes(), Legacy()])
"""


def test_report_lists_an_agents_middleware_hooks(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, agent__py=AGENT)
    report = json.loads(lgstate(project, cache_dir, "report", "--format", "json").stdout)
    [graph] = report["graphs"]
    assert graph["declared_at"] == {"file": "agent.py", "line": 29}
    assert "notes" in graph["channels"]
    assert [(n["name"], n["line"], n["status"], n["reason"]) for n in graph["nodes"]] == [
        ("Legacy.before_model", 29, "body", "read from its body"),
        ("Notes.after_model", 29, "checked", None),
    ]


RESUME = """\
from langgraph.graph import StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    answer: str


graph = StateGraph(State).compile()
graph.invoke(Command(resume="yes"))
graph.invoke({"answer": "no"})
"""


def test_report_lists_a_resume_once_with_its_graph(tmp_path: Path, cache_dir: Path) -> None:
    # invoke(Command(resume=...)): the write site is the resume value, not the input as well.
    result = lgstate(project_with(tmp_path, resume__py=RESUME), cache_dir, "report")
    assert result.stdout.splitlines()[-11:] == [
        "graph resume.State (resume.py:10)",
        "  state/input/output schema: resume.State (resume.py)",
        "  channels: answer",
        # No node is added, here or in a function the builder is passed to.
        "  no nodes found: no add_node call on this builder in the checked code",
        "  nodes checked 0/0",
        "",
        "write sites",
        "  Command.resume (resume.py:11) (graph resume.State)",
        "  invoke.input (resume.py:12) (graph resume.State)",
        "",
        "1 graph, nodes checked 0/0 (from bodies 0, unchecked 0, opaque 0), 2 write sites,"
        " 0 findings",
    ]


# The layouts of real applications whose nodes the checks cannot read, each with its reason.
REASONS_NODES = """\
from typing import Any

from state import State


def lookup(state: State):
    return {"name": "x"}


class Steps:
    @staticmethod
    def static(state: State):
        return {"name": "x"}


def lookup_by(s: State):
    return {"name": "x"}


def untyped(state):
    return {"name": "x"}
"""
REASONS_STATE = """\
from typing_extensions import TypedDict


class State(TypedDict):
    name: str
"""
REASONS_MIDDLEWARE = """\
from langchain.agents.middleware import AgentMiddleware


def build_middlewares() -> list[AgentMiddleware]:
    return []
"""
REASONS_GRAPH = """\
from typing import Any

from langchain.agents import create_agent
from langgraph.graph import StateGraph

from middleware import build_middlewares
from nodes import Steps, lookup, lookup_by, untyped as untyped_node
from state import State


def traced_node(fn):
    return fn


def untyped():
    return "x"


@traced_node
def audited(state: State) -> dict[str, Any]:
    return {"name": "x"}


def tally(state: State) -> dict[str, Any]:
    return {"name": untyped()}


def build():
    builder = StateGraph(State)
    builder.add_node("lookup", lookup)
    builder.add_node("static", Steps.static)
    builder.add_node("deploy", traced_node(lambda state: {"name": "x"}))
    builder.add_node("audited", audited)
    builder.add_node("tally", tally)
    builder.add_node("lookup_by", lookup_by)
    builder.add_node("untyped", untyped_node)
    return builder


agent = create_agent("openai:gpt-5", middleware=list(build_middlewares()))
"""
def test_report_says_why_a_node_is_not_read(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(
        tmp_path, graph__py=REASONS_GRAPH, nodes__py=REASONS_NODES, state__py=REASONS_STATE,
        middleware__py=REASONS_MIDDLEWARE,
    )
    lines = lgstate(project, cache_dir, "report").stdout.splitlines()
    assert [line for line in lines if " node " in line or "unresolved" in line] == [
        # Functions of another module (a static method, unannotated ones too) are read from what
        # nodes.py recorded of them.
        "  body      node lookup (graph.py:30): read from its body, in nodes.py",
        "  body      node static (graph.py:31): read from its body, in nodes.py",
        "  unchecked node deploy (graph.py:32): has no return type, and its body is not read whole:"
        " traced_node() returns a function no summary tells (a lambda, a functools.partial, a value"
        " typed Any): return a dict display ({\"key\": value}) or declare its update type (a"
        " TypedDict)",
        "  body      node audited (graph.py:33): read from its body (decorated with @traced_node,"
        " whose result is typed Any)",
        # The builder is in an unannotated function: lgstate runs mypy with check_untyped_defs.
        "  body      node tally (graph.py:34): read from its body, 1 value typed Any",
        "  body      node lookup_by (graph.py:35): read from its body, in nodes.py",
        "  body      node untyped (graph.py:36): read from its body, in nodes.py",
    ]
    result = lgstate(project, cache_dir, "check")
    assert result.stdout.splitlines()[-1] == (
        "nodes checked 6/7 (from bodies 6); not checked: 1 returning a dict built elsewhere; see"
        " lgstate report"
    )
    coverage = json.loads(lgstate(project, cache_dir, "check", "--format", "json").stdout)["coverage"]
    assert coverage["values_typed_any"] == 1


TWO_BUILDERS = """\
from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    name: str


def answer(state: State) -> State:
    return state


def add_nodes(builder: StateGraph[State]) -> None:
    builder.add_node("answer", answer)


first = StateGraph(State)
second = StateGraph(State)
add_nodes(first)
add_nodes(second)
"""


def test_report_names_the_entry_a_builders_nodes_are_listed_under(
    tmp_path: Path, cache_dir: Path
) -> None:
    # Two graphs of one state: the nodes a function adds cannot be placed under either.
    lines = lgstate(project_with(tmp_path, two__py=TWO_BUILDERS), cache_dir, "report").stdout.splitlines()
    hint = (
        "  no nodes found here: the nodes of a builder of this state that is passed to a function are"
        " listed under graph two.State (no StateGraph(...) call in the checked code)"
    )
    assert lines.count(hint) == 2
    assert "graph two.State (no StateGraph(...) call in the checked code)" in lines


def test_report_markdown(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH)
    lines = lgstate(project, cache_dir, "report", "--format", "markdown").stdout.splitlines()
    assert lines[:3] == ["# Checkpoint coverage", "", "## Graph graph.State (graph.py:36)"]
    assert "| `tally` | body | graph.py:44 | read from its body |" in lines
    assert "| `invoke.input` | graph.py:49 | `graph.State` |" in lines
    assert lines[-1] == (
        "2 graphs, nodes checked 4/8 (from bodies 1, unchecked 1, opaque 3), 3 write sites,"
        " 0 findings"
    )


def test_report_on_the_example_application_is_the_one_the_readme_shows(cache_dir: Path) -> None:
    result = lgstate(ROOT, cache_dir, "report", "--config-file", "examples/mypy.ini", "examples/")
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert (
        "  body      node lookup_customer (examples/triage/graph.py:56): read from its body, in"
        " examples/triage/nodes.py"
    ) in lines
    assert "  checked   node FollowUp.after_model (examples/triage/assistant.py:42)" in lines
    # The functional API's workflow is a graph, its tasks its nodes (one read from its body).
    workflow = lines.index("graph @entrypoint triage.assistant.follow_up (examples/triage/assistant.py:58)")
    assert lines[workflow + 1:workflow + 6] == [
        "  channels: __start__, __end__, __previous__",
        "  checked   node survey_window (examples/triage/assistant.py:46)",
        "  body      node notify_customer (examples/triage/assistant.py:52): read from its body",
        "  checked   node follow_up (examples/triage/assistant.py:58)",
        "  nodes checked 3/3",
    ]
    assert lines[-1] == (
        "4 graphs, nodes checked 11/11 (from bodies 2, unchecked 0, opaque 0), 9 write sites,"
        " 13 findings"
    )
    assert f"```text\n{result.stdout}```" in (ROOT / "docs" / "cli.md").read_text()


def test_check_on_the_example_prints_what_mypy_prints(cache_dir: Path) -> None:
    # Every error of the example is a finding of the plugin: the command prints mypy's own output.
    # mypy orders independent modules by what its cache holds: the files may come in another order.
    result = lgstate(ROOT, cache_dir, "check", "--config-file", "examples/mypy.ini", "examples/")
    expected = (ROOT / "examples" / "expected-json.txt").read_text().splitlines()
    lines = result.stdout.splitlines()
    by_place = sorted(expected[:-1], key=lambda line: (line.split(":")[0], int(line.split(":")[1])))
    assert lines[:-2] == by_place  # in file and line order
    assert lines[-2:] == [
        expected[-1],
        "nodes checked 11/11 (from bodies 2)",
    ]
    assert result.returncode == 1
    # The README quotes the end of this run.
    command = "$ lgstate check --config-file examples/mypy.ini examples/"
    quoted = "\n".join([command, "...", *lines[-2:]])
    assert f"```text\n{quoted}\n```" in (ROOT / "README.md").read_text()


# Packaging --------------------------------------------------------------------------------------


def test_pre_commit_hook_runs_lgstate_check() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("lgstate", "lgstate check", "python")
    assert hook["pass_filenames"] is False


def test_pre_commit_hook_runs_when_only_the_lock_or_the_configuration_changes() -> None:
    # pre-commit runs a hook when a staged file matches its `files` regex (re.search) and its
    # `types` (none here: every file).
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert "types" not in hook and "types_or" not in hook
    selected = [
        "app.py", "pkg/state.pyi", "lgstate.lock", "locks/state.lock", "pyproject.toml",
        "setup.cfg", "mypy.ini", "ci/.mypy.ini",
    ]
    assert [name for name in selected if not re.search(hook["files"], name)] == []
    assert [name for name in ["README.md", "docs/x.txt", "app.py.orig"] if re.search(hook["files"], name)] == []


def test_console_script_is_declared() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"lgstate": "mypy_lgstate.cli:run"}


def test_yaml_cases_base_configuration_is_setup_cfg_with_every_default() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "--mypy-ini-file=setup.cfg" in pyproject["tool"]["pytest"]["ini_options"]["addopts"]
    parser = configparser.RawConfigParser()
    parser.read(ROOT / "setup.cfg")
    assert parser.get("mypy", "plugins") == "mypy_lgstate.plugin"
    assert sorted(parser.options("mypy_lgstate")) == sorted(LGStateConfig._fields)
    assert load_config(str(ROOT / "setup.cfg")) == LGStateConfig()
