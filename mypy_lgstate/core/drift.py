"""The drift rule's verdict: which changes between two snapshots of a graph-state root (a lock
file's, and today's) old checkpoints do not survive. A checkpoint written by older code is read by
the current code, and the serializer does not raise when a class changed in between: it falls back
to ``model_construct``, a plain dict or the bare value.

The snapshots are plain data (``lockfile.RootRecord``, each type as the plugin's ``drift.type_text``
writes it), so the plugin (``lgstate-drift``), ``lgstate lock --check`` and ``lgstate allowlist``
read them alike; the rule's words are ``drift_messages``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from mypy_lgstate.core.lockfile import RootRecord

# The classes the serializer stores by ``(module, name)`` and rebuilds by importing them again.
STORED_BY_NAME: Final = frozenset({"pydantic model", "dataclass", "Enum", "NamedTuple"})


class Drift(NamedTuple):
    """One backward-incompatible change, at ``path`` in the state: a field of the class stored as
    ``owner`` (``field``), or the class itself (``field`` is ``None``)."""

    path: str
    owner: str  # fullname of the current class
    field: str | None
    kind: str  # of the class in the lock
    change: str  # added, removed, narrowed, required, enum, moved
    old: str  # the old type, enum member value or class
    new: str  # the new type, or ""


def compare(
    locked: RootRecord,
    current: RootRecord,
    *,
    json_profile: bool,
    importable: Callable[[str], bool],
) -> list[Drift]:
    """The changes from ``locked`` to ``current`` that old checkpoints do not survive.

    Under the json profile only TypedDicts can be in a checkpoint (the json rules reject the rest).
    ``importable`` tells whether a class fullname still names a class the loader can import.
    """
    drifts: list[Drift] = []
    # A class found under another name at the same path is reported once, as moved: the types
    # that name it are compared under its new name.
    renamed = {
        ".".join(old["class"]): ".".join(current[path]["class"])
        for path, old in locked.items()
        if path in current and old.get("class") != current[path]["class"]
    }
    for path, old in sorted(locked.items()):
        new = current.get(path)
        if new is None or (json_profile and old.get("kind") != "TypedDict"):
            continue  # the field that held it is reported (removed or changed), if it matters
        owner = ".".join(new["class"])
        old_name = ".".join(old.get("class", []))
        if old.get("kind") in STORED_BY_NAME and old_name != owner:
            if not importable(old_name):
                drifts.append(Drift(path, owner, None, old["kind"], "moved", old_name, owner))
            continue
        if old.get("kind") == "NamedTuple":
            continue  # rebuilt from its items by position: not compared field by field
        if old.get("kind") == "Enum":
            values = set(new.get("members", {}).values())
            for member, value in sorted(old.get("members", {}).items()):
                if value is not None and value not in values:
                    drifts.append(Drift(path, owner, None, "Enum", "enum", f"{member} = {value}", ""))
            continue
        old_fields: dict[str, Any] = old.get("fields", {})
        new_fields: dict[str, Any] = new.get("fields", {})
        for name in sorted(old_fields.keys() - new_fields.keys()):
            drifts.append(Drift(path, owner, None, old["kind"], "removed", name, ""))
        for name, field in sorted(new_fields.items()):
            before = old_fields.get(name)
            if before is None:
                if field["required"]:
                    drifts.append(Drift(path, owner, name, old["kind"], "added", "", field["type"]))
            elif field["required"] and not before["required"] and old["kind"] == "TypedDict":
                # A model or dataclass stores every field, defaults included: only a TypedDict
                # can lack a key.
                drifts.append(Drift(path, owner, name, old["kind"], "required", "", field["type"]))
            elif not fits(_renaming(before["type"], renamed), field["type"]):
                drifts.append(
                    Drift(path, owner, name, old["kind"], "narrowed", before["type"], field["type"])
                )
    return drifts


def _renaming(text: str, renamed: dict[str, str]) -> str:
    """``text`` with the classes of ``renamed`` under their new names."""
    if not renamed:
        return text
    pattern = re.compile(r"[\w.]+")
    return pattern.sub(lambda match: renamed.get(match.group(), match.group()), text)


# A value of the key type is accepted where the value type is declared (PEP 484's numeric tower).
_PROMOTIONS: Final = {
    "builtins.bool": ("builtins.int", "builtins.float", "builtins.complex"),
    "builtins.int": ("builtins.float", "builtins.complex"),
    "builtins.float": ("builtins.complex",),
}
_LITERAL_CLASSES: Final = {"'": "builtins.str", '"': "builtins.str", "b": "builtins.bytes"}


def fits(old: str, new: str) -> bool:
    """Whether every value of the old type (as ``type_text`` wrote it) is a value of the new one.

    Checkpoints hold data, never code that writes into it, so containers are compared covariantly:
    ``list[int]`` fits ``list[int | None]``."""
    new_members = split_top_level(new, " | ")
    return "Any" in new_members or all(
        any(_member_fits(member, candidate) for candidate in new_members)
        for member in split_top_level(old, " | ")
    )


def _member_fits(old: str, new: str) -> bool:
    if old == new or new == "Any":
        return True
    old_head, old_args = type_parts(old)
    new_head, new_args = type_parts(new)
    if old_head == "Literal" and old_args:
        value = old_args[0]
        implied = _LITERAL_CLASSES.get(value[0])
        if implied is None:
            implied = "builtins.bool" if value in ("True", "False") else "builtins.int"
        return implied == new or new in _PROMOTIONS.get(implied, ())
    if old_args or new_args:
        return old_head == new_head and len(old_args) == len(new_args) and all(
            fits(a, b) for a, b in zip(old_args, new_args)
        )
    return new in _PROMOTIONS.get(old, ())


def type_parts(text: str) -> tuple[str, list[str]]:
    """A type as ``type_text`` wrote it: its head and its arguments (``list``, ``["int"]``)."""
    if not text.endswith("]") or "[" not in text:
        return text, []
    head, _, rest = text.partition("[")
    return head, split_top_level(rest[:-1], ", ")


def split_top_level(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        char = text[i]
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts
