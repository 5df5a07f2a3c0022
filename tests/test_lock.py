"""``lgstate lock`` and ``lgstate-drift`` on a real project, with the real command and real mypy.

The project: ``pkg/models.py`` (``Profile``, a pydantic model; ``Job``, a dataclass; ``Color``, an
enum) and ``pkg/graph.py`` (``State``, a TypedDict holding them, and ``StateGraph(State)``), under the
msgpack profile. The lock file is written by the command; the tests then edit the classes or the lock
file and compare what mypy reports in cold, warm and daemon runs. One mypy cache is shared by the
module's tests (langgraph is analysed once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import library_caches

LGSTATE = Path(sys.executable).parent / "lgstate"
DRIFT_PAGE = Path(__file__).resolve().parent.parent / "docs" / "drift.md"
TIMEOUT = 300  # seconds: a first run analyses langgraph, slowly on a busy machine

MODELS = """\
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Profile(BaseModel):
    name: str
    age: int | None = None


@dataclass
class Job:
    id: int
"""

GRAPH = """\
from langgraph.graph import StateGraph
from typing_extensions import TypedDict

from pkg.models import Color, Job, Profile


class State(TypedDict):
    profile: Profile
    jobs: list[Job]
    color: Color


builder = StateGraph(State)
"""

CONFIG = """\
[mypy]
plugins = mypy_lgstate.plugin
files = pkg

