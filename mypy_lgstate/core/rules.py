"""The verdict tables, as data (docs/rules.md): what each serializer does with a type.

One row per type (or family of types), with a verdict for each profile. The walker in ``walker.py``
reads these tables; it decides containers, models, dataclasses, enums and the like by their shape,
and looks every other class up here by its fullname, walking the MRO so that subclasses find the row
of their nearest listed base (with the row's ``subclass`` verdicts where they differ).
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

Outcome = Literal["ok", "lossy", "raises"]


class Verdict(NamedTuple):
    """What one serializer does with a value of a type."""

    outcome: Outcome
    back_as: str = ""  # for "lossy": what the value comes back as
    fix: str = ""


class TypeRule(NamedTuple):
    """A row of the type table: the json and msgpack verdicts, and those for subclasses where they differ."""

    json: Verdict
    msgpack: Verdict
    subclass_json: Verdict | None = None
    subclass_msgpack: Verdict | None = None

    def verdict(self, profile: str, *, exact: bool) -> Verdict:
        if profile == "json":
            return self.json if exact or self.subclass_json is None else self.subclass_json
        return self.msgpack if exact or self.subclass_msgpack is None else self.subclass_msgpack


OK: Final = Verdict("ok")


def raises(fix: str) -> Verdict:
    return Verdict("raises", fix=fix)


def lossy(back_as: str, fix: str) -> Verdict:
    return Verdict("lossy", back_as, fix)


KEEP_OUT: Final = "keep it out of graph state: store an id or plain data, and rebuild it inside the node"
_ISO: Final = "store an ISO string (value.isoformat()) and parse it back with fromisoformat()"
_STR: Final = "store str(value) and rebuild it on read"
_NUMPY_JSON: Final = "store value.tolist()"
CLASS_FIX: Final = "store the class name and look the class up in the node"
CALLABLE_FIX: Final = "store the name of the function and look it up in the node"
_MSGPACK_JSON_PATH: Final = "store plain data instead, or switch to the msgpack profile"


def _both(verdict: Verdict) -> TypeRule:
    return TypeRule(verdict, verdict)


def _json_raises_msgpack_ok(fix: str) -> TypeRule:
    return TypeRule(raises(fix), OK)


# Classes looked up by fullname along the MRO. Containers, TypedDicts, NamedTuples, enums, pydantic
# models and dataclasses are decided by shape in walker.py, before this table is consulted.
TYPE_RULES: Final[dict[str, TypeRule]] = {
    # Primitives. A subclass of str or int (not an Enum) comes back as the plain base type.
    "builtins.str": TypeRule(
        OK, OK,
        subclass_json=lossy("str", "store str(value), or declare the field as str"),
        subclass_msgpack=lossy("str", "store str(value), or declare the field as str"),
    ),
    "builtins.int": TypeRule(
        OK, OK,
        subclass_json=lossy("int", "store int(value), or declare the field as int"),
        subclass_msgpack=lossy("int", "store int(value), or declare the field as int"),
    ),
    "builtins.float": TypeRule(
        OK, OK,
        subclass_json=lossy("float", "store float(value), or declare the field as float"),
        subclass_msgpack=lossy("float", "store float(value), or declare the field as float"),
    ),
    "builtins.bool": _both(OK),
    # Binary data.
    "builtins.bytes": _json_raises_msgpack_ok(
        "store base64.b64encode(value).decode() (a str), or switch to the msgpack profile"
    ),
    # msgpack: anywhere below a channel's top it comes back as bytes; a bytearray that is a
    # channel's whole value is worded apart (WHOLE_CHANNEL_DIFFERS): only some savers keep it.
    "builtins.bytearray": TypeRule(
        raises("store base64.b64encode(value).decode() (a str)"),
        lossy("bytes", "declare the field as bytes"),
    ),
    "builtins.memoryview": TypeRule(
        raises("store base64.b64encode(value).decode() (a str)"),
        lossy("bytes", "store bytes(value) and declare the field as bytes"),
    ),
    # Values with no encoding in either serializer.
    "builtins.complex": _both(raises("store [value.real, value.imag]")),
    "builtins.range": _both(raises("store [start, stop, step] as a list of int")),
    "builtins.slice": _both(raises("store [start, stop, step]")),
    "types.EllipsisType": _both(raises(KEEP_OUT)),
    "types.FunctionType": _both(raises(CALLABLE_FIX)),
    "types.MethodType": _both(raises(CALLABLE_FIX)),
    "types.BuiltinFunctionType": _both(raises(CALLABLE_FIX)),
    "functools.partial": _both(raises(CALLABLE_FIX)),
    "builtins.type": _both(raises(CLASS_FIX)),
    "types.ModuleType": _both(raises("store the module name and import it in the node")),
    # The datetime family: native in msgpack; a datetime subclass comes back as an ISO str (the
    # loader only calls fromisoformat on datetime itself).
    "datetime.datetime": TypeRule(
        raises(_ISO), OK,
        subclass_msgpack=lossy("str", "store a plain datetime.datetime"),
    ),
    "datetime.date": _json_raises_msgpack_ok(_ISO),
    "datetime.time": _json_raises_msgpack_ok(_ISO),
    "datetime.timedelta": _json_raises_msgpack_ok("store value.total_seconds() (a float)"),
    "datetime.timezone": _json_raises_msgpack_ok("store the UTC offset in seconds"),
    "zoneinfo.ZoneInfo": _json_raises_msgpack_ok("store value.key (a str)"),
    "decimal.Decimal": _json_raises_msgpack_ok("store str(value) and rebuild it with Decimal(text)"),
    "uuid.UUID": _json_raises_msgpack_ok("store str(value) and rebuild it with UUID(text)"),
    "pathlib.Path": _json_raises_msgpack_ok("store str(value)"),
    "pathlib.PosixPath": _json_raises_msgpack_ok("store str(value)"),
    "pathlib.WindowsPath": _json_raises_msgpack_ok("store str(value)"),
    "pathlib.PurePath": _both(raises("store str(value)")),
    "pathlib.PurePosixPath": _both(raises("store str(value)")),
    "pathlib.PureWindowsPath": _both(raises("store str(value)")),
    "re.Pattern": _json_raises_msgpack_ok("store value.pattern (a str)"),
    "ipaddress.IPv4Address": _json_raises_msgpack_ok(_STR),
    "ipaddress.IPv6Address": _json_raises_msgpack_ok(_STR),
    "ipaddress.IPv4Interface": _json_raises_msgpack_ok(_STR),
    "ipaddress.IPv6Interface": _json_raises_msgpack_ok(_STR),
    "ipaddress.IPv4Network": _json_raises_msgpack_ok(_STR),
    "ipaddress.IPv6Network": _json_raises_msgpack_ok(_STR),
    # Values with no encoding in either serializer, whose plain conversion is a str (measured:
    # HttpUrl, AnyUrl and Fraction raise under both).
    "pydantic.networks._BaseUrl": _both(raises("store str(value)")),
    "fractions.Fraction": _both(raises("store str(value) and rebuild it with Fraction(text)")),
    # pydantic secrets: msgpack keeps them (as plain text in the checkpoint).
    "pydantic.types.SecretStr": _json_raises_msgpack_ok("store the secret outside graph state"),
    "pydantic.types.SecretBytes": _json_raises_msgpack_ok("store the secret outside graph state"),
    # LangChain messages and documents: LangGraph serializes them itself, under both profiles.
    "langchain_core.messages.base.BaseMessage": _both(OK),
    "langchain_core.documents.base.Document": _both(OK),
    # LangGraph's own values: msgpack has an extension type for each; plain JSON has none.
    "langgraph.types.Send": _json_raises_msgpack_ok(_MSGPACK_JSON_PATH),
    "langgraph.types.Command": _json_raises_msgpack_ok(_MSGPACK_JSON_PATH),
    "langgraph.types.Interrupt": _json_raises_msgpack_ok(_MSGPACK_JSON_PATH),
    "langgraph.store.base.Item": _json_raises_msgpack_ok("store item.value (a dict)"),
    # numpy.
    "numpy.ndarray": TypeRule(
        raises(_NUMPY_JSON),
        lossy("a read-only array (object arrays as None)", "store value.tolist(), or copy it on read"),
    ),
    "numpy.float64": TypeRule(
        lossy("float", "store float(value)"), raises("store float(value)")
    ),
    "numpy.generic": _both(raises("store value.item() (a Python int, float or bool)")),
    # Exceptions: msgpack writes their repr.
    "builtins.BaseException": TypeRule(
        raises("store str(error) or a dict of the fields you need"),
        lossy("its repr string", "store str(error) or a dict of the fields you need"),
    ),
}

# msgpack with ``pickle_fallback`` (``JsonPlusSerializer(pickle_fallback=True)``): what msgpack cannot
# write is pickled instead. Measured with langgraph-checkpoint 4.3.2: these rows round-trip through
# pickle ...
PICKLED: Final = frozenset(
    {"builtins.complex", "builtins.range", "builtins.slice", "types.EllipsisType",
     "types.BuiltinFunctionType", "builtins.type", "numpy.generic", "numpy.float64"}
)
# ... and pickle raises on these (and on whatever holds one): locks, open files, connections and
# clients, generators, modules.
NOT_PICKLABLE: Final = frozenset(
    {"_thread.LockType", "_thread.lock", "_thread.RLock", "threading.Condition", "threading.Event",
     "threading.Semaphore", "threading.Thread", "io.IOBase", "_io._IOBase", "typing.IO",
     "socket.socket", "sqlite3.Connection", "sqlite3.Cursor", "types.ModuleType",
     "types.GeneratorType", "types.AsyncGeneratorType", "types.CoroutineType", "typing.Generator",
     "typing.AsyncGenerator", "typing.Coroutine", "typing.Awaitable", "typing.AsyncIterator",
     "queue.Queue", "httpx._client.Client", "httpx._client.AsyncClient"}
)
PICKLE_RAISES_FIX: Final = KEEP_OUT
# Everything else that msgpack cannot write pickles or not by what it holds (a plain class by its
# attributes; a function by whether it is defined at module top level): unverifiable, like Any.

# Containers, decided by shape: their items (and dict keys) are walked.
SEQUENCES: Final = frozenset(
    {"builtins.list", "typing.Sequence", "typing.MutableSequence"}
)
MAPPINGS: Final = frozenset({"builtins.dict", "typing.Mapping", "typing.MutableMapping"})
SETS: Final = frozenset(
    {"builtins.set", "builtins.frozenset", "typing.AbstractSet", "typing.MutableSet"}
)
DEQUE: Final = "collections.deque"
# msgpack: types whose lossy verdict is worded apart for a channel's whole value
# (``messages.WHOLE_BYTEARRAY_LOSSY``): ``dumps_typed`` special-cases a bytearray there, which
# ``InMemorySaver`` keeps, but ``SqliteSaver`` serializes the whole checkpoint as one value.
WHOLE_CHANNEL_DIFFERS: Final = frozenset({"builtins.bytearray"})
ANY_CLASSES: Final = frozenset({"builtins.object"})
# Protocols are abstract: a value of one may be a list or a lock, so the type decides nothing
# (unverifiable, like Any). These are the exceptions: every value of them is an iterator, a generator
# or an awaitable, and none is serializable.
RAISING_PROTOCOLS: Final = frozenset(
    {"typing.Iterator", "typing.AsyncIterator", "typing.AsyncIterable", "typing.Generator",
     "typing.AsyncGenerator", "typing.Awaitable", "typing.Coroutine"}
)

PYDANTIC_MODELS: Final = ("pydantic.main.BaseModel", "pydantic.v1.main.BaseModel")
PYDANTIC_ROOT_MODEL: Final = "pydantic.root_model.RootModel"
SECRET_TYPES: Final = frozenset({"pydantic.types.SecretStr", "pydantic.types.SecretBytes"})

# LangChain's serializable models: accepted under both profiles (LangGraph serializes them itself).
LANGCHAIN_MODELS: Final = frozenset(
    {"langchain_core.messages.base.BaseMessage", "langchain_core.documents.base.Document"}
)
# Strict msgpack: the LangChain classes the loader rebuilds without an allowlist entry
# (``langgraph.checkpoint.serde._msgpack.SAFE_MSGPACK_TYPES``; the oracle test compares). A user's
# subclass of one of them is an ordinary pydantic model to the loader. LangGraph's own values are
# there too, but they are never user classes.
STRICT_SAFE_CLASSES: Final = frozenset(
    {
        "langchain_core.messages.base.BaseMessage",
        "langchain_core.messages.base.BaseMessageChunk",
        "langchain_core.messages.human.HumanMessage",
        "langchain_core.messages.human.HumanMessageChunk",
        "langchain_core.messages.ai.AIMessage",
        "langchain_core.messages.ai.AIMessageChunk",
        "langchain_core.messages.system.SystemMessage",
        "langchain_core.messages.system.SystemMessageChunk",
        "langchain_core.messages.chat.ChatMessage",
        "langchain_core.messages.chat.ChatMessageChunk",
        "langchain_core.messages.tool.ToolMessage",
        "langchain_core.messages.tool.ToolMessageChunk",
        "langchain_core.messages.function.FunctionMessage",
        "langchain_core.messages.function.FunctionMessageChunk",
        "langchain_core.messages.modifier.RemoveMessage",
        "langchain_core.documents.base.Document",
    }
)
# Rows whose subclasses msgpack writes by their own (module, name) and rebuilds by calling the class:
# fine in permissive mode, but in strict mode a user's subclass needs an allowlist entry (compile()
# never derives one), or it comes back as its constructor arguments.
REBUILT_BY_CLASS_NAME: Final = frozenset(
    {
        "datetime.date",
        "datetime.time",
        "datetime.timedelta",
        "zoneinfo.ZoneInfo",
        "decimal.Decimal",
        "uuid.UUID",
        "pathlib.Path",
        "pathlib.PosixPath",
        "pathlib.WindowsPath",
        "ipaddress.IPv4Address",
        "ipaddress.IPv6Address",
        "ipaddress.IPv4Interface",
        "ipaddress.IPv6Interface",
        "ipaddress.IPv4Network",
        "ipaddress.IPv6Network",
    }
)
# The generic origins whose arguments compile() walks when it derives the allowlist.
ALLOWLIST_WALKED_ORIGINS: Final = frozenset(
    {"builtins.list", "builtins.set", "builtins.tuple", "builtins.dict", "collections.deque",
     "builtins.frozenset"}
)

# The verdicts of the shapes decided without the table: containers and named tuples, as the plugin
# reads them from a declared type and the runtime checker from a value.
TUPLE_AS_LIST: Final = lossy("list", "store a list and declare it as list[...]")
NAMED_TUPLE_AS_LIST: Final = lossy("list", "store value._asdict() (a dict)")
JSON_SET: Final = raises("store a sorted list instead")
# msgpack: the loader rebuilds a set from its items; tuples come back as lists, which are not
# hashable, so a set of tuples comes back as the list of lists that was written.
TUPLES_IN_SET: Final = lossy(
    "a list of lists", "store a list of lists and rebuild the set of tuples when you read it"
)


def container_subclass(back_as: str) -> Verdict:
    """A subclass of ``back_as`` (a list, dict, set...): it comes back as the plain container."""
    return lossy(back_as, f"store a plain {back_as} and declare it as such")


# Dict keys (docs/rules.md, "Dict keys").
JSON_TUPLE_KEY: Final = raises("use str keys, e.g. the parts joined into one str")
MSGPACK_ENUM_KEY: Final = lossy("the members' values", "use member.value as the key")
JSON_VALUE_ENUM_KEY: Final = lossy("the members' values as str", "use str(member.value) as the key")
JSON_ENUM_KEY: Final = raises("use member.value as the key")
OTHER_KEY: Final = raises("use str keys")
_KEY_AS_STR: Final = "use str keys (str(key))"
JSON_KEY_RULES: Final[dict[str, Verdict]] = {
    "builtins.str": OK,
    "builtins.int": lossy("str", _KEY_AS_STR),
    "builtins.float": lossy("str", _KEY_AS_STR),
    "builtins.bool": lossy("str", _KEY_AS_STR),
}
# A key of a subclass of one of these comes back as the base type (measured: json writes every one as
# a str; msgpack keeps a str or int subclass's value as the plain type, and raises on a float one).
JSON_SUBCLASS_KEY_RULES: Final[dict[str, Verdict]] = {
    "builtins.str": lossy("str", "use str(key) as the key"),
    "builtins.int": lossy("str", _KEY_AS_STR),
    "builtins.float": lossy("str", _KEY_AS_STR),
}
MSGPACK_SUBCLASS_KEY_RULES: Final[dict[str, Verdict]] = {
    "builtins.str": lossy("str", "use str(key) as the key"),
    "builtins.int": lossy("int", "use int(key) as the key"),
}
# Enum mixins whose members json writes as their values (dict keys: as str).
JSON_VALUE_MIXINS: Final = (("builtins.str", "str"), ("builtins.int", "int"), ("builtins.float", "float"))
# The saver ``postgres``: a channel's whole value that is an instance of one of these is stored inline
# as JSON, so an enum with such a mixin comes back as its value (``messages.postgres_inline_what``;
# a plain subclass of one comes back as the plain type under msgpack with every saver).
POSTGRES_INLINE_MIXINS: Final = JSON_VALUE_MIXINS
MSGPACK_KEY_RULES: Final[dict[str, Verdict]] = {
    "builtins.str": OK,
    "builtins.int": OK,
    "builtins.float": OK,
    "builtins.bool": OK,
    "builtins.bytes": OK,
    "datetime.datetime": lossy("str", "use value.isoformat() as the key"),
    "datetime.date": lossy("str", "use value.isoformat() as the key"),
    "datetime.time": lossy("str", "use value.isoformat() as the key"),
    "uuid.UUID": lossy("str", "use str(value) as the key"),
}


# The roles LangChain makes a message of (``langchain_core.messages.utils``), in a ``(role,
# content)`` tuple; a message dict may also be ``{"type": "remove", "id": ...}``. Any other role, and
# a dict without ``role`` (or ``type``) and ``content``, raise ValueError in ``add_messages``.
MESSAGE_ROLES: Final = frozenset(
    {"human", "user", "ai", "assistant", "system", "developer", "function", "tool"}
)
MESSAGE_DICT_ROLES: Final = MESSAGE_ROLES | {"remove"}
