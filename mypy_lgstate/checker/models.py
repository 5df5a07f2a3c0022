"""The walker's judges of the classes decided by their fields: pydantic models, dataclasses,
TypedDicts and NamedTuples. Each class is written field by field (json raises on a model or a
dataclass), rebuilt by the loader with ``cls(**fields)`` (msgpack), which its class body may defeat
(``model_facts``), and walked through the declared type of each field (docs/rules.md)."""

from __future__ import annotations

from typing import Final

from mypy.expandtype import expand_type_by_instance
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import TypeInfo, Var
from mypy.types import (
    AnyType,
    Instance,
    TupleType,
    Type,
    TypedDictType,
    TypeOfAny,
    UnionType,
)

from mypy_lgstate.checker import errorcodes as codes, generics
from mypy_lgstate.checker.findings import NOTHING, Findings, in_field, merge
from mypy_lgstate.checker.judging import Walk
from mypy_lgstate.core import messages, rules
from mypy_lgstate.routes import model_facts
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import instance_attributes, model_fields


def is_pydantic(info: TypeInfo) -> bool:
    return any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro)


# Pydantic models ---------------------------------------------------------------------------------


def model(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    info = typ.type
    if walker.profile == "json":
        return walker.verdict(typ, rules.raises(messages.model_json_fix(info.name)))
    fields = walker.class_findings(info, typ, True)
    facts = model_facts.facts_of(info)
    if facts is not None and facts.allows_extra:
        extra = walker.problem(
            codes.ANY, typ, messages.extra_allowed_what(walker.serializer),
            messages.EXTRA_ALLOWED_FIX,
        )
        fields = merge([extra, fields])
    if in_model_value:
        return fields
    if info.has_base(rules.PYDANTIC_ROOT_MODEL):
        root_info = next(b for b in info.mro if b.fullname == rules.PYDANTIC_ROOT_MODEL)
        mapped = map_instance_to_supertype(typ, root_info)
        root = proper_type(mapped.args[0]) if mapped.args else None
        if (
            isinstance(root, TypedDictType)
            or isinstance(root, Instance) and root.type.fullname in rules.MAPPINGS
        ):
            # Any other dict rebuilds the model, from items that are validated again.
            return merge(
                [walker.verdict(typ, rules.lossy(*messages.ROOT_DICT_MODEL_LOSSY)), fields]
            )
        return walker.verdict(typ, rules.lossy(*messages.ROOT_MODEL_LOSSY))
    if generics.is_parametrized(typ):
        return merge([generics.unimportable(walker, typ), fields])
    own = merge(
        [walker.importable(typ, False), walker.user_class(typ, "pydantic model", False)]
    )
    return merge([own, fields, _private_attributes(walker, info), _rebuilt(walker, typ)])


def _rebuilt(walker: Walk, typ: Instance) -> Findings:
    """What the class body makes of the loader's ``cls(**model_dump())`` (see model_facts)."""
    info = typ.type
    facts = model_facts.facts_of(info)
    if facts is None:
        return NOTHING
    if facts.serializer:
        return walker.verdict(typ, rules.lossy(*messages.MODEL_SERIALIZER_LOSSY))
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
        return walker.verdict(typ, rules.lossy(*messages.fallback_lossy(reason)))
    parts = []
    for name, var, declared_in in model_fields(info):
        assert var.type is not None
        if name in facts.excluded:
            verdict = rules.lossy(*messages.EXCLUDED_FIELD_LOSSY)
        elif name in facts.aliased and not facts.by_name:
            verdict = rules.lossy(*messages.ALIASED_FIELD_LOSSY)
        else:
            continue
        parts.append(in_field(walker.verdict(var.type, verdict), declared_in, name))
    return merge(parts)


def _private_attributes(walker: Walk, info: TypeInfo) -> Findings:
    """A model's private attributes (``_cache: int = PrivateAttr()``): ``model_dump()`` leaves
    them out, so they are not in the checkpoint."""
    return merge([
        in_field(walker.verdict(var.type, _PRIVATE_DROPPED), base, name)
        for base, name, var in instance_attributes(info, unannotated=True)
        if name.startswith("_") and not name.startswith("__") and var.type is not None
    ])


_PRIVATE_DROPPED: Final = rules.lossy(*messages.PRIVATE_ATTRIBUTE_LOSSY)


def pydantic_state(walker: Walk, info: TypeInfo, found: Findings) -> Findings:
    """A pydantic state schema. LangGraph rebuilds it with ``State(**values)`` before each node
    runs, so a tuple is a tuple again inside nodes, at any depth: only the stored form is a list.
    And it reads the schema's fields with ``get_type_hints``, so each ``ClassVar`` is a channel too."""
    problems = tuple(
        problem._replace(what=messages.revalidated_tuple_what(walker.serializer))
        if problem.fix == rules.TUPLE_AS_LIST.fix
        else problem._replace(what=messages.revalidated_enum_what(walker.serializer))
        if problem.code == codes.LOSSY and problem.fix.startswith(messages.ENUM_JSON_FIX_START)
        else problem
        for problem in found.problems
    )
    class_vars = [
        in_field(walker.walk(node.type, in_model_value=False), base, name)
        for base in reversed(info.mro)
        if base.fullname not in rules.PYDANTIC_MODELS and base.fullname != "builtins.object"
        for name, sym in base.names.items()
        if isinstance(node := sym.node, Var)
        and node.is_classvar
        and not sym.plugin_generated  # ``__dataclass_fields__``: mypy's, not in the class
        and not node.is_inferred  # get_type_hints() sees annotated ClassVars only
        and node.type is not None
    ]
    # Its value is written only with a whole instance (a node returning the model, or
    # ``invoke(State(...))``), not with a dict update.
    class_var_problems = tuple(
        problem._replace(what=messages.class_var_what(info.name, problem.what))
        for problem in merge(class_vars).problems
    )
    return merge([found._replace(problems=problems), Findings(class_var_problems)])


# Dataclasses -------------------------------------------------------------------------------------


def dataclass(walker: Walk, typ: Instance, in_model_value: bool) -> Findings:
    info = typ.type
    if walker.profile == "json":
        return walker.verdict(typ, rules.raises(messages.DATACLASS_JSON_FIX))
    own = [
        walker.importable(typ, in_model_value),
        walker.user_class(typ, "dataclass", in_model_value),
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
        own.append(walker.verdict(typ, verdict))
    if not_in_init:
        # The loader calls cls(**fields), which rejects a field that __init__ does not take.
        verdict = rules.lossy(*messages.not_in_init_lossy(not_in_init[0]))
        own.append(walker.verdict(typ, verdict))
    return merge([*own, walker.class_findings(info, typ, in_model_value)])


def defaults_only(info: TypeInfo) -> bool:
    """A (non-pydantic) dataclass whose fields all have defaults, as mypy's dataclass metadata says
    (which does not tell a default_factory apart: the message says so)."""
    metadata = info.metadata.get("dataclass")
    if metadata is None or is_pydantic(info):
        return False
    attributes = metadata.get("attributes", [])
    return all(attr.get("has_default") for attr in attributes if not attr.get("is_init_var"))


# NamedTuples -------------------------------------------------------------------------------------


def named_tuple(
    walker: Walk, typ: Instance, tuple_type: TupleType | None, in_model_value: bool
) -> Findings:
    info = typ.type
    items = tuple_type or info.tuple_type
    fields = [] if items is None else items.items
    names = list(info.metadata.get("namedtuple", {}).get("fields", [])) or [
        str(i) for i in range(len(fields))
    ]
    walked = [
        in_field(walker.walk(item, in_model_value), info, name)
        for name, item in zip(names, fields)
    ]
    if walker.profile == "json":
        own = walker.verdict(typ, rules.NAMED_TUPLE_AS_LIST)
        return merge([own, *walked])
    return merge(
        [walker.importable(typ, in_model_value),
         walker.user_class(typ, "NamedTuple", in_model_value), *walked]
    )


# The fields of a class ---------------------------------------------------------------------------


def typeddict_items(
    walker: Walk, typ: TypedDictType, in_model_value: bool, info: TypeInfo | None = None
) -> Findings:
    owner = info or typ.fallback.type
    return merge(
        [in_field(walker.walk(item, in_model_value), owner, name) for name, item in typ.items.items()]
    )


def fields(walker: Walk, info: TypeInfo, typ: Instance | None, in_model_value: bool) -> Findings:
    self_type = typ or Instance(info, [AnyType(TypeOfAny.special_form)] * len(info.type_vars))
    # ``model_dump()`` leaves out excluded fields: what they hold is never serialized.
    facts = model_facts.facts_of(info) if in_model_value and walker.profile == "msgpack" else None
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
        parts.append(in_field(walker.walk(field_type, in_model_value), declared_in, name))
    return merge(parts)


def _needs_validation(typ: Type | None, depth: int = 0) -> bool:
    """Whether a value of ``typ`` changes when a model is built without validation from its
    ``model_dump()``: nested models and dataclasses are dicts there, tuples are lists."""
    proper = proper_type(typ)
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
        if info.fullname == "builtins.tuple" or "dataclass" in info.metadata or is_pydantic(info):
            return True
        return any(_needs_validation(arg, depth + 1) for arg in proper.args)
    return False


def _strict_rejects(typ: Type | None, depth: int = 0) -> bool:
    """Whether ``strict=True`` rejects what a value of ``typ`` is written as: a tuple comes back as
    a list, a dataclass as a dict (a nested model is validated by its own configuration)."""
    proper = proper_type(typ)
    if depth > 4 or proper is None:
        return False
    if isinstance(proper, TupleType):
        return True
    if isinstance(proper, UnionType):
        return any(_strict_rejects(item, depth + 1) for item in proper.items)
    if isinstance(proper, Instance):
        info = proper.type
        if is_pydantic(info):
            return False  # mypy marks models "dataclass" too (dataclass_transform)
        if info.fullname == "builtins.tuple" or "dataclass" in info.metadata:
            return True
        return any(_strict_rejects(arg, depth + 1) for arg in proper.args)
    return False
