"""Schema drift: what changed in the checkpointed classes since the lock file, and where to say so.

A checkpoint written by older code is read by the current code. The serializer does not raise when a
class changed in between: it falls back to ``model_construct``, a plain dict or the bare value. The
snapshot of a graph-state root (what ``lgstate lock`` writes) is compared with the locked one, and each
backward-incompatible change is reported as ``lgstate-drift``.

Only declared types are read (TypedDict items, model and dataclass field ``Var``s, enum member
``Var``s), so a snapshot is the same in cold, warm and daemon runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.lookup import lookup_fully_qualified
from mypy.nodes import AssignmentStmt, Context, NameExpr, TypeAlias, TypeInfo, Var
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    NoneType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    UnionType,
    get_proper_type,
)

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.report import once
from mypy_lgstate.checker.models import model_fields
from mypy_lgstate.core import rules
from mypy_lgstate.core.lockfile import ClassRecord, RootRecord

# The classes the serializer stores by ``(module, name)`` and rebuilds by importing them again.
STORED_BY_NAME: Final = frozenset({"pydantic model", "dataclass", "Enum", "NamedTuple"})


# Snapshot ----------------------------------------------------------------------------------


def kind_of(info: TypeInfo) -> str | None:
    """The kind a lock file records for ``info``, or ``None`` for classes it leaves out (builtins
    and library types that the serializer handles itself, such as LangChain messages). Every enum
    is locked by its members, whatever its mixin (``class P(str, Enum)``, ``StrEnum``, ``IntEnum``):
    the loader rebuilds each by its value, and a lost one loads as the bare value."""
    if info.is_enum:
        return "Enum"
    if any(base.fullname in rules.TYPE_RULES for base in info.mro):
        return None
    if info.typeddict_type is not None:
        return "TypedDict"
    if info.is_named_tuple:
        return "NamedTuple"
    if any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
        return "pydantic model"
    if "dataclass" in info.metadata:
        return "dataclass"
    return None


def stable_name(fullname: str) -> str:
    """``fullname`` without the ``@line`` mypy appends to a class defined in a function body
    (``pkg.graph.Audit@33``): the line moves with every edit above it, the class does not."""
    return fullname.partition("@")[0]


def snapshot(root: TypeInfo, classes: dict[str, TypeInfo] | None = None) -> RootRecord:
    """Every checkpointed class reachable from ``root``, each at the first path that reaches it;
    ``classes`` receives each of them by the name the record stores (a class defined in a function
    cannot be looked up by it)."""
    found: RootRecord = {}
    _visit_class(root, root.name, found, {} if classes is None else classes)
    return dict(sorted(found.items()))


def _visit_class(
    info: TypeInfo, path: str, found: RootRecord, classes: dict[str, TypeInfo]
) -> None:
    kind = kind_of(info)
    if kind is None or any(record["class"] == _stored_name(info) for record in found.values()):
        return
    record: ClassRecord = {"class": _stored_name(info), "kind": kind}
    found[path] = record
    classes.setdefault(".".join(record["class"]), info)
    if kind == "Enum":
        record["members"] = {name: _member_value(info, name) for name in info.enum_members}
        return
    fields = _fields(info)
    record["fields"] = {name: {"type": type_text(typ), "required": required}
                        for name, (typ, required) in fields.items()}
    for name, (typ, _) in fields.items():
        _visit_type(typ, f"{path}.{name}", found, set(), classes)


def _visit_type(
    typ: Type, path: str, found: RootRecord, aliases: set[str], classes: dict[str, TypeInfo]
) -> None:
    if isinstance(typ, TypeAliasType) and typ.alias is not None:
        if typ.alias.fullname in aliases:
            return
        aliases = aliases | {typ.alias.fullname}
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        for item in proper.items:
            _visit_type(item, path, found, aliases, classes)
    elif isinstance(proper, TypedDictType):
        _visit_class(proper.fallback.type, path, found, classes)
    elif isinstance(proper, TupleType):
        fallback = proper.partial_fallback.type
        if fallback.is_named_tuple:
            _visit_class(fallback, path, found, classes)
        else:
            for item in proper.items:
                _visit_type(item, f"{path}[]", found, aliases, classes)
    elif isinstance(proper, Instance):
        if kind_of(proper.type) is not None:
            _visit_class(proper.type, path, found, classes)
        else:
            for arg in proper.args:
                _visit_type(arg, f"{path}[]", found, aliases, classes)


def _stored_name(info: TypeInfo) -> list[str]:
    return [info.module_name, info.name]


def _fields(info: TypeInfo) -> dict[str, tuple[Type, bool]]:
    """Each field's declared type and whether old values must hold it (no default)."""
    if info.typeddict_type is not None:
        td = info.typeddict_type
        return {name: (typ, name in td.required_keys) for name, typ in td.items.items()}
    if info.is_named_tuple:
        tuple_type = info.tuple_type
        names = info.metadata.get("namedtuple", {}).get("fields", [])
        items = tuple_type.items if tuple_type is not None else []
        return {name: (typ, True) for name, typ in zip(names, items)}
    dataclass = info.metadata.get("dataclass")
    # A dataclass's defaults are in mypy's dataclass metadata; a pydantic model's field has one when
    # its class body assigns it (``= 0``, ``= Field(...)``), which mypy records on the Var. The
    # pydantic plugin's own metadata is not used: it may not be enabled.
    defaults = (
        {attr["name"] for attr in dataclass.get("attributes", []) if attr.get("has_default")}
        if dataclass is not None
        else {name for name, var, _ in model_fields(info) if var.has_explicit_value}
    )
    fields: dict[str, tuple[Type, bool]] = {}
    for name, var, _ in model_fields(info):
        assert var.type is not None
        fields[name] = (var.type, name not in defaults)
    return fields


