"""``lgstate audit``'s command line: bad input is one line and exit status 2, the formats, the
progress line. The store: threads of this module's own graph (``builder``), one of which holds a
value that is not of its channel's declared type (LangGraph does not validate a TypedDict state).
"""

from __future__ import annotations

import enum
import inspect
import io
import json
import operator
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.func import entrypoint
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from mypy_lgstate.cli.command import main
from mypy_lgstate.runtime.audit.problems import Tally
from mypy_lgstate.runtime.audit.run import ProgressLine

HERE = Path(__file__).parent
ROOT = HERE.parent


class Counter(TypedDict):
    count: int


def bump(state: Counter) -> dict[str, object]:
    return {"count": "many" if state["count"] < 0 else state["count"] + 1}


builder = StateGraph(Counter)
builder.add_node("bump", bump)
builder.add_edge(START, "bump")
builder.add_edge("bump", END)
not_a_graph = 42


def not_a_saver() -> object:
    return "a str"


def broken_factory() -> object:
    raise RuntimeError("no database configured")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "counter.db")
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"count": 1}, {"configurable": {"thread_id": "fine"}})
        for thread in ("bad-1", "bad-2"):
            graph.invoke({"count": -1}, {"configurable": {"thread_id": thread}})
    return path


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(HERE)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(["audit", *args])
            except SystemExit as exit:
                status = int(exit.code or 0)
    finally:
        os.chdir(cwd)
    return status, out.getvalue(), err.getvalue()


GRAPH = ("--graph", "test_audit_cli:builder")


def test_text_format_counts_then_problems(store: str) -> None:
    status, out, err = run(store, *GRAPH, "-q")
    assert status == 1 and err == ""
    assert out == (
        f"audited 3 threads, 3 checkpoints (the latest checkpoint of each thread) of {store}"
        " against test_audit_cli:builder\n"
        "by kind: type 2 threads\n"
        "by channel: count 2 threads\n"
        "\n"
        'type: ["count"] is "str", but Counter declares "int" for it: the resumed graph gets it as'
        " it was stored. Fix: widen the type to accept old values and convert them where the state"
        " is read, or migrate the stored threads (update_state() with today's value)\n"
        "  2 threads (2 findings): bad-1, bad-2\n"
        "\n"
        "Found 1 problem in 2 of 3 threads\n"
    )
    assert run(store, *GRAPH, "-q", "--exit-zero")[0] == 0
    # The README and docs/audit.md quote this run, as run in the application's directory.
    quoted = out.replace(store, "counter.db").replace("test_audit_cli:builder", "app:builder")
    for page in ("README.md", "docs/audit.md"):
        assert f"\n{quoted}```" in (ROOT / page).read_text(), page


def test_json_markdown_and_sarif(store: str, tmp_path: Path) -> None:
    document = json.loads(run(store, *GRAPH, "--format", "json")[1])
    assert document["kinds"] == {"type": {"threads": 2, "findings": 2}}
    assert [e["thread_id"] for e in document["problems"][0]["examples"]] == ["bad-1", "bad-2"]
    markdown = run(store, *GRAPH, "--format", "markdown", "--threads", "1")[1]
    assert "| type | 2 | 2 |" in markdown and "(for example bad-1)" in markdown
    sarif_file = tmp_path / "audit.sarif"
    status, out, _ = run(store, *GRAPH, "--format", "sarif", "--output-file", str(sarif_file))
    assert status == 1 and out == ""
    log = json.loads(sarif_file.read_text())
    run_log = log["runs"][0]
    assert [rule["id"] for rule in run_log["tool"]["driver"]["rules"]][:2] == [
        "lgstate-audit-unreadable", "lgstate-audit-unimportable"
    ]
    (result,) = run_log["results"]
    assert result["ruleId"] == "lgstate-audit-type"
    assert result["properties"]["threads"] == 2
    location = result["locations"][0]
    assert location["logicalLocations"] == [{"fullyQualifiedName": '["count"]', "kind": "member"}]
    # Counter is declared in this file: the problem is located at its class statement.
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "test_audit_cli.py"
    assert location["physicalLocation"]["region"]["startLine"] == inspect.getsourcelines(Counter)[1]


