"""Walks a mypy type and finds every part of it that will not survive a checkpoint.

The walker is pure: it reads declared types (TypedDict items, ``Var`` types of model and dataclass
fields, the MRO) and never function bodies or inferred expression types, so it gives the same answers
in cold, warm, parallel and daemon runs. Verdicts for whole classes are memoized per walker; the plugin
makes a new walker whenever mypy makes a new plugin object, which ``dmypy`` does on every run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal

from mypy.errorcodes import ErrorCode
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type_bare
from mypy.nodes import AssignmentStmt, NameExpr, RefExpr, TypeInfo, Var
from mypy.options import Options
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    NoneType,
    Overloaded,
    ParamSpecType,
    ProperType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    TypeOfAny,
    TypeType,
    TypeVarTupleType,
    TypeVarType,
    UninhabitedType,
    UnionType,
    get_proper_type,
)
from mypy.expandtype import expand_type_by_instance

from mypy_lgstate import errorcodes as codes
from mypy_lgstate import rules
from mypy_lgstate.config import LGStateConfig

# Where a problem sits: the class and field that declare it, outermost first. The plugin reports a
# problem on the line of the innermost such field that lies in the file being checked.
Anchor = tuple[TypeInfo, str]
UserClassKind = Literal["Enum", "dataclass", "NamedTuple", "pydantic model", "SecretStr"]


@dataclass(frozen=True)
class Problem:
    """One thing the serializer gets wrong, at a path relative to where the walk started."""

    code: ErrorCode
    path: str
    type_name: str
    what: str
    fix: str
    anchors: tuple[Anchor, ...] = ()

    def under(self, prefix: str, anchor: Anchor | None = None) -> Problem:
        anchors = self.anchors if anchor is None else (anchor, *self.anchors)
        return replace(self, path=prefix + self.path, anchors=anchors)


@dataclass(frozen=True)
class UserClass:
    """A class the strict msgpack loader only rebuilds when it is on the allowlist."""

    fullname: str
    kind: UserClassKind
    path: str
    type_name: str
    anchors: tuple[Anchor, ...] = ()

    def under(self, prefix: str, anchor: Anchor | None = None) -> UserClass:
        anchors = self.anchors if anchor is None else (anchor, *self.anchors)
        return replace(self, path=prefix + self.path, anchors=anchors)


@dataclass(frozen=True)
class Findings:
    """What a walk found: problems, the classes strict msgpack must allow, and every class it read
    (as ``(module, fullname)``: the plugin tells mypy about them, so that an edit to one rechecks
    the modules whose verdicts depend on it)."""

    problems: tuple[Problem, ...] = ()
    user_classes: tuple[UserClass, ...] = ()
    touched: frozenset[tuple[str, str]] = frozenset()

    def under(self, prefix: str, anchor: Anchor | None = None) -> Findings:
        if not self.problems and not self.user_classes:
            return self
        return Findings(
            tuple(p.under(prefix, anchor) for p in self.problems),
            tuple(c.under(prefix, anchor) for c in self.user_classes),
            self.touched,
        )

    def touching(self, info: TypeInfo) -> Findings:
        key = (info.module_name, info.fullname)
        if key in self.touched:
            return self
        return Findings(self.problems, self.user_classes, self.touched | {key})


NOTHING: Final = Findings()

_RAISES: Final = "raises TypeError when the checkpoint is written"
_SERIALIZER: Final = {"json": "the JSON serializer", "msgpack": "the msgpack serializer"}


def _merge(parts: list[Findings]) -> Findings:
    if not parts:
        return NOTHING
    if len(parts) == 1:
        return parts[0]
    problems = dict.fromkeys(p for part in parts for p in part.problems)
    classes = dict.fromkeys(c for part in parts for c in part.user_classes)
    touched = frozenset().union(*(part.touched for part in parts))
    return Findings(tuple(problems), tuple(classes), touched)


def is_top_level(info: TypeInfo) -> bool:
    """Whether the loader can re-import ``info`` by ``(module, __name__)``."""
    return info.fullname == f"{info.module_name}.{info.name}"


def model_fields(info: TypeInfo) -> list[tuple[str, Var, TypeInfo]]:
    """The fields of a pydantic model or dataclass, in definition order, with their declaring class."""
    fields: dict[str, tuple[str, Var, TypeInfo]] = {}
    for base in reversed(info.mro):
        if base.fullname in rules.PYDANTIC_MODELS or base.fullname == "builtins.object":
            continue
        for name, sym in base.names.items():
            node = sym.node
            if (
                isinstance(node, Var)
                and node.type is not None
                and not node.is_classvar
                and not node.is_inferred
                and not name.startswith("_")
                and name != "model_config"
            ):
                fields[name] = (name, node, base)
    return list(fields.values())


def typeddict_field_line(info: TypeInfo, name: str) -> int:
    """The line of a TypedDict key, found in the class body (available for the file being checked)."""
    seen: set[str] = set()
    todo = [info]
    while todo:
        current = todo.pop()
        if current.fullname in seen:
            continue
        seen.add(current.fullname)
        for stmt in current.defn.defs.body:
            if isinstance(stmt, AssignmentStmt) and any(
                isinstance(lv, NameExpr) and lv.name == name for lv in stmt.lvalues
            ):
                return stmt.line
        for base in current.defn.base_type_exprs:
            if isinstance(base, RefExpr) and isinstance(base.node, TypeInfo):
                todo.append(base.node)
    return info.line


def field_line(info: TypeInfo, name: str) -> int:
    sym = info.names.get(name)
    if sym is not None and isinstance(sym.node, Var) and sym.node.line > 0:
        return sym.node.line
    return typeddict_field_line(info, name)


class Walker:
    """Finds the problems of types under one profile."""

    def __init__(self, config: LGStateConfig, options: Options) -> None:
        self.profile = config.profile
        self.strict = config.profile == "msgpack" and config.strict_msgpack
        self.safe_types = frozenset(config.safe_types)
        self.options = options
        self._class_memo: dict[tuple[str, bool], Findings] = {}
        self._in_progress: set[tuple[str, bool]] = set()
        self._aliases_in_progress: set[TypeAliasType] = set()

    # Entry points -------------------------------------------------------------------------------

    def check_state_class(self, info: TypeInfo) -> Findings:
        """A graph-state schema: each field is a channel, checked on its own; paths start at the class."""
        return self._class_findings(info, None, in_model_value=False).under(info.name)

    def check_value(self, typ: Type, path: str) -> Findings:
        """A value written at a write site (a node update, ``Send``, ``interrupt``, ...)."""
        return self._walk(typ, in_model_value=False).under(path)

    def forget(self) -> None:
        """Drop the memoized class verdicts: the classes may have changed since (a daemon update)."""
        self._class_memo.clear()

    def type_name(self, typ: Type) -> str:
        return format_type_bare(typ, self.options)

    # The walk ----------------------------------------------------------------------------------

    def _problem(
        self, code: ErrorCode, typ: Type, what: str, fix: str, path: str = ""
    ) -> Findings:
        return Findings((Problem(code, path, self.type_name(typ), what, fix),))

    def _verdict(self, typ: Type, verdict: rules.Verdict) -> Findings:
        if verdict.outcome == "ok":
            return NOTHING
        if verdict.outcome == "raises":
            return self._problem(
                codes.UNSERIALIZABLE, typ, f"{_SERIALIZER[self.profile]} {_RAISES}", verdict.fix
            )
        return self._problem(
            codes.LOSSY,
            typ,
            f"{_SERIALIZER[self.profile]} writes it, but it comes back as {verdict.back_as}",
            verdict.fix,
        )

    def _walk(self, typ: Type, in_model_value: bool) -> Findings:
        if isinstance(typ, TypeAliasType):
            if typ in self._aliases_in_progress:  # a recursive alias: its first visit reports
                return NOTHING
            self._aliases_in_progress.add(typ)
            try:
                return self._walk_proper(get_proper_type(typ), in_model_value)
            finally:
                self._aliases_in_progress.discard(typ)
        return self._walk_proper(get_proper_type(typ), in_model_value)

    def _walk_proper(self, typ: ProperType, in_model_value: bool) -> Findings:
        if isinstance(typ, (NoneType, UninhabitedType)):
            return NOTHING
        if isinstance(typ, LiteralType):
            return self._walk_proper(typ.fallback, in_model_value) if typ.is_enum_literal() else NOTHING
        if isinstance(typ, UnionType):
            return _merge([self._walk(item, in_model_value) for item in typ.items])
        if isinstance(typ, AnyType):
            if typ.type_of_any in (TypeOfAny.from_error, TypeOfAny.implementation_artifact):
                return NOTHING  # mypy has already reported the cause
            return self._unverifiable(typ)
        if isinstance(typ, (TypeVarType, ParamSpecType, TypeVarTupleType)):
            return self._unverifiable(typ)
        if isinstance(typ, (CallableType, Overloaded)):
            return self._problem(
                codes.UNSERIALIZABLE,
                typ,
                f"{_SERIALIZER[self.profile]} {_RAISES}",
                "store the name of the function and look it up in the node",
            )
        if isinstance(typ, TypeType):
            return self._problem(
                codes.UNSERIALIZABLE,
                typ,
                f"{_SERIALIZER[self.profile]} {_RAISES}",
                "store the class name and look the class up in the node",
            )
        if isinstance(typ, TypedDictType):
            info = typ.fallback.type
            if info.is_generic() or not info.typeddict_type:
                return self._typeddict_items(typ, in_model_value).touching(info)
            return self._class_findings(info, None, in_model_value)
        if isinstance(typ, TupleType):
            if typ.partial_fallback.type.is_named_tuple:
                fallback = typ.partial_fallback
                return self._instance(fallback, in_model_value, tuple_type=typ).touching(fallback.type)
            return self._tuple(typ, typ.items, in_model_value, fixed=True)
        if isinstance(typ, Instance):
            return self._instance(typ, in_model_value).touching(typ.type)
        return NOTHING

    def _unverifiable(self, typ: ProperType) -> Findings:
        return self._problem(
            codes.ANY,
            typ,
            f"its values cannot be checked against {_SERIALIZER[self.profile]}",
            "declare a precise type",
        )

    def _tuple(
        self, typ: ProperType, items: list[Type], in_model_value: bool, *, fixed: bool
    ) -> Findings:
        parts: list[Findings] = []
        if self.profile == "json" or not in_model_value:
            parts.append(
                self._verdict(typ, rules.lossy("list", "declare the field as list[...]"))
            )
        for index, item in enumerate(items):
            parts.append(self._walk(item, in_model_value).under(f"[{index}]" if fixed else "[]"))
        return _merge(parts)

    def _instance(
        self, typ: Instance, in_model_value: bool, tuple_type: TupleType | None = None
    ) -> Findings:
        info = typ.type
        fullname = info.fullname
        if info.is_newtype and info.bases:
            return self._walk(info.bases[0], in_model_value)
        if self.safe_types and any(base.fullname in self.safe_types for base in info.mro):
            return NOTHING
        if fullname in rules.ANY_CLASSES:
            return self._unverifiable(typ)
        if fullname in rules.SEQUENCES:
            return self._items(typ, in_model_value)
        if fullname in rules.MAPPINGS:
            return self._mapping(typ, in_model_value)
        if fullname in rules.SETS or fullname == rules.DEQUE:
            own = self._verdict(
                typ, rules.raises("store a sorted list instead")
            ) if self.profile == "json" else NOTHING
            return _merge([own, self._items(typ, in_model_value)])
        if fullname == "builtins.tuple":
            return self._tuple(typ, typ.args[:1], in_model_value, fixed=False)
        if info.is_enum:
            return self._enum(typ)
        if info.is_named_tuple:
            return self._named_tuple(typ, tuple_type, in_model_value)
        for base in info.mro:
            rule = rules.TYPE_RULES.get(base.fullname)
            if rule is not None:
                exact = base is info
                found = self._verdict(typ, rule.verdict(self.profile, exact=exact))
                if self.strict and base.fullname in rules.SECRET_TYPES:
                    found = _merge([found, self._user_class(typ, "SecretStr")])
                return found
        if any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
            return self._model(typ, in_model_value)
        if "dataclass" in info.metadata:
            return self._dataclass(typ, in_model_value)
        for container, back_as in (("builtins.dict", "dict"), ("builtins.list", "list")):
            if info.has_base(container):
                base_info = next(b for b in info.mro if b.fullname == container)
                mapped = map_instance_to_supertype(typ, base_info)
                lossy = self._verdict(
                    typ, rules.lossy(back_as, f"store a plain {back_as} and declare it as such")
                )
                walked = (
                    self._mapping(mapped, in_model_value)
                    if back_as == "dict"
                    else self._items(mapped, in_model_value)
                )
                return _merge([lossy, walked])
        return self._verdict(typ, rules.raises(rules.KEEP_OUT))

    def _items(self, typ: Instance, in_model_value: bool) -> Findings:
        if not typ.args:
            return NOTHING
        return self._walk(typ.args[0], in_model_value).under("[]")

    def _mapping(self, typ: Instance, in_model_value: bool) -> Findings:
        if len(typ.args) != 2:
            return NOTHING
        key, value = typ.args
        return _merge(
            [self._key(key, typ), self._walk(value, in_model_value).under("{}")]
        )

    # Dict keys -------------------------------------------------------------------------------

    def _key(self, key: Type, mapping: Instance) -> Findings:
        verdict = self._key_verdict(get_proper_type(key))
        if verdict is None or verdict.outcome == "ok":
            return NOTHING
        serializer = _SERIALIZER[self.profile]
        if verdict.outcome == "raises":
            what = f"{serializer} {_RAISES}"
        else:
            what = f"{serializer} writes it, but the keys come back as {verdict.back_as}"
        return Findings(
            (Problem(codes.DICT_KEY, "", self.type_name(mapping), what, verdict.fix),)
        )

    def _key_verdict(self, key: ProperType) -> rules.Verdict | None:
        if isinstance(key, UnionType):
            verdicts = [self._key_verdict(get_proper_type(item)) for item in key.items]
            for outcome in ("raises", "lossy"):
                for verdict in verdicts:
                    if verdict is not None and verdict.outcome == outcome:
                        return verdict
            return rules.OK
        if isinstance(key, LiteralType):
            key = key.fallback
        if isinstance(key, NoneType):
            return rules.OK if self.profile == "msgpack" else rules.JSON_KEY_RULES["builtins.int"]
        if isinstance(key, TupleType):
            if self.profile == "json":
                return rules.raises("use str keys, e.g. a joined string")
            inner = [self._key_verdict(get_proper_type(item)) for item in key.items]
            bad = [v for v in inner if v is not None and v.outcome != "ok"]
            return bad[0] if bad else rules.OK
        if not isinstance(key, Instance):
            return None  # Any, TypeVar: not decidable from the type
        info = key.type
        if info.is_newtype and info.bases:
            return self._key_verdict(info.bases[0])
        if self.safe_types and info.fullname in self.safe_types:
            return rules.OK
        if info.is_enum:
            if self.profile == "msgpack":
                return rules.lossy("the members' values", "use str(member.value) keys")
            if info.has_base("builtins.str") or info.has_base("builtins.int"):
                return rules.lossy("the members' values as str", "use member.value as the key")
            return rules.raises("use member.value as the key")
        table = rules.JSON_KEY_RULES if self.profile == "json" else rules.MSGPACK_KEY_RULES
        verdict = table.get(info.fullname)
        if verdict is not None:
            return verdict
        return rules.raises("use str keys")

    # Classes ---------------------------------------------------------------------------------

    def _enum(self, typ: Instance) -> Findings:
        info = typ.type
        if self.profile == "json":
            for mixin, back_as in (("builtins.str", "str"), ("builtins.int", "int")):
                if info.has_base(mixin):
                    return self._verdict(
                        typ, rules.lossy(back_as, f"store member.value and rebuild it with {info.name}(value)")
                    )
            return self._verdict(
                typ, rules.raises(f"store member.value and rebuild it with {info.name}(value)")
            )
        return _merge([self._importable(typ), self._user_class(typ, "Enum")])

    def _named_tuple(
        self, typ: Instance, tuple_type: TupleType | None, in_model_value: bool
    ) -> Findings:
        info = typ.type
        items = (tuple_type or info.tuple_type)
        fields = [] if items is None else items.items
        names = list(info.metadata.get("namedtuple", {}).get("fields", [])) or [
            str(i) for i in range(len(fields))
        ]
        walked = [
            self._walk(item, in_model_value).under(f".{name}", (info, name))
            for name, item in zip(names, fields)
        ]
        if self.profile == "json":
            own = self._verdict(typ, rules.lossy("list", "store value._asdict() (a dict)"))
            return _merge([own, *walked])
        return _merge([self._importable(typ), self._user_class(typ, "NamedTuple"), *walked])

    def _importable(self, typ: Instance) -> Findings:
        info = typ.type
        if is_top_level(info):
            return NOTHING
        where = "a function body" if "@" in info.fullname else "a class body"
        return self._problem(
            codes.UNIMPORTABLE,
            typ,
            f"it is defined in {where}, so the checkpoint loader cannot re-import it: it comes back as a plain dict",
            f"move class {info.name} to the top level of module {info.module_name}",
        )

    def _user_class(self, typ: Instance, kind: UserClassKind) -> Findings:
        if not self.strict:
            return NOTHING
        return Findings((), (UserClass(typ.type.fullname, kind, "", self.type_name(typ)),))

    def _model(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if self.profile == "json":
            return self._verdict(
                typ,
                rules.raises(
                    f'store value.model_dump(mode="json") and rebuild it with {info.name}.model_validate(data)'
                ),
            )
        if info.has_base(rules.PYDANTIC_ROOT_MODEL):
            return self._verdict(typ, rules.lossy("its root value", "store value.root and declare its type"))
        if typ.args and info.type_vars:
            concrete = f"class {self._concrete_name(typ)}({self.type_name(typ)})"
            return self._problem(
                codes.UNIMPORTABLE,
                typ,
                "a parametrized generic model cannot be re-imported by the checkpoint loader: it comes back as a plain dict",
                f"declare `{concrete}` at module top level and use it",
            )
        own = _merge([self._importable(typ), self._user_class(typ, "pydantic model")])
        return _merge([own, self._class_findings(info, typ, True)])

    def _concrete_name(self, typ: Instance) -> str:
        names = []
        for arg in typ.args:
            proper = get_proper_type(arg)
            names.append(proper.type.name.capitalize() if isinstance(proper, Instance) else "Item")
        return "".join(names) + typ.type.name

    def _dataclass(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if self.profile == "json":
            return self._verdict(
                typ,
                rules.raises(
                    "store dataclasses.asdict(value), or declare a TypedDict instead of the dataclass"
                ),
            )
        own = [self._importable(typ), self._user_class(typ, "dataclass")]
        not_in_init = [
            attr["name"]
            for attr in info.metadata["dataclass"].get("attributes", [])
            if not attr.get("is_in_init", True)
        ]
        if not_in_init:
            own.append(
                self._verdict(
                    typ,
                    rules.lossy(
                        "a dict",
                        f"give field {not_in_init[0]!r} init=True, or keep it out of the dataclass",
                    ),
                )
            )
        return _merge([*own, self._class_findings(info, typ, in_model_value)])

    def _class_findings(
        self, info: TypeInfo, typ: Instance | None, in_model_value: bool
    ) -> Findings:
        """The findings inside a TypedDict, model or dataclass (not for the class itself), memoized."""
        generic = typ is not None and bool(typ.args)
        key = (info.fullname, in_model_value)
        if not generic and key in self._class_memo:
            return self._class_memo[key]
        if key in self._in_progress:  # a recursive class: its first visit reports
            return NOTHING
        self._in_progress.add(key)
        try:
            if info.typeddict_type is not None:
                found = self._typeddict_items(info.typeddict_type, in_model_value, info)
            else:
                found = self._fields(info, typ, in_model_value)
            found = found.touching(info)
        finally:
            self._in_progress.discard(key)
        if not generic:
            self._class_memo[key] = found
        return found

    def _typeddict_items(
        self, typ: TypedDictType, in_model_value: bool, info: TypeInfo | None = None
    ) -> Findings:
        owner = info or typ.fallback.type
        return _merge(
            [
                self._walk(item, in_model_value).under(f".{name}", (owner, name))
                for name, item in typ.items.items()
            ]
        )

    def _fields(self, info: TypeInfo, typ: Instance | None, in_model_value: bool) -> Findings:
        self_type = typ or Instance(info, [AnyType(TypeOfAny.special_form)] * len(info.type_vars))
        parts = []
        for name, var, declared_in in model_fields(info):
            assert var.type is not None
            field_type = var.type
            if declared_in.type_vars:
                field_type = expand_type_by_instance(
                    field_type, map_instance_to_supertype(self_type, declared_in)
                )
            parts.append(
                self._walk(field_type, in_model_value).under(f".{name}", (declared_in, name))
            )
        return _merge(parts)
