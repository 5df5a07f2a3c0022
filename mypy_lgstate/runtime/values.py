"""The verdict tables of ``rules.py`` applied to real values: ``find_problems``.

The plugin decides from declared types; this module decides from the values a graph really writes,
with the same tables and the same wording. A value's class is looked up by the names mypy gives it
(``classes.mypy_fullname``), along its MRO; containers, NamedTuples, enums, dataclasses and pydantic
models are decided by shape, as ``walker.py`` decides their types. It imports neither mypy nor
LangGraph.
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
from collections.abc import Callable, Iterable
from typing import Any, Final

from mypy_lgstate.core import messages, rules
from mypy_lgstate.core.config import PROFILES, SAVERS
from mypy_lgstate.core.messages import allowlist_what_fix
from mypy_lgstate.runtime import classes, model_rebuilds
from mypy_lgstate.runtime.classes import PLAIN, Decision, is_importable, mypy_fullname
from mypy_lgstate.runtime.findings import (
    ALLOWLIST,
    DICT_KEY,
    LOSSY,
    UNIMPORTABLE,
    UNSERIALIZABLE,
    Finding,
    Problem,
)

# Deeper than this the serializers fail whatever the value (value-dependent, not reported: docs/rules.md).
_MAX_DEPTH: Final = 200


def find_problems(
    value: object,
    *,
    profile: str = "json",
    strict_msgpack: bool = False,
    allowed_msgpack_modules: Iterable[str] = (),
    safe_types: Iterable[str] = (),
    pickle_fallback: bool = False,
    saver: str | None = None,
) -> list[Problem]:
    """The problems of ``value``, written as one piece (a channel value, or one node write).

    Paths are relative to ``value`` (``["notes"]["a"][0]``, ``.field``); messages start at the
    root ``value``. The options are the plugin's options of the same names. Given a ``saver``,
    ``value`` is a channel's whole value as that saver stores it (a PostgreSQL saver stores a
    ``str``, ``int`` or ``float`` inline; only SQLite loses a whole bytearray); without, it is
    checked as it is written anywhere deeper.
    """
    checker = ValueChecker(
        profile=profile,
        strict_msgpack=strict_msgpack,
        allowed_msgpack_modules=allowed_msgpack_modules,
        safe_types=safe_types,
        pickle_fallback=pickle_fallback,
        saver=saver or "sqlite",
    )
    return [
        Problem(found.path, found.code, found.message("value"))
        for found in checker.check(value, channel_value=saver is not None)
    ]


def _message_like(item: object) -> bool:
    """A ``(role, content)`` tuple that ``add_messages`` turns into a message."""
    return (
        type(item) is tuple
        and len(item) == 2
        and type(item[0]) is str
        and item[0] in rules.MESSAGE_ROLES
    )


def _key_repr(key: object) -> str:
    return messages.key_part(key) if type(key) is str else f"[{key!r}]"


class ValueChecker:
    """Checks values under one configuration; remembers how each class is walked."""

    def __init__(
        self,
        *,
        profile: str = "json",
        strict_msgpack: bool = False,
        allowed_msgpack_modules: Iterable[str] = (),
        safe_types: Iterable[str] = (),
        pickle_fallback: bool = False,
        saver: str = "sqlite",
    ) -> None:
        if profile not in PROFILES:
            raise ValueError(f'profile must be "json" or "msgpack", not {profile!r}')
        if saver not in SAVERS:
            raise ValueError(f'saver must be "sqlite", "memory" or "postgres", not {saver!r}')
        self.profile = profile
        self.saver = saver
        # Under json every enum is written as its value already (``_enum``).
        self.inlines = profile == "msgpack" and saver == "postgres"
        self.strict = profile == "msgpack" and strict_msgpack
        self.allowed = frozenset(allowed_msgpack_modules)
        self.derived: frozenset[tuple[str, ...]] = frozenset()
        self.safe_types = frozenset(safe_types)
        self.pickle = profile == "msgpack" and pickle_fallback
        self.serializer = messages.SERIALIZERS[profile]
        self._decisions: dict[type, Decision] = {}
        self._importable_classes: dict[type, bool] = {}

    def allow_derived(self, entries: Iterable[tuple[str, ...]]) -> None:
        """Add the ``(module, class)`` pairs that ``compile()`` derives for the strict allowlist."""
        self.derived = self.derived | frozenset(tuple(entry) for entry in entries)

    def check(
        self,
        value: object,
        *,
        whole_channel: bool = False,
        write: bool = False,
        graph_input: bool = False,
        channel_value: bool = False,
    ) -> list[Finding]:
        """``whole_channel``: ``value`` is a channel value or write of its own (the serializer
        special-cases a bytearray there, which only some savers keep). ``channel_value``: ``value``
        is what a checkpoint holds for a channel (after its reducer), which a PostgreSQL saver
        stores inline as JSON when it is a ``str``, ``int`` or ``float``.

        ``write``: ``value`` is written to a channel, whose reducer reads it before a checkpoint
        holds the channel's value. A message-like ``(role, content)`` tuple among the items of a
        written list is what ``add_messages`` turns into a message, and what it turns into the same
        message when a replay hands it the list the tuple comes back as: it is left to the
        checkpoint, where the channel's value is checked (a channel without such a reducer holds
        the tuple there, and it is reported then). ``graph_input``: ``value`` is a graph's input,
        each item of a dict being such a write (LangGraph's first step writes it to the channels)."""
        if type(value) in PLAIN:
            return []
        if (whole_channel or channel_value) and type(value) is bytearray and self.profile == "msgpack":
            if self.saver != "sqlite":  # it serializes each channel value on its own
                return []
            back_as, fix = messages.WHOLE_BYTEARRAY_LOSSY
            found_whole: list[Finding] = []
            self._lossy(found_whole, "", "bytearray", back_as, fix)
            return found_whole
        if channel_value and self.inlines and isinstance(value, enum.Enum):
            inlined = self._inlined(type(value))
            if inlined is not None:
                return [inlined]
        found: list[Finding] = []
        if graph_input and type(value) is dict:
            self._keys(value, "dict", "", found)
            for key, item in value.items():
                self._walk_write(item, _key_repr(key), found)
        elif write:
            self._walk_write(value, "", found)
        else:
            self._walk(value, "", False, found, set(), 0)
        if self.pickle and any(finding.code == UNSERIALIZABLE for finding in found):
            # JsonPlusSerializer(pickle_fallback=True) pickles the whole value msgpack cannot write:
            # what pickle writes comes back as it was.
            try:
                pickle.dumps(value)
            except Exception:
                return found
            return []
        return found

    # The walk ---------------------------------------------------------------------------------

    def _walk_write(self, value: object, path: str, found: list[Finding]) -> None:
        """A value written to a channel (``check(write=True)``)."""
        if type(value) is not list:
            if type(value) not in PLAIN:
                self._walk(value, path, False, found, set(), 0)
            return
        for index, item in enumerate(value):
            if type(item) not in PLAIN and not _message_like(item):
                self._walk(item, f"{path}[{index}]", False, found, {id(value)}, 1)

    def _walk(
        self,
        value: Any,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        open_ids: set[int],
        depth: int,
    ) -> None:
        cls = type(value)
        if cls in PLAIN:
            return
        decision = self._decisions.get(cls)
        if decision is None:
            decision = self._decisions[cls] = classes.decide(
                cls, profile=self.profile, strict=self.strict, safe_types=self.safe_types
            )
        kind = decision.kind
        if kind == classes.LEAF:
            return
        if depth > _MAX_DEPTH or id(value) in open_ids:
            return  # too deep, or a cycle: both fail whatever the types (value-dependent)
        open_ids.add(id(value))
        try:
            self._walk_kind(value, cls, decision, path, in_model_value, found, open_ids, depth + 1)
        finally:
            open_ids.discard(id(value))

    def _walk_kind(
        self,
        value: Any,
        cls: type,
        decision: Decision,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        open_ids: set[int],
        depth: int,
    ) -> None:
        kind = decision.kind

        def walk(item: object, item_path: str, below_model: bool = in_model_value) -> None:
            if type(item) not in PLAIN:
                self._walk(item, item_path, below_model, found, open_ids, depth)

        if kind == classes.LIST:
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif kind == classes.DICT:
            self._keys(value, cls.__name__, path, found)
            for key, item in value.items():
                walk(item, path + _key_repr(key))
        elif kind == classes.TUPLE:
            if self.profile == "json" or not in_model_value:
                self._verdict(found, path, cls.__name__, rules.TUPLE_AS_LIST)
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif kind == classes.NAMED_TUPLE:
            if self.profile == "json":
                self._verdict(found, path, cls.__name__, rules.NAMED_TUPLE_AS_LIST)
            else:
                self._importable(cls, path, in_model_value, found)
                self._user_class(cls, "NamedTuple", path, in_model_value, found)
            for name in value._fields:
                walk(getattr(value, name), f"{path}.{name}")
        elif kind == classes.SET:
            self._set(value, cls, path, in_model_value, found, walk)
        elif kind == classes.DEQUE:
            if self.profile == "json":
                self._raises(found, path, cls.__name__, "store a list instead")
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif kind == classes.ENUM:
            self._enum(value, cls, path, in_model_value, found)
        elif kind == classes.MODEL:
            self._model(value, cls, path, in_model_value, found, walk)
        elif kind == classes.DATACLASS:
            self._dataclass(value, cls, path, in_model_value, found, walk)
        elif kind == classes.CLASS_OBJECT:
            if self.profile == "msgpack" and classes.defaults_only(value):
                self._lossy(found, path, f"type[{value.__name__}]", *messages.DATACLASS_CLASS_LOSSY)
            else:
                self._raises(found, path, f"type[{value.__name__}]", rules.CLASS_FIX)
        else:
            self._rule(value, cls, decision, path, in_model_value, found, walk)

    # Verdicts ---------------------------------------------------------------------------------

    def _raises(self, found: list[Finding], path: str, type_name: str, fix: str) -> None:
        what = messages.raises_what(self.serializer)
        found.append(Finding(path, UNSERIALIZABLE, type_name, what, fix))

    def _lossy(
        self, found: list[Finding], path: str, type_name: str, back_as: str, fix: str
    ) -> None:
        what = messages.lossy_what(self.serializer, back_as)
        found.append(Finding(path, LOSSY, type_name, what, fix))

    def _verdict(
        self, found: list[Finding], path: str, type_name: str, verdict: rules.Verdict
    ) -> None:
        if verdict.outcome == "raises":
            self._raises(found, path, type_name, verdict.fix)
        elif verdict.outcome == "lossy":
            self._lossy(found, path, type_name, verdict.back_as, verdict.fix)

    def _rule(
        self,
        value: Any,
        cls: type,
        decision: Decision,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        walk: Callable[..., None],
    ) -> None:
        name = cls.__name__
        if decision.rule is None:
            if not decision.back_as:
                self._raises(found, path, name, rules.KEEP_OUT)
                return
            back_as = decision.back_as
            self._verdict(found, path, name, rules.container_subclass(back_as))
            if back_as == "dict":
                self._keys(value, name, path, found)
                for key, item in value.items():
                    walk(item, path + _key_repr(key))
            else:
                for index, item in enumerate(value):
                    walk(item, f"{path}[{index}]")
            return
        self._verdict(found, path, name, decision.rule.verdict(self.profile, exact=decision.exact))
        if self.profile != "msgpack":
            return
        if decision.rule_name in rules.LANGCHAIN_MODELS:
            # LangChain's own classes are loaded without an allowlist entry; a user's subclass is
            # an ordinary pydantic model to the loader.
            if mypy_fullname(cls) not in rules.STRICT_SAFE_CLASSES:
                self._importable(cls, path, in_model_value, found)
                self._user_class(cls, "pydantic model", path, in_model_value, found)
        elif decision.rule_name in rules.SECRET_TYPES:
            self._user_class(cls, "SecretStr", path, in_model_value, found)
        elif not decision.exact and decision.rule_name in rules.REBUILT_BY_CLASS_NAME:
            self._user_class(cls, "subclass", path, in_model_value, found)

    def _set(
        self,
        value: Any,
        cls: type,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        walk: Callable[..., None],
    ) -> None:
        if self.profile == "json":
            self._verdict(found, path, cls.__name__, rules.JSON_SET)
            for item in value:
                walk(item, f"{path}[]")
            return
        has_tuple = False
        for item in value:
            if type(item) is tuple:
                has_tuple = True
                for index, part in enumerate(item):
                    walk(part, f"{path}[][{index}]")
            else:
                walk(item, f"{path}[]")
        if has_tuple and not in_model_value:
            self._verdict(found, path, cls.__name__, rules.TUPLES_IN_SET)

    def _keys(self, mapping: Any, type_name: str, path: str, found: list[Finding]) -> None:
        worst: tuple[rules.Verdict, object] | None = None
        for key in mapping:
            if type(key) is str:
                continue
            verdict = self._key_verdict(key)
            if verdict.outcome == "ok":
                continue
            if worst is None or (verdict.outcome == "raises" and worst[0].outcome != "raises"):
                worst = (verdict, key)
        if worst is None:
            return
        verdict, key = worst
        if verdict.outcome == "raises":
            what = messages.raises_what(self.serializer)
        else:
            what = messages.lossy_keys_what(self.serializer, verdict.back_as)
        key_type = "None" if key is None else type(key).__name__
        found.append(Finding(path, DICT_KEY, f"{type_name}[{key_type}, ...]", what, verdict.fix))

    def _key_verdict(self, key: object) -> rules.Verdict:
        if key is None:
            return rules.OK if self.profile == "msgpack" else rules.JSON_KEY_RULES["builtins.int"]
        cls = type(key)
        if cls is tuple:
            if self.profile == "json":
                return rules.JSON_TUPLE_KEY
            inner = [self._key_verdict(part) for part in key]  # type: ignore[attr-defined]
            bad = [verdict for verdict in inner if verdict.outcome != "ok"]
            return bad[0] if bad else rules.OK
        if (
            self.safe_types
            and self.profile != "json"  # json.dumps never calls a serializer's hook for a key
            and any(mypy_fullname(b) in self.safe_types for b in cls.__mro__)
        ):
            return rules.OK
        if issubclass(cls, enum.Enum):
            if self.profile == "msgpack":
                return rules.MSGPACK_ENUM_KEY
            if issubclass(cls, (str, int, float)):
                return rules.JSON_VALUE_ENUM_KEY
            return rules.JSON_ENUM_KEY
        table = rules.JSON_KEY_RULES if self.profile == "json" else rules.MSGPACK_KEY_RULES
        verdict = table.get(mypy_fullname(cls))
        if verdict is not None:
            return verdict
        subclasses = (
            rules.JSON_SUBCLASS_KEY_RULES if self.profile == "json"
            else rules.MSGPACK_SUBCLASS_KEY_RULES
        )
        for base in cls.__mro__[1:]:
            found = subclasses.get(mypy_fullname(base))
            if found is not None:
                return found
        return rules.OTHER_KEY

    # Classes ----------------------------------------------------------------------------------

    def _inlined(self, cls: type) -> Finding | None:
        """An enum member a PostgreSQL saver stores inline, as its value (``messages.
        postgres_inline_what``): an instance of a ``str``, ``int`` or ``float`` mixin."""
        for mixin, base in ((str, "str"), (int, "int"), (float, "float")):
            if issubclass(cls, mixin):
                what = messages.postgres_inline_what(base)
                fix = messages.postgres_inline_fix(cls.__name__, base)
                return Finding("", LOSSY, cls.__name__, what, fix)
        return None

    def _enum(
        self, value: Any, cls: type, path: str, in_model_value: bool, found: list[Finding]
    ) -> None:
        if self.profile == "json":
            fix = messages.enum_json_fix(cls.__name__)
            for mixin, back_as in ((str, "str"), (int, "int"), (float, "float")):
                if issubclass(cls, mixin):
                    self._lossy(found, path, cls.__name__, back_as, fix)
                    return
            self._raises(found, path, cls.__name__, fix)
            return
        self._importable(cls, path, in_model_value, found)
        self._user_class(cls, "Enum", path, in_model_value, found)
        if isinstance(value.value, tuple):
            # Written as its value, which comes back as a list: no member has that value.
            self._lossy(found, path, cls.__name__, *messages.enum_tuple_lossy(value.name))
        if callable(value.value):
            # ``A = enum.member(func)``: written as its value, which msgpack cannot encode.
            self._raises(found, path, cls.__name__, messages.enum_function_member_fix(value.name))

    def _importable(
        self, cls: type, path: str, in_model_value: bool, found: list[Finding]
    ) -> None:
        if in_model_value or self._is_importable(cls):
            return
        payload = "its value" if issubclass(cls, enum.Enum) else "a plain dict"
        if "." in cls.__qualname__:
            where = "a function body" if "<locals>" in cls.__qualname__ else "a class body"
            reason = f"it is defined in {where}"
        else:  # made by type(), or shadowed by another class of the same name
            reason = f"module {cls.__module__} has no class {cls.__name__} of its own"
        found.append(Finding(
            path, UNIMPORTABLE, cls.__name__, messages.unimportable_what(reason, payload),
            messages.move_to_top_level_fix(cls.__name__, cls.__module__),
        ))

    def _is_importable(self, cls: type) -> bool:
        importable = self._importable_classes.get(cls)
        if importable is None:
            importable = self._importable_classes[cls] = is_importable(cls)
        return importable

    def _user_class(
        self, cls: type, kind: str, path: str, in_model_value: bool, found: list[Finding]
    ) -> None:
        # A class that cannot be re-imported is reported as such; no allowlist entry would help.
        if not self.strict or in_model_value or not self._is_importable(cls):
            return
        module, name = cls.__module__, cls.__name__
        fullname = f"{module}.{name}"
        if fullname in self.allowed or module in self.allowed or (module, name) in self.derived:
            return
        what, fix = allowlist_what_fix(kind, fullname)
        found.append(Finding(path, ALLOWLIST, name, what, fix))

    def _model(
        self,
        value: Any,
        cls: type,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        walk: Callable[..., None],
    ) -> None:
        name = cls.__name__
        if self.profile == "json":
            self._raises(found, path, name, messages.model_json_fix(name))
            return
        fields = getattr(cls, "model_fields", None)
        if fields is None:  # pydantic.v1
            fields = getattr(cls, "__fields__", {})
        for field_name, field in fields.items():
            # model_dump() leaves an excluded field out: what it holds is never serialized.
            if getattr(field, "exclude", None) is not True:
                walk(getattr(value, field_name, None), f"{path}.{field_name}", True)
        # extra="allow": model_dump() writes the extra values too, and the loader keeps them as
        # they come back, unvalidated: a tuple as a list, a model or dataclass as a dict.
        for extra_name, extra in (getattr(value, "__pydantic_extra__", None) or {}).items():
            extra_path = f"{path}.{extra_name}"
            if hasattr(type(extra), "model_fields") or (
                dataclasses.is_dataclass(extra) and not isinstance(extra, type)
            ):
                self._lossy(found, extra_path, type(extra).__name__, *messages.EXTRA_MODEL_LOSSY)
            else:
                walk(extra, extra_path, False)
        if in_model_value:
            return
        if any(mypy_fullname(base) == rules.PYDANTIC_ROOT_MODEL for base in cls.__mro__):
            root = getattr(value, "root", None)
            if isinstance(root, dict):
                if not root or "root" in root:  # no keywords, or one pydantic takes as the root
                    self._lossy(found, path, name, *messages.ROOT_DICT_MODEL_LOSSY)
                    return
                # The loader passes the dict as keyword arguments: the model comes back.
                self._importable(cls, path, False, found)
                self._user_class(cls, "pydantic model", path, False, found)
                return
            self._lossy(found, path, name, *messages.ROOT_MODEL_LOSSY)
            return
        generic = getattr(cls, "__pydantic_generic_metadata__", None) or {}
        if generic.get("args") and not self._is_importable(cls):
            # pydantic registers Box[int] in its module (where the loader finds it) only when it
            # was first parametrized at the module's top level.
            concrete = "".join(_name_part(arg) for arg in generic["args"]) + generic["origin"].__name__
            found.append(Finding(
                path, UNIMPORTABLE, name, messages.GENERIC_MODEL_UNIMPORTABLE,
                messages.generic_model_fix(f"class {concrete}({name})"),
            ))
            return
        self._importable(cls, path, False, found)
        self._user_class(cls, "pydantic model", path, False, found)
        if hasattr(cls, "model_fields"):  # pydantic.v1 models have none of this
            for loss in model_rebuilds.losses(value, cls, fields, path):
                self._lossy(found, loss.path, loss.type_name, loss.back_as, loss.fix)

    def _dataclass(
        self,
        value: Any,
        cls: type,
        path: str,
        in_model_value: bool,
        found: list[Finding],
        walk: Callable[..., None],
    ) -> None:
        name = cls.__name__
        if self.profile == "json":
            self._raises(found, path, name, messages.DATACLASS_JSON_FIX)
            return
        self._importable(cls, path, in_model_value, found)
        self._user_class(cls, "dataclass", path, in_model_value, found)
        fields = dataclasses.fields(value)
        init_vars = [
            field
            for field in getattr(cls, "__dataclass_fields__", {}).values()
            if getattr(field, "_field_type", None) is _INIT_VAR
        ]
        if init_vars:
            required = [
                field.name
                for field in init_vars
                if field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ]
            init_var = required[0] if required else init_vars[0].name
            self._lossy(found, path, name, *messages.init_var_lossy(init_var, bool(required)))
        not_in_init = [field.name for field in fields if not field.init]
        if not_in_init:
            # The loader calls cls(**fields), which rejects a field that __init__ does not take.
            self._lossy(found, path, name, *messages.not_in_init_lossy(not_in_init[0]))
        for field in fields:
            walk(getattr(value, field.name, None), f"{path}.{field.name}")


def _name_part(arg: object) -> str:
    """A PascalCase name for a type argument, for the concrete subclass a fix suggests."""
    if isinstance(arg, type):
        return arg.__name__[:1].upper() + arg.__name__[1:]
    return "Item"


# dataclasses marks an InitVar pseudo-field so; ``fields()`` leaves them out.
_INIT_VAR: Final = getattr(dataclasses, "_FIELD_INITVAR", object())
