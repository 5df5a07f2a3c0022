"""What a pydantic model's class body says about its checkpoint round trip that its types do not.

The msgpack serializer writes a model as ``model_dump()`` and the loader rebuilds it with
``cls(**data)``, falling back to ``model_construct(**data)`` (no validation) when that fails. Whether
it fails, and what ``model_dump()`` leaves out, depends on ``Field(alias=..., exclude=...)``,
``model_config`` and decorators such as ``@model_serializer``: syntax, gone from the types mypy keeps.

``record`` reads them from the class body while mypy analyses the class (the one moment its body is
there in every mode) and stores them in the class's metadata, which mypy caches with the class: a
warm run, a parallel worker and the daemon read the same facts. Names are matched as written
(``Field``, ``pydantic.Field``): the body is not analysed yet when the hook runs. mypy's parser drops
a call inside an annotation (``Annotated[str, Field(alias="Name")]``), so such a statement is read
again from its source lines, with Python's own parser.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Final, NamedTuple

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Decorator,
    EllipsisExpr,
    Expression,
    FakeInfo,
    IndexExpr,
    MemberExpr,
    NameExpr,
    StrExpr,
    TempNode,
    TupleExpr,
    TypeInfo,
)
from mypy.plugin import ClassDefContext
from mypy.types import Instance, RawExpressionType, Type, UnboundType, has_type_vars

from mypy_lgstate.core import messages

METADATA_KEY: Final = "mypy_lgstate"
_MODELS: Final = ("pydantic.main.BaseModel", "pydantic.v1.main.BaseModel")
_BY_NAME_OPTIONS: Final = ("populate_by_name", "validate_by_name")
# pydantic.alias_generators: the generators whose aliases the plugin can compute.
_ALIAS_GENERATORS: Final = ("to_camel", "to_pascal", "to_snake")


def record(ctx: ClassDefContext) -> None:
    """The ``get_customize_class_mro_hook`` callback, for pydantic models only."""
    defn = ctx.cls
    facts: dict[str, object] = {
        "aliased": {},  # field -> has a default
        "excluded": {},  # field -> has a default
        "config": _class_keywords(defn),
        "computed": False,
        "serializer": False,
        "json": [],  # Json[...] fields
    }
    fields: list[tuple[str, bool]] = []  # the class's own annotated fields, with "has a default"
    for stmt in defn.defs.body:
        if isinstance(stmt, AssignmentStmt) and len(stmt.lvalues) == 1:
            target = stmt.lvalues[0]
            if not isinstance(target, NameExpr):
                continue
            if target.name == "model_config" and isinstance(stmt.rvalue, CallExpr):
                given = zip(stmt.rvalue.arg_names, stmt.rvalue.args)
                facts["config"] = {**_config_of(given), **_class_keywords(defn)}
            elif isinstance(stmt.rvalue, CallExpr) and _named(stmt.rvalue.callee, "Field"):
                _field_facts(target.name, stmt.rvalue, facts)
            if stmt.unanalyzed_type is None or target.name.startswith("_"):
                continue
            has_default = not isinstance(stmt.rvalue, TempNode) and not isinstance(
                stmt.rvalue, EllipsisExpr
            )
            if isinstance(stmt.rvalue, CallExpr) and _named(stmt.rvalue.callee, "Field"):
                has_default = _field_has_default(stmt.rvalue)
            annotation = stmt.unanalyzed_type
            if isinstance(annotation, UnboundType):
                last = annotation.name.rpartition(".")[2]
                if last == "Json":
                    _listed(facts, "json").append(target.name)
                elif last == "Annotated" and any(
                    isinstance(arg, RawExpressionType) for arg in annotation.args
                ):
                    _annotated_field_facts(ctx, stmt, target.name, has_default, facts)
            fields.append((target.name, has_default))
        elif isinstance(stmt, Decorator):
            names = {_name(d.callee if isinstance(d, CallExpr) else d) for d in stmt.original_decorators}
            facts["computed"] = bool(facts["computed"]) or "computed_field" in names
            facts["serializer"] = bool(facts["serializer"]) or "model_serializer" in names
    config = facts["config"]
    assert isinstance(config, dict)
    generator = config.get("alias_generator")
    if isinstance(generator, str):
        from pydantic import alias_generators

        generate = getattr(alias_generators, generator)
        aliased = facts["aliased"]
        assert isinstance(aliased, dict)
        for name, has_default in fields:
            if generate(name) != name:
                aliased.setdefault(name, has_default)
    makes_base_first = _makes_its_base_first(ctx)
    if makes_base_first is not None:
        facts["makes_base_first"] = makes_base_first
    defn.info.metadata[METADATA_KEY] = facts


def _makes_its_base_first(ctx: ClassDefContext) -> bool | None:
    """For ``class HitPage(Page[Hit])`` at a module's top level: whether pydantic first makes
    ``Page[Hit]`` there, which registers it in the module (where the loader finds it), rather than
    in a class body above it that names it in a field (which leaves it unregistered). A class body
    evaluates its annotations: a pydantic model's always, another's unless the module has ``from
    __future__ import annotations``. ``None``: no parametrized base, or not at the top level.
    Read from the module's syntax, in order, while it is there (measured in
    tests/test_verdicts_runtime.py)."""
    defn = ctx.cls
    if not any(
        isinstance(base, Instance) and base.args and not has_type_vars(base)
        for base in defn.info.bases
    ):
        return None  # the usual case: no concrete parametrization (``Box[int]``, not ``Box[T]``)
    bases = {_written(expr) for expr in defn.base_type_exprs if isinstance(expr, IndexExpr)}
    tree = ctx.api.modules.get(ctx.api.cur_mod_id)
    if not bases - {None} or tree is None:
        return None
    deferred = tree.is_future_flag_set("annotations")
    for stmt in tree.defs:
        if stmt is defn:
            return True
        if not isinstance(stmt, ClassDef):
            continue
        evaluated = (
            not deferred
            or isinstance(stmt.info, FakeInfo)  # not analysed yet: as if it were a model
            or any(base.fullname in _MODELS for base in stmt.info.mro)
        )
        if evaluated and any(
            _written_types(field.unanalyzed_type) & bases
            for field in stmt.defs.body
            if isinstance(field, AssignmentStmt) and field.unanalyzed_type is not None
        ):
            return False
    return None


def _written(expr: Expression) -> str | None:
    """``Page[Hit]`` as written, by the last part of each name."""
    if isinstance(expr, (NameExpr, MemberExpr)):
        return expr.name
    if isinstance(expr, IndexExpr):
        base = _written(expr.base)
        items = expr.index.items if isinstance(expr.index, TupleExpr) else [expr.index]
        args = [_written(item) for item in items]
        if base is None or None in args:
            return None
        return f"{base}[{', '.join(arg for arg in args if arg is not None)}]"
    return None


def _written_types(typ: Type) -> set[str]:
    """Every subscripted type an annotation writes (``list[Page[Hit]] | None``: ``list[Page[Hit]]``
    and ``Page[Hit]``), as ``_written`` writes them."""
    if not isinstance(typ, UnboundType):
        return set().union(*(_written_types(item) for item in getattr(typ, "items", ())))
    found = set().union(*(_written_types(arg) for arg in typ.args))
    args = [_unbound_text(arg) for arg in typ.args]
    if typ.args and None not in args:
        found.add(f"{typ.name.rpartition('.')[2]}[{', '.join(arg for arg in args if arg)}]")
    return found


def _unbound_text(typ: Type) -> str | None:
    if not isinstance(typ, UnboundType):
        return None
    args = [_unbound_text(arg) for arg in typ.args]
    if None in args:
        return None
    name = typ.name.rpartition(".")[2]
    return f"{name}[{', '.join(arg for arg in args if arg)}]" if args else name


def makes_base_first(info: TypeInfo) -> bool:
    """Whether ``info`` (``class HitPage(Page[Hit])``) is where pydantic first makes its base."""
    data = info.metadata.get(METADATA_KEY)
    return isinstance(data, dict) and data.get("makes_base_first") is True


def _listed(facts: dict[str, object], key: str) -> list[str]:
    found = facts[key]
    assert isinstance(found, list)
    return found


def _field_has_default(call: CallExpr) -> bool:
    kwargs = {arg_name: arg for arg_name, arg in zip(call.arg_names, call.args) if arg_name}
    positional = [arg for arg_name, arg in zip(call.arg_names, call.args) if arg_name is None]
    return (
        "default_factory" in kwargs
        or ("default" in kwargs and not isinstance(kwargs["default"], EllipsisExpr))
        or (bool(positional) and not isinstance(positional[0], EllipsisExpr))
    )


def _annotated_field_facts(
    ctx: ClassDefContext, stmt: AssignmentStmt, name: str, has_default: bool,
    facts: dict[str, object],
) -> None:
    """``name: Annotated[str, Field(alias="Name")]``: mypy's parser keeps no call in an annotation,
    so the statement's source lines are parsed again."""
    path = ctx.api.cur_mod_node.path if hasattr(ctx.api, "cur_mod_node") else ""
    try:
        with open(path, encoding="utf-8") as source:
            lines = source.read().splitlines()[stmt.line - 1:(stmt.end_line or stmt.line)]
        tree = ast.parse("\n".join(line.strip() for line in lines[:1]) + "\n" + "\n".join(lines[1:]))
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.AnnAssign):
            continue
        for call in ast.walk(node.annotation):
            if not isinstance(call, ast.Call):
                continue
            callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(
                call.func, "id", None
            )
            if callee != "Field":
                continue
            keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
            if "default" in keywords or "default_factory" in keywords:
                has_default = True
            if _ast_aliases_away(keywords, name):
                aliased = facts["aliased"]
                assert isinstance(aliased, dict)
                aliased[name] = has_default
        return


