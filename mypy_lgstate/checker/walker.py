"""Walks a mypy type and finds every part of it that will not survive a checkpoint.

The walker is pure: it reads declared types (TypedDict items, ``Var`` types of model and dataclass
fields, the MRO) and never function bodies or inferred expression types, so it gives the same answers
in cold, warm, parallel and daemon runs. Verdicts are memoized per walker, for the fields of a class
(by its fullname) and for class types (by fullname, or by the type when it has type arguments);
``forget()`` drops them when the classes they were computed from may have changed (a new ``dmypy``
run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, NamedTuple, TypeVar

from mypy.errorcodes import ErrorCode
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type_bare
from mypy.nodes import LambdaExpr, MypyFile, SymbolNode, TypeInfo, Var
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
    UnpackType,
    UnionType,
    get_proper_type,
)
from mypy.expandtype import expand_type_by_instance

from mypy_lgstate.checker import errorcodes as codes, model_facts
from mypy_lgstate.core import messages, rules
from mypy_lgstate.core.config import LGStateConfig

# Where a problem sits: the classes and fields that declare it, outermost first, each with the length
# of the path from that field on (``.when`` for ``State.items[].when`` anchored at ``Item.when``). The
# plugin reports a problem on the line of the innermost such field that lies in the file being
# checked, under the path from that field's class; the innermost anchor identifies the problem.
Anchor = tuple[TypeInfo, str, int]
UserClassKind = Literal["Enum", "dataclass", "NamedTuple", "pydantic model", "SecretStr", "subclass"]


# The value classes below are NamedTuples: cheap to build, hash and compare, and defined without the
# code generation of dataclasses (the plugin is imported in every mypy run).


class Problem(NamedTuple):
    """One thing the serializer gets wrong, at a path relative to where the walk started."""

    code: ErrorCode
    path: str
    type_name: str
    what: str
    fix: str
    anchors: tuple[Anchor, ...] = ()
    # msgpack: worded apart when it is a channel's whole value (``bytearray``).
    whole_channel_differs: bool = False
    # The innermost recursive type alias the problem lies in, with the length of the path from it:
    # mutually recursive aliases reach the same member by several paths within one field.
    alias: tuple[str, int] | None = None

    def under(self, prefix: str, field: Field | None = None) -> Problem:
        path, anchors = _placed(self.path, self.anchors, prefix, field)
        return self._replace(path=path, anchors=anchors)

    def identity(self, site: object = None) -> tuple[object, ...]:
        """The same problem reached by another path has the same identity: it is reported once.
        ``site``: where it is declared, when the caller knows better than the anchors (the base
        class that declares a TypedDict key)."""
        where = _site(self.path, self.anchors) if site is None else site
        if self.alias is not None and (not self.anchors or self.alias[1] < self.anchors[-1][2]):
            # Inside a recursive alias below the innermost field: the alias declares it.
            name, length = self.alias
            field = (self.anchors[-1][0].fullname, self.anchors[-1][1]) if self.anchors else None
            where = (field, name, self.path[len(self.path) - length:])
        if self.anchors:
            # A declared field: its type is the same wherever it is reached, but for the arguments
            # of a generic class, which a class nesting itself grows at every level (``Node[T]``
            # holding ``Node[list[T]]``): one problem per declaration, named by the first reached.
            return (self.code.code, self.what, self.fix, where)
        return (self.code.code, self.type_name, self.what, where)


class UserClass(NamedTuple):
    """A class the strict msgpack loader only rebuilds when it is on the allowlist."""

    fullname: str
    kind: UserClassKind
    path: str
    type_name: str
    anchors: tuple[Anchor, ...] = ()

    def under(self, prefix: str, field: Field | None = None) -> UserClass:
        path, anchors = _placed(self.path, self.anchors, prefix, field)
        return self._replace(path=path, anchors=anchors)

    def identity(self, site: object = None) -> tuple[object, ...]:
        where = _site(self.path, self.anchors) if site is None else site
        return (self.fullname, self.kind, where)


# A field of a class: (the class, the field's name).
Field = tuple[TypeInfo, str]


def _placed(
    path: str, anchors: tuple[Anchor, ...], prefix: str, field: Field | None
) -> tuple[str, tuple[Anchor, ...]]:
    path = prefix + path
    if field is None:
        return path, anchors
    return path, ((*field, len(path)), *anchors)


def _site(path: str, anchors: tuple[Anchor, ...]) -> object:
    """Where a problem is declared: its innermost field and the path from there, else its path."""
    if not anchors:
        return path
    info, _, length = anchors[-1]
    return info.fullname, path[len(path) - length:]


class Findings(NamedTuple):
    """What a walk found: problems, the classes strict msgpack must allow, and every class it read
    (as ``(module, fullname)``: the plugin tells mypy about them, so that an edit to one rechecks
    the modules whose verdicts depend on it)."""

    problems: tuple[Problem, ...] = ()
    user_classes: tuple[UserClass, ...] = ()
    touched: frozenset[tuple[str, str]] = frozenset()

    def under(self, prefix: str, field: Field | None = None) -> Findings:
        if not self.problems and not self.user_classes:
            return self
        return Findings(
            tuple(p.under(prefix, field) for p in self.problems),
            tuple(c.under(prefix, field) for c in self.user_classes),
            self.touched,
        )

    def touching(self, info: TypeInfo) -> Findings:
        if info.module_name in _STABLE_MODULES:  # never edited: no dependency worth recording
            return self
        key = (info.module_name, info.fullname)
        if key in self.touched:
            return self
        return Findings(self.problems, self.user_classes, self.touched | {key})


NOTHING: Final = Findings()
_Found = TypeVar("_Found", Problem, UserClass)
# Standard-library modules whose classes decide most verdicts (``str``, ``list``, ``datetime``...).
_STABLE_MODULES: Final = frozenset(
    {"builtins", "typing", "typing_extensions", "collections", "collections.abc", "datetime",
     "decimal", "uuid", "pathlib", "enum", "re", "ipaddress", "zoneinfo", "types", "abc"}
)

_RAISES: Final = "raises TypeError when the checkpoint is written"
_SERIALIZER: Final = {"json": "the JSON serializer", "msgpack": "the msgpack serializer"}


def _merge(parts: list[Findings]) -> Findings:
    if not parts:
        return NOTHING
    if len(parts) == 1:
        return parts[0]
    # Most parts found nothing and read classes already read by another part: merge cheaply.
    problems: list[Problem] = []
    classes: list[UserClass] = []
    touched: frozenset[tuple[str, str]] = frozenset()
    for part in parts:
        problems += part.problems
        classes += part.user_classes
        if not part.touched <= touched:
            touched = touched | part.touched if touched else part.touched
    if not problems and not classes:
        return Findings(touched=touched) if touched else NOTHING
    # A class reached by several paths (``inner: Item`` and ``items: list[Item]``) would report its
    # problems once per path, and nested classes multiply the paths: keep the first of each.
    return Findings(_first_of_each(problems), _first_of_each(classes), touched)


def _first_of_each(found: list[_Found]) -> tuple[_Found, ...]:
    first: dict[object, _Found] = {}
    for item in found:
        first.setdefault(item.identity(), item)
    return tuple(first.values())


def channel_values(found: Findings, root: str, *, fields: bool) -> Findings:
    """``found``, with the problems that read otherwise for a channel's whole value reworded: those
    at ``root`` itself, or at its fields (``fields``: ``root`` is a state class or an update type),
    that are worded for a value below the top of a channel."""
    if not any(problem.whole_channel_differs for problem in found.problems):
        return found
    back_as, fix = messages.WHOLE_BYTEARRAY_LOSSY
    whole = f"the msgpack serializer writes it, but it comes back as {back_as}"

    def at_top(problem: Problem) -> bool:
        if not fields:
            return problem.path == root
        return bool(problem.anchors) and problem.path == root + messages.field_part(
            problem.anchors[0][1]
        )

    return found._replace(
        problems=tuple(
            p._replace(what=whole, fix=fix) if p.whole_channel_differs and at_top(p) else p
            for p in found.problems
        )
    )


def _in_alias(found: Findings, alias: str) -> Findings:
    """``found``, the findings of recursive alias ``alias``, marked as declared by it (unless a
    recursive alias inside it already declares them)."""
    return found._replace(
        problems=tuple(
            p if p.alias is not None else p._replace(alias=(alias, len(p.path)))
            for p in found.problems
        )
    )


def _in_field(found: Findings, owner: TypeInfo, name: str) -> Findings:
    """``found``, the findings of the type of field ``name`` of ``owner``, placed under that field."""
    if not found.problems and not found.user_classes:  # the usual case: nothing to move
        return found
    return found.under(messages.field_part(name), (owner, name))


def is_top_level(info: TypeInfo) -> bool:
    """Whether the loader can re-import ``info`` by ``(module, __name__)``."""
    return info.fullname == f"{info.module_name}.{info.name}"


def model_fields(info: TypeInfo) -> list[tuple[str, Var, TypeInfo]]:
    """The fields of a pydantic model or dataclass, in definition order, with their declaring class.

    A dataclass's fields are the ones its ``__init__`` and ``dataclasses.fields()`` know (mypy's
    dataclass metadata), underscore names included; a pydantic model's skip private attributes
    (``_name``), which ``model_dump()`` leaves out.
    """
    metadata = info.metadata.get("dataclass")
    names: set[str] | None = None
    if metadata is not None and "attributes" in metadata:
        names = {attr["name"] for attr in metadata["attributes"] if not attr.get("is_init_var")}
    fields: dict[str, tuple[str, Var, TypeInfo]] = {}
    for base, name, var in instance_attributes(info):
        if names is not None:
            if name not in names:
                continue
        elif name.startswith("_") or name == "model_config":
            continue
        fields[name] = (name, var, base)
    return list(fields.values())


def instance_attributes(
    info: TypeInfo, *, unannotated: bool = False
) -> list[tuple[TypeInfo, str, Var]]:
    """Every annotated instance attribute of a model or dataclass and its bases (what
    ``typing.get_type_hints`` returns, less ``ClassVar``), base classes first; ``unannotated``
    adds those whose type mypy inferred (``_cache = PrivateAttr(...)``)."""
    found: list[tuple[TypeInfo, str, Var]] = []
    for base in reversed(info.mro):
        if base.fullname in rules.PYDANTIC_MODELS or base.fullname == "builtins.object":
            continue
        for name, sym in base.names.items():
            node = sym.node
            if (
                isinstance(node, Var)
                and node.type is not None
                and not node.is_classvar
                and (unannotated or not node.is_inferred)
            ):
                found.append((base, name, node))
    return found


def is_parametrized(typ: Instance) -> bool:
    """``Box[int]`` as opposed to a bare ``Box`` (whose arguments mypy fills with implicit Any)."""
    return any(
        not (isinstance(arg, AnyType) and arg.type_of_any == TypeOfAny.from_omitted_generics)
        for arg in map(get_proper_type, typ.args)
    )


class Walker:
    """Finds the problems of types under one profile.

    ``in_model_value`` is true below a pydantic model that is itself a value (not the state schema):
    the serializer writes ``model_dump()`` there and the loader re-validates it through the model's
    fields, so tuples, nested models, dataclasses, enums and named tuples come back as declared,
    whether or not their own classes can be re-imported or are on the strict allowlist.
    """

    def __init__(
        self,
        config: LGStateConfig,
        options: Options,
        lookup: Callable[[str], SymbolNode | None] = lambda fullname: None,
        module: Callable[[str], MypyFile | None] = lambda name: None,
    ) -> None:
        self.lookup = lookup  # a class by its fullname, in the modules of the build
        self.module = module  # a module of the build by its name
        self.profile = config.profile
        self.strict = config.profile == "msgpack" and config.strict_msgpack
        self.safe_types = frozenset(config.safe_types)
        self.pickle = config.profile == "msgpack" and config.pickle_fallback
        self.options = options
        self.serializer = _SERIALIZER[self.profile]
        self._class_memo: dict[tuple[str, bool], Findings] = {}
        self._instance_memo: dict[tuple[object, bool], Findings] = {}
        # Recursion: a class or alias already being walked contributes nothing where it recurs (its
        # first visit reports). A result computed below such a cut is incomplete on its own, so it
        # is memoized only once every cut it saw belongs to its own subtree: each open walk keeps
        # the set of cuts it saw (innermost last).
        self._in_progress: set[object] = set()
        self._generic_depth: dict[str, int] = {}
        self._cuts: list[set[object]] = []

    # Entry points -------------------------------------------------------------------------------

    def forget(self) -> None:
        """Drop every memoized verdict (the classes they were computed from may have been edited)."""
        self._class_memo.clear()
        self._instance_memo.clear()

    def check_state_class(self, info: TypeInfo) -> Findings:
        """A graph-state schema: each field is a channel, checked on its own; paths start at the class."""
        found = self._class_findings(info, None, in_model_value=False)
        if any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
            found = self._pydantic_state(info, found)
        elif info.typeddict_type is not None and self._annotations_deferred(info.module_name):
            found = _generics_registered(found)
        return channel_values(found.under(info.name), info.name, fields=True)

    def _annotations_deferred(self, module_name: str) -> bool:
        tree = self.module(module_name)
        return tree is not None and tree.is_future_flag_set("annotations")

    def _pydantic_state(self, info: TypeInfo, found: Findings) -> Findings:
        """A pydantic state schema. LangGraph rebuilds it with ``State(**values)`` before each node
        runs, so a tuple is a tuple again inside nodes, at any depth: only the stored form is a list.
        And it
        reads the schema's fields with ``get_type_hints``, so each ``ClassVar`` is a channel too."""
        problems = tuple(
            problem._replace(what=_REVALIDATED.format(serializer=self.serializer))
            if problem.fix == _TUPLE_AS_LIST.fix
            else problem._replace(what=_ENUM_REVALIDATED.format(serializer=self.serializer))
            if problem.code == codes.LOSSY and problem.fix.startswith(messages.ENUM_JSON_FIX_START)
            else problem
            for problem in found.problems
        )
        class_vars = [
            _in_field(self._walk(node.type, in_model_value=False), base, name)
            for base in reversed(info.mro)
            if base.fullname not in rules.PYDANTIC_MODELS and base.fullname != "builtins.object"
            for name, sym in base.names.items()
            if isinstance(node := sym.node, Var)
            and node.is_classvar
            and not node.is_inferred  # get_type_hints() sees annotated ClassVars only
            and node.type is not None
        ]
        # Its value is written only with a whole instance (a node returning the model, or
        # ``invoke(State(...))``), not with a dict update.
        written_with = f"as a channel, written whenever a {info.name} instance is, "
        class_var_problems = tuple(
            problem._replace(what=written_with + problem.what)
            for problem in _merge(class_vars).problems
        )
        return _merge([found._replace(problems=problems), Findings(class_var_problems)])

    def revalidated(self, found: Findings, paths: Sequence[str]) -> Findings:
        """``found``, with a tuple written as the whole value at one of ``paths`` worded as a
        pydantic state schema's tuple field is (``_pydantic_state``)."""
        what = _REVALIDATED.format(serializer=self.serializer)
        return found._replace(
            problems=tuple(
                p._replace(what=what) if p.path in paths and p.fix == _TUPLE_AS_LIST.fix else p
                for p in found.problems
            )
        )

    def check_value(self, typ: Type, path: str, *, channel: bool = False) -> Findings:
        """A value written at a write site (a node update, ``Send``, ``interrupt``, ...);
        ``channel``: the whole value of a channel."""
        found = self._walk(typ, in_model_value=False).under(path)
        if not channel:
            return found
        # A TypedDict update type's fields are the channels' values.
        return channel_values(found, path, fields=isinstance(get_proper_type(typ), TypedDictType))

    def start_input(self, typ: Type, path: str) -> Findings:
        """A model or dataclass passed whole as a graph's input (``graph.invoke(State(...))``):
        LangGraph keeps the object itself as the ``__start__`` channel's value, which the JSON
        serializer cannot write even when every field is JSON-clean."""
        proper = get_proper_type(typ)
        if self.profile != "json" or not isinstance(proper, Instance):
            return NOTHING
        is_model = any(base.fullname in rules.PYDANTIC_MODELS for base in proper.type.mro)
        dump = "value.model_dump()" if is_model else "dataclasses.asdict(value)"
        return Findings((Problem(
            codes.UNSERIALIZABLE, path, self.type_name(typ), messages.START_INPUT_WHAT,
            messages.start_input_fix(dump),
        ),))

    def type_name(self, typ: Type) -> str:
        return format_type_bare(typ, self.options)

    # The walk ----------------------------------------------------------------------------------

    def _problem(self, code: ErrorCode, typ: Type, what: str, fix: str) -> Findings:
        return Findings((Problem(code, "", self.type_name(typ), what, fix),))

    def _pickled(self, typ: Type) -> Findings:
        """What ``pickle_fallback`` makes of a value msgpack cannot write (rules.py, PICKLED)."""
        proper = get_proper_type(typ)
        if isinstance(proper, TypeType):
            item = get_proper_type(proper.item)
            if isinstance(item, Instance) and is_top_level(item.type):
                return NOTHING  # pickled by reference
            return self._pickle_unverifiable(proper)
        if isinstance(proper, CallableType):
            if isinstance(proper.definition, LambdaExpr):
                return self._problem(
                    codes.UNSERIALIZABLE, typ, f"{self.serializer} raises PicklingError when the"
                    " checkpoint is written (pickle cannot write a lambda either)",
                    rules.CALLABLE_FIX,
                )
            if proper.is_type_obj() and is_top_level(proper.type_object()):
                return NOTHING
            return self._pickle_unverifiable(proper)  # a module-level function pickles, a lambda not
        if isinstance(proper, Instance):
            names = {base.fullname for base in proper.type.mro}
            if names & rules.NOT_PICKLABLE:
                return self._problem(
                    codes.UNSERIALIZABLE, typ,
                    f"{self.serializer} {_RAISES} (pickle cannot write it either)",
                    rules.PICKLE_RAISES_FIX,
                )
            if names & rules.PICKLED:
                return NOTHING
        return self._pickle_unverifiable(proper)

    def _pickle_unverifiable(self, typ: ProperType) -> Findings:
        return self._problem(
            codes.ANY, typ, messages.PICKLE_UNVERIFIABLE_WHAT, messages.PICKLE_UNVERIFIABLE_FIX
        )

    def _verdict(self, typ: Type, verdict: rules.Verdict) -> Findings:
        if self.pickle and verdict.outcome == "raises":
            return self._pickled(typ)
        if verdict.outcome == "ok":
            return NOTHING
        if verdict.outcome == "raises":
            return self._problem(codes.UNSERIALIZABLE, typ, f"{self.serializer} {_RAISES}", verdict.fix)
        return self._problem(
            codes.LOSSY,
            typ,
            f"{self.serializer} writes it, but it comes back as {verdict.back_as}",
            verdict.fix,
        )

    def _walk(self, typ: Type, in_model_value: bool) -> Findings:
        if type(typ) is Instance:  # most walks end at a class: skip the dispatch below
            return self._instance(typ, in_model_value)
        if isinstance(typ, TypeAliasType):
            key = (typ, in_model_value)
            if self._cut(key):
                return NOTHING
            self._open(key)
            try:
                found = self._walk_proper(get_proper_type(typ), in_model_value)
            finally:
                self._close(key)
            if typ.alias is not None and typ.alias.fullname == _MESSAGE_LIKE:
                found = _message_like(found)
            if typ.is_recursive and typ.alias is not None and found.problems:
                found = _in_alias(found, typ.alias.fullname)
            return found
        return self._walk_proper(get_proper_type(typ), in_model_value)

    def _cut(self, key: object) -> bool:
        """Whether ``key`` is already being walked (recording the cut for the walks around it)."""
        if key not in self._in_progress:
            return False
        if self._cuts:
            self._cuts[-1].add(key)
        return True

    def _open(self, key: object | None) -> None:
        if key is not None:
            self._in_progress.add(key)
        self._cuts.append(set())

    def _close(self, key: object | None) -> bool:
        """End the walk of ``key``; whether its result is complete (every cut below it resolved)."""
        cuts = self._cuts.pop()
        if key is not None:
            self._in_progress.discard(key)
            cuts.discard(key)
        if self._cuts:
            self._cuts[-1] |= cuts
        return not cuts

    def _walk_proper(self, typ: ProperType, in_model_value: bool) -> Findings:
        # The most frequent kinds first.
        if isinstance(typ, Instance):
            return self._instance(typ, in_model_value)
        if isinstance(typ, TypedDictType):
            info = typ.fallback.type
            if info.is_generic() or not info.typeddict_type:
                return self._typeddict_items(typ, in_model_value).touching(info)
            return self._class_findings(info, None, in_model_value)
        if isinstance(typ, UnionType):
            return _merge([self._walk(item, in_model_value) for item in typ.items])
        if isinstance(typ, (NoneType, UninhabitedType)):
            return NOTHING
        if isinstance(typ, LiteralType):
            # The value is an instance of the fallback: a str, int, bool, bytes or Enum member.
            return self._walk_proper(typ.fallback, in_model_value)
        if isinstance(typ, AnyType):
            if typ.type_of_any in (TypeOfAny.from_error, TypeOfAny.implementation_artifact):
                return NOTHING  # mypy has already reported the cause
            return self._unverifiable(typ)
        if isinstance(typ, (TypeVarType, ParamSpecType, TypeVarTupleType)):
            return self._unverifiable(typ)
        if isinstance(typ, (CallableType, Overloaded)):
            if (
                self.profile == "msgpack"
                and typ.is_type_obj()
                and _defaults_only(typ.type_object())
            ):
                return self._verdict(typ, rules.lossy(*messages.DATACLASS_CLASS_LOSSY))
            fix = rules.CLASS_FIX if typ.is_type_obj() else rules.CALLABLE_FIX
            return self._verdict(typ, rules.raises(fix))
        if isinstance(typ, TypeType):
            item = get_proper_type(typ.item)
            if self.profile == "msgpack" and isinstance(item, Instance) and _defaults_only(item.type):
                return self._verdict(typ, rules.lossy(*messages.DATACLASS_CLASS_LOSSY))
            return self._verdict(typ, rules.raises(rules.CLASS_FIX))
        if isinstance(typ, TupleType):
            if typ.partial_fallback.type.is_named_tuple:
                fallback = typ.partial_fallback
                return self._named_tuple(fallback, typ, in_model_value).touching(fallback.type)
            return self._tuple(typ, typ.items, in_model_value, fixed=True)
        return NOTHING

    def _unverifiable(self, typ: ProperType) -> Findings:
        return self._problem(
            codes.ANY,
            typ,
            f"its values cannot be checked against {self.serializer}",
            "declare a precise type",
        )

    def _tuple(
        self,
        typ: ProperType,
        items: Sequence[Type],
        in_model_value: bool,
        *,
        fixed: bool,
        report_self: bool = True,
    ) -> Findings:
        parts: list[Findings] = []
        if report_self and (self.profile == "json" or not in_model_value):
            parts.append(self._verdict(typ, _TUPLE_AS_LIST))
        if fixed and len(items) > 1 and all(item == items[0] for item in items[1:]):
            # ``tuple[datetime, datetime]``: one problem with one fix, said once for every item.
            items, fixed = items[:1], False
        for index, item in enumerate(items):
            if isinstance(item, UnpackType):  # ``tuple[int, *tuple[X, ...]]``: the X items
                inner = get_proper_type(item.type)
                variadic = inner.args[:1] if isinstance(inner, Instance) else []
                for each in inner.items if isinstance(inner, TupleType) else variadic:
                    parts.append(self._walk(each, in_model_value).under("[]"))
                continue
            parts.append(self._walk(item, in_model_value).under(f"[{index}]" if fixed else "[]"))
        return _merge(parts)

    def _instance(self, typ: Instance, in_model_value: bool) -> Findings:
        # Decide each class once (by name, without type arguments: the leaves of most walks), and
        # each parametrized type once (``list[str]``; mypy caches the hash of a type).
        key: tuple[object, bool] = (typ if typ.args else typ.type.fullname, in_model_value)
        found = self._instance_memo.get(key)
        if found is None:
            self._open(None)
            try:
                found = self._decide_instance(typ, in_model_value).touching(typ.type)
            finally:
                complete = self._close(None)
            if complete:
                self._instance_memo[key] = found
        return found

    def _decide_instance(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        fullname = info.fullname
        if info.is_newtype and info.bases:
            return self._walk(info.bases[0], in_model_value)
        if self._is_safe_type(info):
            return NOTHING
        if fullname in rules.ANY_CLASSES:
            return self._unverifiable(typ)
        if fullname in rules.SEQUENCES:
            return self._items(typ, in_model_value)
        if fullname in rules.MAPPINGS:
            return self._mapping(typ, in_model_value)
        if fullname in rules.SETS:
            return self._set(typ, in_model_value)
        if fullname == rules.DEQUE:
            own = self._verdict(typ, _JSON_NO_DEQUE) if self.profile == "json" else NOTHING
            return _merge([own, self._items(typ, in_model_value)])
        if fullname == "builtins.tuple":
            return self._tuple(typ, typ.args[:1], in_model_value, fixed=False)
        if info.is_protocol and fullname not in rules.RAISING_PROTOCOLS:
            # ``Iterable[str]``, or the ``Collection[str]`` mypy joins a str and a list into: some
            # values of the type survive a checkpoint, others do not.
            return self._unverifiable(typ)
        if info.is_enum:
            return self._enum(typ, in_model_value)
        if info.is_named_tuple:
            return self._named_tuple(typ, None, in_model_value)
        for base in info.mro:
            rule = rules.TYPE_RULES.get(base.fullname)
            if rule is not None:
                found = self._verdict(typ, rule.verdict(self.profile, exact=base is info))
                if self.profile == "msgpack" and base.fullname in rules.WHOLE_CHANNEL_DIFFERS:
                    found = found._replace(
                        problems=tuple(p._replace(whole_channel_differs=True) for p in found.problems)
                    )
                if self.profile == "msgpack" and base.fullname in rules.LANGCHAIN_MODELS:
                    # LangChain's own classes are loaded without an allowlist entry; a user's
                    # subclass is an ordinary pydantic model to the loader.
                    if fullname not in rules.STRICT_SAFE_CLASSES:
                        found = _merge(
                            [found, self._importable(typ, in_model_value),
                             self._user_class(typ, "pydantic model", in_model_value)]
                        )
                elif base.fullname in rules.SECRET_TYPES:
                    found = _merge([found, self._user_class(typ, "SecretStr", in_model_value)])
                elif base is not info and base.fullname in rules.REBUILT_BY_CLASS_NAME:
                    found = _merge([found, self._user_class(typ, "subclass", in_model_value)])
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

    def _is_safe_type(self, info: TypeInfo) -> bool:
        return any(base.fullname in self.safe_types for base in info.mro) if self.safe_types else False

    def _items(self, typ: Instance, in_model_value: bool) -> Findings:
        if not typ.args:
            return NOTHING
        return self._walk(typ.args[0], in_model_value).under("[]")

    def _set(self, typ: Instance, in_model_value: bool) -> Findings:
        if self.profile == "json":
            return _merge([self._verdict(typ, _JSON_NO_SETS), self._items(typ, in_model_value)])
        if not typ.args:
            return NOTHING
        # The loader rebuilds a set from its items; tuples come back as lists, which are not
        # hashable, so the whole set comes back as the list of lists that was written.
        item = get_proper_type(typ.args[0])
        members = item.items if isinstance(item, UnionType) else [item]
        parts = []
        has_tuple = False
        for member in members:
            proper = get_proper_type(member)
            if isinstance(proper, TupleType) and not proper.partial_fallback.type.is_named_tuple:
                has_tuple = True
                parts.append(self._tuple(proper, proper.items, in_model_value, fixed=True,
                                         report_self=False).under("[]"))
            elif isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple":
                has_tuple = True
                parts.append(self._tuple(proper, proper.args[:1], in_model_value, fixed=False,
                                         report_self=False).under("[]"))
            else:
                parts.append(self._walk(member, in_model_value).under("[]"))
        if has_tuple and not in_model_value:
            parts.insert(0, self._verdict(typ, rules.lossy(
                "a list of lists",
                "store a list of lists and rebuild the set of tuples when you read it",
            )))
        return _merge(parts)

    def _mapping(self, typ: Instance, in_model_value: bool) -> Findings:
        if len(typ.args) != 2:
            return NOTHING
        key, value = typ.args
        return _merge([self._key(key, typ), self._walk(value, in_model_value).under("{}")])

    # Dict keys -------------------------------------------------------------------------------

    def _key(self, key: Type, mapping: Instance) -> Findings:
        verdict = self._key_verdict(get_proper_type(key))
        if verdict is None or verdict.outcome == "ok":
            return NOTHING
        if verdict.outcome == "raises":
            what = f"{self.serializer} {_RAISES}"
        else:
            what = f"{self.serializer} writes it, but the keys come back as {verdict.back_as}"
        return self._problem(codes.DICT_KEY, mapping, what, verdict.fix)

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
                return rules.raises("use str keys, e.g. the parts joined into one str")
            inner = [self._key_verdict(get_proper_type(item)) for item in key.items]
            bad = [v for v in inner if v is not None and v.outcome != "ok"]
            return bad[0] if bad else rules.OK
        if not isinstance(key, Instance):
            return None  # Any, TypeVar: not decidable from the type
        info = key.type
        if info.is_newtype and info.bases:
            return self._key_verdict(info.bases[0])
        if self._is_safe_type(info) and self.profile != "json":
            # json.dumps never calls a serializer's hook for a key: a safe type is no safe key.
            return rules.OK
        if info.is_enum:
            if self.profile == "msgpack":
                return rules.lossy("the members' values", "use member.value as the key")
            if any(info.has_base(mixin) for mixin, _ in rules.JSON_VALUE_MIXINS):
                return rules.lossy("the members' values as str", "use str(member.value) as the key")
            return rules.raises("use member.value as the key")
        table = rules.JSON_KEY_RULES if self.profile == "json" else rules.MSGPACK_KEY_RULES
        verdict = table.get(info.fullname)
        if verdict is not None:
            return verdict
        subclasses = (
            rules.JSON_SUBCLASS_KEY_RULES if self.profile == "json"
            else rules.MSGPACK_SUBCLASS_KEY_RULES
        )
        for base in info.mro[1:]:
            if base.fullname in subclasses:
                return subclasses[base.fullname]
        return rules.raises("use str keys")

    # Classes ---------------------------------------------------------------------------------

    def _enum(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if self.profile == "json":
            fix = f"{messages.ENUM_JSON_FIX_START}{info.name}(value)"
            for mixin, back_as in rules.JSON_VALUE_MIXINS:
                if info.has_base(mixin):
                    return self._verdict(typ, rules.lossy(back_as, fix))
            return self._verdict(typ, rules.raises(fix))
        own = [self._importable(typ, in_model_value), self._user_class(typ, "Enum", in_model_value)]
        tuple_member = next(
            (
                name
                for name, sym in info.names.items()
                if isinstance(sym.node, Var)
                and sym.node.is_inferred
                and isinstance(get_proper_type(sym.node.type), TupleType)
                and not name.startswith("_")
            ),
            None,
        )
        if tuple_member is not None:
            # The member is written as its value, which comes back as a list: no member has that.
            own.append(self._verdict(typ, rules.lossy(*messages.enum_tuple_lossy(tuple_member))))
        function_member = next(
            (
                name
                for name, sym in info.names.items()
                if isinstance(sym.node, Var) and _is_function_member(sym.node.type)
            ),
            None,
        )
        if function_member is not None:
            # ``A = enum.member(func)``: written as its value, which msgpack cannot encode.
            own.append(self._verdict(
                typ, rules.raises(messages.enum_function_member_fix(function_member))
            ))
        return _merge(own)

    def _named_tuple(
        self, typ: Instance, tuple_type: TupleType | None, in_model_value: bool
    ) -> Findings:
        info = typ.type
        items = tuple_type or info.tuple_type
        fields = [] if items is None else items.items
        names = list(info.metadata.get("namedtuple", {}).get("fields", [])) or [
            str(i) for i in range(len(fields))
        ]
        walked = [
            _in_field(self._walk(item, in_model_value), info, name)
            for name, item in zip(names, fields)
        ]
        if self.profile == "json":
            own = self._verdict(typ, rules.lossy("list", "store value._asdict() (a dict)"))
            return _merge([own, *walked])
        return _merge(
            [self._importable(typ, in_model_value),
             self._user_class(typ, "NamedTuple", in_model_value), *walked]
        )

    def _importable(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if in_model_value or is_top_level(info):
            return NOTHING
        where = "a function body" if "@" in info.fullname else "a class body"
        payload = "its value" if info.is_enum else "a plain dict"
        shadowed = self.lookup(f"{info.module_name}.{info.name}")
        if isinstance(shadowed, TypeInfo) and shadowed is not info:
            # The loader imports (module, __name__), never __qualname__: it finds the other class.
            return self._problem(
                codes.UNIMPORTABLE,
                typ,
                f"it is defined in {where}, so the checkpoint loader re-imports"
                f" {shadowed.fullname}, the top-level class of the same name, instead: it comes back"
                f" as that class built from its fields, or as {payload} when that fails",
                f"move class {info.name} to the top level of module {info.module_name}, under a"
                " name of its own",
            )
        return self._problem(
            codes.UNIMPORTABLE,
            typ,
            f"it is defined in {where}, so the checkpoint loader cannot re-import it: it comes back"
            f" as {payload}",
            f"move class {info.name} to the top level of module {info.module_name}",
        )

    def _user_class(self, typ: Instance, kind: UserClassKind, in_model_value: bool) -> Findings:
        # A class that cannot be re-imported is reported as such; no allowlist entry would help.
        if not self.strict or in_model_value or not is_top_level(typ.type):
            return NOTHING
        return Findings((), (UserClass(typ.type.fullname, kind, "", self.type_name(typ)),))

    def _model(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if self.profile == "json":
            return self._verdict(typ, rules.raises(messages.model_json_fix(info.name)))
        fields = self._class_findings(info, typ, True)
        facts = model_facts.facts_of(info)
        if facts is not None and facts.allows_extra:
            extra = self._problem(
                codes.ANY, typ, messages.extra_allowed_what(self.serializer),
                messages.EXTRA_ALLOWED_FIX,
            )
            fields = _merge([extra, fields])
        if in_model_value:
            return fields
        if info.has_base(rules.PYDANTIC_ROOT_MODEL):
            root_info = next(b for b in info.mro if b.fullname == rules.PYDANTIC_ROOT_MODEL)
            mapped = map_instance_to_supertype(typ, root_info)
            root = get_proper_type(mapped.args[0]) if mapped.args else None
            if (
                isinstance(root, TypedDictType)
                or isinstance(root, Instance) and root.type.fullname in rules.MAPPINGS
            ):
                # Any other dict rebuilds the model, from items that are validated again.
                return _merge(
                    [self._verdict(typ, rules.lossy(*messages.ROOT_DICT_MODEL_LOSSY)), fields]
                )
            return self._verdict(typ, rules.lossy(*messages.ROOT_MODEL_LOSSY))
        if is_parametrized(typ):
            unimportable = self._problem(
                codes.UNIMPORTABLE,
                typ,
                messages.GENERIC_MODEL_UNIMPORTABLE,
                self._generic_fix(typ),
            )
            return _merge([unimportable, fields])
        own = _merge(
            [self._importable(typ, False), self._user_class(typ, "pydantic model", False)]
        )
        return _merge([own, fields, self._private_attributes(info), self._rebuilt(typ)])

    def _rebuilt(self, typ: Instance) -> Findings:
        """What the class body makes of the loader's ``cls(**model_dump())`` (see model_facts)."""
        info = typ.type
        facts = model_facts.facts_of(info)
        if facts is None:
            return NOTHING
        if facts.serializer:
            return self._verdict(typ, rules.lossy(*messages.MODEL_SERIALIZER_LOSSY))
        reason = facts.falls_back
        if reason is None and facts.strict:
            reason = next(
                (messages.strict_field_fallback(name) for name, var, _ in model_fields(info)
                 if _strict_rejects(var.type)),
                None,
            )
        if reason is not None:
            if not any(not has_default for has_default in facts.excluded.values()) and not any(
                _needs_validation(var.type) for _, var, _ in model_fields(info)
            ):
                return NOTHING  # built without validation, but from values that need none
            return self._verdict(typ, rules.lossy(*messages.fallback_lossy(reason)))
        parts = []
        for name, var, declared_in in model_fields(info):
            assert var.type is not None
            if name in facts.excluded:
                verdict = rules.lossy(*messages.EXCLUDED_FIELD_LOSSY)
            elif name in facts.aliased and not facts.by_name:
                verdict = rules.lossy(*messages.ALIASED_FIELD_LOSSY)
            else:
                continue
            parts.append(_in_field(self._verdict(var.type, verdict), declared_in, name))
        return _merge(parts)

    def _private_attributes(self, info: TypeInfo) -> Findings:
        """A model's private attributes (``_cache: int = PrivateAttr()``): ``model_dump()`` leaves
        them out, so they are not in the checkpoint."""
        return _merge([
            _in_field(self._verdict(var.type, _PRIVATE_DROPPED), base, name)
            for base, name, var in instance_attributes(info, unannotated=True)
            if name.startswith("_") and not name.startswith("__") and var.type is not None
        ])

    def _generic_fix(self, typ: Instance) -> str:
        """Declare a concrete subclass: the one that exists (``class IntBox(Box[int])`` at the top
        level of the generic's module), or a new one under a name no class there has."""
        name = self._concrete_name(typ)
        module = typ.type.module_name
        for candidate in (name, *(f"{name}{n}" for n in range(2, 10))):
            existing = self.lookup(f"{module}.{candidate}")
            if not isinstance(existing, TypeInfo):
                return messages.generic_model_fix(f"class {candidate}({self.type_name(typ)})")
            if is_top_level(existing) and any(
                isinstance(base, Instance) and base == typ for base in existing.bases
            ):
                return messages.generic_subclass_fix(existing.fullname, self.type_name(typ))
        return messages.generic_model_fix(f"class {name}Model({self.type_name(typ)})")

    def _concrete_name(self, typ: Instance) -> str:
        return "".join(_name_part(arg) for arg in typ.args) + typ.type.name

    def _dataclass(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if self.profile == "json":
            return self._verdict(typ, rules.raises(messages.DATACLASS_JSON_FIX))
        own = [
            self._importable(typ, in_model_value),
            self._user_class(typ, "dataclass", in_model_value),
        ]
        not_in_init = [
            attr["name"]
            for attr in info.metadata["dataclass"].get("attributes", [])
            if not attr.get("is_in_init", True) and not attr.get("is_init_var")
        ]
        init_vars = [
            attr for attr in info.metadata["dataclass"].get("attributes", []) if attr.get("is_init_var")
        ]
        required = [attr["name"] for attr in init_vars if not attr.get("has_default")]
        if init_vars:
            name = required[0] if required else init_vars[0]["name"]
            verdict = rules.lossy(*messages.init_var_lossy(name, bool(required)))
            own.append(self._verdict(typ, verdict))
        if not_in_init:
            # The loader calls cls(**fields), which rejects a field that __init__ does not take.
            verdict = rules.lossy(*messages.not_in_init_lossy(not_in_init[0]))
            own.append(self._verdict(typ, verdict))
        return _merge([*own, self._class_findings(info, typ, in_model_value)])

    def _class_findings(
        self, info: TypeInfo, typ: Instance | None, in_model_value: bool
    ) -> Findings:
        """The findings inside a TypedDict, model or dataclass (not for the class itself), memoized."""
        generic = typ is not None and bool(typ.args)
        memo_key = (info.fullname, in_model_value)
        if not generic and memo_key in self._class_memo:
            return self._class_memo[memo_key]
        key: object = (info.fullname, in_model_value, typ.args if typ is not None else ())
        depth = self._generic_depth.get(info.fullname, 0)
        # A generic class whose fields nest it with ever larger arguments (Node[list[T]] inside
        # Node[T]) would never recur exactly: stop it after a few levels.
        if self._cut(key):
            return NOTHING
        if depth >= _MAX_GENERIC_DEPTH:
            if self._cuts:
                self._cuts[-1].add(key)  # never resolved: nothing above it is memoized
            return NOTHING
        self._open(key)
        self._generic_depth[info.fullname] = depth + 1
        try:
            if info.typeddict_type is not None:
                found = self._typeddict_items(info.typeddict_type, in_model_value, info)
            else:
                found = self._fields(info, typ, in_model_value)
            found = found.touching(info)
        finally:
            self._generic_depth[info.fullname] = depth
            complete = self._close(key)
        if not generic and complete:
            self._class_memo[memo_key] = found
        return found

    def _typeddict_items(
        self, typ: TypedDictType, in_model_value: bool, info: TypeInfo | None = None
    ) -> Findings:
        owner = info or typ.fallback.type
        return _merge(
            [_in_field(self._walk(item, in_model_value), owner, name) for name, item in typ.items.items()]
        )

    def _fields(self, info: TypeInfo, typ: Instance | None, in_model_value: bool) -> Findings:
        self_type = typ or Instance(info, [AnyType(TypeOfAny.special_form)] * len(info.type_vars))
        # ``model_dump()`` leaves out excluded fields: what they hold is never serialized.
        facts = model_facts.facts_of(info) if in_model_value and self.profile == "msgpack" else None
        parts = []
        for name, var, declared_in in model_fields(info):
            if facts is not None and name in facts.excluded:
                continue
            assert var.type is not None
            field_type = var.type
            if declared_in.type_vars:
                field_type = expand_type_by_instance(
                    field_type, map_instance_to_supertype(self_type, declared_in)
                )
            parts.append(_in_field(self._walk(field_type, in_model_value), declared_in, name))
        return _merge(parts)


_MAX_GENERIC_DEPTH: Final = 8

def _generics_registered(found: Findings) -> Findings:
    """The findings of a TypedDict schema whose module has ``from __future__ import annotations``.

    ``StateGraph(...)`` evaluates the schema's annotations with ``get_type_hints`` in its module's
    namespace, at module level as far as pydantic can tell: pydantic then registers each
    parametrized generic model those annotations create (``Box[int]``) in that module, under its
    own name, and the loader re-imports it. This holds for the schema's own keys only (not for the
    fields of the classes they hold, which LangGraph never evaluates), so only a problem with one
    field above it is dropped.
    """
    kept = tuple(
        problem for problem in found.problems
        if not (problem.what == messages.GENERIC_MODEL_UNIMPORTABLE and len(problem.anchors) == 1)
    )
    return found if len(kept) == len(found.problems) else found._replace(problems=kept)


def _needs_validation(typ: Type | None, depth: int = 0) -> bool:
    """Whether a value of ``typ`` changes when a model is built without validation from its
    ``model_dump()``: nested models and dataclasses are dicts there, tuples are lists."""
    proper = get_proper_type(typ)
    if depth > 4 or proper is None:
        return False
    if isinstance(proper, TupleType):
        return True
    if isinstance(proper, UnionType):
        return any(_needs_validation(item, depth + 1) for item in proper.items)
    if isinstance(proper, TypedDictType):
        return any(_needs_validation(item, depth + 1) for item in proper.items.values())
    if isinstance(proper, Instance):
        info = proper.type
        if info.fullname == "builtins.tuple" or "dataclass" in info.metadata or any(
            base.fullname in rules.PYDANTIC_MODELS for base in info.mro
        ):
            return True
        return any(_needs_validation(arg, depth + 1) for arg in proper.args)
    return False


def _defaults_only(info: TypeInfo) -> bool:
    """A (non-pydantic) dataclass whose fields all have defaults, as mypy's dataclass metadata says
    (which does not tell a default_factory apart: the message says so)."""
    metadata = info.metadata.get("dataclass")
    if metadata is None or any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
        return False
    attributes = metadata.get("attributes", [])
    return all(attr.get("has_default") for attr in attributes if not attr.get("is_init_var"))


def _is_function_member(typ: Type | None) -> bool:
    """``enum.member[def ()]``: the type mypy gives ``A = enum.member(func)`` in an Enum body."""
    proper = get_proper_type(typ)
    return (
        isinstance(proper, Instance)
        and proper.type.fullname == "enum.member"
        and len(proper.args) == 1
        and isinstance(get_proper_type(proper.args[0]), CallableType)
    )


def _strict_rejects(typ: Type | None, depth: int = 0) -> bool:
    """Whether ``strict=True`` rejects what a value of ``typ`` is written as: a tuple comes back as
    a list, a dataclass as a dict (a nested model is validated by its own configuration)."""
    proper = get_proper_type(typ)
    if depth > 4 or proper is None:
        return False
    if isinstance(proper, TupleType):
        return True
    if isinstance(proper, UnionType):
        return any(_strict_rejects(item, depth + 1) for item in proper.items)
    if isinstance(proper, Instance):
        info = proper.type
        if any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro):
            return False  # mypy marks models "dataclass" too (dataclass_transform)
        if info.fullname == "builtins.tuple" or "dataclass" in info.metadata:
            return True
        return any(_strict_rejects(arg, depth + 1) for arg in proper.args)
    return False


_PRIVATE_DROPPED: Final = rules.lossy(*messages.PRIVATE_ATTRIBUTE_LOSSY)
_REVALIDATED: Final = (
    "{serializer} writes it as a list: nodes get a tuple (LangGraph re-validates the state before"
    " each node), but get_state() shows a list"
)
_ENUM_REVALIDATED: Final = (
    "{serializer} writes it as its value: nodes get the enum (LangGraph re-validates the state"
    " before each node), but get_state() and the graph's output show the bare value"
)
_TUPLE_AS_LIST: Final = rules.lossy("list", "store a list and declare it as list[...]")
# LangChain's union of message forms (a message, a str, a (role, content) tuple, a dict).
_MESSAGE_LIKE: Final = "langchain_core.messages.utils.MessageLikeRepresentation"


def _message_like(found: Findings) -> Findings:
    """A (role, content) tuple of a ``MessageLikeRepresentation``: named by the union, and fixed by
    declaring messages, which a list of lists would not be."""
    return found._replace(problems=tuple(
        problem._replace(
            type_name="MessageLikeRepresentation",
            what=problem.what.replace("it comes back", "a (role, content) tuple comes back"),
            fix="declare it as list[AnyMessage], and store messages",
        )
        if problem.path == "" and problem.fix == _TUPLE_AS_LIST.fix
        else problem
        for problem in found.problems
    ))
_JSON_NO_SETS: Final = rules.raises("store a sorted list instead")
_JSON_NO_DEQUE: Final = rules.raises("store a list instead")


def _name_part(arg: Type) -> str:
    """A PascalCase name for a type argument, for the concrete subclass a fix suggests."""
    proper = get_proper_type(arg)
    if isinstance(proper, Instance):
        name = proper.type.name
        return name[:1].upper() + name[1:] + "".join(_name_part(a) for a in proper.args)
    if isinstance(proper, TypedDictType):
        return proper.fallback.type.name
    if isinstance(proper, NoneType):
        return "None"
    if isinstance(proper, UnionType):
        return "Or".join(_name_part(item) for item in proper.items)
    if isinstance(proper, TupleType):
        return "Tuple"
    return "Item"
