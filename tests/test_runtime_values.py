"""``find_problems``: the rule tables applied to real values, with the plugin's paths, codes and words."""

from __future__ import annotations

import functools
import importlib
import json
import math
import re
import subprocess
import sys
import textwrap
import threading
import types
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel, ConfigDict

from mypy_lgstate.core import rules
from mypy_lgstate.runtime import Problem, find_problems
from mypy_lgstate.runtime.classes import RUNTIME_NAMES as _RUNTIME_NAMES, mypy_fullname as _mypy_fullname

_WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)
_JSON_RAISES = "the JSON serializer raises TypeError when the checkpoint is written"


class Color(Enum):
    RED = "red"


class Point(NamedTuple):
    x: int
    y: int


@dataclass
class Job:
    title: str
    when: Any = None


@dataclass
class Counted:
    title: str
    count: int = field(init=False, default=0)


class Profile(BaseModel):
    name: str
    pair: tuple[int, int] = (0, 0)
    extra: Any = None


# Paths, codes and messages ---------------------------------------------------------------------


def test_paths_follow_the_value_down() -> None:
    state = {"notes": {"a": [_WHEN]}, "jobs": [Job("x", when={1, 2})], "pt": Point(1, 2)}
    problems = find_problems(state)
    assert [(p.path, p.code) for p in problems] == [
        ('["notes"]["a"][0]', "lgstate-unserializable"),
        ('["jobs"][0]', "lgstate-unserializable"),
        ('["pt"]', "lgstate-lossy"),
    ]
    assert problems[0].message == (
        f'value["notes"]["a"][0] is "datetime": {_JSON_RAISES}. Fix: store an ISO string'
        " (value.isoformat()) and parse it back with fromisoformat()"
    )


def test_msgpack_walks_into_dataclasses_and_models() -> None:
    state = {"job": Job("x", when=threading.Lock()), "profile": Profile(name="a", extra=math)}
    problems = find_problems(state, profile="msgpack")
    assert problems == [
        Problem(
            '["job"].when', "lgstate-unserializable",
            'value["job"].when is "lock": the msgpack serializer raises TypeError when the checkpoint'
            " is written. Fix: keep it out of graph state: store an id or plain data, and rebuild it"
            " inside the node",
        ),
        Problem(
            '["profile"].extra', "lgstate-unserializable",
            'value["profile"].extra is "module": the msgpack serializer raises TypeError when the'
            " checkpoint is written. Fix: store the module name and import it in the node",
        ),
    ]


def test_a_clean_value_has_no_problems() -> None:
    clean_json = {"a": [1, 2.5, "x", None, True, {"b": []}]}
    assert find_problems(clean_json) == []
    clean_msgpack = {
        "when": _WHEN, "amount": Decimal("1.5"), "tags": {"a"}, "queue": deque([1]),
        "color": Color.RED, "job": Job("x"), "profile": Profile(name="a", pair=(1, 2)),
        "point": Point(1, 2), "path": Path("a"), "by_id": {1: "x", (1, 2): "y"},
    }
    assert find_problems(clean_msgpack, profile="msgpack") == []


def test_dict_keys() -> None:
    assert [(p.path, p.code, p.message) for p in find_problems({"by_id": {1: "a", "b": 2}})] == [
        ('["by_id"]', "lgstate-dict-key",
         'value["by_id"] is "dict[int, ...]": the JSON serializer writes it, but the keys come back'
         " as str. Fix: use str keys (str(key))"),
    ]
    # The worst key decides; a tuple key raises under json.
    assert [p.message for p in find_problems({1: "a", (1, 2): "b"})] == [
        f'value is "dict[tuple, ...]": {_JSON_RAISES}. Fix: use str keys, e.g. the parts joined'
        " into one str"
    ]
    assert [p.path for p in find_problems({_WHEN: 1}, profile="msgpack")] == [""]


def test_set_of_tuples_comes_back_as_a_list_of_lists() -> None:
    value = {(1, 2), (3, 4)}
    back = JsonPlusSerializer().loads_typed(JsonPlusSerializer().dumps_typed(value))
    assert type(back) is list and all(type(item) is list for item in back)
    assert [(p.path, p.code) for p in find_problems(value, profile="msgpack")] == [
        ("", "lgstate-lossy")
    ]


def test_cycles_and_deep_nesting_end() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert find_problems(loop) == []
    deep: list[Any] = [_WHEN]
    for _ in range(400):
        deep = [deep]
    assert find_problems(deep) == []  # value-dependent: the serializers fail on the depth alone