[mypy_lgstate]
profile = msgpack
"""

EMAIL = (
    "pkg/graph.py:13: error: State.profile.email (pkg.models.Profile in pkg/models.py) is a new"
    " required field since the lock file, and old checkpoints lack it: the loader falls back to"
    " Profile.model_construct(), and reading the field raises AttributeError. Fix: give it a"
    ' default, or fill it in for old values in a model_validator(mode="before"); then run'
    ' "lgstate lock" to accept the change  [lgstate-drift]'
)


def env() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith("MYPY")}


class Project:
    """The project in one directory; every write moves the file's mtime forward, so that mypy and
    dmypy (which look at mtime and size before the content) never miss an edit."""

    def __init__(self, root: Path, cache: Path) -> None:
        self.root = root
        self.cache = cache
        self.clock = time.time()
        (root / "pkg").mkdir(parents=True)
        self.write("pkg/__init__.py", "")
        self.write("pkg/models.py", MODELS)
        self.write("pkg/graph.py", GRAPH)
        self.write("mypy.ini", CONFIG)

    @property
    def lock(self) -> Path:
        return self.root / "lgstate.lock"

    def write(self, name: str, text: str) -> None:
        path = self.root / name
        path.write_text(text)
        self.clock += 2
        os.utime(path, (self.clock, self.clock))

    def edit(self, name: str, old: str, new: str) -> None:
        text = (self.root / name).read_text()
        assert text.count(old) == 1, text
        self.write(name, text.replace(old, new))

    def lgstate(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LGSTATE), *args], cwd=self.root, env={**env(), "MYPY_CACHE_DIR": str(self.cache)},
            capture_output=True, text=True, timeout=TIMEOUT,
        )

    def mypy(self) -> tuple[int, list[str], str]:
        proc = subprocess.run(
            [sys.executable, "-m", "mypy", "--cache-dir", str(self.cache), "--show-traceback"],
            cwd=self.root, env=env(), capture_output=True, text=True, timeout=TIMEOUT,
        )
        lines = [line for line in proc.stdout.splitlines() if ": error:" in line]
        return proc.returncode, lines, proc.stderr


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    library_caches.seed(cache, CONFIG)
    library_caches.seed(cache, CONFIG, lgstate=True)
    return cache


@pytest.fixture
def project(tmp_path: Path, cache: Path) -> Project:
    """A project whose lock file ``lgstate lock`` has just written (exit 0)."""
    project = Project(tmp_path / "project", cache)
    proc = project.lgstate("lock")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "wrote lgstate.lock (1 graph-state root, 4 checkpointed classes)\n"
    return project


def test_lock_records_every_checkpointed_class_by_path(project: Project) -> None:
    document = json.loads(project.lock.read_text())
    assert document["lgstate_lock"] == 1
    assert list(document["roots"]) == ["pkg.graph.State"]
    classes = document["roots"]["pkg.graph.State"]
    assert classes == {
        "State": {
            "class": ["pkg.graph", "State"],
            "kind": "TypedDict",
            "fields": {
                "color": {"type": "pkg.models.Color", "required": True},
                "jobs": {"type": "builtins.list[pkg.models.Job]", "required": True},
                "profile": {"type": "pkg.models.Profile", "required": True},
            },
        },
        "State.color": {
            "class": ["pkg.models", "Color"],
            "kind": "Enum",
            "members": {"BLUE": "'blue'", "RED": "'red'"},
        },
        "State.jobs[]": {
            "class": ["pkg.models", "Job"],
            "kind": "dataclass",
            "fields": {"id": {"type": "builtins.int", "required": True}},
        },
        "State.profile": {
            "class": ["pkg.models", "Profile"],
            "kind": "pydantic model",
            "fields": {
                "age": {"type": "None | builtins.int", "required": False},
                "name": {"type": "builtins.str", "required": True},
            },
        },
    }
    # Sorted and indented: the same bytes on every run (a warm one here), one item a line.
    written = project.lock.read_bytes()
    assert written.decode() == json.dumps(document, indent=2, sort_keys=True) + "\n"
    assert project.lgstate("lock").returncode == 0
    assert project.lock.read_bytes() == written


def test_check_is_current_and_writes_nothing(project: Project) -> None:
    before = project.lock.stat().st_mtime_ns
    proc = project.lgstate("lock", "--check")
    assert (proc.returncode, proc.stdout) == (
        0, "lgstate.lock is current (1 graph-state root, 4 checkpointed classes)\n"
    )
    # docs/drift.md's session: this project's first lock (the fixture's) and this check.
    session = (
        "$ lgstate lock\nwrote lgstate.lock (1 graph-state root, 4 checkpointed classes)\n"
        f"$ lgstate lock --check\n{proc.stdout}"
    )
    assert f"```text\n{session}```" in DRIFT_PAGE.read_text()
    module = subprocess.run(
        [sys.executable, "-m", "mypy_lgstate", "lock", "--check"], cwd=project.root,
        env={**env(), "MYPY_CACHE_DIR": str(project.cache)}, capture_output=True, text=True,
        timeout=TIMEOUT,
    )
    assert module.returncode == 0, module.stderr
    assert project.lock.stat().st_mtime_ns == before


def test_check_fails_when_missing_or_stale_and_writes_nothing(project: Project) -> None:
    written = project.lock.read_bytes()
    project.edit("pkg/models.py", "    name: str\n", "    name: str\n    email: str\n")
    proc = project.lgstate("lock", "--check")
    assert (proc.returncode, proc.stdout.splitlines()) == (1, [
        "lgstate.lock is stale: 1 change, 1 breaking; review the changes, then run lgstate lock to"
        " accept them",
        "  pkg.graph.State",
        "    State.profile (pkg.models.Profile): field email added (builtins.str, required)"
        "  [breaking]",
    ])
    assert project.lock.read_bytes() == written
    project.lock.unlink()
    proc = project.lgstate("lock", "--check")
    assert proc.returncode == 1
    assert proc.stdout.startswith("lgstate.lock is missing: run lgstate lock to write it")
    assert not project.lock.exists()


def test_the_readme_quotes_a_real_stale_lock(project: Project) -> None:
    project.edit("pkg/models.py", "    name: str\n", "    name: str\n    email: str\n")
    project.edit("pkg/models.py", "    age: int | None = None\n", "    age: int | None = None\n"
                 "    nickname: str = ''\n")
    proc = project.lgstate("lock", "--check")
    assert proc.returncode == 1
    quoted = "".join(f"  {line}\n" for line in proc.stdout.splitlines())
    assert f"  ```text\n{quoted}  ```" in DRIFT_PAGE.read_text()


def test_check_shows_every_change_marked_breaking_or_compatible(project: Project) -> None:
    project.edit("pkg/models.py", '    BLUE = "blue"\n', '    GREEN = "green"\n')  # BLUE removed
    project.edit("pkg/models.py", "    age: int | None = None\n", "    age: int | None = None\n"
                 "    nickname: str = ''\n")  # a default: compatible
    project.edit("pkg/models.py", "    id: int\n", "    id: str\n")  # narrowed
    project.edit("pkg/graph.py", "    color: Color\n", "    color: Color\n    notes: list[str]\n")
    proc = project.lgstate("lock", "--check")
    assert (proc.returncode, proc.stdout.splitlines(), proc.stderr) == (1, [
        "lgstate.lock is stale: 5 changes, 3 breaking; review the changes, then run lgstate lock to"
        " accept them",
        "  pkg.graph.State",
        "    State (pkg.graph.State): field notes added (builtins.list[builtins.str], required)"
        "  [breaking]",
        "    State.color (pkg.models.Color): member BLUE removed (= 'blue')  [breaking]",
        "    State.color (pkg.models.Color): member GREEN added (= 'green')  [compatible]",
        "    State.jobs[] (pkg.models.Job): field id changed: builtins.int, required ->"
        " builtins.str, required  [breaking]",
        "    State.profile (pkg.models.Profile): field nickname added (builtins.str, optional)"
        "  [compatible]",
    ], "")


def test_a_lock_file_that_is_not_json_says_so_by_its_path(project: Project) -> None:
    project.write("lgstate.lock", '{\n  "lgstate_lock": 1,\n  "roots": {\n<<<<<<< HEAD\n')
    problem = (
        "lgstate.lock: lock_file: not valid JSON (line 4, column 1: Expecting property name enclosed"
        " in double quotes); fix it, or run lgstate lock to write it again"
    )
    # Every command stops on it alike: the line on stderr, exit 2 (lock --check's 1 is a stale lock).
    for command in (["lock", "--check"], ["check"]):
        proc = project.lgstate(*command)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", problem + "\n"), command
    # The report does not need the lock file.
    proc = project.lgstate("report")
    assert proc.returncode == 0 and proc.stdout.startswith("graph pkg.graph.State (pkg/graph.py:13)")
    project.write("lgstate.lock", '{"lgstate_lock": 99, "roots": {}}\n')
    proc = project.lgstate("lock", "--check")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", (
        "lgstate.lock: lock_file: not a lock file written by this version of lgstate lock; run"
        " lgstate lock to write it again\n"
    ))


def test_an_unusable_lock_path_is_one_line(project: Project) -> None:
    # A missing folder is created.
    project.write("mypy.ini", CONFIG + "lock_file = locks/new/state.lock\n")
    proc = project.lgstate("lock")
    assert (proc.returncode, proc.stdout.splitlines()[0][:32]) == (0, "wrote locks/new/state.lock (1 gr")
    assert (project.root / "locks" / "new" / "state.lock").read_bytes() == project.lock.read_bytes()
    # A directory.
    project.write("mypy.ini", CONFIG + "lock_file = locks\n")
    for command in (["lock"], ["lock", "--check"]):
        proc = project.lgstate(*command)
        verb = "read" if "--check" in command else "write"
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"lgstate: locks: cannot {verb} the lock file: Is a directory\n"
        )
    # A symbolic link to a file in a folder that does not exist.
    (project.root / "dangling.lock").symlink_to(project.root / "nowhere" / "state.lock")
    project.write("mypy.ini", CONFIG + "lock_file = dangling.lock\n")
    target = project.root / "nowhere" / "state.lock"
    for command in (["lock"], ["lock", "--check"]):
        proc = project.lgstate(*command)
        verb = "read" if "--check" in command else "write"
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", (
            f"lgstate: dangling.lock: cannot {verb} the lock file: No such file or directory (a"
            f" symbolic link to {target}, which does not exist)\n"
        ))


AUDIT = """\
from langgraph.graph import StateGraph
from typing_extensions import TypedDict


