"""The audit's messages: what the resumed graph will see, and how to fix or migrate it.

They say what ``lgstate-drift`` says of the same change (docs/errors/lgstate-drift.md), in the same
phrases (``core/drift_messages.py``), about the data actually stored: a message names the place by
its pattern (``["items"][].sku``), the same in every thread, so that one problem in 4,000 threads is
one message. Measured with langgraph 1.2
(``tests/test_audit_scenarios.py`` resumes each case): a TypedDict state is handed to nodes as
stored; a pydantic state is validated (``State(**values)``) before each node, and a value that does
not validate raises ``ValidationError`` there; a dataclass state is built with ``State(**values)``
unvalidated.
"""

from __future__ import annotations

import enum
import json
from typing import Any, Final

from mypy_lgstate.core import drift_messages as drift, rules
from mypy_lgstate.core.messages import (
    allowlist_what_fix,
    key_part,
    move_to_top_level_fix,
    postgres_inline_fix,
    postgres_inline_what,
)
from mypy_lgstate.runtime.audit import stored as why
from mypy_lgstate.runtime.audit.conformance import EXTRA, Mismatch, type_name

UNIMPORTABLE: Final = "unimportable"
FALLBACK: Final = "fallback"
MISSING: Final = "missing"
DROPPED: Final = "dropped"
ENUM: Final = "enum"
TYPE: Final = "type"
UNREADABLE: Final = "unreadable"
KINDS: Final = (UNREADABLE, UNIMPORTABLE, FALLBACK, MISSING, ENUM, TYPE, DROPPED)

_MIGRATE: Final = "or migrate the stored threads (update_state() with today's value)"


class Place:
    """Where a value sits: a channel's value or a pending write, and the state around it."""

    def __init__(
        self, channel: str, state: str, state_kind: str, *, write: bool, shown: str = ""
    ) -> None:
        self.channel = channel
        self.state = state  # the state schema's class name (an entrypoint's function name)
        self.state_kind = state_kind
        self.write = write
        # The path of the channel's value in messages: ``["order"]``; the functional API's
        # channels are named as the plugin names them (``workflow(inputs)``, ``workflow().save``).
        self.root = shown or key_part(channel)

    def resume_outcome(self) -> str:
        """What resuming does with a top-level value that does not fit its declaration."""
        if self.state_kind == "pydantic model":  # a pending write is validated once applied
            return f"resuming the thread {drift.next_node_raises('ValidationError', self.state)}"
        return "the resumed graph gets it as it was stored"


def unreadable(path: str, error: str) -> str:
    return (
        f"{path}: the serializer raises {error} on the stored bytes, and so does resuming the"
        " thread. Fix: restore the row from a backup, or delete the thread (delete_thread())"
    )


def rejected_write(path: str, reducer: str, error: str) -> str:
    """A stored write to a reducer's channel that today's reducer raises on."""
    return (
        f"{path}: the reducer {reducer} raises {error} on the stored write, and so does resuming"
        f" the thread, which applies it. Fix: make {reducer} accept what old threads wrote, or let"
        " them finish before the deploy"
    )


def dropped(path: str, place: Place) -> str:
    held = "a pending write to" if place.write else "a value for"
    return (
        f'{path}: the checkpoint holds {held} channel "{place.channel}", which today\'s graph no'
        " longer has: the resumed graph ignores it, and the next checkpoint no longer holds it."
        f' Fix: keep "{place.channel}" (as a NotRequired key, or with a default) until old threads'
        " are gone, or move its value to the channel that replaces it"
    )


def missing_channel(path: str, place: Place) -> str:
    if place.state_kind in ("pydantic model", "dataclass"):
        error = drift.rebuild_error(place.state_kind)
        effect = f"resuming the thread {drift.next_node_raises(error, place.state)}"
        fix = "give the field a default"
    else:
        effect = f'a node that reads state["{place.channel}"] raises KeyError'
        fix = f"{drift.NOT_REQUIRED_FIX}, {_MIGRATE}"
    return (
        f'{path} is missing: the checkpoint holds no value for channel "{place.channel}", which'
        f" {place.state} requires, and {effect}. Fix: {fix}"
    )


