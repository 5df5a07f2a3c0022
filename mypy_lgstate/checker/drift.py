"""Schema drift (``lgstate-drift``): the snapshot of a graph-state root's checkpointed classes, and
where each change since the lock file is reported.

The snapshot is what ``lgstate lock`` writes; it is compared with the locked one by the rule in
``core/drift.py`` (which changes old checkpoints do not survive), and each such change is reported
on the line of its field in this file, else at the call, in the words of ``core/drift_messages.py``.

Only declared types are read (TypedDict items, model and dataclass field ``Var``s, enum member
``Var``s), so a snapshot is the same in cold, warm and daemon runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from mypy.checker import TypeChecker
from mypy.lookup import lookup_fully_qualified
from mypy.nodes import AssignmentStmt, Context, FuncDef, NameExpr, TypeAlias, TypeInfo, Var
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
from mypy_lgstate.core import drift_messages, lockfile, rules
from mypy_lgstate.core.drift import compare
from mypy_lgstate.core.lockfile import ClassRecord, Lock, RootRecord
from mypy_lgstate.routes import workflows
from mypy_lgstate.routes.schemas import model_fields


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


def snapshot_value(path: str, typ: Type, classes: dict[str, TypeInfo] | None = None) -> RootRecord:
    """Every checkpointed class reachable from a value of type ``typ`` at ``path`` (what an
    ``@entrypoint`` or a ``@task`` checkpoints: ``summarize()``, ``workflow(inputs)``)."""
    found: RootRecord = {}
    _visit_type(typ, path, found, set(), {} if classes is None else classes)
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


# Reporting ---------------------------------------------------------------------------------------


def root(
    api: TypeChecker,
    key: str,
    take: Callable[[dict[str, TypeInfo]], RootRecord],
    context: Context,
    lock: Lock,
    *,
    json_profile: bool,
) -> None:
    """A graph-state root (a class, or an ``@entrypoint``'s or ``@task``'s value): its snapshot
    (``take``, which fills in the classes it records by their stored names) is recorded by
    ``lgstate lock`` (``lockfile.collected``), else compared with the lock file's, if any. An empty
    snapshot (a value of no checkpointed class) is not a root."""
    if lockfile.collected is not None:
        current = take({})
        if current:
            lockfile.collected[key] = current
        return
    locked = lock.roots.get(key)
    if locked is not None:
        classes: dict[str, TypeInfo] = {}
        current = take(classes)
        check_root(api, current, classes, context, locked, json_profile=json_profile)


def function_root(
    api: TypeChecker,
    function: FuncDef,
    path: str,
    typ: Type,
    lock: Lock,
    *,
    task: bool,
    json_profile: bool,
) -> None:
    """A value the functional API checkpoints (``path``: ``summarize()``, ``workflow(inputs)``,
    ``workflow().save``) is a root of its own, named by the function (``app.flow.summarize()``):
    a ``@task``'s result is replayed from a pending write, an ``@entrypoint``'s input read again on
    resume, and what it saves read by the thread's next run."""
    key = workflows.name(api, function) + path[len(function.name):]
    if lockfile.not_derived is not None:
        if task:
            lockfile.not_derived[key] = "task"
        elif api.tree.is_future_flag_set("annotations"):
            lockfile.not_derived[key] = "entrypoint"
    root(
        api, key, functools.partial(snapshot_value, path, typ), function, lock,
        json_profile=json_profile,
    )


def check_root(
    api: TypeChecker,
    current: RootRecord,
    classes: dict[str, TypeInfo],
    context: Context,
    locked: RootRecord,
    *,
    json_profile: bool,
) -> None:
    """Report every change since ``locked`` in the classes of ``current`` (``classes``: each by
    its stored name): on the line of the current field (or class, for removals) when it lies in
    this file, else at ``context``, naming the class and its file."""

    def importable(fullname: str) -> bool:
        # ``Job = Task`` keeps the old name importable: the loader gets the new class from it.
        sym = lookup_fully_qualified(fullname, api.modules)
        return sym is not None and isinstance(sym.node, (TypeInfo, TypeAlias))

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
        message = drift_messages.drift_message(
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
