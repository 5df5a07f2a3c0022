"""The wording of the problems both halves report: the mypy plugin and the runtime checker.

This module imports nothing from mypy, so that ``mypy_lgstate.runtime`` can use it in a test run.
Every message names the path inside the state, the offending type, what happens at run time under
the active profile, and the fix.
"""

from __future__ import annotations

import json
from typing import Final


def field_part(name: str) -> str:
    """A field in a path: ``.name``, or ``["a-b"]`` for a key that is not an identifier."""
    return f".{name}" if name.isidentifier() else key_part(name)


def key_part(key: str) -> str:
    """A str key in a path, as a Python literal: a newline in it never splits a message."""
    if key.isidentifier():  # what json.dumps would write, without its cost: nothing to escape
        return f'["{key}"]'
    return f"[{json.dumps(key, ensure_ascii=False)}]"


# The tag that ends a message under the ``lgstate`` command: the identity of a problem that several
# files may report (``report.once``), read and removed by ``findings.parse_mypy_json``.
TAG_START: Final = "  {lgstate-problem "
TAG_END: Final = "}"


def problem_message(path: str, type_name: str, what: str, fix: str, where: str | None) -> str:
    """``where`` names the declaring class and file when the problem is reported away from it."""
    located = f"{path} ({where})" if where else path
    return f'{located} is "{type_name}": {what}. Fix: {fix}'


# How messages name each profile's serializer.
SERIALIZERS: Final = {"json": "the JSON serializer", "msgpack": "the msgpack serializer"}
RAISES: Final = "raises TypeError when the checkpoint is written"  # after "the ... serializer"


def raises_what(serializer: str) -> str:
    """What a ``raises`` verdict says (``lgstate-unserializable``)."""
    return f"{serializer} {RAISES}"


def lossy_what(serializer: str, back_as: str) -> str:
    """What a ``lossy`` verdict says (``lgstate-lossy``)."""
    return f"{serializer} writes it, but it comes back as {back_as}"


def lossy_keys_what(serializer: str, back_as: str) -> str:
    """What a ``lossy`` verdict of a dict's keys says (``lgstate-dict-key``)."""
    return f"{serializer} writes it, but the keys come back as {back_as}"


def unverifiable_what(serializer: str) -> str:
    """A value typed ``Any``, a type variable or a protocol (``lgstate-any``)."""
    return f"its values cannot be checked against {serializer}"


PRECISE_TYPE_FIX: Final = "declare a precise type"


# msgpack with pickle_fallback: what msgpack cannot write is pickled, which raises for some values.
def pickle_lambda_what(serializer: str) -> str:
    return (
        f"{serializer} raises PicklingError when the checkpoint is written (pickle cannot write a"
        " lambda either)"
    )


def pickle_raises_what(serializer: str) -> str:
    return f"{raises_what(serializer)} (pickle cannot write it either)"


# A class the loader cannot import by its ``(module, name)`` (``lgstate-unimportable``).
def unimportable_what(reason: str, payload: str) -> str:
    """``reason``: why the class is not found by its name (``it is defined in a function body``);
    ``payload``: what comes back instead (``a plain dict``, ``its value``)."""
    return f"{reason}, so the checkpoint loader cannot re-import it: it comes back as {payload}"


def shadowed_what(where: str, shadowed: str, payload: str) -> str:
    """A nested class whose name a top-level class of its module also has: the loader gets that."""
    return (
        f"it is defined in {where}, so the checkpoint loader re-imports {shadowed}, the top-level"
        f" class of the same name, instead: it comes back as that class built from its fields, or"
        f" as {payload} when that fails"
    )


def move_to_top_level_fix(name: str, module: str) -> str:
    return f"move class {name} to the top level of module {module}"


def not_called_lossy(name: str, method: str) -> tuple[str, str]:
    """A stored value the loader does not rebuild: strict msgpack does not call ``method``."""
    return (
        f"the checkpoint loader does not call {name}.{method}(), so it comes back as the value it"
        " was written as",
        f"store a value of a class the serializer rebuilds instead of a {name}",
    )


