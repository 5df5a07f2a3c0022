"""The rule tables, checked against the installed serializers.

For every sample in ``oracle_samples.SAMPLES`` (at least one per concrete row of ``mypy_lgstate.core.rules``),
this test

- round-trips the value through what each profile stands for: ``json.dumps`` / ``json.loads`` (with
  LangGraph's LangChain reviver, since LangChain objects are serialized by LangGraph itself), and the
  installed langgraph's ``JsonPlusSerializer`` (msgpack): permissive, strict with the allowlist that the
  real ``compile()`` derives (computed in a subprocess with ``LANGGRAPH_STRICT_MSGPACK=true``, because
  the flag is read at import time), and strict with no derived allowlist;
- runs real mypy with the plugin once per profile over a generated module holding one ``@graph_state``
  TypedDict per sample;
- and asserts that the runtime outcome and the plugin's verdict agree, sample by sample.

A langgraph (or pydantic, ormsgpack, numpy) release that changes what survives a checkpoint turns this
test red, with one line per disagreement.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest
from langchain_core.load.serializable import Serializable
from langgraph.checkpoint.serde.jsonplus import LC_REVIVER, JsonPlusSerializer
from pydantic import BaseModel
from pydantic.v1 import BaseModel as BaseModelV1

import library_caches
import oracle_samples
from mypy_lgstate.core import rules
from oracle_samples import LOCAL_SAMPLES, LOCAL_SCOPE, SAMPLES

# Outcomes, from least to most severe. ``allowlist``: strict msgpack changes a value that the
# permissive serializer keeps.
OK: Final = "ok"
ALLOWLIST: Final = "allowlist"
LOSSY: Final = "lossy"
UNIMPORTABLE: Final = "unimportable"
RAISES: Final = "raises"
SEVERITY: Final = (OK, ALLOWLIST, LOSSY, UNIMPORTABLE, RAISES)
# Written, but reading the checkpoint back raises: no rule predicts this, so it only appears in
# KNOWN_DIFFERENCES.
LOAD_FAILS: Final = "load fails"

# Plugin configurations, one mypy run each.
PROFILES: Final = {
    "json": "",
    "msgpack": "profile = msgpack",
    "strict": "profile = msgpack\nstrict_msgpack = true",
    "strict-not-derived": "profile = msgpack\nstrict_msgpack = true\nderive_allowlist = false",
}

# Where the rule tables (which the plugin follows) and the installed serializer disagree on purpose:
# (sample, profile) -> (what the serializer does, what the plugin says, why). Each entry pins both
# sides, so a change on either side still fails the test.
_STRICT: Final = ("strict", "strict-not-derived")
_MESSAGE_SUBCLASS: Final = (
    "LangGraph's JSON reviver only rebuilds langchain-core's own classes (allowed_objects='core'),"
    " so a user's message subclass fails to load; the rules accept every BaseMessage subclass"
)
_REGISTERED: Final = (
    "pydantic registers Box[int] as a module global (where the loader finds it) when a top-level"
    " `class IntBox(Box[int])` of its module first makes it, and the plugin sees that; but strict"
    " msgpack then needs Box[int] by that name on the allowlist, which the plugin does not check"
    " for a registered parametrization (it reports no allowlist entry it cannot name truly)"
)
_PRIVATE_AT_DEFAULT: Final = (
    "the sample's private attribute holds its default, which is what the loader gives it back; the"
    " plugin cannot see values, and reports every private attribute (sample model_private_attribute)"
)
_ROOT_DICT: Final = (
    "a RootModel over a dict comes back as the model unless the dict is empty or has a \"root\" key"
    " (the loader passes it as keyword arguments): the sample's dict is neither, and the plugin,"
    " which cannot see values, reports the type (sample root_model_empty_dict is the lossy case)"
)
KNOWN_DIFFERENCES: Final[dict[tuple[str, str], tuple[str, str, str]]] = {
    ("root_model_dict", "msgpack"): (OK, LOSSY, _ROOT_DICT),
    ("root_model_dict", "strict"): (OK, LOSSY, _ROOT_DICT),
    ("root_model_dict", "strict-not-derived"): (ALLOWLIST, LOSSY, _ROOT_DICT),
    ("model_holding_enums", "msgpack"): (OK, LOSSY, _PRIVATE_AT_DEFAULT),
    ("model_holding_enums", "strict"): (OK, LOSSY, _PRIVATE_AT_DEFAULT),
    ("model_holding_enums", "strict-not-derived"): (ALLOWLIST, LOSSY, _PRIVATE_AT_DEFAULT),
    **{
        (sample, "json"): (LOAD_FAILS, OK, _MESSAGE_SUBCLASS)
        for sample in ("message_subclass", "sequence_of_message_subclass")
    },
    ("generic_model_registered", "strict-not-derived"): (ALLOWLIST, OK, _REGISTERED),
}


# Running the plugin -------------------------------------------------------------------------------


def _states_module() -> tuple[str, dict[int, str]]:
    """The generated module, and the sample each ``v:`` line belongs to."""
    lines = [
        "# Generated by tests/test_oracle.py: one graph-state TypedDict per oracle sample.",
        "from oracle_samples import *",
        "from mypy_lgstate import graph_state",
        "",
    ]
    line_of: dict[int, str] = {}
    for sample in SAMPLES:
        lines += ["", "@graph_state", f"class S_{sample.name}(TypedDict):"]
        lines.append(f"    v: {sample.annotation}")
        line_of[len(lines)] = sample.name
    lines += ["", ""]
    first = len(lines) + 1
    local = textwrap.dedent(LOCAL_SCOPE).strip("\n").splitlines()
    for offset, text in enumerate(local):
        match = re.fullmatch(r"\s*class S_(\w+)\(TypedDict\):", text)
        if match:
            line_of[first + offset + 1] = match.group(1)
    lines += local
    return "\n".join(lines) + "\n", line_of


_ERROR: Final = re.compile(r"^oracle_states\.py:(\d+): error: (.*)  \[([\w-]+)\]$")


def _verdict_of(code: str, message: str) -> str:
    if code == "lgstate-dict-key":
        return RAISES if "raises TypeError" in message else LOSSY
    return {
        "lgstate-unserializable": RAISES,
        "lgstate-lossy": LOSSY,
        "lgstate-unimportable": UNIMPORTABLE,
        "lgstate-allowlist": ALLOWLIST,
    }[code]


@dataclasses.dataclass
class Workspace:
    root: Path
    line_of: dict[int, str]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("oracle")
    shutil.copy(Path(oracle_samples.__file__), root / "oracle_samples.py")
    source, line_of = _states_module()
    (root / "oracle_states.py").write_text(source)
    library_caches.seed(root / "mypy-cache", "[mypy]\nplugins = mypy_lgstate.plugin\n")
    yield Workspace(root, line_of)


def _run_mypy(root: Path, profile: str) -> tuple[str, str, int]:
    config = root / f"{profile}.ini"
    config.write_text(f"[mypy]\nplugins = mypy_lgstate.plugin\n[mypy_lgstate]\n{PROFILES[profile]}\n")
    # One cache for every profile: the plugin keeps the cache of the libraries across option
    # changes, so only the first run analyses langgraph, langchain-core, pydantic and numpy.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "oracle_states.py", "--config-file", str(config),
         "--cache-dir", str(root / "mypy-cache"), "--no-error-summary",
         "--hide-error-context", "--no-pretty"],
        cwd=root, capture_output=True, text=True, check=False,
    )
    return result.stdout, result.stderr, result.returncode


@pytest.fixture(scope="module")
def plugin_verdicts(workspace: Workspace) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """profile -> sample -> [(verdict, message)], from one mypy run per profile."""
    found: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for profile in PROFILES:
        stdout, stderr, status = _run_mypy(workspace.root, profile)
        assert status in (0, 1) and not stderr, f"mypy failed ({profile}):\n{stdout}{stderr}"
        per_sample: dict[str, list[tuple[str, str]]] = {}
        unexpected = []
        for line in stdout.splitlines():
            match = _ERROR.match(line)
            sample = workspace.line_of.get(int(match.group(1))) if match else None
            if match is None or sample is None:
                unexpected.append(line)
                continue
            message, code = match.group(2), match.group(3)
            per_sample.setdefault(sample, []).append((_verdict_of(code, message), message))
        assert not unexpected, f"unexpected mypy output ({profile}):\n" + "\n".join(unexpected)
        found[profile] = per_sample
    return found


# Running the serializers -------------------------------------------------------------------------

_DERIVE_SCRIPT: Final = """
import json, sys
sys.path.insert(0, sys.argv[1])
import oracle_states
from langgraph.graph import START, StateGraph

