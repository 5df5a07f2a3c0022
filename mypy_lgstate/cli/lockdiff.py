"""What ``lgstate lock --check`` shows when the lock file is stale: every change, class by class.

Each change is marked *breaking* when ``drift.compare`` reports it (old checkpoints do not survive
it: what ``lgstate-drift`` reports), else *compatible*. The lock holds each graph-state root's
checkpointed classes by their path in the state; a change is named by that path and the class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from mypy_lgstate.core import drift
from mypy_lgstate.core.lockfile import ClassRecord, LockData


class Change(NamedTuple):
    root: str  # the graph-state root's fullname
    path: str  # in the state, "" for the root itself
    owner: str  # the class at the path ("" for the root)
    what: str  # "field email added (builtins.str, required)"
    breaking: bool


def changes(
    locked: LockData,
    current: LockData,
    *,
    json_profile: bool,
    importable: Callable[[str], bool],
) -> list[Change]:
    found: list[Change] = []
    for root in sorted(locked.keys() | current.keys()):
        if root not in current:
            found.append(Change(root, "", "", "no longer a graph-state root", False))
            continue
        if root not in locked:
            found.append(Change(root, "", "", "a new graph-state root", False))
            continue
        old_root, new_root = locked[root], current[root]
        breaking = {
            _key(d) for d in drift.compare(
                old_root, new_root, json_profile=json_profile, importable=importable
            )
        }
        for path in sorted(old_root.keys() | new_root.keys()):
            old, new = old_root.get(path), new_root.get(path)
            owner = _name(new if new is not None else old)
            for key, what in _class_changes(old, new):
                found.append(Change(root, path, owner, what, (path, *key) in breaking))
    return found


def summary(found: list[Change]) -> str:
    breaking = sum(change.breaking for change in found)
    if not found:
        return "no class changed, but the file is not what lgstate lock writes"
    total = f"{len(found)} change" + ("" if len(found) == 1 else "s")
    return f"{total}, {breaking} breaking"


def as_lines(found: list[Change]) -> list[str]:
    """Grouped by root, one line a change: ``  State.profile (pkg.models.Profile): field email added
    (builtins.str, required)  [breaking]``."""
    lines: list[str] = []
    root = None
    for change in found:
        if change.root != root:
            root = change.root
            lines.append(f"  {root}")
        mark = "breaking" if change.breaking else "compatible"
        where = f"{change.path} ({change.owner}): " if change.path else ""
        lines.append(f"    {where}{change.what}  [{mark}]")
    return lines


def _key(change: drift.Drift) -> tuple[str, str, str | None]:
    """The ``(path, kind, name)`` a ``Drift`` is about, as ``_class_changes`` keys its changes."""
    if change.change == "moved":
        return (change.path, "class", None)
    if change.change == "enum":
        return (change.path, "member", change.old.partition(" = ")[0])
    if change.change == "removed":
        return (change.path, "field", change.old)
    return (change.path, "field", change.field)


def _name(record: ClassRecord | None) -> str:
    return ".".join(record.get("class", [])) if record else ""


def _class_changes(
    old: ClassRecord | None, new: ClassRecord | None
) -> list[tuple[tuple[str, str | None], str]]:
    if old is None:
        return [(("class", None), f"a new {new['kind'] if new else 'class'} in the state")]
    if new is None:
        return [(("class", None), "no longer in the state")]
    result: list[tuple[tuple[str, str | None], str]] = []
    if old.get("class") != new.get("class") or old.get("kind") != new.get("kind"):
        result.append((("class", None), f"was {_name(old)} ({old.get('kind')})"))
    result += _item_changes("field", old.get("fields", {}), new.get("fields", {}), _field)
    result += _item_changes("member", old.get("members", {}), new.get("members", {}), _member)
    return result


def _item_changes(
    kind: str,
    old: dict[str, Any],
    new: dict[str, Any],
    show: Callable[[Any], str],
) -> list[tuple[tuple[str, str | None], str]]:
    result: list[tuple[tuple[str, str | None], str]] = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            result.append(((kind, name), f"{kind} {name} removed ({show(old[name])})"))
        elif name not in old:
            result.append(((kind, name), f"{kind} {name} added ({show(new[name])})"))
        elif old[name] != new[name]:
            result.append(
                ((kind, name), f"{kind} {name} changed: {show(old[name])} -> {show(new[name])}")
            )
    return result


def _field(field: dict[str, Any]) -> str:
    return f"{field.get('type')}, {'required' if field.get('required') else 'optional'}"


def _member(value: str | None) -> str:
    return f"= {value}" if value is not None else "value unknown"
