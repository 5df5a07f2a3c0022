"""What the checkpoint loader can re-import, by ``(module, __name__)``: not a class defined in a
function or a class body, nor, in general, a parametrized generic model (``Box[int]``), which pydantic
creates on first use and registers in a module only in some cases (docs/rules.md). The walker's judge
of such models."""

from __future__ import annotations


from mypy.nodes import TypeInfo
from mypy.types import (
    AnyType,
    Instance,
    NoneType,
    TupleType,
    Type,
    TypedDictType,
    TypeOfAny,
    UnionType,
)

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.findings import NOTHING, Findings
from mypy_lgstate.checker.judging import Walk
from mypy_lgstate.core import messages
from mypy_lgstate.routes import model_facts
from mypy_lgstate.routes.aliases import proper_type


def is_top_level(info: TypeInfo) -> bool:
    """Whether the loader can re-import ``info`` by ``(module, __name__)``."""
    return info.fullname == f"{info.module_name}.{info.name}"


def is_parametrized(typ: Instance) -> bool:
    """``Box[int]`` as opposed to a bare ``Box`` (whose arguments mypy fills with implicit Any)."""
    return any(
        not (isinstance(arg, AnyType) and arg.type_of_any == TypeOfAny.from_omitted_generics)
        for arg in map(proper_type, typ.args)
    )


def unimportable(walker: Walk, typ: Instance) -> Findings:
    """A parametrized generic model: the loader cannot re-import it, it comes back as a dict;
    unless pydantic registered it (``_registered``)."""
    if _registered(walker, typ):
        return NOTHING
    return walker.problem(
        codes.UNIMPORTABLE, typ, messages.GENERIC_MODEL_UNIMPORTABLE, _fix(walker, typ)
    )


def _registered(walker: Walk, typ: Instance) -> bool:
    """Whether pydantic registers ``Box[int]`` in the module of ``Box``, where the loader finds it:
    it does when a top-level ``class IntBox(Box[int])`` there is what first makes it
    (``model_facts.makes_base_first``). The generic's module runs whole before any module that
    imports it; what another module, or a function, makes first is not seen."""
    module = walker.module(typ.type.module_name)
    if module is None:
        return False
    return any(
        isinstance(info := symbol.node, TypeInfo)
        and info.module_name == module.fullname
        and any(isinstance(base, Instance) and base == typ for base in info.bases)
        and model_facts.makes_base_first(info)
        for symbol in module.names.values()
    )


def _fix(walker: Walk, typ: Instance) -> str:
    """Declare a concrete subclass: the one that exists (``class IntBox(Box[int])`` at the top
    level of the generic's module), or a new one under a name no class there has."""
    name = "".join(_name_part(arg) for arg in typ.args) + typ.type.name
    module = typ.type.module_name
    for candidate in (name, *(f"{name}{n}" for n in range(2, 10))):
        existing = walker.lookup(f"{module}.{candidate}")
        if not isinstance(existing, TypeInfo):
            return messages.generic_model_fix(f"class {candidate}({walker.type_name(typ)})")
        if is_top_level(existing) and any(
            isinstance(base, Instance) and base == typ for base in existing.bases
        ):
            return messages.generic_subclass_fix(existing.fullname, walker.type_name(typ))
    return messages.generic_model_fix(f"class {name}Model({walker.type_name(typ)})")


def registered_with_deferred_annotations(found: Findings) -> Findings:
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


def _name_part(arg: Type) -> str:
    """A PascalCase name for a type argument, for the concrete subclass a fix suggests."""
    proper = proper_type(arg)
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
