"""``lgstate audit`` on stores written by a real graph, in SQLite and in a real PostgreSQL server.

The application of ``tests/audit_apps`` comes in three versions, each a module tree of its own
(``shop.graph`` in ``v1/``, ``v2/``, ``v2ok/``), run in separate processes as separate deploys
would: v1 writes the threads (once per store, for the whole module), v2 changes its classes in the
ways old threads do not survive, v2ok only in the ways they do. Each claim of the audit is then
checked at run time: v2 resumes the threads on a copy of the store, and what its node gets (or what
resuming raises) is what the audit said.

Threads: ``shared-000`` to ``shared-039`` hold every breaking case (one problem, forty threads),
with a pending write to a reducer's channel (``tally`` ran beside the node that interrupted);
``history`` held ``Color.PURPLE`` in an old checkpoint and ``Color.RED`` in its latest;
``profile`` is a thread of a graph whose state is a pydantic model.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mypy_lgstate.cli.command import main
from postgres_server import checksum, make_database, postgres_server  # noqa: F401 (fixture)

APPS = Path(__file__).parent / "audit_apps"
GRAPHS = ["--graph", "shop.graph:builder", "--graph", "shop.graph:profile_builder"]
SHARED = [f"shared-{i:03}" for i in range(40)]

# What v2 does to v1's threads, by kind and path: every breaking scenario of the application.
BREAKING = {
    ("missing", '["order"].email'),  # a required field added to a model
    ("fallback", '["limits"].cap'),  # a type narrowed inside a model
    ("type", '["note"]'),  # a channel narrowed: str | None to str
    ("unimportable", '["old"]'),  # a class renamed
    ("unimportable", '["local"]'),  # a class moved into a function
    ("missing", '["parcel"]'),  # a required field added to a dataclass
    ("enum", '["color"]'),  # an enum member removed
    ("enum", '["status"]'),  # a str-enum value changed
    ("missing", '["address"]["zip"]'),  # a TypedDict key made required
    ("dropped", '["legacy"]'),  # a channel removed
    ("type", '["score"]'),  # a channel's type changed
    ("missing", '["cart"].items[].sku'),  # nested: a required field of the items of a model
    ("fallback", '["cart"].items[].gift_wrap'),  # nested: a field removed, extra="forbid"
    ("missing", '["email"]'),  # a pydantic state's new required field
    ("type", '["count"]'),  # a pydantic state's field narrowed
    ("type", '["prefs"].legacy'),  # a field removed from a model of a pydantic state, extra="forbid"
    ("type", '["address"]["floor"]'),  # a nested TypedDict's key narrowed
    ("type", '["tallies"][]'),  # a reducer channel's items narrowed, in a pending write
    ("fallback", '["stamp_in"]'),  # a field removed from a dataclass three channels hold
}
PYDANTIC_STATE = {("missing", '["email"]'), ("type", '["count"]'), ("type", '["prefs"].legacy')}


def _env(tree: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(APPS / tree)
    env.pop("LANGGRAPH_STRICT_MSGPACK", None)
    return env


def write_threads(kind: str, where: str) -> None:
    subprocess.run(
        [sys.executable, str(APPS / "write_threads.py"), kind, where],
        cwd=APPS / "v1", env=_env("v1"), check=True, capture_output=True,
    )


def audit(tree: str, store: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """``lgstate audit`` run in ``tree``, as a deploy pipeline runs it in the new code's checkout
    (in this process, which forgets the other trees' modules first: a process per run would spend
    most of its time importing LangGraph)."""
    for name in [name for name in sys.modules if name == "shop" or name.startswith("shop.")]:
        del sys.modules[name]
    cwd, path = os.getcwd(), list(sys.path)
    out, err = io.StringIO(), io.StringIO()
    os.chdir(APPS / tree)
    sys.path.insert(0, str(APPS / tree))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["audit", store, *GRAPHS, "-q", *flags])
    finally:
        os.chdir(cwd)
        sys.path[:] = path
    return subprocess.CompletedProcess([], status, out.getvalue(), err.getvalue())


def audit_json(tree: str, store: str, *flags: str) -> dict[str, Any]:
    result = audit(tree, store, "--format", "json", *flags)
    assert result.returncode in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    document["exit"] = result.returncode
    return document


def resume(tree: str, store: str, graph: str, *threads: str, extra: tuple[str, ...] = ()) -> Any:
    """What ``tree`` gets when it resumes each thread, on a copy of ``store``."""
    copy = f"{store}.resumed"
    shutil.copyfile(store, copy)
    result = subprocess.run(
        [sys.executable, str(APPS / "resume.py"), copy, graph, *extra, *threads],
        cwd=APPS / tree, env=_env(tree), capture_output=True, text=True, check=True,
    )
    os.remove(copy)
    return json.loads(result.stdout)


def problems(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["kind"], p["path"]): p for p in document["problems"]}


def _without_examples(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The problems, without the example threads (a saver's list() has an order of its own)."""
    return [{k: v for k, v in p.items() if k != "examples"} for p in document["problems"]]