def mismatch(path: str, found: Mismatch, place: Place) -> tuple[str, str]:
    """The kind and message of a value that is not what its declaration says (not a ``class``
    mismatch: those are explained by the stored bytes, ``class_mismatch``)."""
    declared = type_name(found.declared)
    if found.kind == EXTRA:
        return FALLBACK, extra_field(path, found, (
            f", so the stored {found.owner} no longer validates: the loader falls back to"
            f" {found.owner}.model_construct(), whose nested models stay plain dicts (reading their"
            " fields raises AttributeError)"
        ))
    if found.kind in (MISSING, FALLBACK) and found.nested:
        problem = f'has no value for required field "{found.detail}"' if found.kind == MISSING else (
            f"no longer validates ({found.detail})"
        )
        return found.kind, (
            f"{path} {problem}, so the stored {found.owner} no longer validates: the loader falls"
            f" back to {found.owner}.model_construct(), whose nested models stay plain dicts (reading"
            " their fields raises AttributeError). Fix: give the field a default, or convert old"
            ' values in a model_validator(mode="before")'
        )
    if found.kind == MISSING:
        key = found.detail
        if _is_model(found.declared):
            return MISSING, (
                f"{path} is missing: the stored {found.owner} has no value for required field"
                f' "{key}", so {drift.model_construct_unread(found.owner)}.'
                f" Fix: {drift.FILL_IN_FIX}"
            )
        return MISSING, (
            f'{path} is missing: the stored value has no key "{key}", which {found.owner} requires,'
            f" and reading it raises KeyError. Fix: {drift.NOT_REQUIRED_FIX}, {_MIGRATE}"
        )
    if found.kind == FALLBACK:
        return FALLBACK, (
            f"{path} no longer validates in {found.owner} ({found.detail}): the loader falls back to"
            f" {found.owner}.model_construct(), so the resumed graph gets a {found.owner} holding"
            f" the stored value unvalidated. Fix: {drift.MODEL_VALIDATOR_FIX}"
        )
    top = path == _top(place)
    outcome = place.resume_outcome() if top else "the resumed graph gets it as it was stored"
    if top and place.state_kind == "pydantic model":
        fix = drift.FIELD_VALIDATOR_FIX
    else:
        fix = f"widen the type to accept old values and convert them where the state is read, {_MIGRATE}"
    owner = found.owner or place.state
    return TYPE, (
        f'{path} is "{found.detail}", but {owner} declares "{declared}" for it: {outcome}.'
        f" Fix: {fix}"
    )


def extra_field(path: str, found: Mismatch, effect: str) -> str:
    """A stored field that a model forbidding extra fields (``extra="forbid"``) no longer
    declares: its validation fails, whatever the field holds (a type to widen, or a default to
    give, would change nothing)."""
    holder = found.holder.__name__ if isinstance(found.holder, type) else found.owner
    return (
        f'{path} is not a field of {holder}, which forbids extra fields (extra="forbid"){effect}.'
        f' Fix: drop "{found.detail}" from old values in a model_validator(mode="before") of'
        f' {holder}, or let {holder} ignore extra fields (extra="ignore")'
    )


def state_validation(path: str, found: Mismatch, place: Place) -> tuple[str, str]:
    """A place inside a field of a pydantic state that does not validate: LangGraph builds the
    state before the next node, and that raises (a field itself is ``mismatch``'s or
    ``missing_channel``'s)."""
    outcome = place.resume_outcome()
    holder = found.holder.__name__ if isinstance(found.holder, type) else found.owner
    if found.kind == EXTRA:
        return TYPE, extra_field(path, found, f": {outcome}")
    if found.kind == MISSING:
        return MISSING, (
            f'{path} is missing: the stored value has no field "{found.detail}", which {holder}'
            f" requires, and {outcome}. Fix: {drift.FILL_IN_FIX}"
        )
    return TYPE, (
        f"{path} no longer validates in {holder} ({found.detail}): {outcome}. Fix:"
        f" {drift.MODEL_VALIDATOR_FIX}"
    )


