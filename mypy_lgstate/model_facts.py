"""What a pydantic model's class body says about its checkpoint round trip that its types do not.

The msgpack serializer writes a model as ``model_dump()`` and the loader rebuilds it with
``cls(**data)``, falling back to ``model_construct(**data)`` (no validation) when that fails. Whether
it fails, and what ``model_dump()`` leaves out, depends on ``Field(alias=..., exclude=...)``,
``model_config`` and decorators such as ``@model_serializer``: syntax, gone from the types mypy keeps.

``record`` reads them from the class body while mypy analyses the class (the one moment its body is
there in every mode) and stores them in the class's metadata, which mypy caches with the class: a
warm run, a parallel worker and the daemon read the same facts. Names are matched as written
(``Field``, ``pydantic.Field``): the body is not analysed yet when the hook runs.
"""

from __future__ import annotations

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
    TypeInfo,
)
from mypy.plugin import ClassDefContext

from mypy_lgstate import messages

METADATA_KEY: Final = "mypy_lgstate"
_BY_NAME_OPTIONS: Final = ("populate_by_name", "validate_by_name")


def record(ctx: ClassDefContext) -> None:
    """The ``get_customize_class_mro_hook`` callback, for pydantic models only."""
    defn = ctx.cls
    facts: dict[str, object] = {
        "aliased": {},  # field -> has a default
        "excluded": {},  # field -> has a default
        "config": _class_keywords(defn),
        "computed": False,
        "serializer": False,
    }
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
        elif isinstance(stmt, Decorator):
            names = {_name(d.callee if isinstance(d, CallExpr) else d) for d in stmt.original_decorators}
            facts["computed"] = bool(facts["computed"]) or "computed_field" in names
            facts["serializer"] = bool(facts["serializer"]) or "model_serializer" in names
    defn.info.metadata[METADATA_KEY] = facts


def _field_facts(name: str, call: CallExpr, facts: dict[str, object]) -> None:
    kwargs = {arg_name: arg for arg_name, arg in zip(call.arg_names, call.args) if arg_name}
    positional = [arg for arg_name, arg in zip(call.arg_names, call.args) if arg_name is None]
    has_default = (
        "default_factory" in kwargs
        or ("default" in kwargs and not isinstance(kwargs["default"], EllipsisExpr))
        or (bool(positional) and not isinstance(positional[0], EllipsisExpr))
    )
    if "alias" in kwargs or "validation_alias" in kwargs:
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

    @property
    def falls_back(self) -> str | None:
        """Why ``cls(**model_dump())`` fails, sending the loader to ``model_construct``."""
        for name, has_default in self.aliased.items():
            if not has_default and not self.by_name:
                return messages.aliased_field_fallback(name)
        for name, has_default in self.excluded.items():
            if not has_default:
                return messages.excluded_field_fallback(name)
        if self.forbids_extra and self.computed:
            return messages.FORBIDDEN_COMPUTED_FALLBACK
        return None


def facts_of(info: TypeInfo) -> ModelFacts | None:
    """The facts of ``info`` and its bases; ``None`` when no class of its MRO recorded any."""
    merged: ModelFacts | None = None
    for base in reversed(info.mro):
        data = base.metadata.get(METADATA_KEY)
        if not isinstance(data, dict):
            continue
        config = data.get("config", {})
        previous = merged or ModelFacts({}, {}, False, False, False, False)
        merged = ModelFacts(
            {**previous.aliased, **data.get("aliased", {})},
            {**previous.excluded, **data.get("excluded", {})},
            bool(config.get("by_name", previous.by_name)),
            config.get("extra", "forbid" if previous.forbids_extra else None) == "forbid",
            previous.computed or bool(data.get("computed")),
            previous.serializer or bool(data.get("serializer")),
        )
    return merged