def _without_checkpoint_ids(document: dict[str, Any], *skipped: str) -> list[dict[str, Any]]:
    """The problems (but those at the ``skipped`` paths); the checkpoint ids of two runs of v1
    differ."""
    return [
        {**p, "examples": [{**e, "checkpoint_id": ""} for e in p["examples"]]}
        for p in document["problems"]
        if p["path"] not in skipped
    ]


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("audit") / "checkpoints.db")
    write_threads("sqlite", path)
    return path


@pytest.fixture(scope="module")
def postgres_store(postgres_server: str) -> str:  # noqa: F811
    url = make_database(postgres_server, "shop")
    write_threads("postgres", url)
    return url


@pytest.fixture(scope="module")
def v2_latest(sqlite_store: str) -> dict[str, Any]:
    before = _digest(sqlite_store)
    document = audit_json("v2", sqlite_store)
    assert _digest(sqlite_store) == before  # nothing written
    return document


# What v2 breaks ---------------------------------------------------------------------------------


def test_every_breaking_change_is_found_once_with_its_threads(v2_latest: dict[str, Any]) -> None:
    assert v2_latest["exit"] == 1
    assert set(problems(v2_latest)) == BREAKING
    found = problems(v2_latest)
    for kind, path in BREAKING - PYDANTIC_STATE:
        assert found[kind, path]["threads"] == 40
        assert [e["thread_id"] for e in found[kind, path]["examples"]] == SHARED[:5]
    # Three items per cart: three findings, one problem, forty threads.
    assert found["missing", '["cart"].items[].sku']["findings"] == 120
    assert [e["path"] for e in found["missing", '["cart"].items[].sku']["examples"]] == [
        '["cart"].items[0].sku'
    ] * 5
    # One root cause, a field Stamp lost, in three channels: one problem, listed at each place.
    stamps = found["fallback", '["stamp_in"]']
    assert stamps["findings"] == 120
    assert [place["path"] for place in stamps["places"]] == ['["stamp_in"]', '["stamp_out"]', '["stamp_back"]']
    assert v2_latest["threads"] == v2_latest["namespaces"] == 42
    assert v2_latest["affected_threads"] == 41
    assert v2_latest["kinds"]["missing"] == {"threads": 41, "findings": 4 * 40 + 1 + 120 - 40}


def test_messages_say_what_the_resumed_graph_sees_and_the_fix(v2_latest: dict[str, Any]) -> None:
    message = {key: p["message"] for key, p in problems(v2_latest).items()}
    assert message["unimportable", '["old"]'] == (
        '["old"] was stored as ("shop.graph", "Old"), which no longer imports: the resumed graph'
        " gets a plain dict where New is declared. Fix: keep the class importable under its old"
        " name (in shop.graph: Old = New), or migrate the stored threads (update_state() with"
        " today's value)"
    )
    assert message["unimportable", '["local"]'] == (
        '["local"] was stored as ("shop.graph", "Local"), which the loader cannot import: class'
        " Local is defined in a function body, so the resumed graph gets a plain dict. Fix: move"
        " class Local to the top level of module shop.graph"
    )
    assert message["enum", '["status"]'] == (
        '["status"] holds "active", which is no longer a value of Status: the resumed graph gets'
        ' the bare value "active" (str), not a Status. Fix: keep a member with the value "active"'
        " (an alias name is enough), or migrate the stored threads (update_state() with today's"
        " value)"
    )
    assert message["missing", '["order"].email'] == (
        '["order"].email is missing: the stored Order has no value for required field "email", so'
        " the loader falls back to Order.model_construct(), and reading the field raises"
        ' AttributeError. Fix: give it a default, or fill it in for old values in a'
        ' model_validator(mode="before")'
    )
    assert message["type", '["count"]'] == (
        '["count"] is "NoneType", but Profile declares "int" for it: resuming the thread raises'
        " ValidationError when LangGraph builds Profile for the next node. Fix: convert old values"
        ' in a field_validator(mode="before"), or widen the type'
    )
    assert "which Address requires, and reading it raises KeyError" in message[
        "missing", '["address"]["zip"]'
    ]
    # A field of a nested class: the class that declares it is named, not the state.
    assert message["type", '["address"]["floor"]'].startswith(
        '["address"]["floor"] is "str", but Address declares "int" for it'
    )
    # A pending write to operator.add's channel: what applying it gives is checked.
    assert message["type", '["tallies"][]'].startswith(
        '["tallies"][] is "str", but State declares "int" for it: the resumed graph gets it as it'
        " was stored"
    )
    # A field a model that forbids extra fields no longer has: no type to widen, no default to give.
    assert message["type", '["prefs"].legacy'] == (
        '["prefs"].legacy is not a field of Prefs, which forbids extra fields (extra="forbid"):'
        " resuming the thread raises ValidationError when LangGraph builds Profile for the next"
        ' node. Fix: drop "legacy" from old values in a model_validator(mode="before") of Prefs,'
        ' or let Prefs ignore extra fields (extra="ignore")'
    )
    assert message["fallback", '["cart"].items[].gift_wrap'] == (
        '["cart"].items[].gift_wrap is not a field of Item, which forbids extra fields'
        ' (extra="forbid"), so the stored Cart no longer validates: the loader falls back to'
        " Cart.model_construct(), whose nested models stay plain dicts (reading their fields"
        ' raises AttributeError). Fix: drop "gift_wrap" from old values in a'
        ' model_validator(mode="before") of Item, or let Item ignore extra fields (extra="ignore")'
    )
    assert message["fallback", '["stamp_in"]'] == (
        '["stamp_in"] holds field "legacy", which Stamp no longer has: Stamp(**fields) raises'
        ' TypeError, and the loader returns a plain dict instead. Fix: keep "legacy" with a default'
        " until old threads are gone, or migrate the stored threads (update_state() with today's"
        " value)"
    )
    assert 'Parcel(**fields) raises TypeError, and the loader returns a plain dict' in message[
        "missing", '["parcel"]'
    ]


