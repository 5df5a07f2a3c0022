"""The walker's judges of containers: lists, tuples, sets, deques, dicts (their keys too), and the
subclasses of ``dict`` and ``list``, decided by their shape and walked through their items
(docs/rules.md, "Types" and "Dict keys")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy.maptype import map_instance_to_supertype
from mypy.types import (
    Instance,
    LiteralType,
    NoneType,
    ProperType,
    TupleType,
    Type,
    UnionType,
    UnpackType,
)

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.findings import NOTHING, Findings, merge
from mypy_lgstate.checker.judging import Walk
from mypy_lgstate.core import messages, rules
from mypy_lgstate.routes.aliases import proper_type

_JSON_NO_DEQUE: Final = rules.raises("store a list instead")


def tuple_findings(
    walker: Walk,
    typ: ProperType,
    items: Sequence[Type],
    in_model_value: bool,
    *,
    fixed: bool,
    report_self: bool = True,
) -> Findings:
    parts: list[Findings] = []
    if report_self and (walker.profile == "json" or not in_model_value):
        parts.append(walker.verdict(typ, rules.TUPLE_AS_LIST))
    if fixed and len(items) > 1 and all(item == items[0] for item in items[1:]):
        # ``tuple[datetime, datetime]``: one problem with one fix, said once for every item.
        items, fixed = items[:1], False
    for index, item in enumerate(items):
        if isinstance(item, UnpackType):  # ``tuple[int, *tuple[X, ...]]``: the X items
            inner = proper_type(item.type)
            variadic = inner.args[:1] if isinstance(inner, Instance) else []
            for each in inner.items if isinstance(inner, TupleType) else variadic:
                parts.append(walker.walk(each, in_model_value).under("[]"))
            continue
        parts.append(walker.walk(item, in_model_value).under(f"[{index}]" if fixed else "[]"))
    return merge(parts)


def container(walker: Walk, typ: Instance, in_model_value: bool) -> Findings | None:
    """The findings of a container class (``None`` when ``typ`` is none)."""
    fullname = typ.type.fullname
    if fullname in rules.SEQUENCES:
        return items(walker, typ, in_model_value)
    if fullname in rules.MAPPINGS:
        return mapping(walker, typ, in_model_value)
    if fullname in rules.SETS:
        return _set(walker, typ, in_model_value)
    if fullname == rules.DEQUE:
        own = walker.verdict(typ, _JSON_NO_DEQUE) if walker.profile == "json" else NOTHING
        return merge([own, items(walker, typ, in_model_value)])
    if fullname == "builtins.tuple":
        return tuple_findings(walker, typ, typ.args[:1], in_model_value, fixed=False)
    return None


def container_subclass(walker: Walk, typ: Instance, in_model_value: bool) -> Findings | None:
    """A subclass of ``dict`` or ``list``: written as the plain container, and walked as one."""
    info = typ.type
    for base_name, back_as in (("builtins.dict", "dict"), ("builtins.list", "list")):
        if info.has_base(base_name):
            base_info = next(b for b in info.mro if b.fullname == base_name)
            mapped = map_instance_to_supertype(typ, base_info)
            lossy = walker.verdict(
                typ, rules.container_subclass(back_as)
            )
            walked = (
                mapping(walker, mapped, in_model_value)
                if back_as == "dict"
                else items(walker, mapped, in_model_value)
            )
            return merge([lossy, walked])
    return None


def items(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    if not typ.args:
        return NOTHING
    return walker.walk(typ.args[0], in_model_value).under("[]")


def _set(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    if walker.profile == "json":
        return merge([walker.verdict(typ, rules.JSON_SET), items(walker, typ, in_model_value)])
    if not typ.args:
        return NOTHING
    item = proper_type(typ.args[0])
    members = item.items if isinstance(item, UnionType) else [item]
    parts = []
    has_tuple = False
    for member in members:
        proper = proper_type(member)
        if isinstance(proper, TupleType) and not proper.partial_fallback.type.is_named_tuple:
            has_tuple = True
            parts.append(tuple_findings(walker, proper, proper.items, in_model_value, fixed=True,
                                        report_self=False).under("[]"))
        elif isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple":
            has_tuple = True
            parts.append(tuple_findings(walker, proper, proper.args[:1], in_model_value,
                                        fixed=False, report_self=False).under("[]"))
        else:
            parts.append(walker.walk(member, in_model_value).under("[]"))
    if has_tuple and not in_model_value:
        parts.insert(0, walker.verdict(typ, rules.TUPLES_IN_SET))
    return merge(parts)


def mapping(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    if len(typ.args) != 2:
        return NOTHING
    key, value = typ.args
    return merge([_key(walker, key, typ), walker.walk(value, in_model_value).under("{}")])


# Dict keys ---------------------------------------------------------------------------------------


def _key(walker: Walk, key: Type, mapping_type: Instance) -> Findings:
    verdict = _key_verdict(walker, proper_type(key))
    if verdict is None or verdict.outcome == "ok":
        return NOTHING
    if verdict.outcome == "raises":
        what = messages.raises_what(walker.serializer)
    else:
        what = messages.lossy_keys_what(walker.serializer, verdict.back_as)
    return walker.problem(codes.DICT_KEY, mapping_type, what, verdict.fix)


def _key_verdict(walker: Walk, key: ProperType) -> rules.Verdict | None:
    json = walker.profile == "json"
    if isinstance(key, UnionType):
        verdicts = [_key_verdict(walker, proper_type(item)) for item in key.items]
        for outcome in ("raises", "lossy"):
            for verdict in verdicts:
                if verdict is not None and verdict.outcome == outcome:
                    return verdict
        return rules.OK
    if isinstance(key, LiteralType):
        key = key.fallback
    if isinstance(key, NoneType):
        return rules.JSON_KEY_RULES["builtins.int"] if json else rules.OK
    if isinstance(key, TupleType):
        if json:
            return rules.JSON_TUPLE_KEY
        inner = [_key_verdict(walker, proper_type(item)) for item in key.items]
        bad = [v for v in inner if v is not None and v.outcome != "ok"]
        return bad[0] if bad else rules.OK
    if not isinstance(key, Instance):
        return None  # Any, TypeVar: not decidable from the type
    info = key.type
    if info.is_newtype and info.bases:
        return _key_verdict(walker, info.bases[0])
    if walker.is_safe_type(info) and not json:
        # json.dumps never calls a serializer's hook for a key: a safe type is no safe key.
        return rules.OK
    if info.is_enum:
        if not json:
            return rules.MSGPACK_ENUM_KEY
        if any(info.has_base(mixin) for mixin, _ in rules.JSON_VALUE_MIXINS):
            return rules.JSON_VALUE_ENUM_KEY
        return rules.JSON_ENUM_KEY
    table = rules.JSON_KEY_RULES if json else rules.MSGPACK_KEY_RULES
    verdict = table.get(info.fullname)
    if verdict is not None:
        return verdict
    subclasses = rules.JSON_SUBCLASS_KEY_RULES if json else rules.MSGPACK_SUBCLASS_KEY_RULES
    for base in info.mro[1:]:
        if base.fullname in subclasses:
            return subclasses[base.fullname]
    return rules.OTHER_KEY
