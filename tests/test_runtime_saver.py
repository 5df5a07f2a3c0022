"""``CheckedSaver`` on real graphs: what it reports, where, and that a clean graph is untouched."""

from __future__ import annotations

import asyncio
import json
import operator
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict

from mypy_lgstate.core.config import ConfigError
from mypy_lgstate.runtime import CheckedSaver, CheckpointValueError

_WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)
_THREAD: Any = {"configurable": {"thread_id": "t"}}
_ISO_FIX = "store an ISO string (value.isoformat()) and parse it back with fromisoformat()"


class State(TypedDict, total=False):
    notes: dict[str, Any]
    items: Annotated[list[Any], operator.add]
    answer: Any


@dataclass
class Job:
    title: str


def _one_node_graph(node: Any, saver: CheckedSaver) -> Any:
    builder = StateGraph(State)
    builder.add_node(node.__name__, node)
    builder.add_edge(START, node.__name__)
    builder.add_edge(node.__name__, END)
    return builder.compile(checkpointer=saver)


def test_a_dict_node_writing_a_datetime_under_json() -> None:
    def fetch(state: State) -> dict:  # type: ignore[type-arg]
        return {"notes": {"a": [_WHEN]}}

    graph = _one_node_graph(fetch, CheckedSaver(InMemorySaver()))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value) == (
        'Node "fetch" wrote a value to channel "notes" that will not survive the checkpoint:\n'
        '  fetch().notes["a"][0] is "datetime": the JSON serializer raises TypeError when the'
        f" checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]"
    )
    assert isinstance(raised.value, TypeError)
    assert (raised.value.node, raised.value.channel) == ("fetch", "notes")
    [problem] = raised.value.problems
    assert (problem.path, problem.code) == ('fetch().notes["a"][0]', "lgstate-unserializable")


def test_the_same_graph_without_the_wrapper_fails_later_or_not_at_all() -> None:
    # What the checker adds: LangGraph's default serializer keeps the datetime (msgpack), so only
    # the json profile's promise is broken, and nothing in LangGraph says so.
    def fetch(state: State) -> dict:  # type: ignore[type-arg]
        return {"notes": {"a": [_WHEN]}}

    builder = StateGraph(State)
    builder.add_node("fetch", fetch)
    builder.add_edge(START, "fetch")
    graph = builder.compile(checkpointer=InMemorySaver())
    assert graph.invoke({"items": []}, _THREAD)["notes"] == {"a": [_WHEN]}


def test_a_tuple_under_msgpack() -> None:
    def pair(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": (1, 2)}

    graph = _one_node_graph(pair, CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value).splitlines()[1] == (
        '  pair().answer is "tuple": the msgpack serializer writes it, but it comes back as list.'
        " Fix: store a list and declare it as list[...]  [lgstate-lossy]"
    )
    # Without the wrapper the tuple comes back as a list, silently.
    plain = _one_node_graph(pair, InMemorySaver())  # type: ignore[arg-type]
    plain.invoke({"items": []}, _THREAD)
    assert plain.get_state(_THREAD).values["answer"] == [1, 2]


def test_a_module_in_exec_locals() -> None:
    # langgraph-codeact#8: the variables of executed code, kept in a dict[str, Any] channel.
    def run_code(state: State) -> dict:  # type: ignore[type-arg]
        variables: dict[str, Any] = {}
        exec("import math\nresult = math.sqrt(16)", {}, variables)
        return {"notes": variables}

    graph = _one_node_graph(run_code, CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value).splitlines()[1] == (
        '  run_code().notes["math"] is "module": the msgpack serializer raises TypeError when the'
        " checkpoint is written. Fix: store the module name and import it in the node"
        "  [lgstate-unserializable]"
    )
    # LangGraph's own error names the type, not where it is.
    plain = _one_node_graph(run_code, InMemorySaver())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Type is not msgpack serializable: module"):
        plain.invoke({"items": []}, _THREAD)


def _interrupting_graph(saver: Any, question: Any) -> Any:
    def ask(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": interrupt(question)}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=saver)


def test_an_interrupt_payload() -> None:
    graph = _interrupting_graph(CheckedSaver(InMemorySaver()), {"asked_at": _WHEN})
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value) == (
        'Node "ask" wrote an interrupt() value that will not survive the checkpoint:\n'
        '  interrupt.value["asked_at"] is "datetime": the JSON serializer raises TypeError when the'
        f" checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]"
    )


def test_a_resume_value() -> None:
    graph = _interrupting_graph(CheckedSaver(InMemorySaver()), "approve?")
    graph.invoke({"items": []}, _THREAD)
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke(Command(resume={"approved_at": _WHEN}), _THREAD)
    assert str(raised.value).splitlines() == [
        "The caller wrote a resume value (Command(resume=...)) that will not survive the checkpoint:",
        '  Command.resume["approved_at"] is "datetime": the JSON serializer raises TypeError when'
        f" the checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]",
    ]


def _fan_out_graph(saver: Any, payload: Any, worker_update: Any) -> Any:
    def plan(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": "planned"}

    def fan_out(state: State) -> list[Send]:
        return [Send("draft", payload)]

    def draft(arg: Any) -> dict:  # type: ignore[type-arg]
        return worker_update

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("draft", draft)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["draft"])
    return builder.compile(checkpointer=saver)


def test_a_send_payload() -> None:
    graph = _fan_out_graph(CheckedSaver(InMemorySaver()), {"tags": {"a", "b"}}, {})
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value).splitlines() == [
        'Node "plan" wrote a Send("draft", ...) payload that will not survive the checkpoint:',
        '  Send.arg["tags"] is "set": the JSON serializer raises TypeError when the checkpoint is'
        " written. Fix: store a sorted list instead  [lgstate-unserializable]",
    ]