def _ast_aliases_away(keywords: dict[str, ast.expr], name: str) -> bool:
    alias = keywords.get("alias")
    if alias is not None and not (isinstance(alias, ast.Constant) and alias.value == name):
        return True
    validation = keywords.get("validation_alias")
    if validation is None:
        return False
    if isinstance(validation, ast.Constant):
        return validation.value != name
    if isinstance(validation, ast.Call) and getattr(validation.func, "id", "") == "AliasChoices":
        return not any(isinstance(a, ast.Constant) and a.value == name for a in validation.args)
    return True


def _aliases_away(kwargs: dict[str, Expression], name: str) -> bool:
    """Whether ``Field(alias=..., validation_alias=...)`` makes ``cls(name=...)`` miss the field:
    an alias other than the name, or a validation alias whose choices leave the name out."""
    alias = kwargs.get("alias")
    if alias is not None and not (isinstance(alias, StrExpr) and alias.value == name):
        return True
    validation = kwargs.get("validation_alias")
    if validation is None:
        return False
    if isinstance(validation, StrExpr):
        return validation.value != name
    if isinstance(validation, CallExpr) and _named(validation.callee, "AliasChoices"):
        return not any(isinstance(arg, StrExpr) and arg.value == name for arg in validation.args)
    return True


def _field_facts(name: str, call: CallExpr, facts: dict[str, object]) -> None:
    kwargs = {arg_name: arg for arg_name, arg in zip(call.arg_names, call.args) if arg_name}
    has_default = _field_has_default(call)
    if _aliases_away(kwargs, name):
        aliased = facts["aliased"]
        assert isinstance(aliased, dict)
        aliased[name] = has_default
    exclude = kwargs.get("exclude")
    if isinstance(exclude, NameExpr) and exclude.name == "True":
        excluded = facts["excluded"]
        assert isinstance(excluded, dict)
        excluded[name] = has_default