def test_a_store_that_needs_nothing_gives_exit_0(store: str, tmp_path: Path) -> None:
    clean = str(tmp_path / "clean.db")
    with sqlite3.connect(clean, check_same_thread=False) as conn:
        builder.compile(checkpointer=SqliteSaver(conn)).invoke(
            {"count": 1}, {"configurable": {"thread_id": "t"}}
        )
    before = Path(clean).read_bytes()
    status, out, _ = run(clean, *GRAPH, "-q")
    assert status == 0
    assert out.splitlines()[-1] == "Success: every audited thread (1) resumes on the state it saved"
    assert Path(clean).read_bytes() == before


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Paint(TypedDict):
    shade: Shade


def paint(state: Paint) -> dict[str, object]:
    return {"shade": Shade.DARK}


paint_builder = StateGraph(Paint)
paint_builder.add_node("paint", paint)
paint_builder.add_edge(START, "paint")
paint_builder.add_edge("paint", END)


class Inner(TypedDict):
    n: int


def inner_step(state: Inner) -> dict[str, object]:
    return {"n": "not a number"}


def inner_wait(state: Inner) -> dict[str, object]:
    interrupt("continue?")
    return {}


inner = StateGraph(Inner)
inner.add_node("inner_step", inner_step)
inner.add_node("inner_wait", inner_wait)
inner.add_edge(START, "inner_step")
inner.add_edge("inner_step", "inner_wait")
inner.add_edge("inner_wait", END)
outer = StateGraph(Inner)
outer.add_node("nested", inner.compile())
outer.add_edge(START, "nested")
outer.add_edge("nested", END)


def test_a_subgraph_checkpoint_is_compared_with_its_subgraph(tmp_path: Path) -> None:
    path = tmp_path / "nested.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        outer.compile(checkpointer=SqliteSaver(conn)).invoke({"n": 1}, {"configurable": {"thread_id": "t"}})
    document = json.loads(run(str(path), "--graph", "test_audit_cli:outer", "--format", "json")[1])
    # One thread: its subgraph's namespace is audited apart, and counted with it.
    assert (document["threads"], document["namespaces"], document["affected_threads"]) == (1, 2, 1)
    (problem,) = document["problems"]
    assert (problem["kind"], problem["path"], problem["threads"]) == ("type", '["n"]', 1)
    assert problem["message"].startswith('["n"] is "str", but Inner declares "int" for it')
    assert problem["examples"][0]["checkpoint_ns"].startswith("nested:")
    text = run(str(path), "--graph", "test_audit_cli:outer", "-q")[1].splitlines()
    assert (text[0], text[-1]) == (
        f"audited 1 thread (and 1 subgraph namespace in them), 2 checkpoints (the latest checkpoint"
        f" of each thread and subgraph namespace) of {path} against test_audit_cli:outer",
        "Found 1 problem in 1 of 1 thread",
    )


class Totals(TypedDict):
    count: int
    label: str  # Counter has no such channel: its threads lack it


def label_it(state: Totals) -> dict[str, object]:
    return {"label": "done"}


# A second graph of the store, whose channels include all of Counter's: a checkpoint's channels
# alone (the input's, {"count": 1}) fit both graphs; its nodes tell them apart.
tally_builder = StateGraph(Totals)
tally_builder.add_node("label_it", label_it)
tally_builder.add_edge(START, "label_it")
tally_builder.add_edge("label_it", END)


def test_a_thread_is_audited_against_the_graph_that_wrote_it_in_any_order(store: str) -> None:
    alone = run(store, *GRAPH, "--all-checkpoints", "--format", "json")
    assert alone[0] == 1
    expected = json.loads(alone[1])["problems"]
    assert [(p["kind"], p["path"], p["threads"]) for p in expected] == [("type", '["count"]', 2)]
    for graphs in (
        ["--graph", "test_audit_cli:tally_builder", *GRAPH],
        [*GRAPH, "--graph", "test_audit_cli:tally_builder"],
    ):
        status, out, _ = run(store, *graphs, "--all-checkpoints", "--format", "json")
        assert (status, json.loads(out)["problems"]) == (1, expected), graphs


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def write_note(state: Notes) -> dict[str, object]:
    return {"notes": ["drafted"]}


def wait(state: Notes) -> dict[str, object]:
    interrupt("review?")
    return {}


# write_note runs beside wait: when wait interrupts, write_note's update is a pending write.
notes_builder = StateGraph(Notes)
notes_builder.add_node("write_note", write_note)
notes_builder.add_node("wait", wait)
notes_builder.add_edge(START, "write_note")
notes_builder.add_edge(START, "wait")
notes_builder.add_edge("write_note", END)
notes_builder.add_edge("wait", END)