def class_mismatch(
    path: str, found: Mismatch, explained: why.Explanation, place: Place
) -> tuple[str, str]:
    """A declared class that came back as something else, and why (the stored bytes tell)."""
    cls = found.declared
    name = cls.__name__
    payload = "its bare value" if _is_enum(cls) else "a plain dict"
    stored = explained.stored
    pair = f'("{stored[0]}", "{stored[1]}")' if stored else ""
    if explained.why == why.UNIMPORTABLE:
        assert stored is not None
        if stored == (cls.__module__, name):  # today's class, but not where the loader looks
            where = "a function body" if "<locals>" in cls.__qualname__ else "a class body"
            if "." not in cls.__qualname__:
                where = f"module {stored[0]} under another name"
            return UNIMPORTABLE, (
                f"{path} was stored as {pair}, which the loader cannot import: class {name} is"
                f" defined in {where}, so the resumed graph gets {payload}. Fix:"
                f" {move_to_top_level_fix(name, stored[0])}"
            )
        return UNIMPORTABLE, (
            f"{path} was stored as {pair}, which no longer imports: the resumed graph gets"
            f" {payload} where {name} is declared. Fix:"
            f" {drift.keep_importable_fix(stored[0], stored[1], name)}, {_MIGRATE}"
        )
    if explained.why == why.NOT_ALLOWED:
        assert stored is not None
        _, fix = allowlist_what_fix("Enum" if _is_enum(cls) else "class", ".".join(stored))
        return UNIMPORTABLE, (
            f"{path} was stored as {pair}, which is not on the strict msgpack allowlist: the"
            f" resumed graph gets {payload} where {name} is declared. Fix: {fix}"
        )
    if explained.why == why.ENUM_VALUE:
        value = _literal(explained.value)
        return ENUM, (
            f"{path} holds {value}, which is no longer a value of {name}: the resumed graph gets"
            f" the bare value {value} ({type(explained.value).__name__}), not a {name}. Fix:"
            f" {drift.keep_member_fix(value)}, {_MIGRATE}"
        )
    if explained.why == why.INLINE:
        base = type(explained.value).__name__
        what = postgres_inline_what(base, revalidated=place.state_kind == "pydantic model")
        if _is_enum(cls):
            fix = postgres_inline_fix(name, base)
        else:  # a str or int subclass, which comes back as the plain type with every saver
            verdict = rules.TYPE_RULES[f"builtins.{base}"].subclass_msgpack
            fix = verdict.fix if verdict is not None else postgres_inline_fix(name, base)
        return TYPE, f"{path} is the bare value {_literal(explained.value)}: {what}. Fix: {fix}"
    if explained.why == why.MISSING_FIELDS:
        fields = ", ".join(f'"{field}"' for field in explained.fields)
        return MISSING, (
            f"{path} has no value for required field {fields} of {name}:"
            f" {drift.rebuild_rejected(name)}. Fix: give it a default, {_MIGRATE}"
        )
    if explained.why == why.UNEXPECTED_FIELDS:
        fields = ", ".join(f'"{field}"' for field in explained.fields)
        return FALLBACK, (
            f"{path} holds field {fields}, which {name} no longer has:"
            f" {drift.rebuild_rejected(name)}. Fix: keep {fields} with a default until old threads"
            f" are gone, {_MIGRATE}"
        )
    if explained.why == why.REJECTED:
        return FALLBACK, (
            f"{path} was stored as {pair}, whose constructor rejects the stored fields: the"
            f" resumed graph gets {payload} where {name} is declared. Fix: make {name} accept its"
            f" stored fields, {_MIGRATE}"
        )
    if explained.why == why.OTHER_CLASS:
        assert stored is not None
        detail = ".".join(stored)
    elif explained.why == why.PLAIN_DATA:
        detail = f"{found.detail}, stored as plain data"
    else:
        detail = found.detail
    retyped = found._replace(kind=TYPE, detail=detail)
    return mismatch(path, retyped, place)


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def _top(place: Place) -> str:
    return place.root


def _is_enum(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, enum.Enum)


def _is_model(cls: Any) -> bool:
    return isinstance(cls, type) and hasattr(cls, "__pydantic_validator__")
