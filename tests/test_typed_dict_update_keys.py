"""A typo key in a node's TypedDict update is said once in each tool: plain mypy reports its own
``typeddict-unknown-key`` (the plugin adds nothing), and ``lgstate check``, which shows only the
plugin's codes, reports it as ``lgstate-unknown-key`` on the key's line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import library_caches
from test_cli import lgstate

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n"
APP = """\
from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    name: str


class Update(TypedDict, total=False):
    name: str


def rename(state: State) -> Update:
    return {"nmae": "x"}


builder = StateGraph(State)
builder.add_node("rename", rename)
"""


def test_a_typo_key_is_said_once_by_mypy_and_once_by_lgstate_check(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "mypy.ini").write_text(CONFIG)
    cache = tmp_path / "cache"
    library_caches.seed(cache, CONFIG, lgstate=True)
    checked = lgstate(tmp_path, cache, "check")
    assert (checked.returncode, checked.stdout.splitlines()[0]) == (1, (
        'app.py:14: error: Node "rename" returns key "nmae", which is not a channel of graph state'
        ' "State": LangGraph drops it silently. Fix: add "nmae" to "State", or remove it from the'
        " returned dict  [lgstate-unknown-key]"
    ))
    plain_cache = tmp_path / "plain-cache"
    library_caches.seed(plain_cache, CONFIG)
    plain = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(plain_cache), "app.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert plain.stdout.splitlines()[:-1] == [
        'app.py:14: error: Extra key "nmae" for TypedDict "Update"  [typeddict-unknown-key]'
    ]
