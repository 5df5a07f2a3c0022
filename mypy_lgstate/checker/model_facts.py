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
    MemberExpr,
    NameExpr,
    StrExpr,
    TempNode,
    TypeInfo,
)
from mypy.plugin import ClassDefContext
from mypy.types import RawExpressionType, UnboundType

from mypy_lgstate.core import messages

METADATA_KEY: Final = "mypy_lgstate"
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
    defn.info.metadata[METADATA_KEY] = facts


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