def _member_value(info: TypeInfo, name: str) -> str | None:
    """The member's value as mypy inferred it (``'red'``, ``1``); ``None`` when mypy does not know it
    (``auto()``, a computed value)."""
    sym = info.names.get(name)
    node = sym.node if sym is not None else None
    typ = get_proper_type(node.type) if isinstance(node, Var) else None
    if isinstance(typ, Instance) and typ.last_known_value is not None:
        return typ.last_known_value.value_repr()
    if isinstance(typ, LiteralType):
        return typ.value_repr()
    return None


def type_text(typ: Type, aliases: frozenset[str] = frozenset()) -> str:
    """A type as the lock file writes it: full names, union members sorted, so that reordering a
    union or renaming an alias changes nothing."""
    if isinstance(typ, TypeAliasType) and typ.alias is not None:
        if typ.alias.fullname in aliases:
            return stable_name(typ.alias.fullname)
        aliases = aliases | {typ.alias.fullname}
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        members = {type_text(item, aliases) for item in proper.items}
        return " | ".join(sorted(members))
    if isinstance(proper, Instance):
        args = [type_text(arg, aliases) for arg in proper.args]
        return stable_name(proper.type.fullname) + (f"[{', '.join(args)}]" if args else "")
    if isinstance(proper, NoneType):
        return "None"
    if isinstance(proper, AnyType):
        return "Any"
    if isinstance(proper, LiteralType):
        return f"Literal[{proper.value_repr()}]"
    if isinstance(proper, TypedDictType):
        return stable_name(proper.fallback.type.fullname)
    if isinstance(proper, TupleType):
        if proper.partial_fallback.type.is_named_tuple:
            return stable_name(proper.partial_fallback.type.fullname)
        return f"tuple[{', '.join(type_text(item, aliases) for item in proper.items)}]"
    return str(proper)


# Comparison -------------------------------------------------------------------------------------


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
    new_members = _split(new, " | ")
    return "Any" in new_members or all(
        any(_member_fits(member, candidate) for candidate in new_members)
        for member in _split(old, " | ")
    )


def _member_fits(old: str, new: str) -> bool:
    if old == new or new == "Any":
        return True
    old_head, old_args = _head(old)
    new_head, new_args = _head(new)
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


def _head(text: str) -> tuple[str, list[str]]:
    if not text.endswith("]") or "[" not in text:
        return text, []
    head, _, rest = text.partition("[")
    return head, _split(rest[:-1], ", ")


def _split(text: str, separator: str) -> list[str]:
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


# Reporting ---------------------------------------------------------------------------------------


def check_root(
    api: TypeChecker,
    root: TypeInfo,
    context: Context,
    locked: RootRecord,
    *,
    json_profile: bool,
) -> None:
    """Report every change since ``locked`` in the classes reachable from ``root``: on the line of
    the current field (or class, for removals) when it lies in this file, else at ``context``,
    naming the class and its file."""

    def importable(fullname: str) -> bool:
        # ``Job = Task`` keeps the old name importable: the loader gets the new class from it.
        sym = lookup_fully_qualified(fullname, api.modules)
        return sym is not None and isinstance(sym.node, (TypeInfo, TypeAlias))

    classes: dict[str, TypeInfo] = {}
    current = snapshot(root, classes)
    changes = compare(locked, current, json_profile=json_profile, importable=importable)
    for change in changes:
        info = classes.get(change.owner)
        if info is None:
            continue
        path = change.path if change.field is None else f"{change.path}.{change.field}"
        line = _line(info, change.field) if info.module_name == api.tree.fullname else None
        where = None
        if line is None:
            module = api.modules.get(info.module_name)
            where = info.fullname + (
                f" in {api.msg.errors.simplify_path(module.path)}" if module is not None else ""
            )
        message = codes.drift_message(
            path, info.name, change.kind, change.change, change.old, change.new, where
        )
        # Once per changed class and field, whichever graph-state root reached it first.
        identity = (info.fullname, change.field, change.kind, change.change, change.old, change.new)
        at = context if line is None else Context(line=line, column=0)
        once(api, identity, message, at, codes.DRIFT, declared=None if line is None else identity)


def _line(info: TypeInfo, field: str | None) -> int | None:
    """The line that declares ``field`` of ``info`` (its ``class`` line for ``None``)."""
    if field is not None:
        sym = info.names.get(field)
        if sym is not None and isinstance(sym.node, Var) and sym.node.line > 0:
            return sym.node.line
        for stmt in info.defn.defs.body:  # a TypedDict's keys have no symbols
            if isinstance(stmt, AssignmentStmt) and any(
                isinstance(lvalue, NameExpr) and lvalue.name == field for lvalue in stmt.lvalues
            ):
                return stmt.line
    line = info.defn.line if info.defn.line > 0 else info.line
    return line if line > 0 else None