def _config_of(arguments: Iterable[tuple[str | None, Expression]]) -> dict[str, object]:
    """The parts that matter of ``ConfigDict(extra="forbid", populate_by_name=True)`` (or
    ``dict(...)``, or the class keywords)."""
    found: dict[str, object] = {}
    for arg_name, arg in arguments:
        if arg_name == "extra" and isinstance(arg, StrExpr):
            found["extra"] = arg.value
        elif arg_name in _BY_NAME_OPTIONS and isinstance(arg, NameExpr):
            found["by_name"] = arg.name == "True"
        elif arg_name == "serialize_by_alias" and isinstance(arg, NameExpr):
            found["by_alias"] = arg.name == "True"  # model_dump() writes the aliases
        elif arg_name == "strict" and isinstance(arg, NameExpr):
            found["strict"] = arg.name == "True"
        elif arg_name == "alias_generator":
            generator = _name(arg)
            found["alias_generator"] = generator if generator in _ALIAS_GENERATORS else None
    return found


def _class_keywords(defn: ClassDef) -> dict[str, object]:
    """``class M(BaseModel, extra="forbid", populate_by_name=True)``."""
    return _config_of(defn.keywords.items())


def _named(expr: Expression, name: str) -> bool:
    return _name(expr) == name


def _name(expr: Expression) -> str | None:
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        return expr.name
    return None


class ModelFacts(NamedTuple):
    """The facts of a model and its bases, merged the way pydantic merges them."""

    aliased: dict[str, bool]
    excluded: dict[str, bool]
    by_name: bool
    forbids_extra: bool
    computed: bool
    serializer: bool
    json: tuple[str, ...] = ()
    strict: bool = False  # strict=True: the walker finds the fields it rejects from their types
    allows_extra: bool = False  # extra="allow": model_dump() writes values no field declares

    @property
    def falls_back(self) -> str | None:
        """Why ``cls(**model_dump())`` fails, sending the loader to ``model_construct``."""
        for name, has_default in self.aliased.items():
            if not has_default and not self.by_name:
                return messages.aliased_field_fallback(name)
        for name in self.json:
            return messages.json_field_fallback(name)
        for name, has_default in self.excluded.items():
            if not has_default:
                return messages.excluded_field_fallback(name)
        if self.forbids_extra and self.computed:
            return messages.FORBIDDEN_COMPUTED_FALLBACK
        return None


def facts_of(info: TypeInfo) -> ModelFacts | None:
    """The facts of ``info`` and its bases; ``None`` when no class of its MRO recorded any."""
    merged: ModelFacts | None = None
    previous_strict = previous_by_alias = False
    for base in reversed(info.mro):
        data = base.metadata.get(METADATA_KEY)
        if not isinstance(data, dict):
            continue
        config = data.get("config", {})
        previous = merged or ModelFacts({}, {}, False, False, False, False)
        strict = bool(config.get("strict", previous_strict))
        by_alias = bool(config.get("by_alias", previous_by_alias))
        previous_strict, previous_by_alias = strict, by_alias
        merged = ModelFacts(
            {} if by_alias else {**previous.aliased, **data.get("aliased", {})},
            {**previous.excluded, **data.get("excluded", {})},
            bool(config.get("by_name", previous.by_name)),
            config.get("extra", "forbid" if previous.forbids_extra else None) == "forbid",
            previous.computed or bool(data.get("computed")),
            previous.serializer or bool(data.get("serializer")),
            (*previous.json, *data.get("json", ())),
            strict,
            config.get("extra", "allow" if previous.allows_extra else None) == "allow",
        )
    return merged