_STRICT_PAYLOAD: Final = {
    "Enum": ("Enum", "the member's value"),
    "SecretStr": ("secret", "the bare secret value"),
    "dataclass": ("dataclass", "a plain dict"),
    "NamedTuple": ("NamedTuple", "a plain dict"),
    "pydantic model": ("pydantic model", "a plain dict"),
    "subclass": ("subclass", "its constructor arguments"),
}


def allowlist_what_fix(kind: str, fullname: str) -> tuple[str, str]:
    """What strict msgpack does with a class missing from the allowlist, and the fix."""
    noun, payload = _STRICT_PAYLOAD.get(kind, (kind, "a plain dict"))
    module, _, name = fullname.rpartition(".")
    what = (
        f"this {noun} is not on the strict msgpack allowlist, so the checkpoint loader returns"
        f" {payload} instead"
    )
    fix = (
        f'pass ("{module}", "{name}") in the serializer\'s allowed_msgpack_modules, and add'
        f' "{fullname}" to the plugin\'s allowed_msgpack_modules'
    )
    return what, fix


ENUM_JSON_FIX_START: Final = "store member.value and rebuild it with "


def enum_json_fix(name: str) -> str:
    """An enum under JSON, which writes a member as its value (or raises)."""
    return f"{ENUM_JSON_FIX_START}{name}(value)"

# msgpack, measured with langgraph-checkpoint 4.3.2 and langgraph-checkpoint-sqlite 3.1.2: a
# bytearray that is a channel's whole value (the ``sqlite`` saver; InMemorySaver and the PostgreSQL
# savers serialize each channel value on its own, and keep it).
WHOLE_BYTEARRAY_LOSSY: Final = (
    "bytes under SqliteSaver and AsyncSqliteSaver, which serialize the whole checkpoint as one"
    " value (InMemorySaver keeps a bytearray that is a channel's whole value)",
    "declare the field as bytes",
)


# PostgreSQL savers (PostgresSaver, AsyncPostgresSaver, and LangGraph's server) keep a channel's
# whole value that is a str, int, float or bool inline in the checkpoint's JSON, past the serializer:
# an enum with such a mixin comes back as its bare value, even with unchanged code; inside a dict or
# a list it goes through the serializer and keeps its class (measured with PostgreSQL 15,
# langgraph-checkpoint-postgres 3.2: tests/test_postgres_saver.py).
POSTGRES_SAVERS: Final = "PostgresSaver (and AsyncPostgresSaver, LangGraph's server)"


def postgres_inline_what(base: str, *, revalidated: bool = False) -> str:
    """``base``: the mixin the value is written as (``str``); ``revalidated``: a field of a pydantic
    state, which LangGraph validates back into the enum before each node."""
    stored = (
        f"{POSTGRES_SAVERS} stores a channel's value inline as JSON when it is"
        f" {'an' if base == 'int' else 'a'} {base}, without its class"
    )
    if revalidated:
        return (
            f"{stored}: nodes get the enum (LangGraph re-validates the state before each node), but"
            f" get_state() and the graph's output show a plain {base}"
        )
    return f"{stored}: it comes back as a plain {base}"


def postgres_inline_fix(name: str, base: str) -> str:
    """``name``: the enum class, rebuilt from the stored value where it is read."""
    return (
        f"declare the field as {base} and store member.value, rebuilding the member with"
        f" {name}(value) where it is read"
    )


# A compiled subgraph added as a node without ``input_schema=`` is given the parent's whole state,
# and its first checkpoint holds it: an ``UntrackedValue`` channel's value too (measured:
# tests/test_misses_runtime.py).
def subgraph_input_what(node: str, what: str) -> str:
    """``what``: the serializer's verdict on the value."""
    return (
        f'an UntrackedValue channel, but subgraph node "{node}" is added without input_schema=, so'
        f" LangGraph gives it the whole state and its first checkpoint holds the value: {what}"
    )


def subgraph_input_fix(node: str, key: str) -> str:
    return (
        f'add the subgraph with input_schema= a class without "{key}"'
        f' (builder.add_node("{node}", subgraph, input_schema=...))'
    )


