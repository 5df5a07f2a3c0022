"""The walker's judge of enums: json writes a member as its value (mixins) or raises; msgpack writes
it as its value and the loader rebuilds the member, which a tuple or function value defeats
(docs/rules.md)."""

from __future__ import annotations


from mypy.nodes import Var
from mypy.types import CallableType, Instance, TupleType, Type

from mypy_lgstate.checker.findings import Findings, merge
from mypy_lgstate.checker.judging import Walk
from mypy_lgstate.core import messages, rules
from mypy_lgstate.routes.aliases import proper_type


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