def test_a_node_run_by_send_is_named() -> None:
    graph = _fan_out_graph(CheckedSaver(InMemorySaver()), {"n": 1}, {"items": [{1, 2}]})
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert raised.value.node == "draft"
    assert str(raised.value).splitlines()[1].startswith('  draft().items[0] is "set"')


def test_the_graph_input() -> None:
    graph = _one_node_graph(lambda state: {}, CheckedSaver(InMemorySaver()))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"notes": {"when": _WHEN}}, _THREAD)
    assert str(raised.value).splitlines() == [
        "The graph input wrote a value that will not survive the checkpoint:",
        '  input["notes"]["when"] is "datetime": the JSON serializer raises TypeError when the'
        f" checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]",
    ]


def test_update_state() -> None:
    graph = _one_node_graph(lambda state: {}, CheckedSaver(InMemorySaver()))
    graph.invoke({"items": []}, _THREAD)
    with pytest.raises(CheckpointValueError) as raised:
        graph.update_state(_THREAD, {"answer": _WHEN})
    assert str(raised.value).splitlines() == [
        'update_state() wrote a value to channel "answer" that will not survive the checkpoint:',
        '  update_state.values["answer"] is "datetime": the JSON serializer raises TypeError when'
        f" the checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]",
    ]


def test_a_reducer_output_is_checked_at_the_checkpoint() -> None:
    # Each write is fine; the reducer makes a tuple of them.
    class Pairs(TypedDict):
        pairs: Annotated[Any, lambda old, new: (*(old or ()), new)]

    def add(state: Pairs) -> dict:  # type: ignore[type-arg]
        return {"pairs": 1}

    builder = StateGraph(Pairs)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    graph = builder.compile(checkpointer=CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"pairs": 0}, _THREAD)
    assert str(raised.value).splitlines() == [
        'Node "add" wrote a value to channel "pairs" that will not survive the checkpoint:',
        '  pairs is "tuple": the msgpack serializer writes it, but it comes back as list. Fix:'
        " store a list and declare it as list[...]  [lgstate-lossy]",
    ]