# Classes whose bodies change what the msgpack loader's ``cls(**fields)`` rebuilds: each is a
# (comes back as, fix) pair, worded alike by the plugin (from the class body) and the runtime
# checker (from the class object).


def init_var_lossy(name: str, required: bool) -> tuple[str, str]:
    """A dataclass with ``InitVar`` ``name``: not a field, so not in the checkpoint."""
    if required:  # the loader cannot call __init__ without it, and returns the fields' dict
        return (
            f"a dict, because the loader cannot pass InitVar {name!r} to __init__",
            f"give InitVar {name!r} a default, or make it a field",
        )
    return (
        f"a new instance whose __post_init__ ran again with InitVar {name!r} at its default",
        f"make {name!r} a field, or __post_init__ safe to run again on stored fields",
    )


def enum_tuple_lossy(member: str) -> tuple[str, str]:
    """An enum member written as its tuple value, which comes back as a list no member has."""
    return (
        "a list (its value), because no member has a list as its value",
        f"give the members str or int values (member {member} has a tuple)",
    )


def enum_function_member_fix(member: str) -> str:
    """An enum member whose value is a function (``enum.member(func)``): msgpack writes a member as
    its value, and has no encoding for a function."""
    return (
        f"give the members plain values (member {member} has a function as its value): store the"
        " function's name and look it up in the node"
    )


MODEL_SERIALIZER_LOSSY: Final = (
    "what its @model_serializer returns (the loader rebuilds the model only from a dict of its"
    " fields)",
    "keep the default serialization for state, or store what the serializer returns",
)
PRIVATE_ATTRIBUTE_LOSSY: Final = (
    "its default: a private attribute is not written to the checkpoint",
    "make it a field, or recompute it after the state is loaded",
)
EXCLUDED_FIELD_LOSSY: Final = (
    "its default: an excluded field is not written to the checkpoint",
    "remove exclude=True, or recompute it after the state is loaded",
)
ALIASED_FIELD_LOSSY: Final = (
    "its default: model_dump() writes it by name, and it is read by its alias only",
    "set populate_by_name=True in model_config",
)


def aliased_field_fallback(name: str) -> str:
    return f"field {name!r} is read by its alias only"


def excluded_field_fallback(name: str) -> str:
    return f"required field {name!r} is excluded from model_dump()"


def json_field_fallback(name: str) -> str:
    return f"Json field {name!r} validates only a JSON string, and the loader passes the parsed value"


def strict_field_fallback(name: str) -> str:
    return f"strict=True rejects field {name!r} as it is written (a tuple as a list, a dataclass as a dict)"


FORBIDDEN_COMPUTED_FALLBACK: Final = 'extra="forbid" rejects its computed fields'


def fallback_lossy(reason: str) -> tuple[str, str]:
    """A model that ``cls(**model_dump())`` rejects (``reason``): the loader falls back to
    ``model_construct``, which validates nothing."""
    if reason.startswith("field"):
        fix = "set populate_by_name=True in model_config"
    elif reason.startswith("Json"):
        fix = "declare the parsed type instead of Json[...], and parse the string before storing it"
    elif reason.startswith("strict"):
        fix = "declare the field with lists and models instead, or drop strict=True"
    elif reason.startswith("required"):
        fix = "give the excluded field a default"
    else:
        fix = 'drop extra="forbid", or the computed field'
    return (
        f"a model built without validation (model_construct), because {reason}: nested models and"
        " dataclasses stay dicts, tuples stay lists",
        fix,
    )


# How the JSON serializer and the msgpack loader treat models and dataclasses: worded alike by the
# plugin and the runtime checker.


EXTRA_MODEL_LOSSY: Final = (
    "a dict: an extra value is not validated when the model is rebuilt",
    "declare it as a field of the model",
)
EXTRA_ALLOWED_FIX: Final = 'declare the extra values as fields, or drop extra="allow"'


def extra_allowed_what(serializer: str) -> str:
    """A model with ``extra="allow"``: ``model_dump()`` writes values no field declares."""
    return f'its extra values (extra="allow") cannot be checked against {serializer}'