def audit_graph() -> object:
    class Audit(TypedDict):
        reviewers: list[str]

    return StateGraph(Audit)
"""


def test_a_class_in_a_function_is_locked_by_its_name_not_its_line(project: Project) -> None:
    # mypy names it pkg.audit.Audit@6: a line that moves with every edit above it.
    project.write("pkg/audit.py", AUDIT)
    assert project.lgstate("lock").returncode == 0
    assert list(json.loads(project.lock.read_text())["roots"]) == ["pkg.audit.Audit", "pkg.graph.State"]
    project.edit("pkg/audit.py", "from langgraph", "# An edit above the class.\n\nfrom langgraph")
    proc = project.lgstate("lock", "--check")
    assert (proc.returncode, proc.stdout) == (
        0, "lgstate.lock is current (2 graph-state roots, 5 checkpointed classes)\n"
    )
    project.edit("pkg/audit.py", "reviewers: list[str]", "reviewers: list[str]\n        since: str")
    status, lines, _ = project.mypy()
    assert (status, [line.partition(": error: ")[0] for line in lines]) == (1, ["pkg/audit.py:10"])


FLOW = """\
from langgraph.func import entrypoint, task

from pkg.models import Job, Profile


@task
def plan(job_id: int) -> list[Job]:
    return []


