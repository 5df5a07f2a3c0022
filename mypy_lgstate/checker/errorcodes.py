"""The plugin's error codes (README, "Error codes"), created at import time so mypy accepts them in
``disable_error_code`` / ``enable_error_code`` and ``# type: ignore[...]``."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

_CATEGORY: Final = "LangGraph state"

UNSERIALIZABLE: Final = ErrorCode(
    "lgstate-unserializable",
    "The serializer raises TypeError when the checkpoint is written",
    _CATEGORY,
)
LOSSY: Final = ErrorCode(
    "lgstate-lossy", "The value is written but comes back as a different type or value", _CATEGORY
)
DICT_KEY: Final = ErrorCode(
    "lgstate-dict-key", "A dict key type that the serializer changes or rejects", _CATEGORY
)
UNIMPORTABLE: Final = ErrorCode(
    "lgstate-unimportable",
    "A class the checkpoint loader cannot re-import: it comes back as a plain dict",
    _CATEGORY,
)
ALLOWLIST: Final = ErrorCode(
    "lgstate-allowlist",
    "Strict msgpack: a user class missing from the effective allowlist comes back as a dict",
    _CATEGORY,
)
UNKNOWN_KEY: Final = ErrorCode(
    "lgstate-unknown-key",
    "An update writes a key that is not a channel of the graph: LangGraph drops it",
    _CATEGORY,
)
DRIFT: Final = ErrorCode(
    "lgstate-drift",
    "A checkpointed class changed since the lock file: old checkpoints load wrong or incomplete state",
    _CATEGORY,
)
CHANNEL_TYPE: Final = ErrorCode(
    "lgstate-channel-type",
    "An update writes a value its channel does not accept, or a Send payload one its node's input"
    " does not declare",
    _CATEGORY,
)
# Off by default: on real applications most nodes are declared ``-> dict``, and this code asks for
# annotations rather than finding bugs. ``lgstate report`` and the runtime checker cover those nodes.
UNTYPED_NODE: Final = ErrorCode(
    "lgstate-untyped-node",
    "A node's return type is too loose to check",
    _CATEGORY,
    default_enabled=False,
)
ANY: Final = ErrorCode(
    "lgstate-any",
    "An Any / object value in graph state cannot be verified",
    _CATEGORY,
    default_enabled=False,
)


# Messages -------------------------------------------------------------------------------------
# Every message names the path inside the state, the offending type, what happens at run time
# under the active profile, and the fix.


def unknown_key_message(node: str, key: str, update_type: str, state: str) -> str:
    return (
        f'Node "{node}" returns key "{key}" (in "{update_type}"), which is not a channel of graph '
        f'state "{state}": LangGraph drops it silently. Fix: add "{key}" to "{state}", or remove it'
        " from the update type"
    )


def unknown_body_key_message(node: str, key: str, state: str, where: str | None = None) -> str:
    """``where``: the ``file:line`` of the key, for a node defined in another module."""
    located = f'Node "{node}" ({where})' if where else f'Node "{node}"'
    return (
        f'{located} returns key "{key}", which is not a channel of graph state "{state}":'
        f' LangGraph drops it silently. Fix: add "{key}" to "{state}", or remove it from the'
        " returned dict"
    )


# What LangGraph does with a value of another type than the channel's, by the kind of the schema that
# declares it (measured on compiled graphs with a checkpointer: tests/test_channel_types_runtime.py).
_CHANNEL_OUTCOMES: Final = {
    "typeddict": (
        'LangGraph stores it unchanged, and the nodes after it read a value of type "{written}" where'
        ' "{declared}" is declared'
    ),
    "dataclass": (
        'LangGraph stores it unchanged (a dataclass state is not validated), and the nodes after it'
        ' read a value of type "{written}" where "{declared}" is declared'
    ),
    "pydantic": (
        'the checkpoint stores it unchanged, and LangGraph validates the state with "{schema}" before'
        " the next node runs: pydantic raises ValidationError there, or coerces the value when its lax"
        " mode can"
    ),
}


def channel_type_message(
    writer: str,
    key: str,
    written: str,
    declared: str,
    schema: str,
    kind: str,
    reducer: str | None,
    accepts: str,
    *,
    missing: str | None = None,
    raises: str | None = None,
) -> str:
    """``writer`` names who writes (``Node "n1"``, ``Command.update``); ``reducer`` the channel's
    reducer, whose second parameter says what the channel ``accepts``. ``missing``: a required key
    the written dict lacks; ``raises``: the sequence class a concatenating reducer
    (``operator.add``) adds only to itself, so the step raises."""
    if reducer is not None:
        called = (
            f"LangGraph calls it with the value in that step, and a {raises} can only be"
            f" concatenated with a {raises}: it raises TypeError"
            if raises is not None
            else "LangGraph calls it with the value"
        )
        what = (
            f'channel "{key}" ("{declared}" in "{schema}") has the reducer "{reducer}", which takes'
            f' "{accepts}": {called}'
        )
        fix = f'write a value the reducer takes, or give "{key}" a reducer that takes "{written}"'
    else:
        outcome = _CHANNEL_OUTCOMES[kind].format(written=written, declared=declared, schema=schema)
        what = f'channel "{key}" is declared "{declared}" in "{schema}": {outcome}'
        fix = f'write a value of type "{declared}", or change the declaration of "{key}" in "{schema}"'
    if missing is not None:
        what += f' (the dict has no required key "{missing}": reading it raises KeyError)'
    return f'{writer} writes "{written}" to channel "{key}", but {what}. Fix: {fix}'


# Only a reducer channel unwraps ``Overwrite(value)``; any other channel stores the Overwrite object
# (langgraph#9019; measured: tests/test_verdicts_runtime.py).
_OVERWRITE_OUTCOMES: Final = {
    "typeddict": 'the nodes after it read an "Overwrite" object where "{declared}" is declared',
    "dataclass": 'the nodes after it read an "Overwrite" object where "{declared}" is declared',
    "pydantic": (
        'pydantic raises ValidationError when LangGraph validates the state with "{schema}" before'
        " the next node runs"
    ),
}


def overwrite_message(
    writer: str, key: str, declared: str, schema: str, kind: str, checkpointed_as_json: bool
) -> str:
    """``Overwrite(value)`` written to a channel without a reducer. ``checkpointed_as_json``: the
    json profile, and a channel that is checkpointed (not an ``UntrackedValue``)."""
    if checkpointed_as_json and kind != "pydantic":
        outcome = "the JSON serializer raises TypeError when the checkpoint is written"
    else:
        outcome = _OVERWRITE_OUTCOMES[kind].format(declared=declared, schema=schema)
    return (
        f'{writer} writes Overwrite(...) to channel "{key}" ("{declared}" in "{schema}"), which has'
        " no reducer: only a reducer channel unwraps an Overwrite, so LangGraph stores the Overwrite"
        f' object itself, and {outcome}. Fix: write the value itself, or give "{key}" a reducer'
    )


# A ``Send`` payload is its node's input as it is: not validated, coerced nor converted to the node's
# input schema, also when the node runs from the checkpoint (tests/test_send_payloads_runtime.py).
def send_item_message(
    node: str,
    key: str,
    written: str,
    declared: str,
    schema: str,
    source: tuple[str, str] | None = None,
) -> str:
    """An item of a dict sent to a node whose input is a TypedDict. ``source``: the field of
    another class (and the class) the written value reads, whose declaration says ``written``."""
    if source is None:
        fix = (
            f'write a value of type "{declared}", or change the declaration of "{key}" in'
            f' "{schema}"'
        )
        origin = ""
    else:
        field, owner = source
        origin = f' (read from "{field}", declared "{written}" in "{owner}")'
        fix = (
            f'the declarations of "{field}" in "{owner}" and of "{key}" in "{schema}" disagree:'
            " correct the one that does not say what the value holds, or convert the value"
        )
    return (
        f'Send("{node}", ...) writes "{written}"{origin} to key "{key}" of node "{node}"\'s input,'
        f' but "{key}" is declared "{declared}" in "{schema}": LangGraph hands a Send payload to'
        f' its node unchanged, and node "{node}" reads a value of type "{written}" where'
        f' "{declared}" is declared. Fix: {fix}'
    )


_SCHEMA_KINDS: Final = {"pydantic": "a pydantic model", "dataclass": "a dataclass"}


def send_dict_message(node: str, written: str, schema: str, kind: str, json_profile: bool) -> str:
    """A dict sent to a node whose input is a pydantic model or a dataclass. Under JSON an instance
    is no fix: the payload is checkpointed, and JSON cannot write one."""
    if json_profile:
        fix = (
            f'declare the input of node "{node}" as a TypedDict (a "{schema}" instance in the payload'
            " would not survive the JSON checkpoint)"
        )
    else:
        fix = f'send a "{schema}" instance: Send("{node}", {schema}(...))'
    return (
        f'Send("{node}", ...) writes "{written}" to node "{node}", whose input is declared "{schema}"'
        f" ({_SCHEMA_KINDS[kind]}): LangGraph hands a Send payload to its node unchanged, neither"
        f' validated nor converted to "{schema}", so the node gets the dict, and reading a field of'
        f" it raises AttributeError. Fix: {fix}"
    )


def unknown_command_key_message(node: str, key: str, state: str) -> str:
    return (
        f'Node "{node}" writes key "{key}" in Command.update, which is not a channel of graph state'
        f' "{state}": LangGraph drops it silently. Fix: add "{key}" to "{state}", or remove it from'
        " the update"
    )


def untyped_node_message(node: str, return_type: str | None) -> str:
    declared = f'returns "{return_type}"' if return_type else "has no return type"
    return (
        f'Node "{node}" {declared}, so the values it writes to the checkpoint cannot be checked. '
        "Fix: declare a TypedDict of the keys it updates as its return type; mypy then checks every"
        " returned dict against it"
    )


_ACCEPT: Final = '; then run "lgstate lock" to accept the change'


def drift_message(
    path: str, class_name: str, kind: str, change: str, old: str, new: str, where: str | None
) -> str:
    """A change since the lock file: what old checkpoints do now, and how to upgrade them.

    ``path`` is where the change sits in the state, ``class_name`` the class's current short name.
    A graph-state class itself (``State.field``: one dot) is never stored whole: each field is a
    channel, and LangGraph builds the model or dataclass from the channels for every node."""
    located = f"{path} ({where})" if where else path
    # The lock file keeps full names; a message shows builtins as the user wrote them.
    old, new = old.replace("builtins.", ""), new.replace("builtins.", "")
    root = "." not in path.partition(".")[2] and change in ("added", "narrowed")
    if root and kind in ("pydantic model", "dataclass"):
        what, fix = _ROOT_OUTCOMES[change](class_name, kind, old, new)
    else:
        what, fix = _DRIFT_OUTCOMES[change](class_name, kind, old, new)
    return f"{located} {what}. Fix: {fix}{_ACCEPT}"


def _root_added(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    error = "ValidationError" if kind == "pydantic model" else "TypeError"
    return (
        "is a new required field since the lock file, and old checkpoints have no value for its"
        f" channel: resuming one of their threads raises {error} when LangGraph builds {name} for"
        " the next node",
        "give it a default",
    )


def _root_narrowed(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    if kind == "dataclass":
        return _narrowed(name, kind, old, new)
    return (
        f'is "{new}", but it was "{old}" in the lock file: resuming a thread whose checkpoint holds'
        f" an old value that does not fit \"{new}\" raises ValidationError when LangGraph builds {name}"
        " for the next node",
        'convert old values in a field_validator(mode="before"), or widen the type',
    )


def _added(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    intro = "is a new required field since the lock file, and old checkpoints lack it"
    if kind == "pydantic model":
        return (
            f"{intro}: the loader falls back to {name}.model_construct(), and reading the field"
            " raises AttributeError",
            'give it a default, or fill it in for old values in a model_validator(mode="before")',
        )
    if kind == "dataclass":
        return (
            f"{intro}: {name}(**fields) raises TypeError, and the loader returns a plain dict instead",
            "give it a default",
        )
    return (
        "is a new required key since the lock file, and old checkpoints lack it: reading it raises"
        " KeyError",
        "declare it NotRequired[...] and handle its absence",
    )


def _now_required(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    return (
        "was not required in the lock file, so old checkpoints may lack it: reading it raises"
        " KeyError",
        "keep it NotRequired[...]",
    )


def _removed(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    intro = f'has lost field "{old}" since the lock file (removed or renamed)'
    if kind == "pydantic model":
        what = f"{intro}: the loader drops the value old checkpoints hold in it"
        fix = (
            f'keep "{old}" with a default until old checkpoints are gone, or move its value to'
            ' the new field in a model_validator(mode="before")'
        )
    elif kind == "dataclass":
        what = (
            f"{intro}: {name}(**fields) raises TypeError on it, and the loader returns a plain dict"
            " instead"
        )
        fix = f'keep "{old}" with a default until old checkpoints are gone'
    else:
        what = (
            f'has lost key "{old}" since the lock file (removed or renamed): the value old'
            " checkpoints hold under it is no longer read"
        )
        fix = (
            f'keep "{old}" as a NotRequired key until old checkpoints are gone, or move its value'
            " to the new key where the state is read"
        )
    return what, fix


def _narrowed(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    intro = f'is "{new}", but it was "{old}" in the lock file'
    if kind == "pydantic model":
        what = (
            f"{intro}: an old value that does not fit \"{new}\" makes the loader fall back to"
            f" {name}.model_construct(), which keeps it unvalidated"
        )
        fix = 'convert old values in a model_validator(mode="before"), or widen the type'
    else:
        what = (
            f"{intro}: old values are loaded as they are, unvalidated, so the field can hold a"
            f" value that does not fit \"{new}\""
        )
        fix = "widen the type to accept old values, and convert them where the state is read"
    return what, fix


def _enum_member(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    member, _, value = old.partition(" = ")
    return (
        f"has lost member {member} = {value} since the lock file (removed, or its value changed):"
        f" old checkpoints holding it load the bare value {value}, not a {name}",
        f"keep a member with the value {value} (an alias name is enough)",
    )


def _moved(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    module, _, old_name = old.rpartition(".")
    payload = "bare values" if kind == "Enum" else "plain dicts"
    return (
        f'is {new}, but old checkpoints store ("{module}", "{old_name}"), which no longer'
        f" imports: their values come back as {payload}",
        f"keep the class importable under its old name (in {module}: {old_name} = {name})",
    )


_ROOT_OUTCOMES: Final = {"added": _root_added, "narrowed": _root_narrowed}
_DRIFT_OUTCOMES: Final = {
    "added": _added,
    "required": _now_required,
    "removed": _removed,
    "narrowed": _narrowed,
    "enum": _enum_member,
    "moved": _moved,
}
