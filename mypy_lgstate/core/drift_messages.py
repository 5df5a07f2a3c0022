"""The words of ``lgstate-drift``: what a change since the lock file does to old checkpoints, and
how to upgrade them. The audit (``runtime/audit/wording.py``) says the same of the data actually
stored, with the same phrases: what resuming a thread raises, what the loader falls back to, and the
fixes, which are defined here once.
"""

from __future__ import annotations

from typing import Final

# Fixes, for a change in the declarations and for the stored values it leaves behind alike.
FILL_IN_FIX: Final = (
    'give it a default, or fill it in for old values in a model_validator(mode="before")'
)
NOT_REQUIRED_FIX: Final = "declare it NotRequired[...] and handle its absence"
MODEL_VALIDATOR_FIX: Final = (
    'convert old values in a model_validator(mode="before"), or widen the type'
)
FIELD_VALIDATOR_FIX: Final = (
    'convert old values in a field_validator(mode="before"), or widen the type'
)


def keep_member_fix(value: str) -> str:
    """An enum member whose value old checkpoints hold is gone."""
    return f"keep a member with the value {value} (an alias name is enough)"


def keep_importable_fix(module: str, old_name: str, name: str) -> str:
    """A class old checkpoints store by ``(module, old_name)`` is now ``name``."""
    return f"keep the class importable under its old name (in {module}: {old_name} = {name})"


def rebuild_error(kind: str) -> str:
    """What building a graph-state class of ``kind`` raises on values that do not fit it."""
    return "ValidationError" if kind == "pydantic model" else "TypeError"


def next_node_raises(error: str, state: str) -> str:
    """A graph-state model or dataclass is built from the channels before each node."""
    return f"raises {error} when LangGraph builds {state} for the next node"


def model_construct_unread(name: str) -> str:
    """A stored model that no longer validates, missing a required field."""
    return (
        f"the loader falls back to {name}.model_construct(), and reading the field raises"
        " AttributeError"
    )


def rebuild_rejected(name: str) -> str:
    """A stored dataclass whose fields its ``__init__`` no longer takes."""
    return f"{name}(**fields) raises TypeError, and the loader returns a plain dict instead"


_ACCEPT: Final = '; then run "lgstate lock" to accept the change'


def drift_message(
    path: str, class_name: str, kind: str, change: str, old: str, new: str, where: str | None
) -> str:
    """A change since the lock file: what old checkpoints do now, and how to upgrade them.

    ``path`` is where the change sits in the state, ``class_name`` the class's current short name.
    A graph-state class itself (``State.field``: one dot) is never stored whole: each field is a
    channel, and LangGraph builds the model or dataclass from the channels for every node. A value
    of the functional API (``summarize().field``) is stored whole, as any value in a channel."""
    located = f"{path} ({where})" if where else path
    # The lock file keeps full names; a message shows builtins as the user wrote them.
    old, new = old.replace("builtins.", ""), new.replace("builtins.", "")
    first, _, rest = path.partition(".")
    root = "(" not in first and "." not in rest and change in ("added", "narrowed")
    if root and kind in ("pydantic model", "dataclass"):
        what, fix = _ROOT_OUTCOMES[change](class_name, kind, old, new)
    else:
        what, fix = _DRIFT_OUTCOMES[change](class_name, kind, old, new)
    return f"{located} {what}. Fix: {fix}{_ACCEPT}"


def _root_added(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    return (
        "is a new required field since the lock file, and old checkpoints have no value for its"
        f" channel: resuming one of their threads {next_node_raises(rebuild_error(kind), name)}",
        "give it a default",
    )


def _root_narrowed(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    if kind == "dataclass":
        return _narrowed(name, kind, old, new)
    return (
        f'is "{new}", but it was "{old}" in the lock file: resuming a thread whose checkpoint holds'
        f' an old value that does not fit "{new}" {next_node_raises("ValidationError", name)}',
        FIELD_VALIDATOR_FIX,
    )


def _added(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    intro = "is a new required field since the lock file, and old checkpoints lack it"
    if kind == "pydantic model":
        return f"{intro}: {model_construct_unread(name)}", FILL_IN_FIX
    if kind == "dataclass":
        return f"{intro}: {rebuild_rejected(name)}", "give it a default"
    return (
        "is a new required key since the lock file, and old checkpoints lack it: reading it raises"
        " KeyError",
        NOT_REQUIRED_FIX,
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
        fix = MODEL_VALIDATOR_FIX
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
        keep_member_fix(value),
    )


def _moved(name: str, kind: str, old: str, new: str) -> tuple[str, str]:
    module, _, old_name = old.rpartition(".")
    payload = "bare values" if kind == "Enum" else "plain dicts"
    return (
        f'is {new}, but old checkpoints store ("{module}", "{old_name}"), which no longer'
        f" imports: their values come back as {payload}",
        keep_importable_fix(module, old_name, name),
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
