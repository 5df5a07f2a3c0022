"""Walks a mypy type and finds every part of it that will not survive a checkpoint.

The walker is pure: it reads declared types (TypedDict items, ``Var`` types of model and dataclass
fields, the MRO) and never function bodies or inferred expression types, so it gives the same answers
in cold, warm, parallel and daemon runs. Verdicts are memoized per walker, for the fields of a class
(by its fullname) and for class types (by fullname, or by the type when it has type arguments);
``forget()`` drops them when the classes they were computed from may have changed (a new ``dmypy``
run).

This module holds the walk itself: the dispatch on the kind of a type, the memos, the cuts of
recursive types, and the classes decided by the row of ``rules.py`` their MRO reaches. Each family
the rules decide by its shape has its judge: ``containers.py`` (lists, tuples, sets, dicts and their
keys), ``models.py`` (pydantic models, dataclasses, TypedDicts, NamedTuples), ``enums.py`` and
``generics.py`` (what the loader can re-import, parametrized generic models).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from mypy.errorcodes import ErrorCode
from mypy.messages import format_type_bare
from mypy.nodes import LambdaExpr, MypyFile, SymbolNode, TypeInfo
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
)

from mypy_lgstate.checker import containers, enums, errorcodes as codes, generics, models
from mypy_lgstate.checker.findings import (
    NOTHING,
    Findings,
    Problem,
    UserClass,
    UserClassKind,
    channel_values,
    in_alias,
    merge,
)
from mypy_lgstate.core import messages, rules
from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.routes.agents import STRUCTURED_RESPONSE
from mypy_lgstate.routes.aliases import proper_type

AGENT_STATE: Final = "langchain.agents.middleware.types.AgentState"


class Walker:
    """Finds the problems of types under one profile.

    The judges (``containers``, ``models``, ``enums``, ``generics``) walk what a type holds with
    ``walk`` and word what they decide with ``verdict`` and ``problem``.

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
        # Under json every enum is already written as its value; under msgpack only the PostgreSQL
        # savers store a whole channel's enum member so (``inlined``).
        self.saver = config.saver
        self.inlines = config.profile == "msgpack" and config.saver == "postgres"
        self.options = options
        self.serializer = messages.SERIALIZERS[self.profile]
        self._class_memo: dict[tuple[str, bool], Findings] = {}
        self._instance_memo: dict[tuple[object, bool], Findings] = {}
        self._inlined_memo: dict[str, Findings] = {}
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
        self._inlined_memo.clear()

    def check_state_class(self, info: TypeInfo) -> Findings:
        """A graph-state schema: each field is a channel, checked on its own; paths start at the class."""
        found = self.class_findings(info, None, in_model_value=False)
        if STRUCTURED_RESPONSE in (info.typeddict_type.items if info.typeddict_type else ()):
            found = self._without_agent_response(info, found)
        if models.is_pydantic(info):
            found = models.pydantic_state(self, info, found)
        elif info.typeddict_type is not None and self._annotations_deferred(info.module_name):
            found = generics.registered_with_deferred_annotations(found)
        if self.inlines:
            found = enums.with_inlined(found, self.inlined(info))
        return channel_values(found.under(info.name), info.name, fields=True, saver=self.saver)

    def inlined(self, info: TypeInfo) -> Findings:
        """The fields of graph-state class ``info`` whose whole value a PostgreSQL saver stores
        inline as JSON: an enum with a ``str``, ``int`` or ``float`` mixin (``enums.inlined``).
        Paths start below the class, as ``class_findings``'s do."""
        found = self._inlined_memo.get(info.fullname)
        if found is None:
            found = self._inlined_memo[info.fullname] = enums.inlined(self, info)
        return found

    def _without_agent_response(self, info: TypeInfo, found: Findings) -> Findings:
        """``found``, the findings of a subclass of LangChain's ``AgentState``, without its
        ``structured_response``: declared by ``AgentState`` with a type variable that the class
        leaves unbound (``Any``), it holds what ``create_agent(response_format=...)`` parses,
        which is checked at that call."""
        agent_state = self.lookup(AGENT_STATE)
        assert info.typeddict_type is not None
        if not (
            isinstance(agent_state, TypeInfo)
            and agent_state.typeddict_type is not None
            and agent_state.typeddict_type.items.keys() <= info.typeddict_type.items.keys()
            and isinstance(
                proper_type(info.typeddict_type.items[STRUCTURED_RESPONSE]),
                (AnyType, TypeVarType),
            )
        ):
            return found
        return found._replace(problems=tuple(
            problem for problem in found.problems
            if not (problem.anchors and problem.anchors[0][1] == STRUCTURED_RESPONSE)
        ))

    def _annotations_deferred(self, module_name: str) -> bool:
        tree = self.module(module_name)
        return tree is not None and tree.is_future_flag_set("annotations")

    def check_value(self, typ: Type, path: str, *, channel: bool = False) -> Findings:
        """A value written at a write site (a node update, ``Send``, ``interrupt``, ...);
        ``channel``: the whole value of a channel."""
        found = self.walk(typ, in_model_value=False).under(path)
        if not channel:
            return found
        # A TypedDict update type's fields are the channels' values.
        fields = isinstance(proper_type(typ), TypedDictType)
        return channel_values(found, path, fields=fields, saver=self.saver)

    def start_input(self, typ: Type, path: str) -> Findings:
        """A model or dataclass passed whole as a graph's input (``graph.invoke(State(...))``):
        LangGraph keeps the object itself as the ``__start__`` channel's value, which the JSON
        serializer cannot write even when every field is JSON-clean."""
        proper = proper_type(typ)
        if self.profile != "json" or not isinstance(proper, Instance):
            return NOTHING
        # A model's own dump keeps datetimes and the like, which JSON cannot write either.
        dump = (
            'value.model_dump(mode="json")'
            if models.is_pydantic(proper.type)
            else "dataclasses.asdict(value)"
        )
        return Findings((Problem(
            codes.UNSERIALIZABLE, path, self.type_name(typ), messages.START_INPUT_WHAT,
            messages.start_input_fix(dump),
        ),))

    def type_name(self, typ: Type) -> str:
        return format_type_bare(typ, self.options)

    # The walk ----------------------------------------------------------------------------------

    def problem(self, code: ErrorCode, typ: Type, what: str, fix: str) -> Findings:
        return Findings((Problem(code, "", self.type_name(typ), what, fix),))

    def _pickled(self, typ: Type) -> Findings:
        """What ``pickle_fallback`` makes of a value msgpack cannot write (rules.py, PICKLED)."""
        proper = proper_type(typ)
        if isinstance(proper, TypeType):
            item = proper_type(proper.item)
            if isinstance(item, Instance) and generics.is_top_level(item.type):
                return NOTHING  # pickled by reference
            return self._pickle_unverifiable(proper)
        if isinstance(proper, CallableType):
            if isinstance(proper.definition, LambdaExpr):
                return self.problem(
                    codes.UNSERIALIZABLE, typ, messages.pickle_lambda_what(self.serializer),
                    rules.CALLABLE_FIX,
                )
            if proper.is_type_obj() and generics.is_top_level(proper.type_object()):
                return NOTHING
            return self._pickle_unverifiable(proper)  # a module-level function pickles, a lambda not
        if isinstance(proper, Instance):
            names = {base.fullname for base in proper.type.mro}
            if names & rules.NOT_PICKLABLE:
                return self.problem(
                    codes.UNSERIALIZABLE, typ, messages.pickle_raises_what(self.serializer),
                    rules.PICKLE_RAISES_FIX,
                )
            if names & rules.PICKLED:
                return NOTHING
        return self._pickle_unverifiable(proper)

    def _pickle_unverifiable(self, typ: ProperType) -> Findings:
        return self.problem(
            codes.ANY, typ, messages.PICKLE_UNVERIFIABLE_WHAT, messages.PICKLE_UNVERIFIABLE_FIX
        )

    def verdict(self, typ: Type, verdict: rules.Verdict) -> Findings:
        if self.pickle and verdict.outcome == "raises":
            return self._pickled(typ)
        if verdict.outcome == "ok":
            return NOTHING
        if verdict.outcome == "raises":
            what = messages.raises_what(self.serializer)
            return self.problem(codes.UNSERIALIZABLE, typ, what, verdict.fix)
        what = messages.lossy_what(self.serializer, verdict.back_as)
        return self.problem(codes.LOSSY, typ, what, verdict.fix)

    def walk(self, typ: Type, in_model_value: bool) -> Findings:
        if type(typ) is Instance:  # most walks end at a class: skip the dispatch below
            return self._instance(typ, in_model_value)
        if isinstance(typ, TypeAliasType):
            key = (typ, in_model_value)
            if self._cut(key):
                return NOTHING
            self._open(key)
            try:
                found = self._walk_proper(proper_type(typ), in_model_value)
            finally:
                self._close(key)
            if typ.alias is not None and typ.alias.fullname == _MESSAGE_LIKE:
                found = _message_like(found)
            if typ.is_recursive and typ.alias is not None and found.problems:
                found = in_alias(found, typ.alias.fullname)
            return found
        return self._walk_proper(proper_type(typ), in_model_value)

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
                return models.typeddict_items(self, typ, in_model_value).touching(info)
            return self.class_findings(info, None, in_model_value)
        if isinstance(typ, UnionType):
            return merge([self.walk(item, in_model_value) for item in typ.items])
        if isinstance(typ, (NoneType, UninhabitedType)):
            return NOTHING
        if isinstance(typ, LiteralType):
            # The value is an instance of the fallback: a str, int, bool, bytes or Enum member.
            return self._walk_proper(typ.fallback, in_model_value)
        if isinstance(typ, AnyType):
            if typ.type_of_any in (TypeOfAny.from_error, TypeOfAny.implementation_artifact):
                return NOTHING  # mypy has already reported the cause
            return self.unverifiable(typ)
        if isinstance(typ, (TypeVarType, ParamSpecType, TypeVarTupleType)):
            return self.unverifiable(typ)
        if isinstance(typ, (CallableType, Overloaded)):
            if (
                self.profile == "msgpack"
                and typ.is_type_obj()
                and models.defaults_only(typ.type_object())
            ):
                return self.verdict(typ, rules.lossy(*messages.DATACLASS_CLASS_LOSSY))
            fix = rules.CLASS_FIX if typ.is_type_obj() else rules.CALLABLE_FIX
            return self.verdict(typ, rules.raises(fix))
        if isinstance(typ, TypeType):
            item = proper_type(typ.item)
            msgpack = self.profile == "msgpack"
            if msgpack and isinstance(item, Instance) and models.defaults_only(item.type):
                return self.verdict(typ, rules.lossy(*messages.DATACLASS_CLASS_LOSSY))
            return self.verdict(typ, rules.raises(rules.CLASS_FIX))
        if isinstance(typ, TupleType):
            if typ.partial_fallback.type.is_named_tuple:
                fallback = typ.partial_fallback
                return models.named_tuple(self, fallback, typ, in_model_value).touching(fallback.type)
            return containers.tuple_findings(self, typ, typ.items, in_model_value, fixed=True)
        return NOTHING

    def unverifiable(self, typ: ProperType) -> Findings:
        return self.problem(
            codes.ANY, typ, messages.unverifiable_what(self.serializer), messages.PRECISE_TYPE_FIX
        )

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
            return self.walk(info.bases[0], in_model_value)
        if self.is_safe_type(info):
            return NOTHING
        if fullname in rules.ANY_CLASSES:
            return self.unverifiable(typ)
        found = containers.container(self, typ, in_model_value)
        if found is not None:
            return found
        if info.is_protocol and fullname not in rules.RAISING_PROTOCOLS:
            # ``Iterable[str]``, or the ``Collection[str]`` mypy joins a str and a list into: some
            # values of the type survive a checkpoint, others do not.
            return self.unverifiable(typ)
        if info.is_enum:
            return enums.enum(self, typ, in_model_value)
        if info.is_named_tuple:
            return models.named_tuple(self, typ, None, in_model_value)
        for base in info.mro:
            rule = rules.TYPE_RULES.get(base.fullname)
            if rule is not None:
                found = self.verdict(typ, rule.verdict(self.profile, exact=base is info))
                if self.profile == "msgpack" and base.fullname in rules.WHOLE_CHANNEL_DIFFERS:
                    found = found._replace(
                        problems=tuple(p._replace(whole_channel_differs=True) for p in found.problems)
                    )
                if self.profile == "msgpack" and base.fullname in rules.LANGCHAIN_MODELS:
                    # LangChain's own classes are loaded without an allowlist entry; a user's
                    # subclass is an ordinary pydantic model to the loader.
                    if fullname not in rules.STRICT_SAFE_CLASSES:
                        found = merge(
                            [found, self.importable(typ, in_model_value),
                             self.user_class(typ, "pydantic model", in_model_value)]
                        )
                elif base.fullname in rules.SECRET_TYPES:
                    found = merge([found, self.user_class(typ, "SecretStr", in_model_value)])
                elif base is not info and base.fullname in rules.REBUILT_BY_CLASS_NAME:
                    found = merge([found, self.user_class(typ, "subclass", in_model_value)])
                return found
        if models.is_pydantic(info):
            return models.model(self, typ, in_model_value)
        if "dataclass" in info.metadata:
            return models.dataclass(self, typ, in_model_value)
        found = containers.container_subclass(self, typ, in_model_value)
        if found is not None:
            return found
        return self.verdict(typ, rules.raises(rules.KEEP_OUT))

    def is_safe_type(self, info: TypeInfo) -> bool:
        return any(base.fullname in self.safe_types for base in info.mro) if self.safe_types else False

    # What the judges share ---------------------------------------------------------------------

    def importable(self, typ: Instance, in_model_value: bool) -> Findings:
        info = typ.type
        if in_model_value or generics.is_top_level(info):
            return NOTHING
        where = "a function body" if "@" in info.fullname else "a class body"
        payload = "its value" if info.is_enum else "a plain dict"
        shadowed = self.lookup(f"{info.module_name}.{info.name}")
        if isinstance(shadowed, TypeInfo) and shadowed is not info:
            # The loader imports (module, __name__), never __qualname__: it finds the other class.
            return self.problem(
                codes.UNIMPORTABLE,
                typ,
                messages.shadowed_what(where, shadowed.fullname, payload),
                f"{messages.move_to_top_level_fix(info.name, info.module_name)}, under a name of"
                " its own",
            )
        return self.problem(
            codes.UNIMPORTABLE,
            typ,
            messages.unimportable_what(f"it is defined in {where}", payload),
            messages.move_to_top_level_fix(info.name, info.module_name),
        )

    def user_class(self, typ: Instance, kind: UserClassKind, in_model_value: bool) -> Findings:
        # A class that cannot be re-imported is reported as such; no allowlist entry would help.
        if not self.strict or in_model_value or not generics.is_top_level(typ.type):
            return NOTHING
        return Findings((), (UserClass(typ.type.fullname, kind, "", self.type_name(typ)),))

    def class_findings(
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
                found = models.typeddict_items(self, info.typeddict_type, in_model_value, info)
            else:
                found = models.fields(self, info, typ, in_model_value)
            found = found.touching(info)
        finally:
            self._generic_depth[info.fullname] = depth
            complete = self._close(key)
        if not generic and complete:
            self._class_memo[memo_key] = found
        return found


_MAX_GENERIC_DEPTH: Final = 8
# LangChain's union of message forms (a message, a str, a (role, content) tuple, a dict).
_MESSAGE_LIKE: Final = "langchain_core.messages.utils.MessageLikeRepresentation"


def _message_like(found: Findings) -> Findings:
    """A (role, content) tuple of a ``MessageLikeRepresentation``: named by the union, and fixed by
    declaring messages, which a list of lists would not be."""
    return found._replace(problems=tuple(
        problem._replace(
            type_name="MessageLikeRepresentation",
            what=problem.what.replace("it comes back", messages.MESSAGE_LIKE_TUPLE),
            fix=messages.MESSAGE_LIKE_FIX,
        )
        if problem.path == "" and problem.fix == rules.TUPLE_AS_LIST.fix
        else problem
        for problem in found.problems
    ))