def test_a_pending_write_is_applied_by_the_channels_reducer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        notes_builder.compile(checkpointer=SqliteSaver(conn)).invoke(
            {}, {"configurable": {"thread_id": "t"}}
        )
    assert run(str(path), "--graph", "test_audit_cli:notes_builder")[0] == 0
    # The next deploy: operator.add of a str channel and a stored list raises, and so does
    # resuming the thread (measured below).
    monkeypatch.setattr(sys.modules[__name__], "Notes", TypedDict("Notes", {"notes": Annotated[str, operator.add]}))  # type: ignore[operator]
    builder_v2 = StateGraph(Notes)
    builder_v2.add_node("write_note", write_note)
    builder_v2.add_node("wait", wait)
    builder_v2.add_edge(START, "write_note")
    builder_v2.add_edge(START, "wait")
    monkeypatch.setattr(sys.modules[__name__], "notes_v2", builder_v2, raising=False)
    document = json.loads(run(str(path), "--graph", "test_audit_cli:notes_v2", "--format", "json")[1])
    assert [(p["kind"], p["path"], p["message"]) for p in document["problems"]] == [(
        "type", '["notes"]',
        '["notes"]: the reducer add raises TypeError: can only concatenate str (not "list") to str'
        " on the stored write, and so does resuming the thread, which applies it. Fix: make add"
        " accept what old threads wrote, or let them finish before the deploy",
    )]
    with sqlite3.connect(path, check_same_thread=False) as conn:
        resumed = builder_v2.compile(checkpointer=SqliteSaver(conn))
        with pytest.raises(TypeError, match="can only concatenate str"):
            resumed.invoke(Command(resume="yes"), {"configurable": {"thread_id": "t"}})


class Request(TypedDict):
    topic: str


@entrypoint()
def drafting(request: Request, *, previous: list[str] | None = None) -> list[str]:
    interrupt("publish?") if request["topic"] == "wait" else None
    return [*(previous or []), request["topic"]]


class RequestV2(TypedDict):
    topic: str
    audience: str


@entrypoint()
def drafting_v2(request: RequestV2, *, previous: list[int] | None = None) -> list[int]:
    return [len(request["topic"])]


def test_an_entrypoint_workflow_is_audited_by_its_input_and_what_it_saves(tmp_path: Path) -> None:
    path = tmp_path / "drafting.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        workflow = drafting.copy(update={"checkpointer": SqliteSaver(conn)})
        workflow.invoke({"topic": "done"}, {"configurable": {"thread_id": "done"}})
        workflow.invoke({"topic": "wait"}, {"configurable": {"thread_id": "waiting"}})
    status, out, _ = run(str(path), "--graph", "test_audit_cli:drafting", "--all-checkpoints", "-q")
    assert (status, out.splitlines()[-1]) == (
        0, "Success: every audited thread (2) resumes on the state it saved"
    )
    document = json.loads(run(str(path), "--graph", "test_audit_cli:drafting_v2", "--format", "json")[1])
    assert {(p["kind"], p["path"]): p["threads"] for p in document["problems"]} == {
        ("missing", 'drafting_v2(request)["audience"]'): 1,  # the interrupted run's input
        ("type", "drafting_v2()[]"): 1,  # what the finished run saved for previous
    }
    messages = {p["path"]: p["message"] for p in document["problems"]}
    assert messages["drafting_v2()[]"].startswith(
        'drafting_v2()[] is "str", but drafting_v2 declares "int" for it'
    )


AES_KEY = "0123456789abcdef"


def encrypted_store(path: Path, graph: StateGraph[Any], first: dict[str, Any]) -> str:
    """A store one thread of ``graph`` wrote with LangGraph's AES serializer."""
    serde = EncryptedSerializer.from_pycryptodome_aes(key=AES_KEY.encode())
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph.compile(checkpointer=SqliteSaver(conn, serde=serde)).invoke(
            first, {"configurable": {"thread_id": "one"}}
        )
    return str(path)


def test_encrypted_bytes_explain_a_lost_enum_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encrypted = encrypted_store(tmp_path / "paint.db", paint_builder, {"shade": Shade.LIGHT})
    # The next deploy: Shade without DARK, under the same module and name.
    shade = enum.Enum("Shade", {"LIGHT": "light"}, module=__name__)
    monkeypatch.setattr(sys.modules[__name__], "Shade", shade)
    new_paint = TypedDict("Paint", {"shade": shade})  # type: ignore[operator]
    monkeypatch.setattr(sys.modules[__name__], "paint_v2", StateGraph(new_paint), raising=False)
    monkeypatch.setenv("LANGGRAPH_AES_KEY", AES_KEY)
    document = json.loads(run(encrypted, "--graph", "test_audit_cli:paint_v2", "--format", "json")[1])
    assert [(p["kind"], p["path"]) for p in document["problems"]] == [("enum", '["shade"]')]
    assert document["problems"][0]["message"].startswith(
        '["shade"] holds "dark", which is no longer a value of Shade'
    )