@entrypoint()
def onboard(profile: Profile) -> str:
    return profile.name
"""


def test_the_functional_apis_values_are_roots_of_the_lock(project: Project) -> None:
    """A @task's result (replayed from its pending write) and an @entrypoint's input (read again
    when an interrupted run resumes) are checkpointed: each is a root, named by its function."""
    project.write("pkg/flow.py", FLOW)
    proc = project.lgstate("lock")
    assert proc.stdout == "wrote lgstate.lock (3 graph-state roots, 6 checkpointed classes)\n"
    roots = json.loads(project.lock.read_text())["roots"]
    assert {root: list(classes) for root, classes in roots.items()} == {
        "pkg.flow.onboard(profile)": ["onboard(profile)"],
        "pkg.flow.plan()": ["plan()[]"],
        "pkg.graph.State": ["State", "State.color", "State.jobs[]", "State.profile"],
    }
    project.edit("pkg/models.py", "    id: int\n", "    id: int\n    site: str\n")
    status, lines, _ = project.mypy()
    assert (status, lines[0]) == (1, (
        "pkg/flow.py:7: error: plan()[].site (pkg.models.Job in pkg/models.py) is a new required"
        " field since the lock file, and old checkpoints lack it: Job(**fields) raises TypeError,"
        " and the loader returns a plain dict instead. Fix: give it a default; then run"
        ' "lgstate lock" to accept the change  [lgstate-drift]'
    ))
    assert [line.partition(": error: ")[0] for line in lines] == ["pkg/flow.py:7", "pkg/graph.py:13"]
    assert project.mypy()[1] == lines  # warm: the same, from the cache
    proc = project.lgstate("lock", "--check")
    assert proc.stdout.splitlines()[1:] == [
        "  pkg.flow.plan()",
        "    plan()[] (pkg.models.Job): field site added (builtins.str, required)  [breaking]",
        "  pkg.graph.State",
        "    State.jobs[] (pkg.models.Job): field site added (builtins.str, required)  [breaking]",
    ]


def test_drift_cold_then_accepted_by_lock_in_a_warm_run(project: Project) -> None:
    assert project.mypy()[:2] == (0, [])
    project.edit("pkg/models.py", "    name: str\n", "    name: str\n    email: str\n")
    assert project.mypy()[:2] == (1, [EMAIL])  # warm: only the edited module and its users
    # Re-running lgstate lock accepts the change: the lock's content is part of the cache's
    # options, so the warm run checks graph.py again instead of replaying the error.
    assert project.lgstate("lock").returncode == 0
    assert project.mypy()[:2] == (0, [])
    project.edit("pkg/models.py", "    email: str\n", "    email: str = ''\n")
    assert project.mypy()[:2] == (0, [])  # a default is compatible with any lock


def test_an_edited_lock_file_rechecks_in_a_warm_run(project: Project) -> None:
    assert project.mypy()[:2] == (0, [])
    project.write("lgstate.lock", _with_email(project.lock.read_text()))
    code, lines, _ = project.mypy()
    assert code == 1 and len(lines) == 1
    assert 'State.profile (pkg.models.Profile in pkg/models.py) has lost field "email"' in lines[0]


def test_classes_loaded_from_the_cache_give_the_same_snapshot(project: Project) -> None:
    # A lock from before Profile.age was added (with a default: compatible). When only graph.py is
    # checked again, the default (Var.has_explicit_value) and the enum values (each member's last
    # known literal) come from mypy's cache: were either lost there, the warm run would report
    # Profile.age as a new required field, or Color's members as removed.
    lock = json.loads(project.lock.read_text())
    del lock["roots"]["pkg.graph.State"]["State.profile"]["fields"]["age"]
    project.write("lgstate.lock", json.dumps(lock, indent=2, sort_keys=True) + "\n")
    assert project.mypy()[:2] == (0, [])
    project.edit("pkg/graph.py", "builder = StateGraph(State)\n", "builder = StateGraph(State)  # ok\n")
    code, lines, stderr = project.mypy()
    assert (code, lines) == (0, []), stderr
    # The check does run in that warm run: a required field in place of the default is reported.
    project.edit("pkg/models.py", "    age: int | None = None\n", "    age: int | None\n")
    code, lines, _ = project.mypy()
    assert code == 1 and len(lines) == 1
    assert "State.profile.age (pkg.models.Profile in pkg/models.py) is a new required field" in lines[0]


def test_bad_lock_file_is_one_line(project: Project) -> None:
    project.write("lgstate.lock", "{not json")
    code, lines, stderr = project.mypy()
    assert (code, lines) == (2, [])
    assert stderr == (
        "lgstate.lock: lock_file: not valid JSON (line 1, column 2: Expecting property name"
        " enclosed in double quotes); fix it, or run lgstate lock to write it again\n"
    )
    # lgstate lock does not read the old file, so it can always write it again.
    assert project.lgstate("lock").returncode == 0
    assert project.mypy()[:2] == (0, [])


def test_lock_file_option_is_relative_to_the_configuration(project: Project) -> None:
    (project.root / "locks").mkdir()
    project.write("mypy.ini", CONFIG + "lock_file = locks/state.lock\n")
    proc = project.lgstate("lock")
    assert proc.stdout.startswith("wrote locks/state.lock (")
    assert (project.root / "locks" / "state.lock").read_bytes() == project.lock.read_bytes()
    project.write("mypy.ini", CONFIG + "lock_file = \n")
    code, _, stderr = project.mypy()
    assert code == 2
    assert stderr == 'mypy.ini: [mypy_lgstate]: lock_file: must be a file path, not ""\n'


@pytest.fixture
def daemon(project: Project) -> Iterator[Project]:
    status = project.root / "dmypy.json"
    try:
        yield project
    finally:
        subprocess.run(
            [sys.executable, "-m", "mypy.dmypy", "--status-file", str(status), "stop"],
            cwd=project.root, env=env(), capture_output=True, timeout=TIMEOUT,
        )


def dmypy_run(project: Project) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.dmypy", "--status-file", str(project.root / "dmypy.json"),
         "run", "--timeout", str(2 * TIMEOUT), "--", "--show-traceback"],
        cwd=project.root, env=env(), capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, [line for line in proc.stdout.splitlines() if ": error:" in line]


def test_daemon_sees_edits_to_classes_and_to_the_lock(daemon: Project) -> None:
    project = daemon
    assert dmypy_run(project) == (0, [])
    project.edit("pkg/models.py", "    name: str\n", "    name: str\n    email: str\n")
    assert dmypy_run(project) == (1, [EMAIL])
    assert project.lgstate("lock").returncode == 0
    assert dmypy_run(project) == (0, [])
    project.write("lgstate.lock", _without_email(project.lock.read_text()))
    assert dmypy_run(project) == (1, [EMAIL])
    # A root of the functional API: the daemon follows an edit to a class its value holds.
    project.write("pkg/flow.py", FLOW)
    assert project.lgstate("lock").returncode == 0
    assert dmypy_run(project) == (0, [])
    project.edit("pkg/models.py", "    id: int\n", "    id: int\n    site: str\n")
    status, lines = dmypy_run(project)
    assert (status, [line.partition(": error: ")[0] for line in lines]) == (
        1, ["pkg/flow.py:7", "pkg/graph.py:13"]
    )
    assert lines[0].startswith("pkg/flow.py:7: error: plan()[].site (pkg.models.Job in")


def _with_email(lock: str) -> str:
    """The lock with a required ``email`` field in ``Profile``, which the code does not have."""
    document = json.loads(lock)
    fields = document["roots"]["pkg.graph.State"]["State.profile"]["fields"]
    fields["email"] = {"type": "builtins.str", "required": True}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _without_email(lock: str) -> str:
    document = json.loads(lock)
    del document["roots"]["pkg.graph.State"]["State.profile"]["fields"]["email"]
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def test_str_and_int_mixin_enums_are_locked_by_their_members(project: Project) -> None:
    # A member lost since the lock loads from an old checkpoint as the bare value (measured with
    # JsonPlusSerializer: a dumped Priority.LOW loads as 'low' once LOW is gone, Level.ONE as 1).
    project.edit(
        "pkg/models.py",
        "class Profile(BaseModel):\n",
        "class Priority(str, Enum):\n    LOW = 'low'\n    HIGH = 'high'\n\n\n"
        "class Level(IntEnum):\n    ONE = 1\n    TWO = 2\n\n\nclass Profile(BaseModel):\n",
    )
    project.edit("pkg/models.py", "from enum import Enum\n", "from enum import Enum, IntEnum\n")
    project.edit("pkg/graph.py", "import Color,", "import Color, Level, Priority,")
    project.edit("pkg/graph.py", "    color: Color\n", "    color: Color\n    priority: Priority\n    level: Level\n")
    proc = project.lgstate("lock")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(project.lock.read_text())
    records = document["roots"]["pkg.graph.State"]
    assert records["State.priority"] == {
        "class": ["pkg.models", "Priority"], "kind": "Enum",
        "members": {"HIGH": "'high'", "LOW": "'low'"},
    }
    assert records["State.level"]["members"] == {"ONE": "1", "TWO": "2"}
    assert project.mypy()[:2] == (0, [])
    project.edit("pkg/models.py", "    LOW = 'low'\n", "")
    project.edit("pkg/models.py", "    ONE = 1\n", "    ONE = 10\n")
    code, lines, _ = project.mypy()
    assert code == 1
    assert sorted(line.split(": error: ")[1].split(" since the lock file")[0] for line in lines) == [
        "State.level (pkg.models.Level in pkg/models.py) has lost member ONE = 1",
        "State.priority (pkg.models.Priority in pkg/models.py) has lost member LOW = 'low'",
    ]


def test_without_paths_the_graphs_langgraph_json_deploys(project: Project) -> None:
    """No paths and no configured ``files``: the files of langgraph.json's graphs (and what they
    import), not a script's graph that is never checkpointed."""
    project.write("mypy.ini", CONFIG.replace("files = pkg\n", ""))
    project.write("demo.py", "from typing import TypedDict\nfrom langgraph.graph import StateGraph\n"
                  "class Demo(TypedDict):\n    n: int\nStateGraph(Demo)\n")
    assert project.lgstate("lock").stdout == (
        "wrote lgstate.lock (2 graph-state roots, 5 checkpointed classes)\n"
    )
    project.write("langgraph.json", '{"graphs": {"shop": "./pkg/graph.py:builder"}}')
    assert project.lgstate("lock").stdout == (
        "wrote lgstate.lock (1 graph-state root, 4 checkpointed classes)\n"
    )
    assert list(json.loads(project.lock.read_text())["roots"]) == ["pkg.graph.State"]
