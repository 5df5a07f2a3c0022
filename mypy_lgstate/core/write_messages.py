"""The words of the rules about what a write does to the graph's channels, shared by every check
that writes: a key that is no channel (``lgstate-unknown-key``), a value its channel does not take,
``Send`` payloads included (``lgstate-channel-type``), and a node whose writes cannot be checked
(``lgstate-untyped-node``). Like every message, each names the path inside the state, the offending
type, what happens at run time, and the fix.
"""

from __future__ import annotations

from typing import Final


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
    the written dict lacks; ``raises``: why the reducer (``operator.add``, ``operator.or_``) raises
    on the value in that step (``a list can only be concatenated with a list``)."""
    if reducer is not None:
        called = (
            f"LangGraph calls it with the value in that step, and {raises}: it raises TypeError"
            if raises is not None
            else "LangGraph calls it with the value"
        )
        what = (
            f'channel "{key}" ("{declared}" in "{schema}") has the reducer "{reducer}", which takes'
            f' "{accepts}": {called}'
        )
        fix = (
            f'write a value of type "{accepts}", which "{reducer}" takes, or change the reducer of'
            f' "{key}" in "{schema}" to a function whose second parameter takes "{written}"'
        )
    else:
        outcome = _CHANNEL_OUTCOMES[kind].format(written=written, declared=declared, schema=schema)
        what = f'channel "{key}" is declared "{declared}" in "{schema}": {outcome}'
        fix = f'write a value of type "{declared}", or change the declaration of "{key}" in "{schema}"'
    if missing is not None:
        what += f' (the dict has no required key "{missing}": reading it raises KeyError)'
    return f'{writer} writes "{written}" to channel "{key}", but {what}. Fix: {fix}'


def object_in_scalar_message(
    writer: str,
    key: str,
    written: str,
    origin: str | None,
    declared: str,
    schema: str,
    kind: str,
    fields: list[str],
    checkpointed_as_json: bool,
) -> str:
    """An instance of the model or dataclass ``written`` written where a scalar is declared: the
    fix is one of its fields of that type (``fields``), not a way to serialize the object.
    ``origin``: the call the value comes from (``with_structured_output(Query)``);
    ``checkpointed_as_json``: the json profile, and a channel that is checkpointed."""
    shown = f'"{written}" (what {origin} returns)' if origin else f'"{written}"'
    if checkpointed_as_json and kind != "pydantic":
        outcome = "the JSON serializer raises TypeError on it when the checkpoint is written"
    else:
        outcome = _CHANNEL_OUTCOMES[kind].format(written=written, declared=declared, schema=schema)
    if fields:
        named = " or ".join(f"value.{field}" for field in fields)
        fix = f'write the field of "{written}" that holds the "{declared}" ({named})'
    else:
        fix = f'write a "{declared}" made from the "{written}"'
    return (
        f'{writer} writes a {shown} to channel "{key}", but channel "{key}" is declared'
        f' "{declared}" in "{schema}": {outcome}. Fix: {fix}'
    )


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
    writer: str,
    key: str,
    declared: str,
    schema: str,
    kind: str,
    checkpointed_as_json: bool,
    *,
    topic: bool = False,
) -> str:
    """``Overwrite(value)`` written to a channel without a reducer, or to a ``Topic`` (``topic``),
    which appends it. ``checkpointed_as_json``: the json profile, and a channel that is
    checkpointed (not an ``UntrackedValue``)."""
    if checkpointed_as_json and kind != "pydantic":
        outcome = "the JSON serializer raises TypeError when the checkpoint is written"
    elif topic and kind != "pydantic":
        outcome = f'the nodes after it read an "Overwrite" object among the items of "{declared}"'
    else:
        outcome = _OVERWRITE_OUTCOMES[kind].format(declared=declared, schema=schema)
    if topic:
        return (
            f'{writer} writes Overwrite(...) to channel "{key}" ("{declared}" in "{schema}"), a'
            " Topic: a Topic appends each value written and does not unwrap an Overwrite, so"
            f" LangGraph stores the Overwrite object as an item, and {outcome}. Fix: write the"
            " values themselves (a Topic holds only what its step wrote, unless it accumulates)"
        )
    return (
        f'{writer} writes Overwrite(...) to channel "{key}" ("{declared}" in "{schema}"), which has'
        " no reducer: only a reducer channel unwraps an Overwrite, so LangGraph stores the Overwrite"
        f' object itself, and {outcome}. Fix: write the value itself, or give "{key}" a reducer'
    )


# ``add_messages`` makes a message of each item it is given (``convert_to_messages``), and LangChain
# raises ValueError for what it cannot make one of (measured: tests/test_reducers_runtime.py).
def rejected_message(writer: str, key: str, item: str, role: str | None) -> str:
    """``item``: how the offending item is shown (``{"text": ...}``); ``role``: the role no
    message has, or ``None`` for a dict without ``role`` (or ``type``) and ``content``."""
    if role is None:
        reason = 'a message dict must hold "role" (or "type") and "content"'
        fix = 'write {"role": "user", "content": ...}, or a message such as HumanMessage(content=...)'
    else:
        roles = "human, user, ai, assistant, system, developer, function and tool"
        reason = f'no message has the role "{role}" (the roles are {roles})'
        fix = "use one of those roles, or a message such as AIMessage(content=...)"
    return (
        f'{writer} writes {item} to channel "{key}", whose reducer "add_messages" makes a message'
        f" of each item: LangChain raises ValueError in that step, as {reason}. Fix: {fix}"
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


def unknown_command_key_message(node: str, key: str, state: str, where: str | None = None) -> str:
    """``where``: the ``file:line`` of the key, for a node defined in another module."""
    located = f'Node "{node}" ({where})' if where else f'Node "{node}"'
    return (
        f'{located} writes key "{key}" in Command.update, which is not a channel of graph state'
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