def test_an_encrypted_store_is_read_with_langgraph_aes_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encrypted = encrypted_store(tmp_path / "encrypted.db", builder, {"count": -1})
    monkeypatch.setenv("LANGGRAPH_AES_KEY", AES_KEY)
    document = json.loads(run(encrypted, *GRAPH, "--format", "json")[1])
    assert [(p["kind"], p["path"]) for p in document["problems"]] == [("type", '["count"]')]
    monkeypatch.delenv("LANGGRAPH_AES_KEY")
    document = json.loads(run(encrypted, *GRAPH, "--format", "json")[1])
    assert [(p["kind"], p["path"]) for p in document["problems"]] == [("unreadable", "(checkpoint)")]
    assert document["problems"][0]["message"].startswith(
        "(checkpoint): the serializer raises NotImplementedError: Unknown serialization type:"
        " msgpack+aes"
    )


@pytest.mark.parametrize(
    ("store_arg", "graph", "line"),
    [
        ("missing.db", "test_audit_cli:builder", "lgstate: missing.db: no such file"),
        (".", "test_audit_cli:builder", "lgstate: .: is a directory, not a SQLite file"),
        (
            "test_audit_cli.py", "test_audit_cli:builder",
            "lgstate: test_audit_cli.py: not a SQLite database (file is not a database)",
        ),
        ("sqlite://x.db", "test_audit_cli:builder", "lgstate: sqlite://x.db: a SQLite URL is sqlite:///path/to/file"),
        (
            "redis://localhost/0", "test_audit_cli:builder",
            "lgstate: redis://localhost/0: not a store this audit reads (a SQLite file,"
            " sqlite:///path, a postgresql:// URL, or MODULE:ATTR naming a checkpointer)",
        ),
        (
            "test_audit_cli:not_a_saver", "test_audit_cli:builder",
            "lgstate: test_audit_cli:not_a_saver: not a LangGraph checkpointer"
            " (BaseCheckpointSaver), but str",
        ),
        (
            "test_audit_cli:broken_factory", "test_audit_cli:builder",
            "lgstate: test_audit_cli:broken_factory: calling it raised RuntimeError: no database"
            " configured",
        ),
        (
            "STORE", "no_such_module:graph",
            "lgstate: --graph no_such_module:graph: cannot import no_such_module:"
            " ModuleNotFoundError: No module named 'no_such_module'",
        ),
        (
            "STORE", "test_audit_cli:not_a_graph",
            "lgstate: --graph test_audit_cli:not_a_graph: not a LangGraph graph (a compiled graph,"
            " a StateGraph, an @entrypoint, or a function that returns one), but int",
        ),
        ("STORE", "test_audit_cli", "lgstate: --graph test_audit_cli: expected MODULE:ATTR (for example app.graph:builder)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(store: str, store_arg: str, graph: str, line: str) -> None:
    status, out, err = run(store if store_arg == "STORE" else store_arg, "--graph", graph)
    assert (status, out, err) == (2, "", line + "\n")


def test_postgres_without_its_driver_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line that works: mypy-lgstate itself is on no registry (``mypy-lgstate[audit]`` would not
    install), the drivers are."""
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    status, out, err = run("postgresql://audit@/shop", *GRAPH)
    assert (status, out) == (2, "")
    assert err.startswith(
        "lgstate: postgresql://audit@/shop: reading PostgreSQL needs langgraph-checkpoint-postgres"
        " and psycopg (pip install langgraph-checkpoint-postgres 'psycopg[binary]'): "
    )


def test_a_sqlite_file_that_is_not_a_checkpoint_store(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    status, out, err = run(str(other), *GRAPH)
    assert (status, out) == (2, "")
    assert err == (
        f"lgstate: {other}: not a checkpoint store (no checkpoints and writes tables, as"
        " SqliteSaver writes them)\n"
    )


def test_usage_errors(store: str) -> None:
    status, _, err = run(store, *GRAPH, "--threads", "0")
    assert status == 2 and err.splitlines()[-1].endswith("argument --threads: must be at least 1, not 0")
    status, _, err = run(store, *GRAPH, "--", "--strict")
    assert status == 2 and err.splitlines()[-1] == "lgstate audit: error: unrecognized arguments: -- --strict"
    status, _, err = run(store)
    assert status == 2
    assert err.splitlines()[-1] == (
        "lgstate audit: error: --graph: none given, and no langgraph.json names the graphs"
    )
    # An unknown option is named first, even when the required arguments are missing too: it may be
    # a misspelled one (--graphs).
    for args, unknown in (
        (["--frobnicate"], "--frobnicate"),
        (["--graphs", "app:builder"], "--graphs"),  # app:builder is taken as the STORE
        ([store, "--frobnicate"], "--frobnicate"),
    ):
        status, _, err = run(*args)
        assert (status, err.splitlines()[-1]) == (
            2, f"lgstate audit: error: unrecognized arguments: {unknown}"
        ), args
    status, _, err = run()
    assert status == 2 and err.splitlines()[-1] == (
        "lgstate audit: error: the following arguments are required: STORE"
    )


def test_without_graph_the_graphs_langgraph_json_deploys(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LangGraph's server deploys the graphs of ``langgraph.json``: a file's graph is imported by
    its module under the current directory (or the deepest directory of ``sys.path``)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "counter").mkdir(parents=True)
    (tmp_path / "src" / "counter" / "deployed.py").write_text("from test_audit_cli import builder\n")
    (tmp_path / "langgraph.json").write_text(
        json.dumps({"graphs": {"counter": {"path": "./src/counter/deployed.py:builder"}}})
    )
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["audit", store, "-q"]) == 1
    assert out.getvalue().startswith(
        f"audited 3 threads, 3 checkpoints (the latest checkpoint of each thread) of {store}"
        " against src.counter.deployed:builder\n"
    )
    assert "\ntype: [\"count\"] is \"str\", but Counter declares \"int\"" in out.getvalue()
    monkeypatch.syspath_prepend(str(tmp_path / "src"))  # an installed src layout
    out = io.StringIO()
    with redirect_stdout(out):
        main(["audit", store, "-q"])
    assert "against counter.deployed:builder\n" in out.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_only_on_a_terminal_after_a_delay_and_not_with_quiet() -> None:
    tally = Tally(5)
    tally.threads, tally.checkpoints = 1200, 3400
    terminal = _Terminal()
    line = ProgressLine(quiet=False, delay=0.0, stream=terminal)
    line(tally)
    line.done()
    assert terminal.getvalue() == (
        "\rlgstate audit: 1,200 threads, 3,400 checkpoints, 0 problems so far\r\x1b[K"
    )
    for progress in (
        ProgressLine(quiet=True, delay=0.0, stream=_Terminal()),
        ProgressLine(quiet=False, delay=0.0, stream=io.StringIO()),  # not a terminal: a CI log
        ProgressLine(quiet=False, delay=60.0, stream=_Terminal()),  # a short run
    ):
        progress(tally)
        progress.done()
        assert progress.stream.getvalue() == ""


@pytest.fixture(autouse=True)
def _keep_cwd() -> Iterator[None]:
    cwd = os.getcwd()
    yield
    os.chdir(cwd)


def test_the_audit_imports_no_mypy(tmp_path: Path) -> None:
    """A runtime tool, like CheckedSaver: an audit runs without mypy's modules."""
    (tmp_path / "counter_app.py").write_text(
        "from langgraph.graph import END, START, StateGraph\n"
        "from typing_extensions import TypedDict\n"
        "class Counter(TypedDict):\n    count: int\n"
        "builder = StateGraph(Counter)\n"
        "builder.add_node('bump', lambda state: {'count': 'many'})\n"
        "builder.add_edge(START, 'bump')\nbuilder.add_edge('bump', END)\n"
    )
    code = (
        "import sqlite3, sys\n"
        "from langgraph.checkpoint.sqlite import SqliteSaver\n"
        "from counter_app import builder\n"
        "with sqlite3.connect('counter.db', check_same_thread=False) as conn:\n"
        "    builder.compile(checkpointer=SqliteSaver(conn)).invoke({'count': 1},"
        " {'configurable': {'thread_id': 't'}})\n"
        "from mypy_lgstate.runtime.audit.formats import as_text\n"
        "from mypy_lgstate.runtime.audit.run import AuditOptions, run_audit\n"
        "result = run_audit(AuditOptions('counter.db', ('counter_app:builder',)))\n"
        "assert result.tally.problems, as_text(result)\n"
        "print(sorted(name for name in sys.modules if name == 'mypy' or name.startswith('mypy.')))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert found.stdout == "[]\n"