def test_what_the_audit_says_is_what_the_resumed_graph_gets(sqlite_store: str) -> None:
    got = resume("v2", sqlite_store, "builder", "shared-000")["shared-000"]
    state = got["items"]
    assert state["order"]["type"] == "Order" and state["order"]["unset"] == ["email"]
    assert state["limits"]["fields"]["cap"] == {"type": "NoneType", "value": None}
    assert {item["type"] for item in state["cart"]["fields"]["items"]} == {"dict"}
    assert state["old"]["type"] == state["local"]["type"] == state["parcel"]["type"] == "dict"
    assert state["color"] == {"type": "str", "value": "purple"}
    assert state["status"] == {"type": "str", "value": "active"}
    assert state["address"]["keys"] == ["city", "floor"]  # no zip
    assert state["note"] == {"type": "NoneType", "value": None}
    assert state["score"] == {"type": "int", "value": 7}
    assert "legacy" not in got["keys"]
    assert state["address"]["items"]["floor"] == {"type": "str", "value": "3rd"}
    assert state["tallies"] == [{"type": "str", "value": "x"}]  # the pending write, applied
    assert {state[name]["type"] for name in ("stamp_in", "stamp_out", "stamp_back")} == {"dict"}
    # The pydantic state: resuming raises before the node runs, for each of its problems.
    assert resume("v2", sqlite_store, "profile_builder", "profile") == {
        "profile": {
            "raised": "ValidationError",
            "errors": [["count", "int_type"], ["email", "missing"], ["prefs.legacy", "extra_forbidden"]],
        }
    }


def test_an_old_checkpoint_wrong_while_the_latest_is_fine(
    sqlite_store: str, v2_latest: dict[str, Any]
) -> None:
    assert all(
        e["thread_id"] != "history" for p in v2_latest["problems"] for e in p["examples"]
    )
    everything = audit_json("v2", sqlite_store, "--all-checkpoints", "--threads", "50")
    color = problems(everything)["enum", '["color"]']
    old = [e for e in color["examples"] if e["thread_id"] == "history"]
    assert color["threads"] == 41 and old
    got = resume("v2", sqlite_store, "builder", "history", extra=("--checkpoint", old[0]["checkpoint_id"]))
    assert got["history"]["items"]["color"] == {"type": "str", "value": "purple"}


def test_threads_option_bounds_the_examples(sqlite_store: str) -> None:
    document = audit_json("v2", sqlite_store, "--threads", "2")
    assert all(len(p["examples"]) <= 2 for p in document["problems"])
    assert problems(document)["dropped", '["legacy"]']["threads"] == 40


# What v2ok keeps --------------------------------------------------------------------------------


def test_compatible_changes_give_exit_0_and_no_finding(sqlite_store: str) -> None:
    result = audit("v2ok", sqlite_store, "--all-checkpoints")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "Success: every audited thread (42) resumes on the state it saved"
    got = resume("v2ok", sqlite_store, "builder", "shared-000")["shared-000"]["items"]
    assert got["order"] == {
        "type": "Order", "unset": [],
        "fields": {"id": {"type": "int", "value": 1}, "gift": {"type": "bool", "value": False}},
    }
    assert got["color"] == {"type": "Color", "value": "purple"}