def derived(state_class):
    builder = StateGraph(state_class)
    builder.add_node("node", lambda state: {})
    builder.add_edge(START, "node")
    return sorted(builder.compile()._serde_allowlist)

found = {}
for name in dir(oracle_states):
    if name.startswith("S_"):
        found[name[2:]] = derived(getattr(oracle_states, name))
for name, (_, state_class) in oracle_states._local_scope().items():
    found[name] = derived(state_class)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def derived_allowlists(workspace: Workspace) -> dict[str, list[tuple[str, ...]]]:
    """sample -> the allowlist the real ``compile()`` derives for its state class in strict mode."""
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-c", _DERIVE_SCRIPT, str(workspace.root)],
        capture_output=True, text=True, env=env, check=False,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    return {name: [tuple(entry) for entry in entries] for name, entries in found.items()}


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (a tuple that comes back as a list is not the same)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())
            and a.flags.writeable == b.flags.writeable
        )
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            _same(ka, kb) and _same(a[ka], b[kb]) for ka, kb in zip(a, b)
        )
    if isinstance(a, (list, tuple, deque)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (set, frozenset)):
        return a == b and {type(x) for x in a} == {type(x) for x in b}
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, BaseModel):
        return _same(dict(a.__dict__), dict(b.__dict__)) and _same(
            a.__pydantic_private__ or {}, b.__pydantic_private__ or {}
        )
    if isinstance(a, BaseModelV1):
        return _same(dict(a.__dict__), dict(b.__dict__))
    if isinstance(a, BaseException):
        return a.args == b.args
    return bool(a == b)