# msgpack with pickle_fallback: what msgpack cannot write is pickled, which depends on what it holds.
PICKLE_UNVERIFIABLE_WHAT: Final = (
    "msgpack cannot write it, so pickle_fallback pickles it, which works only if everything it holds"
    " pickles (a module-level function or class does; a lambda, a lock or an open file does not)"
)
PICKLE_UNVERIFIABLE_FIX: Final = "declare a type msgpack writes, or check its values with CheckedSaver"


# A (role, content) tuple of LangChain's ``MessageLikeRepresentation``: named by the union, and
# fixed by declaring messages, which a list of lists would not be.
MESSAGE_LIKE_TUPLE: Final = "a (role, content) tuple comes back"
MESSAGE_LIKE_FIX: Final = "declare it as list[AnyMessage], and store messages"


# A pydantic state schema: LangGraph rebuilds it with ``State(**values)`` before each node, so what
# the loader changes is changed back inside nodes, and only the stored form differs.
def revalidated_tuple_what(serializer: str) -> str:
    return (
        f"{serializer} writes it as a list: nodes get a tuple (LangGraph re-validates the state"
        " before each node), but get_state() shows a list"
    )


def revalidated_enum_what(serializer: str) -> str:
    return (
        f"{serializer} writes it as its value: nodes get the enum (LangGraph re-validates the state"
        " before each node), but get_state() and the graph's output show the bare value"
    )


def class_var_what(state: str, what: str) -> str:
    """A ``ClassVar`` of a pydantic state, a channel that only a whole instance writes."""
    return f"as a channel, written whenever a {state} instance is, {what}"


# msgpack: a dataclass's class object is written like an instance, from its class attributes (measured
# with langgraph-checkpoint 4.3.2): the plain defaults are there, a missing one or a default_factory
# is not.
DATACLASS_CLASS_LOSSY: Final = (
    "a dict of its fields' defaults when every field has a plain default (it raises TypeError when"
    " one has none, or a default_factory)",
    "store the class name and look the class up in the node",
)


START_INPUT_WHAT: Final = (
    "LangGraph stores the input object itself as the first checkpoint's __start__ value, and the"
    " JSON serializer raises TypeError when the checkpoint is written"
)


def start_input_fix(dump: str) -> str:
    """``dump``: the call that makes the input a dict (``value.model_dump()``)."""
    return (
        f"pass a dict instead ({dump}), typed by a TypedDict given as"
        " StateGraph(..., input_schema=...)"
    )


def model_json_fix(name: str) -> str:
    return f'store value.model_dump(mode="json") and rebuild it with {name}.model_validate(data)'


DATACLASS_JSON_FIX: Final = (
    "store dataclasses.asdict(value), or declare a TypedDict instead of the dataclass"
)
ROOT_MODEL_LOSSY: Final = ("its root value", "store value.root and declare its type")
# A dict root: the loader passes the dict as keyword arguments, which rebuilds the model, except from
# no keywords at all (measured with pydantic 2.14: an empty dict comes back as a plain dict) or with a
# "root" key, which pydantic takes as the root itself.
ROOT_DICT_MODEL_LOSSY: Final = (
    'a plain dict when its dict is empty, and changed when the dict has a "root" key (the loader'
    " passes the dict as keyword arguments; any other dict rebuilds the model)",
    "store value.root and declare its type",
)
GENERIC_MODEL_UNIMPORTABLE: Final = (
    "a parametrized generic model cannot be re-imported by the checkpoint loader: it comes back as"
    " a plain dict"
)


def generic_model_fix(concrete: str) -> str:
    """``concrete``: the subclass to declare, ``class IntBox(Box[int])``."""
    return f"declare `{concrete}` at module top level and use it"


def generic_subclass_fix(subclass: str, parametrized: str) -> str:
    """The concrete subclass exists already: declare it instead of the parametrization."""
    return f"declare the field as {subclass} (a subclass of {parametrized}), and store instances of it"


def not_in_init_lossy(field: str) -> tuple[str, str]:
    """A dataclass field with ``init=False``: the loader's ``cls(**fields)`` rejects it."""
    return "a dict", f"give field {field!r} init=True, or keep it out of the dataclass"