# bytearray: the serializer special-cases a whole channel value --------------------------------


def test_bytearray_whole_or_nested_follows_the_serializer() -> None:
    serde = JsonPlusSerializer()
    whole = serde.loads_typed(serde.dumps_typed(bytearray(b"x")))
    nested = serde.loads_typed(serde.dumps_typed([bytearray(b"x")]))
    assert type(whole) is bytearray and type(nested[0]) is bytes
    # find_problems checks the value given as one piece inside its container ...
    assert [(p.path, p.code) for p in find_problems([bytearray(b"x")], profile="msgpack")] == [
        ("[0]", "lgstate-lossy")
    ]
    # ... and a whole channel value as SqliteSaver brings it back (tests/test_precision_runtime.py):
    # CheckedSaver's case (tests/test_runtime_saver.py).
    from mypy_lgstate.runtime.values import ValueChecker

    checker = ValueChecker(profile="msgpack")
    assert [f.message("v") for f in checker.check(bytearray(b"x"), whole_channel=True)] == [
        'v is "bytearray": the msgpack serializer writes it, but it comes back as bytes under'
        " SqliteSaver and AsyncSqliteSaver, which serialize the whole checkpoint as one value"
        " (InMemorySaver keeps a bytearray that is a channel's whole value). Fix: declare the"
        " field as bytes"
    ]
    assert [f.message("v") for f in checker.check(bytearray(b"x"))] == [
        'v is "bytearray": the msgpack serializer writes it, but it comes back as bytes. Fix:'
        " declare the field as bytes"
    ]


# Strict msgpack and safe types ---------------------------------------------------------------


def test_strict_allowlist() -> None:
    state = {"job": Job("x"), "color": Color.RED, "when": _WHEN}
    problems = find_problems(state, profile="msgpack", strict_msgpack=True)
    assert [(p.path, p.code) for p in problems] == [
        ('["job"]', "lgstate-allowlist"), ('["color"]', "lgstate-allowlist")
    ]
    assert problems[0].message == (
        f'value["job"] is "Job": this dataclass is not on the strict msgpack allowlist, so the'
        f" checkpoint loader returns a plain dict instead. Fix: pass (\"{__name__}\", \"Job\") in"
        f" the serializer's allowed_msgpack_modules, and add \"{__name__}.Job\" to the plugin's"
        " allowed_msgpack_modules"
    )
    allowed = [f"{__name__}.Job", f"{__name__}.Color"]
    assert find_problems(
        state, profile="msgpack", strict_msgpack=True, allowed_msgpack_modules=allowed
    ) == []
    # A bare module allows every class of it.
    assert find_problems(
        state, profile="msgpack", strict_msgpack=True, allowed_msgpack_modules=[__name__]
    ) == []
    # strict_msgpack means nothing under json.
    assert [p.code for p in find_problems(Job("x"), strict_msgpack=True)] == [
        "lgstate-unserializable"
    ]


def test_safe_types_are_accepted_with_their_subclasses() -> None:
    assert find_problems({"d": Decimal(1)}, safe_types=["decimal.Decimal"]) == []
    assert find_problems(Job("x"), safe_types=[f"{__name__}.Job"]) == []
    assert [p.code for p in find_problems(Decimal(1), safe_types=["uuid.UUID"])] == [
        "lgstate-unserializable"
    ]


def test_a_safe_type_is_no_safe_dict_key_under_json() -> None:
    # json.dumps calls its default hook for values, never for keys (measured with the real one).
    hook = json.JSONEncoder(default=str)
    assert hook.encode({"d": Decimal(1)}) == '{"d": "1"}'
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None"):
        hook.encode({Decimal(1): 1})
    assert [p.message for p in find_problems({Decimal(1): 1}, safe_types=["decimal.Decimal"])] == [
        'value is "dict[Decimal, ...]": the JSON serializer raises TypeError when the checkpoint is'
        " written. Fix: use str keys"
    ]
    assert find_problems({"d": Decimal(1)}, safe_types=["decimal.Decimal"]) == []


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match='profile must be "json" or "msgpack", not \'yaml\''):
        find_problems(1, profile="yaml")


def test_classes_the_loader_cannot_find() -> None:
    def make() -> object:
        @dataclass
        class Local:
            x: int

        return Local(1)

    assert [(p.code, p.message) for p in find_problems(make(), profile="msgpack")] == [
        ("lgstate-unimportable",
         'value is "Local": it is defined in a function body, so the checkpoint loader cannot'
         " re-import it: it comes back as a plain dict. Fix: move class Local to the top level of"
         f" module {__name__}"),
    ]
    made = dataclass(type("Made", (), {"__annotations__": {"x": int}, "__module__": __name__}))
    assert [p.message for p in find_problems(made(1), profile="msgpack")] == [
        f'value is "Made": module {__name__} has no class Made of its own, so the checkpoint'
        " loader cannot re-import it: it comes back as a plain dict. Fix: move class Made to the"
        f" top level of module {__name__}"
    ]


