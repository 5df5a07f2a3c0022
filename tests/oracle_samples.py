"""Sample values for the oracle test (``test_oracle.py``): one or more per concrete row of the rule tables.

Each sample names the type a graph-state field declares (as source text, the way a user writes it) and
a function that builds a value of that type. The oracle writes one ``@graph_state`` TypedDict per sample
(``class S_<name>(TypedDict): v: <annotation>``) into a module next to a copy of this file, asks the
plugin for its verdict on each, round-trips each value through the installed serializers, and compares.

The classes below are user classes at module top level (the loader re-imports them as
``oracle_samples.<Name>``), except where a sample is about a class that cannot be re-imported.
This module must stay importable without mypy and must type-check cleanly under the plugin's
neighbours (only the state classes the oracle generates are checked).
"""

import _thread
import asyncio
import dataclasses
import enum
import functools
import http.client
import io
import ipaddress
import json
import operator
import pathlib
import queue
import re
import socket
import sqlite3
import threading
import types
import uuid
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Generator,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSequence,
    MutableSet,
    Sequence,
)
from dataclasses import InitVar, dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from fractions import Fraction
from enum import Enum, Flag, IntEnum, StrEnum
from typing import (
    IO,
    AbstractSet,
    Annotated,
    Any,
    BinaryIO,
    Final,
    Generic,
    Literal,
    NamedTuple,
    NewType,
    Optional,
    TextIO,
    TypeVar,
    Union,
)
from zoneinfo import ZoneInfo