def test_a_class_missing_from_the_strict_allowlist(sqlite_store: str, tmp_path: Path) -> None:
    allowed = [
        f"shop.graph.{name}"
        for name in ("Limits", "Cart", "Old", "Local", "Parcel", "Stamp", "Color", "Status")
    ]
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.mypy_lgstate]\nprofile = "msgpack"\nstrict_msgpack = true\nderive_allowlist = false\n'
        f"allowed_msgpack_modules = {json.dumps(allowed)}\n"
    )
    document = audit_json("v2ok", sqlite_store, "--config-file", str(config))
    assert set(problems(document)) == {("unimportable", '["order"]')}
    assert problems(document)["unimportable", '["order"]']["message"] == (
        '["order"] was stored as ("shop.graph", "Order"), which is not on the strict msgpack'
        " allowlist: the resumed graph gets a plain dict where Order is declared. Fix: pass"
        ' ("shop.graph", "Order") in the serializer\'s allowed_msgpack_modules, and add'
        ' "shop.graph.Order" to the plugin\'s allowed_msgpack_modules'
    )
    got = resume("v2ok", sqlite_store, "builder", "shared-000", extra=("--allow", ",".join(allowed)))
    assert got["shared-000"]["items"]["order"]["type"] == "dict"


# Reading the store ------------------------------------------------------------------------------


def test_jobs_give_the_same_output_in_the_same_order(sqlite_store: str) -> None:
    one = audit("v2", sqlite_store, "--all-checkpoints")
    two = audit("v2", sqlite_store, "--all-checkpoints", "--jobs", "2")
    assert one.returncode == two.returncode == 1
    assert two.stdout == one.stdout


def test_a_checkpointer_named_by_module_and_attribute(sqlite_store: str, v2_latest: dict[str, Any]) -> None:
    os.environ["AUDIT_STORE"] = sqlite_store
    try:
        document = audit_json("v2", "shop.stores:open_saver")
    finally:
        del os.environ["AUDIT_STORE"]
    assert _without_examples(document) == _without_examples(v2_latest)


def test_corrupt_bytes_in_one_row_are_one_finding(sqlite_store: str, tmp_path: Path) -> None:
    copy = str(tmp_path / "corrupt.db")
    shutil.copyfile(sqlite_store, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = x'c1c1c1' WHERE thread_id = 'shared-007'"
            " AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'shared-007')"
        )
    document = audit_json("v2", copy)
    unreadable = problems(document)["unreadable", "(checkpoint)"]
    assert [e["thread_id"] for e in unreadable["examples"]] == ["shared-007"]
    assert unreadable["message"].startswith("(checkpoint): the serializer raises ")
    assert unreadable["message"].endswith(
        "on the stored bytes, and so does resuming the thread. Fix: restore the row from a backup,"
        " or delete the thread (delete_thread())"
    )
    assert problems(document)["dropped", '["legacy"]']["threads"] == 39  # the others still audited


# PostgreSQL -------------------------------------------------------------------------------------


def test_postgres_store_gives_what_sqlite_gives_and_is_not_written(
    postgres_store: str, v2_latest: dict[str, Any]
) -> None:
    before = checksum(postgres_store)
    document = audit_json("v2", postgres_store)
    # PostgresSaver keeps a str enum's value as plain JSON: v1 itself gets a str back.
    status = problems(document).pop(("type", '["status"]'))
    assert status["message"] == (
        '["status"] is the bare value "active": PostgresSaver (and AsyncPostgresSaver, LangGraph\'s'
        " server) stores a channel's value inline as JSON when it is a str, without its class: it"
        " comes back as a plain str. Fix: declare the field as str and store member.value,"
        " rebuilding the member with Status(value) where it is read"
    )
    assert _without_checkpoint_ids(document, '["status"]') == _without_checkpoint_ids(
        v2_latest, '["status"]'
    )
    compatible = audit_json("v2ok", postgres_store, "--all-checkpoints", "--jobs", "2")
    assert set(problems(compatible)) == {("type", '["status"]')}
    assert checksum(postgres_store) == before


def test_postgres_all_checkpoints_with_jobs(postgres_store: str, sqlite_store: str) -> None:
    on_postgres = audit_json("v2", postgres_store, "--all-checkpoints", "--jobs", "2")
    on_sqlite = audit_json("v2", sqlite_store, "--all-checkpoints")
    assert _without_checkpoint_ids(on_postgres, '["status"]') == _without_checkpoint_ids(
        on_sqlite, '["status"]'
    )


def test_postgres_url_that_does_not_connect(postgres_server: str) -> None:  # noqa: F811
    result = audit("v2", f"postgresql://postgres@/nowhere?host={postgres_server}")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"lgstate: postgresql://postgres@/nowhere?host={postgres_server}: cannot connect:"
    )
    assert len(result.stderr.splitlines()) == 1