def test_a_dataclass_field_outside_init_comes_back_as_a_dict() -> None:
    serde = JsonPlusSerializer()
    assert type(serde.loads_typed(serde.dumps_typed(Counted("x")))) is dict
    assert [p.message for p in find_problems(Counted("x"), profile="msgpack")] == [
        'value is "Counted": the msgpack serializer writes it, but it comes back as a dict.'
        " Fix: give field 'count' init=True, or keep it out of the dataclass"
    ]


# The names rules.py knows classes by --------------------------------------------------------


def _runtime_class(fullname: str) -> type | None:
    """The class a row of rules.TYPE_RULES names, at run time (None: not installed)."""
    by_value = {
        "types.FunctionType": type(_runtime_class),
        "types.MethodType": type(Path().absolute),
        "types.BuiltinFunctionType": type(len),
        "types.ModuleType": type(math),
        "types.EllipsisType": type(...),
    }
    if fullname in by_value:
        return by_value[fullname]
    module, _, name = fullname.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        return None


def test_every_row_is_found_by_its_runtime_class() -> None:
    missing = []
    for fullname in rules.TYPE_RULES:
        cls = _runtime_class(fullname)
        if cls is None:
            missing.append(fullname)
        elif _mypy_fullname(cls) != fullname:
            missing.append(f"{fullname} (at run time {cls.__module__}.{cls.__qualname__})")
    assert not missing, f"rows that no runtime class maps to: {missing}"


def test_runtime_names_that_differ_from_mypys() -> None:
    assert _mypy_fullname(type(lambda: 0)) == "types.FunctionType"
    assert _mypy_fullname(type(Path().absolute)) == "types.MethodType"
    assert _mypy_fullname(type(len)) == "types.BuiltinFunctionType"
    assert _mypy_fullname(type("".join)) == "types.BuiltinFunctionType"
    assert _mypy_fullname(type((1).__add__)) == "types.BuiltinFunctionType"
    assert _mypy_fullname(type(math)) == "types.ModuleType"
    assert _mypy_fullname(re.Pattern) == "re.Pattern"
    assert _mypy_fullname(functools.partial) == "functools.partial"
    # Python 3.13 moved the path classes to pathlib._local.
    moved = type("PosixPath", (), {"__module__": "pathlib._local"})
    assert _mypy_fullname(moved) == "pathlib.PosixPath"
    assert set(_RUNTIME_NAMES.values()) <= set(rules.TYPE_RULES)


@pytest.mark.parametrize(
    ("value", "profile", "code", "fix"),
    [
        (lambda: 0, "msgpack", "lgstate-unserializable", rules.CALLABLE_FIX),
        (functools.partial(len), "msgpack", "lgstate-unserializable", rules.CALLABLE_FIX),
        (Path().absolute, "msgpack", "lgstate-unserializable", rules.CALLABLE_FIX),
        (math, "msgpack", "lgstate-unserializable", "store the module name and import it in the node"),
        (int, "msgpack", "lgstate-unserializable", rules.CLASS_FIX),
        (re.compile("a"), "json", "lgstate-unserializable", "store value.pattern (a str)"),
        (PurePosixPath("a"), "msgpack", "lgstate-unserializable", "store str(value)"),
        (OrderedDict(a=1), "msgpack", "lgstate-lossy", "store a plain dict and declare it as such"),
        (ValueError("x"), "msgpack", "lgstate-lossy",
         "store str(error) or a dict of the fields you need"),
    ],
)
def test_runtime_only_classes(value: object, profile: str, code: str, fix: str) -> None:
    problems = find_problems(value, profile=profile)
    assert [p.code for p in problems] == [code]
    assert problems[0].message.endswith(f"Fix: {fix}")


# The same words as the plugin ---------------------------------------------------------------