import httpx
import numpy as np
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, MessageLikeRepresentation
from langgraph.graph.message import add_messages
from langgraph.store.base import Item
from langgraph.types import Command, Interrupt, Send
from pydantic import (
    AliasChoices,
    AnyUrl,
    HttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    Json,
    PrivateAttr,
    RootModel,
    SecretBytes,
    SecretStr,
    computed_field,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic.v1 import BaseModel as BaseModelV1
from typing_extensions import NotRequired, ReadOnly, Required, TypeAliasType, TypedDict

T = TypeVar("T")

# User classes ------------------------------------------------------------------------------------


class Color(Enum):
    RED = "red"


@dataclass
class AllDefaults:  # its class object is written from its class attributes: the defaults
    a: int = 1


@dataclass
class NoDefault:
    a: int


class Tag(str):
    pass


class Tally(int):
    pass


class Ratio(float):
    pass


class Rate(float, Enum):
    HALF = 0.5


def _handler() -> None:
    pass


class Handler(Enum):  # a member whose value is a function (msgpack writes a member as its value)
    RUN = enum.member(_handler)
    STOP = 1


class Perm(Flag):
    READ = 1


class Level(IntEnum):
    LOW = 1


class Mode(StrEnum):
    FAST = "fast"


class StrMixinEnum(str, Enum):
    A = "a"


class IntMixinEnum(int, Enum):
    ONE = 1


class Point(NamedTuple):
    x: int
    y: int


LegacyPoint = namedtuple("LegacyPoint", ["x", "y"])


class Slug(str):
    pass


class Count(int):
    pass


class Stamp(datetime):
    pass


class Day(date):
    pass


class Segment(NamedTuple):
    ends: tuple[int, int]


class ProfileWithPairs(BaseModel):
    pairs: set[tuple[int, int]]


class Ident(uuid.UUID):
    pass


UserId = NewType("UserId", int)
Name = NewType("Name", str)


@dataclass
class Job:
    id: int
    when: datetime


@dataclass
class JobWithTuple:
    pair: tuple[int, int]


@dataclass
class JobWithInitFalse:
    id: int
    label: str = field(init=False, default="x")


@dataclass
class JobWithLock:
    lock: threading.Lock


@dataclass
class GenericJob(Generic[T]):
    item: T


class Profile(BaseModel):
    name: str
    when: datetime
    color: Color


class ProfileWithTuple(BaseModel):
    pair: tuple[int, int]


class ProfileWithLock(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    lock: _thread.LockType


class ProfileWithPoint(BaseModel):
    point: Point


class LegacyProfile(BaseModelV1):
    name: str


class Tags(RootModel[dict[str, int]]):  # the loader passes the dict as keyword arguments
    pass


class Numbers(RootModel[list[int]]):
    pass


class Box(BaseModel, Generic[T]):
    item: T


class IntBox(Box[int]):
    pass


class Outer:
    class Nested(BaseModel):
        x: int


class OuterHolder(BaseModel):
    nested: Outer.Nested


class Reply(AIMessage):
    pass


class Plain:
    def __eq__(self, other: object) -> bool:
        return type(other) is Plain


class Span(Enum):
    SHORT = (0, 10)


@dataclass
class JobWithInitVar:
    id: int
    factor: InitVar[int]


@dataclass
class JobWithInitVarDefault:
    id: int
    offset: InitVar[int] = 5

    def __post_init__(self, offset: int) -> None:
        self.id += offset


class ProfileWithPrivate(BaseModel):
    name: str
    _hits: int = PrivateAttr(default=0)


def _profile_with_private() -> ProfileWithPrivate:
    profile = ProfileWithPrivate(name="a")
    profile._hits = 3
    return profile


class ProfileWithAlias(BaseModel):
    name: str = Field(alias="n")
    inner: Profile


class ProfileWithAliasDefault(BaseModel):
    name: str = Field(default="d", alias="n")


# Other reasons for the loader's model_construct fallback, and their look-alikes that round-trip.
class ProfileWithAnnotatedAlias(BaseModel):
    name: Annotated[str, Field(alias="n")]
    inner: Profile


class ProfileWithGeneratedAliases(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel)
    first_name: str
    inner: Profile


class StrictPair(BaseModel):
    model_config = ConfigDict(strict=True)
    pair: tuple[int, int]


class ProfileWithJson(BaseModel):
    data: Json[dict[str, int]]
    inner: Profile


class ProfileWrittenByAlias(BaseModel):
    model_config = ConfigDict(serialize_by_alias=True)
    name: str = Field(alias="n")
    inner: Profile


class ProfileWithAliasChoices(BaseModel):
    name: str = Field(validation_alias=AliasChoices("name", "n"))
    inner: Profile


class StrictLists(BaseModel):
    model_config = ConfigDict(strict=True)
    pair: list[int]
    inner: Profile


class ProfileForbiddingExtra(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int
    inner: Profile

    @computed_field  # type: ignore[prop-decorator]
    @property
    def double(self) -> int:
        return self.count * 2


class ProfileWithRequiredExcluded(BaseModel):
    secret: str = Field(exclude=True)
    inner: Profile


class ProfileWithExcludedLock(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    lock: _thread.LockType = Field(default_factory=threading.Lock, exclude=True)
    name: str


class ProfileAsText(BaseModel):
    count: int

    @model_serializer
    def as_text(self) -> str:
        return str(self.count)


class ColorHolder(BaseModel):
    _private: Color = Color.RED
    colors: Sequence[Color]


class PointColor(NamedTuple):
    color: Color


class ReadOnlyColor(TypedDict):
    color: ReadOnly[Color]


class RequiredColor(TypedDict, total=False):
    color: Required[Color]


class GenericNote(TypedDict, Generic[T]):
    item: T


class ProfileWithRoot(BaseModel):
    numbers: Numbers


@dataclass
class JobWithPrivate:
    _secret: Color


ColorList = list[Color]


class Note(TypedDict):
    text: str
    tags: NotRequired[list[str]]
    owner: ReadOnly[str]


ColorAlias = TypeAliasType("ColorAlias", Color)


def _function() -> int:
    return 1


class _WithMethod:
    def method(self) -> int:
        return 1


async def _coroutine() -> None:
    return None


async def _async_gen() -> AsyncIterator[int]:
    yield 1



# The samples ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """A declared field type and a value of it.

    ``covers`` names the rows of ``mypy_lgstate.core.rules`` the sample exercises (table keys, ``key:...``
    for the dict-key tables), so that the oracle can insist every row has a sample.
    """

    name: str
    annotation: str
    make: Callable[[], object] | None  # None: no value can be built on this platform
    covers: tuple[str, ...] = ()


def _s(name: str, annotation: str, make: Callable[[], object] | None, *covers: str) -> Sample:
    return Sample(name, annotation, make, covers)


def _key(name: str, key: str, make: Callable[[], object], *covers: str) -> Sample:
    covered = tuple(f"key:{c}" for c in covers)
    return Sample(f"key_{name}", f"dict[{key}, int]", lambda: {make(): 1}, covered)


_WHEN = datetime(2024, 5, 1, 12, 30)
_PROFILE = Profile(name="a", when=_WHEN, color=Color.RED)

SAMPLES: list[Sample] = [
    # str, int, float, bool, None, Literal, NewType of an ok type
    _s("str", "str", lambda: "text", "builtins.str"),
    _s("int", "int", lambda: 7, "builtins.int"),
    _s("float", "float", lambda: 1.5, "builtins.float"),
    _s("bool", "bool", lambda: True, "builtins.bool"),
    _s("none", "None", lambda: None),
    _s("literal", 'Literal["a", "b"]', lambda: "a"),
    _s("newtype_int", "UserId", lambda: UserId(5)),
    # list / Sequence / MutableSequence
    _s("list_int", "list[int]", lambda: [1, 2], "builtins.list"),
    _s("sequence_str", "Sequence[str]", lambda: ["a"], "typing.Sequence"),
    _s("mutable_sequence", "MutableSequence[int]", lambda: [1], "typing.MutableSequence"),
    _s("list_datetime", "list[datetime]", lambda: [_WHEN]),
    # dict / Mapping / TypedDict
    _s("dict_str_int", "dict[str, int]", lambda: {"a": 1}, "builtins.dict"),
    _s("mapping", "Mapping[str, float]", lambda: {"a": 1.5}, "typing.Mapping"),
    _s("typeddict", "Note", lambda: {"text": "t", "tags": ["x"], "owner": "me"}),
    _s("dict_str_date", "dict[str, date]", lambda: {"a": date(2024, 1, 2)}),
    _s("mutable_mapping", "MutableMapping[str, int]", lambda: {"a": 1}, "typing.MutableMapping"),
    # Optional / Union / | / Annotated
    _s("optional", "Optional[int]", lambda: None),
    _s("union", "Union[int, str]", lambda: "a"),
    _s("pipe_union", "int | None", lambda: 3),
    _s("annotated_reducer", "Annotated[list[int], operator.add]", lambda: [1]),
    _s("optional_decimal", "Optional[Decimal]", lambda: Decimal("1.5")),
    # tuples
    _s("tuple_fixed", "tuple[int, str]", lambda: (1, "a")),
    _s("tuple_variadic", "tuple[int, ...]", lambda: (1, 2, 3)),
    _s("model_with_tuple", "ProfileWithTuple", lambda: ProfileWithTuple(pair=(1, 2))),
    _s("dataclass_with_tuple", "JobWithTuple", lambda: JobWithTuple(pair=(1, 2))),
    # NamedTuple
    _s("namedtuple", "Point", lambda: Point(1, 2)),
    _s("collections_namedtuple", "LegacyPoint", lambda: LegacyPoint(1, 2)),
    _s("namedtuple_with_tuple", "Segment", lambda: Segment((1, 2))),
    _s("model_with_set_of_tuples", "ProfileWithPairs", lambda: ProfileWithPairs(pairs={(1, 2)})),
    _s("model_with_namedtuple", "ProfileWithPoint", lambda: ProfileWithPoint(point=Point(1, 2))),
    # str / int subclasses
    _s("str_subclass", "Slug", lambda: Slug("a")),
    _s("int_subclass", "Count", lambda: Count(3)),
    # dict subclasses
    _s("ordered_dict", "OrderedDict[str, int]", lambda: OrderedDict(a=1)),
    _s("defaultdict", "defaultdict[str, int]", lambda: defaultdict(int, a=1)),
    _s("counter", "Counter[str]", lambda: Counter("aab")),
    # sets, deque
    _s("set_int", "set[int]", lambda: {1, 2}, "builtins.set"),
    _s("frozenset_str", "frozenset[str]", lambda: frozenset({"a"}), "builtins.frozenset"),
    _s("set_tuple", "set[tuple[int, int]]", lambda: {(1, 2)}),
    _s("abstract_set", "AbstractSet[int]", lambda: {1}, "typing.AbstractSet"),
    _s("mutable_set", "MutableSet[int]", lambda: {1}, "typing.MutableSet"),
    _s("deque", "deque[int]", lambda: deque([1, 2]), "collections.deque"),
    _s("deque_tuple", "deque[tuple[int, int]]", lambda: deque([(1, 2)])),
    # binary
    _s("bytes", "bytes", lambda: b"ab", "builtins.bytes"),
    _s("bytearray", "bytearray", lambda: bytearray(b"ab"), "builtins.bytearray"),
    _s("list_bytearray", "list[bytearray]", lambda: [bytearray(b"ab")]),
    _s("memoryview", "memoryview", lambda: memoryview(b"ab"), "builtins.memoryview"),
    # the datetime family
    _s("datetime", "datetime", lambda: _WHEN, "datetime.datetime"),
    _s("datetime_tz", "datetime", lambda: _WHEN.replace(tzinfo=timezone.utc)),
    _s("date", "date", lambda: date(2024, 5, 1), "datetime.date"),
    _s("time", "time", lambda: time(12, 30), "datetime.time"),
    _s("timedelta", "timedelta", lambda: timedelta(days=1, seconds=5), "datetime.timedelta"),
    _s("timezone", "timezone", lambda: timezone(timedelta(hours=2)), "datetime.timezone"),
    _s("zoneinfo", "ZoneInfo", lambda: ZoneInfo("UTC"), "zoneinfo.ZoneInfo"),
    _s("datetime_subclass", "Stamp", lambda: Stamp(2024, 5, 1)),
    _s("date_subclass", "Day", lambda: Day(2024, 5, 1)),
    # Decimal, UUID, paths
    _s("decimal", "Decimal", lambda: Decimal("1.10"), "decimal.Decimal"),
    _s("uuid", "uuid.UUID", lambda: uuid.UUID(int=5), "uuid.UUID"),
    _s("uuid_subclass", "Ident", lambda: Ident(int=5)),
    _s("path", "pathlib.Path", lambda: pathlib.Path("/tmp/a"), "pathlib.Path"),
    _s("posix_path", "pathlib.PosixPath", lambda: pathlib.PosixPath("/tmp/a"), "pathlib.PosixPath"),
    _s("windows_path", "pathlib.WindowsPath", None, "pathlib.WindowsPath"),
    _s("pure_path", "pathlib.PurePath", lambda: pathlib.PurePath("a"), "pathlib.PurePath"),
    _s("pure_posix_path", "pathlib.PurePosixPath", lambda: pathlib.PurePosixPath("a"),
       "pathlib.PurePosixPath"),
    _s("pure_windows_path", "pathlib.PureWindowsPath", lambda: pathlib.PureWindowsPath("a"),
       "pathlib.PureWindowsPath"),
    # re, ipaddress
    _s("pattern", "re.Pattern[str]", lambda: re.compile("a+"), "re.Pattern"),
    _s("ipv4_address", "ipaddress.IPv4Address", lambda: ipaddress.IPv4Address("10.0.0.1"),
       "ipaddress.IPv4Address"),
    _s("ipv6_address", "ipaddress.IPv6Address", lambda: ipaddress.IPv6Address("::1"),
       "ipaddress.IPv6Address"),
    _s("ipv4_interface", "ipaddress.IPv4Interface", lambda: ipaddress.IPv4Interface("10.0.0.1/24"),
       "ipaddress.IPv4Interface"),
    _s("ipv6_interface", "ipaddress.IPv6Interface", lambda: ipaddress.IPv6Interface("::1/64"),
       "ipaddress.IPv6Interface"),
    _s("ipv4_network", "ipaddress.IPv4Network", lambda: ipaddress.IPv4Network("10.0.0.0/24"),
       "ipaddress.IPv4Network"),
    _s("ipv6_network", "ipaddress.IPv6Network", lambda: ipaddress.IPv6Network("::/64"),
       "ipaddress.IPv6Network"),
    # Enums
    _s("enum", "Color", lambda: Color.RED),
    _s("flag", "Perm", lambda: Perm.READ),
    _s("str_enum", "Mode", lambda: Mode.FAST),
    _s("int_enum", "Level", lambda: Level.LOW),
    _s("str_mixin_enum", "StrMixinEnum", lambda: StrMixinEnum.A),
    _s("int_mixin_enum", "IntMixinEnum", lambda: IntMixinEnum.ONE),
    _s("enum_literal", "Literal[Color.RED]", lambda: Color.RED),
    _s("enum_alias_695", "ColorAlias", lambda: Color.RED),
    _s("enum_function_member", "Handler", lambda: Handler.RUN),
    _s("float_enum", "Rate", lambda: Rate.HALF),
    _s("http_url", "HttpUrl", lambda: HttpUrl("https://example.com/"), "pydantic.networks._BaseUrl"),
    _s("any_url", "AnyUrl", lambda: AnyUrl("https://example.com/")),
    _s("fraction", "Fraction", lambda: Fraction(1, 3), "fractions.Fraction"),
    _s("message_like_tuples", "list[MessageLikeRepresentation]", lambda: [("ai", "hello")]),
    _s("dataclass_class_defaults", "type[AllDefaults]", lambda: AllDefaults),
    _s("dataclass_class_no_default", "type[NoDefault]", lambda: NoDefault),
    _s("key_str_subclass", "dict[Tag, int]", lambda: {Tag("a"): 1}),
    _s("key_int_subclass", "dict[Tally, int]", lambda: {Tally(1): 1}),
    _s("key_float_subclass", "dict[Ratio, int]", lambda: {Ratio(0.5): 1}),
    _s("key_float_enum", "dict[Rate, int]", lambda: {Rate.HALF: 1}),
    # dataclasses
    _s("dataclass", "Job", lambda: Job(1, _WHEN)),
    _s("dataclass_init_false", "JobWithInitFalse", lambda: JobWithInitFalse(1)),
    _s("dataclass_init_var", "JobWithInitVar", lambda: JobWithInitVar(1, 2)),
    _s("dataclass_init_var_default", "JobWithInitVarDefault", lambda: JobWithInitVarDefault(1, 2)),
    _s("enum_tuple_values", "Span", lambda: Span.SHORT),
    _s("model_private_attribute", "ProfileWithPrivate", _profile_with_private),
    _s("model_alias", "ProfileWithAlias", lambda: ProfileWithAlias(n="a", inner=_PROFILE)),
    _s("model_alias_default", "ProfileWithAliasDefault", lambda: ProfileWithAliasDefault(n="a")),
    _s("model_annotated_alias", "ProfileWithAnnotatedAlias",
       lambda: ProfileWithAnnotatedAlias.model_validate({"n": "a", "inner": _PROFILE})),
    _s("model_alias_generator", "ProfileWithGeneratedAliases",
       lambda: ProfileWithGeneratedAliases.model_validate({"firstName": "a", "inner": _PROFILE})),
    _s("model_strict_tuple", "StrictPair", lambda: StrictPair(pair=(1, 2))),
    _s("model_json_field", "ProfileWithJson",
       lambda: ProfileWithJson.model_validate({"data": '{"a": 1}', "inner": _PROFILE})),
    _s("model_serialize_by_alias", "ProfileWrittenByAlias",
       lambda: ProfileWrittenByAlias(n="a", inner=_PROFILE)),
    _s("model_alias_choices_with_name", "ProfileWithAliasChoices",
       lambda: ProfileWithAliasChoices.model_validate({"n": "a", "inner": _PROFILE})),
    _s("model_strict_lists", "StrictLists", lambda: StrictLists(pair=[1], inner=_PROFILE)),
    _s("model_extra_forbid_computed", "ProfileForbiddingExtra",
       lambda: ProfileForbiddingExtra(count=1, inner=_PROFILE)),
    _s("model_required_excluded", "ProfileWithRequiredExcluded",
       lambda: ProfileWithRequiredExcluded(secret="s", inner=_PROFILE)),
    _s("model_excluded_lock", "ProfileWithExcludedLock", lambda: ProfileWithExcludedLock(name="a")),
    _s("model_serializer", "ProfileAsText", lambda: ProfileAsText(count=1)),
    _s("dataclass_with_lock", "JobWithLock", lambda: JobWithLock(threading.Lock())),
    _s("generic_dataclass", "GenericJob[int]", lambda: GenericJob(1)),
    _s("generic_dataclass_bare", "GenericJob", lambda: GenericJob(1)),
    # pydantic
    _s("model", "Profile", lambda: Profile(name="n", when=_WHEN, color=Color.RED)),
    _s("model_v1", "LegacyProfile", lambda: LegacyProfile(name="n")),
    _s("model_with_lock", "ProfileWithLock", lambda: ProfileWithLock(lock=threading.Lock())),
    _s("root_model", "Numbers", lambda: Numbers([1, 2])),
    _s("root_model_empty_dict", "Tags", lambda: Tags({})),
    _s("root_model_dict", "Tags", lambda: Tags({"a": 1})),
    _s("model_with_root_model", "ProfileWithRoot", lambda: ProfileWithRoot(numbers=Numbers([1]))),
    _s("generic_model", "Box[str]", lambda: Box[str](item="a")),
    _s("generic_model_registered", "Box[int]", lambda: Box[int](item=1)),
    _s("generic_model_subclass", "IntBox", lambda: IntBox(item=1)),
    _s("sequence_of_models", "Sequence[Profile]", lambda: [Profile(name="n", when=_WHEN, color=Color.RED)]),
    # what the strict allowlist derivation reaches, and what it does not
    _s("mapping_of_enums", "Mapping[str, Color]", lambda: {"a": Color.RED}),
    _s("list_of_enums", "list[Color]", lambda: [Color.RED]),
    _s("dict_of_enums", "dict[str, Color]", lambda: {"a": Color.RED}),
    _s("set_of_enums", "set[Color]", lambda: {Color.RED}),
    _s("frozenset_of_enums", "frozenset[Color]", lambda: frozenset({Color.RED})),
    _s("deque_of_enums", "deque[Color]", lambda: deque([Color.RED])),
    _s("tuple_of_enums", "tuple[Color, ...]", lambda: (Color.RED,)),
    _s("optional_enum", "Optional[Color]", lambda: Color.RED),
    _s("annotated_enum", 'Annotated[Color, "meta"]', lambda: Color.RED),
    _s("alias_of_enums", "ColorList", lambda: [Color.RED]),
    _s("defaultdict_of_enums", "defaultdict[str, Color]",
       lambda: defaultdict(lambda: Color.RED, a=Color.RED)),
    _s("model_holding_enums", "ColorHolder", lambda: ColorHolder(colors=[Color.RED])),
    _s("namedtuple_holding_enum", "PointColor", lambda: PointColor(Color.RED)),
    _s("readonly_enum", "ReadOnlyColor", lambda: {"color": Color.RED}),
    _s("required_enum", "RequiredColor", lambda: {"color": Color.RED}),
    _s("generic_typeddict", "GenericNote[Color]", lambda: {"item": Color.RED}),
    _s("dataclass_private_field", "JobWithPrivate", lambda: JobWithPrivate(Color.RED)),
    # classes that cannot be re-imported
    _s("class_nested_model", "Outer.Nested", lambda: Outer.Nested(x=1)),
    _s("model_holding_nested", "OuterHolder", lambda: OuterHolder(nested=Outer.Nested(x=1))),
    # pydantic secrets
    _s("secret_str", "SecretStr", lambda: SecretStr("pw"), "pydantic.types.SecretStr"),
    _s("secret_bytes", "SecretBytes", lambda: SecretBytes(b"pw"), "pydantic.types.SecretBytes"),
    # LangChain
    _s("ai_message", "AIMessage", lambda: AIMessage(content="hi"),
       "langchain_core.messages.base.BaseMessage"),
    _s("any_message", "AnyMessage", lambda: HumanMessage(content="hi")),
    _s("message_subclass", "Reply", lambda: Reply(content="hi")),
    _s("sequence_of_message_subclass", "Sequence[Reply]", lambda: [Reply(content="hi")]),
    _s("messages_reducer", "Annotated[list[AnyMessage], add_messages]",
       lambda: [HumanMessage(content="hi")]),
    _s("document", "Document", lambda: Document(page_content="p", metadata={"a": 1}),
       "langchain_core.documents.base.Document"),
    # langgraph values
    _s("send", "Send", lambda: Send("node", {"a": 1}), "langgraph.types.Send"),
    _s("command", "Command[str]", lambda: Command(goto="node"), "langgraph.types.Command"),
    _s("interrupt", "Interrupt", lambda: Interrupt(value="ask", id="i1"), "langgraph.types.Interrupt"),
    _s("store_item", "Item",
       lambda: Item(value={"a": 1}, key="k", namespace=("ns",), created_at=_WHEN, updated_at=_WHEN),
       "langgraph.store.base.Item"),
    # numpy
    _s("ndarray", "np.ndarray", lambda: np.array([1, 2]), "numpy.ndarray"),
    _s("float64", "np.float64", lambda: np.float64(1.5), "numpy.float64"),
    _s("int64", "np.int64", lambda: np.int64(3), "numpy.generic"),
    _s("bool_", "np.bool_", lambda: np.bool_(True)),
    # exceptions
    _s("exception", "ValueError", lambda: ValueError("boom"), "builtins.BaseException"),
    # no encoding at all
    _s("complex", "complex", lambda: 1 + 2j, "builtins.complex"),
    _s("range", "range", lambda: range(3), "builtins.range"),
    _s("slice", "slice", lambda: slice(1, 2), "builtins.slice"),
    _s("ellipsis", "types.EllipsisType", lambda: ..., "types.EllipsisType"),
    # locks and friends
    _s("lock", "threading.Lock", threading.Lock),
    _s("rlock", "threading.RLock", threading.RLock),
    _s("condition", "threading.Condition", threading.Condition),
    _s("semaphore", "threading.Semaphore", threading.Semaphore),
    _s("event", "threading.Event", threading.Event),
    _s("asyncio_lock", "asyncio.Lock", asyncio.Lock),
    _s("asyncio_event", "asyncio.Event", asyncio.Event),
    _s("thread", "threading.Thread", lambda: threading.Thread(target=_function)),
    _s("queue", "queue.Queue[int]", queue.Queue),
    _s("asyncio_queue", "asyncio.Queue[int]", asyncio.Queue),
    # files, streams, sockets, connections, clients
    _s("text_io", "TextIO", lambda: io.StringIO("x")),
    _s("binary_io", "BinaryIO", lambda: io.BytesIO(b"x")),
    _s("io", "IO[str]", lambda: io.StringIO("x")),
    _s("string_io", "io.StringIO", lambda: io.StringIO("x")),
    _s("socket", "socket.socket", socket.socket),
    _s("sqlite_connection", "sqlite3.Connection", lambda: sqlite3.connect(":memory:")),
    _s("http_connection", "http.client.HTTPConnection", lambda: http.client.HTTPConnection("localhost")),
    _s("httpx_client", "httpx.Client", httpx.Client),
    # generators, iterators, coroutines
    _s("generator", "Generator[int, None, None]", lambda: (x for x in [1])),
    _s("iterator", "Iterator[int]", lambda: iter([1])),
    _s("coroutine", "Coroutine[Any, Any, None]", _coroutine),
    _s("awaitable", "Awaitable[None]", _coroutine),
    _s("async_iterator", "AsyncIterator[int]", _async_gen),
    # callables
    _s("function", "Callable[[], int]", lambda: _function),
    _s("lambda", "Callable[[int], int]", lambda: lambda x: x),
    _s("partial", "functools.partial[int]", lambda: functools.partial(int, "1"), "functools.partial"),
    _s("method", "Callable[[], int]", lambda: _WithMethod().method),
    _s("method_type", "types.MethodType", lambda: _WithMethod().method, "types.MethodType"),
    _s("builtin_function", "Callable[[str], int]", lambda: len),
    _s("builtin_function_type", "types.BuiltinFunctionType", lambda: len, "types.BuiltinFunctionType"),
    _s("function_type", "types.FunctionType", lambda: _function, "types.FunctionType"),
    # modules, class objects, other classes
    _s("module", "types.ModuleType", lambda: json, "types.ModuleType"),
    _s("class_object", "type[int]", lambda: int),
    _s("bare_type", "type", lambda: int, "builtins.type"),
    _s("plain_class", "Plain", Plain),
    # Dict keys
    _key("str", "str", lambda: "a", "builtins.str"),
    _key("str_literal", 'Literal["a"]', lambda: "a"),
    _key("newtype_str", "Name", lambda: Name("a")),
    _key("int", "int", lambda: 1, "builtins.int"),
    _key("float", "float", lambda: 1.5, "builtins.float"),
    _key("bool", "bool", lambda: True, "builtins.bool"),
    _key("none", "None", lambda: None),
    _key("bytes", "bytes", lambda: b"a", "builtins.bytes"),
    _key("tuple", "tuple[int, str]", lambda: (1, "a")),
    _key("enum", "Color", lambda: Color.RED),
    _key("str_enum", "Mode", lambda: Mode.FAST),
    _key("int_enum", "Level", lambda: Level.LOW),
    _key("datetime", "datetime", lambda: _WHEN, "datetime.datetime"),
    _key("date", "date", lambda: date(2024, 5, 1), "datetime.date"),
    _key("time", "time", lambda: time(12, 30), "datetime.time"),
    _key("uuid", "uuid.UUID", lambda: uuid.UUID(int=5), "uuid.UUID"),
    _key("decimal", "Decimal", lambda: Decimal("1.5")),
    _key("frozenset", "frozenset[int]", lambda: frozenset({1})),
]

# Samples about classes defined in a function body: the oracle puts this function into the generated
# module (the state classes must live in the same scope as the class they name); calling it returns
# the values, by sample name.
LOCAL_SCOPE = '''
def _local_scope() -> dict[str, tuple[object, object]]:
    class LocalModel(BaseModel):
        x: int

    class LocalColor(Enum):
        RED = "red"

    @dataclass
    class LocalJob:
        id: int

    @graph_state
    class S_local_model(TypedDict):
        v: LocalModel

    @graph_state
    class S_local_enum(TypedDict):
        v: LocalColor

    @graph_state
    class S_local_dataclass(TypedDict):
        v: LocalJob

    return {
        "local_model": (LocalModel(x=1), S_local_model),
        "local_enum": (LocalColor.RED, S_local_enum),
        "local_dataclass": (LocalJob(1), S_local_dataclass),
    }
'''
LOCAL_SAMPLES: Final = ("local_model", "local_enum", "local_dataclass")
