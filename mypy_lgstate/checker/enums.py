"""The walker's judge of enums: json writes a member as its value (mixins) or raises; msgpack writes
it as its value and the loader rebuilds the member, which a tuple or function value defeats; a
PostgreSQL saver stores a channel's whole member with a ``str``, ``int`` or ``float`` mixin inline
as its value (docs/rules.md)."""

from __future__ import annotations

from collections.abc import Iterator

from mypy.nodes import TypeInfo, Var
from mypy.types import CallableType, Instance, LiteralType, TupleType, Type, UnionType

from mypy_lgstate.checker import errorcodes as codes, models
from mypy_lgstate.checker.findings import Findings, Problem, in_field, merge
from mypy_lgstate.checker.judging import Walk
from mypy_lgstate.core import messages, rules
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import model_fields


def enum(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    info = typ.type
    if walker.profile == "json":
        fix = messages.enum_json_fix(info.name)
        for mixin, back_as in rules.JSON_VALUE_MIXINS:
            if info.has_base(mixin):
                return walker.verdict(typ, rules.lossy(back_as, fix))
        return walker.verdict(typ, rules.raises(fix))
    own = [walker.importable(typ, in_model_value), walker.user_class(typ, "Enum", in_model_value)]
    tuple_member = next(
        (
            name
            for name, sym in info.names.items()
            if isinstance(sym.node, Var)
            and sym.node.is_inferred
            and isinstance(proper_type(sym.node.type), TupleType)
            and not name.startswith("_")
        ),
        None,
    )
    if tuple_member is not None:
        # The member is written as its value, which comes back as a list: no member has that.
        own.append(walker.verdict(typ, rules.lossy(*messages.enum_tuple_lossy(tuple_member))))
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
        own.append(walker.verdict(
            typ, rules.raises(messages.enum_function_member_fix(function_member))
        ))
    return merge(own)


def _is_function_member(typ: Type | None) -> bool:
    """``enum.member[def ()]``: the type mypy gives ``A = enum.member(func)`` in an Enum body."""
    proper = proper_type(typ)
    return (
        isinstance(proper, Instance)
        and proper.type.fullname == "enum.member"
        and len(proper.args) == 1
        and isinstance(proper_type(proper.args[0]), CallableType)
    )


# The saver ``postgres`` --------------------------------------------------------------------------


def inlined(walker: Walk, info: TypeInfo) -> Findings:
    """The fields of graph-state class ``info`` a PostgreSQL saver stores inline as JSON: each
    field is a channel, and a member of an enum with a ``str``, ``int`` or ``float`` mixin that is
    its whole value (``Status``, ``Status | None``, ``Literal[Status.OPEN]``) comes back as the
    mixin's plain value. A pydantic state is validated back into the enum before each node."""
    revalidated = models.is_pydantic(info)
    if info.typeddict_type is not None:
        fields = [(name, typ, info) for name, typ in info.typeddict_type.items.items()]
    else:
        fields = [
            (name, var.type, declared_in)
            for name, var, declared_in in model_fields(info)
            if var.type is not None
        ]
    parts = []
    for name, typ, owner in fields:
        for member in _whole_values(typ):
            base = _inline_mixin(member.type)
            if base is None:
                continue
            what = messages.postgres_inline_what(base, revalidated=revalidated)
            fix = messages.postgres_inline_fix(member.type.name, base)
            problem = Problem(codes.LOSSY, "", walker.type_name(member), what, fix)
            parts.append(in_field(Findings((problem,)).touching(member.type), owner, name))
    return merge(parts).touching(info)


def with_inlined(found: Findings, inlined: Findings) -> Findings:
    """``found``, the findings of a state class, with those a PostgreSQL saver adds (``inlined``):
    an enum it stores inline never reaches the serializer, whose allowlist does not matter there."""
    if not inlined.problems:
        return found
    paths = {problem.path for problem in inlined.problems}
    kept = tuple(user for user in found.user_classes if user.path not in paths)
    return merge([found._replace(user_classes=kept), inlined])


def _whole_values(typ: Type) -> Iterator[Instance]:
    """The classes a value of ``typ`` may be an instance of, at its top: through unions and
    literals."""
    proper = proper_type(typ)
    if isinstance(proper, UnionType):
        for item in proper.items:
            yield from _whole_values(item)
    elif isinstance(proper, LiteralType):
        yield proper.fallback
    elif isinstance(proper, Instance):
        yield proper


def _inline_mixin(info: TypeInfo) -> str | None:
    if not info.is_enum:
        return None
    return next(
        (name for mixin, name in rules.POSTGRES_INLINE_MIXINS if info.has_base(mixin)), None
    )