_PARITY_MODULE = '''
import math
import threading
from collections import Counter
from datetime import datetime
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from types import ModuleType
from typing import Callable, NamedTuple, TypedDict
from dataclasses import dataclass

from pydantic import BaseModel

from mypy_lgstate import graph_state


class Color(Enum):
    RED = "red"


class Mode(str, Enum):
    FAST = "fast"


class Point(NamedTuple):
    x: int
    y: int


@dataclass
class Job:
    title: str


class Profile(BaseModel):
    name: str


class Slug(str):
    pass


def double(x: int) -> int:
    return 2 * x


@graph_state
class S(TypedDict):
    when: datetime
    pair: tuple[int, int]
    tags: set[str]
    amount: Decimal
    by_id: dict[int, str]
    color: Color
    mode: Mode
    point: Point
    job: Job
    profile: Profile
    slug: Slug
    counts: Counter[str]
    path: PurePath
    error: ValueError
    module: ModuleType
    fn: Callable[[int], int]
    cls: type[Job]


VALUES = S(
    when=datetime(2024, 1, 1), pair=(1, 2), tags={"a"}, amount=Decimal(1), by_id={1: "a"},
    color=Color.RED, mode=Mode.FAST, point=Point(1, 2), job=Job("x"), profile=Profile(name="a"),
    slug=Slug("a"), counts=Counter("ab"), path=PurePath("a"), error=ValueError("x"), module=math,
    fn=double, cls=Job,
)
'''
_MESSAGE = re.compile(r'^(?P<path>\S+) is "(?P<type>.*?)": (?P<tail>.*)$')


def _plugin_messages(root: Path, profile: str) -> dict[str, set[tuple[str, str]]]:
    config = root / f"{profile}.ini"
    config.write_text(f"[mypy]\nplugins = mypy_lgstate.plugin\n[mypy_lgstate]\nprofile = {profile}\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "parity_states.py", "--config-file", str(config),
         "--cache-dir", str(root / "cache"), "--no-error-summary", "--hide-error-context",
         "--no-pretty"],
        cwd=root, capture_output=True, text=True, check=False,
    )
    assert result.returncode in (0, 1) and not result.stderr, result.stdout + result.stderr
    found: dict[str, set[tuple[str, str]]] = {}
    for line in result.stdout.splitlines():
        match = re.fullmatch(r"parity_states\.py:\d+: error: (.*)  \[([\w-]+)\]", line)
        assert match, line
        message = _MESSAGE.match(match.group(1))
        assert message, line
        field_name = message.group("path").removeprefix("S.")
        found.setdefault(field_name, set()).add((match.group(2), message.group("tail")))
    return found


@pytest.mark.uses_mypy
@pytest.mark.parametrize("profile", ["json", "msgpack"])
def test_same_codes_and_words_as_the_plugin(tmp_path: Path, profile: str) -> None:
    (tmp_path / "parity_states.py").write_text(textwrap.dedent(_PARITY_MODULE))
    plugin = _plugin_messages(tmp_path, profile)
    runtime: dict[str, set[tuple[str, str]]] = {}
    sys.path.insert(0, str(tmp_path))
    try:  # the module stays imported while it is checked: the loader looks its classes up there
        for name, value in importlib.import_module("parity_states").VALUES.items():
            for problem in find_problems({name: value}, profile=profile):
                message = _MESSAGE.match(problem.message)
                assert message, problem.message
                field_name = problem.path.removeprefix(f'["{name}"]')
                runtime.setdefault(name + field_name, set()).add(
                    (problem.code, message.group("tail"))
                )
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("parity_states", None)
    assert runtime == plugin
    assert len(plugin) >= (15 if profile == "json" else 6)


class _Job(BaseModel):
    name: str


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = ""


def test_the_extra_values_of_a_model_allowing_them_are_checked() -> None:
    # model_dump() writes the extra values, so the serializer meets them, and the loader keeps them
    # unvalidated: it raises on a lock, brings back a tuple as a list and a model as a dict
    # (measured below); the plugin can only call them unverifiable.
    serde = JsonPlusSerializer()
    with pytest.raises(TypeError):
        serde.dumps_typed(_Loose(lock=threading.Lock()))  # type: ignore[call-arg]
    back = serde.loads_typed(serde.dumps_typed(_Loose(pair=(1, 2), job=_Job(name="a"))))  # type: ignore[call-arg]
    assert back.pair == [1, 2] and back.job == {"name": "a"}  # type: ignore[attr-defined]
    assert [(p.path, p.code) for p in find_problems(
        _Loose(lock=threading.Lock(), pair=(1, 2), job=_Job(name="a")),  # type: ignore[call-arg]
        profile="msgpack",
    )] == [(".lock", "lgstate-unserializable"), (".pair", "lgstate-lossy"), (".job", "lgstate-lossy")]
    assert find_problems(_Loose(count=1), profile="msgpack") == []  # type: ignore[call-arg]
