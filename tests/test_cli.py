"""The ``lgstate`` command: every subcommand and format, run as a user runs it, on real programs.

Each test writes a small project and runs the installed ``lgstate`` script (or ``python -m
mypy_lgstate``) in it. One mypy cache directory (``MYPY_CACHE_DIR``) is shared by the module's tests,
so langgraph is analysed once; the command keeps its own cache in an ``lgstate`` directory inside it.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from mypy_lgstate import cli, findings
from mypy_lgstate.config import LGStateConfig, load_config

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
APP_JSON_FINDINGS = [
    (9, 1, "lgstate-unserializable", f'Ticket.created_at is "datetime": {DATETIME}'),
    (22, 1, "lgstate-unserializable", f'open_ticket().created_at is "datetime": {DATETIME}'),
    (23, 1, "lgstate-lossy", PAIRS.format(serializer="JSON")),
    (25, 45, "lgstate-unserializable", f'invoke.input["created_at"] is "datetime": {DATETIME}'),
]
APP_TEXT = [
    *(f"app.py:{line}: error: {message}  [{code}]" for line, _, code, message in APP_JSON_FINDINGS),
    "Found 4 errors in 1 file (checked 1 source file)",
]
# Under msgpack a datetime round-trips: only the tuples are left.
APP_MSGPACK_TEXT = [
    f"app.py:23: error: {PAIRS.format(serializer='msgpack')}  [lgstate-lossy]",
    "Found 1 error in 1 file (checked 1 source file)",
]

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
    return {}


sub_builder = StateGraph(State)
sub_builder.add_node("answer", answer)
subgraph = sub_builder.compile()

builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_node("review", review)
builder.add_node("legacy", legacy)
builder.add_node("sub", subgraph)
builder.add_node("tools", ToolNode([]))
builder.add_node("echo", RunnableLambda(lambda state: state))
graph = builder.compile()
graph.invoke({"question": "why?"})
"""
GRAPH_REPORT = """\
graph graph.State (graph.py:32)
  state/input/output schema: graph.State (graph.py)
  channels: answer, question
  checked   node answer (graph.py:33)
  nodes checked 1/1

graph graph.State (graph.py:36)
  state/input/output schema: graph.State (graph.py)
  channels: answer, question
  checked   node answer (graph.py:37)
  checked   node review (graph.py:38)
  unchecked node legacy (graph.py:39): returns "dict[str, Any]"
  opaque    node sub (graph.py:40): a compiled subgraph
  opaque    node tools (graph.py:41): a prebuilt node (ToolNode)
  opaque    node echo (graph.py:42): a Runnable ("RunnableLambda[Any, Any]")
  nodes checked 2/6

write sites
  interrupt.value (graph.py:24)
  Command.update (graph.py:25)
  invoke.input (graph.py:44) (graph graph.State)

2 graphs, nodes checked 3/7 (unchecked 1, opaque 3), 3 write sites, 0 findings
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


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
    return result


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


def test_mypy_errors_alone_never_fail_the_check(tmp_path: Path, cache_dir: Path) -> None:
    code = APP.replace("datetime.now()", '"2024-01-01"').replace(": datetime", ": str")
    code = code.replace("tuple[int, int]", "list[int]")
    project = project_with(tmp_path, app__py=code)
    assert "count: int = " in code  # mypy's own error stays in the program
    result = lgstate(project, cache_dir, "check")
    assert result.stdout.splitlines() == ["Success: no issues found in 1 source file"]
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
    assert json.loads(result.stdout) == [
        {"file": "app.py", "line": line, "column": column, "code": code, "message": message,
         "severity": "error"}
        for line, column, code, message in APP_JSON_FINDINGS
    ]
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
    assert findings.as_github([finding], 1) == (
        "::error file=a%2Cb%3Ac.py,line=3,col=1,title=lgstate-lossy::50%25 off%0Anext"
    )


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
    assert result.returncode == 1


def test_clean_program_passes_in_every_format(tmp_path: Path, cache_dir: Path) -> None:
    code = APP.replace("datetime.now()", '"2024-01-01"').replace(": datetime", ": str")
    code = code.replace("tuple[int, int]", "list[int]")
    project = project_with(tmp_path, app__py=code)
    for output_format in findings.FORMATS:
        result = lgstate(project, cache_dir, "check", "--format", output_format)
        assert result.returncode == 0, output_format
        if output_format == "json":
            assert json.loads(result.stdout) == []
        elif output_format == "sarif":
            assert json.loads(result.stdout)["runs"][0]["results"] == []
        elif output_format == "github":
            assert result.stdout.strip() == ""


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


def test_usage_errors_exit_2(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, app__py=APP)
    assert lgstate(project, cache_dir, "check", "--profile", "yaml").returncode == 2
    assert lgstate(project, cache_dir, "report", "--format", "sarif").returncode == 2
    missing = lgstate(project, cache_dir, "check", "--config-file", "missing.ini")
    assert missing.returncode == 2 and "missing.ini" in missing.stderr


def test_slow_run_says_what_it_does_on_stderr(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project_with(tmp_path, app__py=APP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MYPY_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.0)
    assert cli.main(["check", "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == len(APP_JSON_FINDINGS)  # stdout stays pure JSON
    cache = os.path.join(str(cache_dir), "lgstate")
    assert err.splitlines() == [
        f"lgstate: checking 1 source file with mypy (cache in {cache}; a first run takes longest)"
    ]


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
        "graphs": 2, "nodes": 7, "checked": 3, "unchecked": 1, "opaque": 3, "write_sites": 3,
        "findings": 0,
    }
    main_graph = report["graphs"][1]
    assert main_graph["declared_at"] == {"file": "graph.py", "line": 36}
    assert main_graph["schemas"] == [
        {"class": "graph.State", "roles": ["state", "input", "output"], "file": "graph.py"}
    ]
    assert main_graph["channels"] == ["answer", "question"]
    assert [(n["name"], n["line"], n["status"], n["reason"]) for n in main_graph["nodes"]] == [
        ("answer", 37, "checked", None),
        ("review", 38, "checked", None),
        ("legacy", 39, "unchecked", 'returns "dict[str, Any]"'),
        ("sub", 40, "opaque", "a compiled subgraph"),
        ("tools", 41, "opaque", "a prebuilt node (ToolNode)"),
        ("echo", 42, "opaque", 'a Runnable ("RunnableLambda[Any, Any]")'),
    ]
    assert (main_graph["nodes_checked"], main_graph["nodes_total"]) == (2, 6)
    assert report["write_sites"] == [
        {"site": "interrupt.value", "file": "graph.py", "line": 24, "graph": None},
        {"site": "Command.update", "file": "graph.py", "line": 25, "graph": None},
        {"site": "invoke.input", "file": "graph.py", "line": 44, "graph": "graph.State"},
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
        ("Legacy.before_model", 29, "unchecked", 'returns "dict[str, Any]"'),
        ("Notes.after_model", 29, "checked", None),
    ]


def test_report_markdown(tmp_path: Path, cache_dir: Path) -> None:
    project = project_with(tmp_path, graph__py=GRAPH)
    lines = lgstate(project, cache_dir, "report", "--format", "markdown").stdout.splitlines()
    assert lines[:3] == ["# Checkpoint coverage", "", "## Graph graph.State (graph.py:32)"]
    assert "| `legacy` | unchecked | graph.py:39 | returns \"dict[str, Any]\" |" in lines
    assert "| `invoke.input` | graph.py:44 | `graph.State` |" in lines
    assert lines[-1] == "2 graphs, nodes checked 3/7 (unchecked 1, opaque 3), 3 write sites, 0 findings"


def test_report_on_the_example_application_is_the_one_the_readme_shows(cache_dir: Path) -> None:
    result = lgstate(ROOT, cache_dir, "report", "--config-file", "examples/mypy.ini", "examples/")
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert '  unchecked node lookup_customer (examples/triage/graph.py:56): returns "dict[str, Any]"' in lines
    assert "  checked   node FollowUp.after_model (examples/triage/assistant.py:42)" in lines
    assert lines[-1] == "3 graphs, nodes checked 7/8 (unchecked 1, opaque 0), 10 write sites, 14 findings"
    assert f"```text\n{result.stdout}```" in (ROOT / "README.md").read_text()


def test_check_on_the_example_prints_what_mypy_prints(cache_dir: Path) -> None:
    # Every error of the example is a finding of the plugin: the command prints mypy's own output.
    # mypy orders independent modules by what its cache holds: the files may come in another order.
    result = lgstate(ROOT, cache_dir, "check", "--config-file", "examples/mypy.ini", "examples/")
    expected = (ROOT / "examples" / "expected-json.txt").read_text().splitlines()
    lines = result.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted(expected[:-1])
    assert lines[-1] == expected[-1]
    assert result.returncode == 1


# Packaging --------------------------------------------------------------------------------------


def test_pre_commit_hook_runs_lgstate_check() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("lgstate", "lgstate check", "python")
    assert hook["pass_filenames"] is False


def test_console_script_is_declared() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"lgstate": "mypy_lgstate.cli:main"}


def test_yaml_cases_base_configuration_is_setup_cfg_with_every_default() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "--mypy-ini-file=setup.cfg" in pyproject["tool"]["pytest"]["ini_options"]["addopts"]
    parser = configparser.RawConfigParser()
    parser.read(ROOT / "setup.cfg")
    assert parser.get("mypy", "plugins") == "mypy_lgstate.plugin"
    assert sorted(parser.options("mypy_lgstate")) == sorted(LGStateConfig._fields)
    assert load_config(str(ROOT / "setup.cfg")) == LGStateConfig()
