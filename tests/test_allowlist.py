"""``lgstate allowlist`` on a real project, with the real command, real mypy, and the real serializer
given the list it prints. One mypy cache is shared by the module's runs (langgraph is analysed once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

import library_caches
from mypy_lgstate.core import config

LGSTATE = Path(sys.executable).parent / "lgstate"
TIMEOUT = 900  # seconds: a first run analyses langgraph, slowly on a busy machine (5 min seen at load 12)

MODELS = """\
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, Sequence

from pydantic import BaseModel, SecretStr


class Color(Enum):
    RED = "red"


class Point(NamedTuple):
    x: int
    y: int


class Tag(BaseModel):
    label: str


class Profile(BaseModel):
    name: str
    token: SecretStr
    tags: Sequence[Tag]


@dataclass
class Job:
    id: int
"""

GRAPH = """\
from typing import Any

from langgraph.graph import StateGraph
from typing_extensions import TypedDict

from allowpkg.models import Color, Job, Point, Profile


class State(TypedDict):
    profile: Profile
    jobs: list[Job]
    color: Color
    where: Point
    extra: dict[str, Any]


builder = StateGraph(State)
"""

# The functional API: a @task's result is checkpointed (a pending write, replayed on resume), but
# compile() derives the strict allowlist from the @entrypoint's annotations alone.
FLOW = """\
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import interrupt
from pydantic import BaseModel


class Summary(BaseModel):
    text: str


class Request(BaseModel):
    topic: str


@task
def summarize(topic: str) -> Summary:
    return Summary(text=topic)


@entrypoint(checkpointer=InMemorySaver())
def workflow(request: Request) -> str:
    summary = summarize(request.topic).result()
    interrupt("publish?")
    return summary.text
"""

# Under ``from __future__ import annotations`` LangGraph reads an @entrypoint's annotations as
# strings: compile() derives nothing from them.
LATER = """\
from __future__ import annotations

from langgraph.func import entrypoint
from pydantic import BaseModel


class Report(BaseModel):
    pages: int


@entrypoint()
def report(pages: int) -> Report:
    return Report(pages=pages)
"""

PYTHON = """\
# lgstate allowlist: the classes the graphs checkpoint. Under LANGGRAPH_STRICT_MSGPACK=true
# pass them to JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_MSGPACK_MODULES).
ALLOWED_MSGPACK_MODULES = [
    ("allowpkg.flow", "Request"),
    ("allowpkg.flow", "Summary"),  # returned by a @task: compile() does not derive it
    ("allowpkg.later", "Report"),  # an @entrypoint's value, whose annotations LangGraph reads as strings under from __future__ import annotations: compile() does not derive it
    ("allowpkg.models", "Color"),
    ("allowpkg.models", "Job"),
    ("allowpkg.models", "Point"),  # a NamedTuple: compile() does not derive it
    ("allowpkg.models", "Profile"),
    ("allowpkg.models", "Tag"),  # reached only through a type compile() does not look inside (Sequence, Mapping...)
    ("pydantic.types", "SecretStr"),  # compile() does not derive it
]
# Not listed: the classes of what these fields typed Any hold (add them yourself):
#   State.extra (dict[str, Any])
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("allowlist")
    (root / "allowpkg").mkdir()
    (root / "allowpkg" / "__init__.py").write_text("")
    (root / "allowpkg" / "models.py").write_text(MODELS)
    (root / "allowpkg" / "graph.py").write_text(GRAPH)
    (root / "allowpkg" / "flow.py").write_text(FLOW)
    (root / "allowpkg" / "later.py").write_text(LATER)
    config = f"[mypy]\nfiles = allowpkg\ncache_dir = {root / 'cache'}\n[mypy_lgstate]\nprofile = msgpack\n"
    (root / "mypy.ini").write_text(config)
    library_caches.seed(root / "cache", config, lgstate=True)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    for name in [name for name in sys.modules if name.startswith("allowpkg")]:
        del sys.modules[name]


def lgstate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LGSTATE), "allowlist", "-q", *args], cwd=project, capture_output=True, text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def python_list(project: Path) -> str:
    result = lgstate(project)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_python_list_names_every_class_and_what_compile_does_not_derive(python_list: str) -> None:
    assert python_list == PYTHON