def test_a_whole_bytearray_channel_is_reported_under_msgpack() -> None:
    # InMemorySaver would keep it, but SqliteSaver brings it back as bytes
    # (tests/test_precision_runtime.py): the checker says so whatever it wraps.
    def blob(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": bytearray(b"x")}

    graph = _one_node_graph(blob, CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert "answer is \"bytearray\"" in str(raised.value)
    assert "comes back as bytes under SqliteSaver and AsyncSqliteSaver" in str(raised.value)


def test_async_graphs() -> None:
    async def fetch(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": {"when": _WHEN}}

    async def ask(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": interrupt({"n": {1}})}

    async def run() -> list[str]:
        messages = []
        for node in (fetch, ask):
            graph = _one_node_graph(node, CheckedSaver(InMemorySaver()))
            with pytest.raises(CheckpointValueError) as raised:
                async for _ in graph.astream({"items": []}, _THREAD):
                    pass
            messages.append(str(raised.value).splitlines()[1])
        clean = _one_node_graph(_async_noop, CheckedSaver(InMemorySaver()))
        assert await clean.ainvoke({"items": [1]}, _THREAD) == {"items": [1]}
        return messages

    assert asyncio.run(run()) == [
        '  fetch().answer["when"] is "datetime": the JSON serializer raises TypeError when the'
        f" checkpoint is written. Fix: {_ISO_FIX}  [lgstate-unserializable]",
        '  interrupt.value["n"] is "set": the JSON serializer raises TypeError when the checkpoint'
        " is written. Fix: store a sorted list instead  [lgstate-unserializable]",
    ]


async def _async_noop(state: State) -> dict:  # type: ignore[type-arg]
    return {}


# Strict msgpack ----------------------------------------------------------------------------


def test_strict_allowlist() -> None:
    def hire(state: State) -> dict:  # type: ignore[type-arg]
        return {"answer": Job("x")}

    strict = {"profile": "msgpack", "strict_msgpack": True}
    graph = _one_node_graph(hire, CheckedSaver(InMemorySaver(), **strict))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"items": []}, _THREAD)
    assert str(raised.value).splitlines()[1] == (
        f'  hire().answer is "Job": this dataclass is not on the strict msgpack allowlist, so the'
        f" checkpoint loader returns a plain dict instead. Fix: pass (\"{__name__}\", \"Job\") in"
        f" the serializer's allowed_msgpack_modules, and add \"{__name__}.Job\" to the plugin's"
        " allowed_msgpack_modules  [lgstate-allowlist]"
    )
    allowed = CheckedSaver(InMemorySaver(), allowed_msgpack_modules=[f"{__name__}.Job"], **strict)
    _one_node_graph(hire, allowed).invoke({"items": []}, _THREAD)
    # What compile() derives reaches the saver through with_allowlist().
    derived = CheckedSaver(InMemorySaver(), **strict).with_allowlist([(__name__, "Job")])
    _one_node_graph(hire, derived).invoke({"items": []}, _THREAD)


_STRICT_SCRIPT = '''
from dataclasses import dataclass
from typing import Any
from typing_extensions import TypedDict
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Send
from mypy_lgstate.runtime import CheckedSaver, CheckpointValueError

@dataclass
class Job:
    title: str

@dataclass
class Memo:
    text: str

class State(TypedDict, total=False):
    job: Job
    done: bool

def hire(state):
    return {"job": Job("x")}

def fan_out(state):
    return [Send("note", Memo("unlisted"))]

def note(arg):
    return {"done": True}

builder = StateGraph(State)
builder.add_node("hire", hire)
builder.add_node("note", note)
builder.add_edge(START, "hire")
builder.add_conditional_edges("hire", fan_out, ["note"])
saver = CheckedSaver(InMemorySaver(), profile="msgpack", strict_msgpack=True)
try:
    builder.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "t"}})
except CheckpointValueError as error:
    print(error)
'''


def test_strict_allowlist_derived_by_compile(tmp_path: Path) -> None:
    # LANGGRAPH_STRICT_MSGPACK is read when langgraph is imported: a fresh interpreter.
    script = tmp_path / "strict_graph.py"
    script.write_text(_STRICT_SCRIPT)
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=True,
        cwd=tmp_path,
    )
    # Job is in the state schema (derived); Memo only travels in a Send (not derived).
    assert result.stdout.splitlines() == [
        'Node "hire" wrote a Send("note", ...) payload that will not survive the checkpoint:',
        '  Send.arg is "Memo": this dataclass is not on the strict msgpack allowlist, so the'
        ' checkpoint loader returns a plain dict instead. Fix: pass ("__main__", "Memo") in the'
        " serializer's allowed_msgpack_modules, and add \"__main__.Memo\" to the plugin's"
        " allowed_msgpack_modules  [lgstate-allowlist]",
    ]


# A clean graph behaves exactly as with the wrapped saver -------------------------------------


class ChatState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    drafts: Annotated[list[str], operator.add]
    approved: bool


def _chat_graph(saver: Any) -> Any:
    def answer(state: ChatState) -> dict:  # type: ignore[type-arg]
        count = len(state["messages"])
        return {"messages": [AIMessage(content=f"reply {count}", id=f"ai-{count}")]}

    def fan_out(state: ChatState) -> list[Send]:
        return [Send("draft", {"topic": topic}) for topic in ("a", "b")]

    def draft(arg: dict) -> dict:  # type: ignore[type-arg]
        return {"drafts": [f"draft {arg['topic']}"]}

    def review(state: ChatState) -> dict:  # type: ignore[type-arg]
        return {"approved": interrupt({"drafts": sorted(state["drafts"])})}

    builder = StateGraph(ChatState)
    builder.add_node("answer", answer)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_edge(START, "answer")
    builder.add_conditional_edges("answer", fan_out, ["draft"])
    builder.add_edge("draft", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


def _run_chat(saver: Any) -> tuple[list[Any], list[Any]]:
    graph = _chat_graph(saver)
    results = [
        graph.invoke({"messages": [HumanMessage(content="hi", id="h-1")]}, _THREAD),
        graph.invoke(Command(resume=True), _THREAD),
        graph.invoke({"messages": [HumanMessage(content="again", id="h-2")]}, _THREAD),
    ]
    history = [
        (
            snapshot.values,
            snapshot.next,
            {k: v for k, v in snapshot.metadata.items() if k != "run_id"},
            [(task.name, task.interrupts) for task in snapshot.tasks],
        )
        for snapshot in graph.get_state_history(_THREAD)
    ]
    return results, history


def _without_ids(found: Any) -> str:
    """``found`` written out, less the interrupt ids (derived from checkpoint ids: time-based)."""
    return re.sub(r"id='[0-9a-f]{32}'", "id=...", repr(found))


def _stored(saver: InMemorySaver) -> list[Any]:
    """What the saver holds, less checkpoint ids and timestamps."""
    stored = []
    for found in saver.list(_THREAD):
        checkpoint = found.checkpoint
        stored.append((
            checkpoint["channel_values"],
            sorted(checkpoint["channel_versions"]),
            {k: v for k, v in found.metadata.items() if k != "run_id"},
            [(channel, value) for _, channel, value in found.pending_writes or []],
        ))
    return stored


@pytest.mark.parametrize("profile", ["json", "msgpack"])
def test_a_clean_graph_is_untouched(profile: str) -> None:
    plain = InMemorySaver()
    wrapped_inner = InMemorySaver()
    checked = CheckedSaver(wrapped_inner, profile=profile)
    plain_results, plain_history = _run_chat(plain)
    checked_results, checked_history = _run_chat(checked)
    assert _without_ids(checked_results) == _without_ids(plain_results)
    assert _without_ids(checked_history) == _without_ids(plain_history)
    assert _without_ids(_stored(wrapped_inner)) == _without_ids(_stored(plain))
    assert len(plain_history) > 5 and len(_stored(plain)) == len(plain_history)
    assert plain_results[0]["__interrupt__"]


def test_the_wrapped_savers_own_api() -> None:
    inner = InMemorySaver()
    checked = CheckedSaver(inner)
    assert checked.serde is inner.serde
    assert checked.storage is inner.storage  # InMemorySaver's own attribute
    assert checked.config_specs == inner.config_specs
    # InMemorySaver's versions: a counter and a random fraction.
    assert checked.get_next_version(None, None).startswith("00000000000000000000000000000001.")
    _one_node_graph(lambda state: {}, checked).invoke({"items": []}, _THREAD)
    assert checked.get_tuple(_THREAD) is not None
    checked.delete_thread("t")
    assert checked.get_tuple(_THREAD) is None and inner.get_tuple(_THREAD) is None


# Options from the project ------------------------------------------------------------------


def test_options_from_the_project(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mypy_lgstate]\nprofile = "msgpack"\nstrict_msgpack = true\n'
        'allowed_msgpack_modules = ["app.Job"]\nsafe_types = ["app.Money"]\n'
        "pickle_fallback = true\n"
    )
    (tmp_path / "pkg").mkdir()
    saver = CheckedSaver.from_project(InMemorySaver(), start=tmp_path / "pkg")
    assert saver.options == {
        "profile": "msgpack", "strict_msgpack": True,
        "allowed_msgpack_modules": ("app.Job",), "safe_types": ("app.Money",),
        "pickle_fallback": True, "saver": "sqlite",
    }
    # LangGraph's server deploys on PostgreSQL: a langgraph.json says so, unless it names a
    # checkpointer of its own, or the options name the saver.
    (tmp_path / "langgraph.json").write_text('{"graphs": {"agent": "./pkg/graph.py:graph"}}')
    assert CheckedSaver.from_project(InMemorySaver(), start=tmp_path / "pkg").options[
        "saver"] == "postgres"
    (tmp_path / "langgraph.json").write_text('{"checkpointer": {"path": "./pkg/saver.py:make"}}')
    assert CheckedSaver.from_project(InMemorySaver(), start=tmp_path / "pkg").options[
        "saver"] == "sqlite"
    (tmp_path / "langgraph.json").unlink()
    # mypy's own files come first in a directory; one without a section is skipped.
    (tmp_path / "pkg" / "setup.cfg").write_text("[metadata]\nname = x\n")
    (tmp_path / "pkg" / "mypy.ini").write_text("[mypy]\n[mypy_lgstate]\nprofile = json\n")
    assert CheckedSaver.from_project(InMemorySaver(), start=tmp_path / "pkg").options[
        "profile"] == "json"
    explicit = CheckedSaver.from_project(InMemorySaver(), config_file=tmp_path / "pyproject.toml")
    assert explicit.options["profile"] == "msgpack"


def test_no_configuration_means_the_defaults(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert CheckedSaver.from_project(InMemorySaver(), start=tmp_path).options["profile"] == "json"


def test_a_bad_option_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.mypy_lgstate]\nprofile = "yaml"\n')
    with pytest.raises(ConfigError) as raised:
        CheckedSaver.from_project(InMemorySaver(), start=tmp_path)
    assert str(raised.value) == (
        f'{tmp_path / "pyproject.toml"}: [tool.mypy_lgstate]: profile: must be "json" or'
        ' "msgpack", not "yaml"'
    )


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        pytest.param(
            "pyproject.toml", '[tool.mypy_lgstate\nprofile = "msgpack"\n',
            "not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 19)",
            id="toml",
        ),
        pytest.param(
            "setup.cfg", "[mypy_lgstate\nprofile = msgpack\n",
            "1: not valid ini syntax (no [section] above it): [mypy_lgstate", id="no-section",
        ),
        pytest.param(
            "mypy.ini", "[mypy]\n[mypy_lgstate\nprofile = msgpack\n",
            "2: not valid ini syntax: [mypy_lgstate", id="ini",
        ),
    ],
)
def test_a_file_that_cannot_be_parsed_is_an_error_not_the_defaults(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    # mypy passes over a shared file it cannot parse; its options would silently be the defaults.
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    separator = ":" if problem[0].isdigit() else ": "
    for given in ({"start": tmp_path}, {"config_file": tmp_path / name}):
        with pytest.raises(ConfigError) as raised:
            CheckedSaver.from_project(InMemorySaver(), **given)  # type: ignore[arg-type]
        assert str(raised.value) == f"{tmp_path / name}{separator}{problem}"


def test_a_missing_config_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        CheckedSaver.from_project(InMemorySaver(), config_file="nope.ini")
    assert str(raised.value) == "nope.ini: no such configuration file"


# Functional API -----------------------------------------------------------------------------


def test_task_and_entrypoint_results() -> None:
    from langgraph.func import entrypoint, task

    @task
    def fetch(n: int) -> dict:  # type: ignore[type-arg]
        return {"when": _WHEN}

    @entrypoint(checkpointer=CheckedSaver(InMemorySaver()))
    def flow(n: int) -> Any:
        return fetch(n).result()

    with pytest.raises(CheckpointValueError) as raised:
        flow.invoke(1, _THREAD)
    assert str(raised.value).splitlines() == [
        'A task called by "flow" wrote a return value that will not survive the checkpoint:',
        '  task()["when"] is "datetime": the JSON serializer raises TypeError when the checkpoint'
        f" is written. Fix: {_ISO_FIX}  [lgstate-unserializable]",
    ]

    @entrypoint(checkpointer=CheckedSaver(InMemorySaver(), profile="msgpack"))
    def pairs(n: int) -> Any:
        return {"pair": (n, n)}

    with pytest.raises(CheckpointValueError) as raised:
        pairs.invoke(1, _THREAD)
    assert str(raised.value).splitlines()[1].startswith('  pairs()["pair"] is "tuple"')