def _reimportable(cls: type) -> bool:
    try:
        return getattr(importlib.import_module(cls.__module__), cls.__name__) is cls
    except Exception:
        return False


def _has_unimportable_class(value: Any) -> bool:
    """Whether the msgpack encoder writes a class of ``value`` by a (module, name) that does not lead back
    to it. Inside a pydantic model the encoder writes ``model_dump()``, plain data, so it stops there."""
    if isinstance(value, dict):
        return any(_has_unimportable_class(v) for v in (*value.keys(), *value.values()))
    if isinstance(value, (list, set, frozenset, deque)) or type(value) is tuple:
        return any(_has_unimportable_class(v) for v in value)
    cls = type(value)
    if cls.__module__ == "builtins":
        return False
    if not _reimportable(cls):
        return True
    if dataclasses.is_dataclass(value):
        return any(_has_unimportable_class(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, tuple):  # a NamedTuple
        return any(_has_unimportable_class(v) for v in value)
    return False


def _json_default(value: Any) -> Any:
    if isinstance(value, Serializable):
        return value.to_json()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _round_trip(value: Any, dumps: Callable[[Any], Any], loads: Callable[[Any], Any]) -> tuple[str, str]:
    """The outcome, and what came back (for the failure listing)."""
    try:
        data = dumps(value)
    except TypeError as error:
        return RAISES, f"{type(error).__name__}: {error}"
    try:
        back = loads(data)
    except Exception as error:
        return LOAD_FAILS, f"{type(error).__name__}: {error}"
    if _same(value, back):
        return OK, ""
    if _has_unimportable_class(value):
        return UNIMPORTABLE, f"came back as {back!r:.80}"
    return LOSSY, f"came back as {back!r:.80}"


def _saver_round_trip(value: Any, serde: JsonPlusSerializer) -> tuple[str, str]:
    """The worse of the two ways a saver writes a channel value: on its own (``InMemorySaver``),
    and inside the whole checkpoint as one value (``SqliteSaver``, ``AsyncSqliteSaver``)."""
    alone = _round_trip(value, serde.dumps_typed, serde.loads_typed)
    inside = _round_trip({"v": value}, serde.dumps_typed, serde.loads_typed)
    order = (*SEVERITY, LOAD_FAILS)
    return max(alone, inside, key=lambda outcome: order.index(outcome[0]))


def _json_dumps(value: Any) -> str:
    return json.dumps(value, default=_json_default)


def _json_loads(text: str) -> Any:
    return json.loads(text, object_hook=LC_REVIVER)


@pytest.fixture(scope="module")
def values(workspace: Workspace) -> Iterator[dict[str, Any]]:
    sys.path.insert(0, str(workspace.root))
    try:
        states = importlib.import_module("oracle_states")
        made = {s.name: s.make() for s in SAMPLES if s.make is not None}
        made.update({name: value for name, (value, _) in states._local_scope().items()})
        yield made
    finally:
        sys.path.remove(str(workspace.root))
        sys.modules.pop("oracle_states", None)
        for value in made.values():  # files, sockets, connections, clients, coroutines
            close = getattr(value, "close", None)
            if callable(close) and not isinstance(value, np.ndarray):
                close()


@pytest.fixture(scope="module")
def runtime_verdicts(
    values: dict[str, Any], derived_allowlists: dict[str, list[tuple[str, ...]]]
) -> dict[str, dict[str, tuple[str, str]]]:
    """profile -> sample -> (outcome, detail), from the real serializers."""
    permissive = JsonPlusSerializer()
    not_derived = JsonPlusSerializer(allowed_msgpack_modules=None)
    found: dict[str, dict[str, tuple[str, str]]] = {profile: {} for profile in PROFILES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            for name, value in values.items():
                found["json"][name] = _round_trip(value, _json_dumps, _json_loads)
                base = _saver_round_trip(value, permissive)
                found["msgpack"][name] = base
                derived = JsonPlusSerializer(allowed_msgpack_modules=derived_allowlists[name])
                for profile, serde in (("strict", derived), ("strict-not-derived", not_derived)):
                    # Strict mode can only make things worse: what the permissive serializer
                    # already breaks is reported as such; what it keeps and strict mode changes
                    # is an allowlist problem.
                    strict = _saver_round_trip(value, serde)
                    changed = base[0] == OK and strict[0] != OK
                    found[profile][name] = (ALLOWLIST, strict[1]) if changed else base
        finally:
            logging.disable(logging.NOTSET)
    return found


# The checks --------------------------------------------------------------------------------------


def test_every_row_of_the_rule_tables_has_a_sample() -> None:
    rows = {
        *rules.TYPE_RULES,
        *rules.SEQUENCES,
        *rules.MAPPINGS,
        *rules.SETS,
        rules.DEQUE,
        *(f"key:{name}" for name in (*rules.JSON_KEY_RULES, *rules.MSGPACK_KEY_RULES)),
    }
    covered = {row for sample in SAMPLES for row in sample.covers}
    missing = sorted(rows - covered)
    assert not missing, f"rows of mypy_lgstate.core.rules with no oracle sample: {missing}"
    stale = sorted(covered - rows)
    assert not stale, f"samples that cover rows which no longer exist: {stale}"
    names = [s.name for s in SAMPLES] + list(LOCAL_SAMPLES)
    assert len(names) == len(set(names)), "sample names must be unique"


def test_strict_safe_classes_match_the_serializer() -> None:
    """The LangChain classes the strict loader accepts without an allowlist entry."""
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_TYPES

    real = {
        f"{module}.{name}" for module, name in SAFE_MSGPACK_TYPES if module.startswith("langchain_core.")
    }
    assert set(rules.STRICT_SAFE_CLASSES) == real


@pytest.mark.parametrize("profile", list(PROFILES))
def test_plugin_agrees_with_the_serializer(
    profile: str,
    runtime_verdicts: dict[str, dict[str, tuple[str, str]]],
    plugin_verdicts: dict[str, dict[str, list[tuple[str, str]]]],
) -> None:
    mismatches = []
    for name, (runtime, detail) in sorted(runtime_verdicts[profile].items()):
        reported = plugin_verdicts[profile].get(name, [])
        plugin = max((verdict for verdict, _ in reported), key=SEVERITY.index, default=OK)
        known = KNOWN_DIFFERENCES.get((name, profile))
        if known is not None:
            if (runtime, plugin) != known[:2]:
                mismatches.append(
                    f"{name}: expected the known difference runtime={known[0]} plugin={known[1]}"
                    f" ({known[2]}), got runtime={runtime} plugin={plugin}"
                )
            continue
        if runtime != plugin:
            said = "; ".join(message for _, message in reported) or "nothing"
            mismatches.append(
                f"{name}: the serializer says {runtime}{f' ({detail})' if detail else ''},"
                f" the plugin says {plugin}: {said}"
            )
    assert not mismatches, f"{len(mismatches)} disagreement(s) under profile {profile}:\n" + "\n".join(
        mismatches
    )