def test_the_serializer_given_the_list_rebuilds_every_class(python_list: str) -> None:
    from allowpkg import models  # the project's own classes, as the application imports them

    namespace: dict[str, object] = {}
    exec(python_list, namespace)
    allowed = namespace["ALLOWED_MSGPACK_MODULES"]
    assert isinstance(allowed, list)
    values = [
        models.Color.RED, models.Point(1, 2), models.Job(3),
        models.Profile(name="a", token="s3cret", tags=[models.Tag(label="t")]),
    ]
    strict = JsonPlusSerializer(allowed_msgpack_modules=allowed)
    for value in values:
        assert strict.loads_typed(strict.dumps_typed(value)) == value
    # Without the NamedTuple's entry (which compile() never derives), it comes back as a dict.
    short = JsonPlusSerializer(allowed_msgpack_modules=[p for p in allowed if p[1] != "Point"])
    assert short.loads_typed(short.dumps_typed(models.Point(1, 2))) == {"x": 1, "y": 2}


def test_a_tasks_result_needs_the_list_under_strict_msgpack(project: Path, python_list: str) -> None:
    """The workflow run for real with LANGGRAPH_STRICT_MSGPACK=true: the allowlist its graph
    derives lacks the task's class (its pending write is read back as a dict), and the
    serializer given the printed list reads it back as the class."""
    code = (
        "import json, sys\n"
        "from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer\n"
        "from allowpkg.flow import Request, workflow\n"
        "config = {'configurable': {'thread_id': 't'}}\n"
        "workflow.invoke(Request(topic='launch'), config)\n"
        "saver = workflow.checkpointer\n"
        "derived = [w[2] for w in saver.get_tuple(config).pending_writes if w[1] == '__return__']\n"
        "namespace = {}\n"
        "exec(sys.stdin.read(), namespace)\n"
        "listed = JsonPlusSerializer(allowed_msgpack_modules=namespace['ALLOWED_MSGPACK_MODULES'])\n"
        "saver.serde = listed\n"
        "printed = [w[2] for w in saver.get_tuple(config).pending_writes if w[1] == '__return__']\n"
        "print(json.dumps([[type(v).__name__ for v in derived], [type(v).__name__ for v in printed]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], input=python_list, cwd=project, capture_output=True,
        text=True, check=True, env={**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"},
    )
    assert json.loads(result.stdout.splitlines()[-1]) == [["dict"], ["Summary"]]


def test_langgraph_json_and_toml_hold_the_same_classes(project: Path, python_list: str) -> None:
    block = lgstate(project, "--format", "langgraph-json")
    assert block.returncode == 0
    pairs = json.loads(block.stdout)["serde"]["allowed_msgpack_modules"]
    assert block.stderr.splitlines()[-1] == "lgstate:   State.extra (dict[str, Any])"
    toml = lgstate(project, "--format", "toml")
    written = project / "pyproject.toml"
    written.write_text(toml.stdout)
    try:
        from_toml = config.read_config(str(written)).allowed_msgpack_modules
    finally:
        written.unlink()
    assert sorted(".".join(pair) for pair in pairs) == sorted(from_toml) == [
        "allowpkg.flow.Request", "allowpkg.flow.Summary", "allowpkg.later.Report",
        "allowpkg.models.Color", "allowpkg.models.Job", "allowpkg.models.Point",
        "allowpkg.models.Profile", "allowpkg.models.Tag", "pydantic.types.SecretStr",
    ]


def test_check_fails_when_the_committed_list_lacks_a_class(project: Path, python_list: str) -> None:
    committed = project / "serde.py"
    committed.write_text(python_list)
    assert lgstate(project, "--check", str(committed)).stdout == (
        f"{committed} lists every class the graphs checkpoint (9)\n"
    )
    committed.write_text(
        "\n".join(
            line for line in python_list.splitlines()
            if '"Point"' not in line and '"Summary"' not in line
        )
    )
    result = lgstate(project, "--check", str(committed))
    assert result.returncode == 1
    assert result.stdout == (
        f"{committed} lacks 2 of the 9 classes the graphs checkpoint:\n"
        "  allowpkg.flow.Summary (returned by a @task: compile() does not derive it)\n"
        "  allowpkg.models.Point (a NamedTuple: compile() does not derive it)\n"
        "run lgstate allowlist to print the whole list\n"
    )
