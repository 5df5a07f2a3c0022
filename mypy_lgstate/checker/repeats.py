"""What a write restates of the graph's own schemas, and so adds nothing.

A value written to a channel (``Send("work", {"order": state["order"]})``, ``graph.invoke({"order":
order})`` with ``order: Order``, a node declared ``-> State``, a node body's ``{"started": started}``
with ``started`` narrowed from ``datetime | None``) holds what the schema's own check already
reported where the class became graph state: reporting it again at every write would count one
problem many times. A problem of a written value is restated when the channel's declared type has
the same problem at the same place (the items of a returned ``[section]`` under a channel declared
``list[Section]`` too). Only what a write adds is reported: another problem, or a key the schemas do
not declare.

Nor is a value reported that comes back as what the channel declares: a ``str`` subclass
(LangChain's ``AIMessage.text``) where ``str`` is declared (json: a ``str`` enum's member too,
written as its value), and, in a graph whose state is a pydantic model, a tuple where a list or a
tuple is declared (LangGraph validates the state before each node, so nodes get the declared type;
a tuple field's stored list is reported at the field). Measured in ``tests/test_verdicts_runtime.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from mypy.nodes import TypeInfo
from mypy.subtypes import is_same_type
from mypy.type_visitor import TypeTranslator
from mypy.types import (
    AnyType,
    Instance,
    ProperType,
    TupleType,
    Type,
    TypeAliasType,
    TypedDictType,
    UnionType,
)

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.findings import Findings, Problem
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core import rules
from mypy_lgstate.core.messages import ENUM_JSON_FIX_START, field_part
from mypy_lgstate.routes import discovery, sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.schemas import model_fields

# The write sites whose dict items update the channels of the graph key by key (``Send.arg`` is the
# state a node of the same graph starts from).
CHANNEL_ITEM_ROOTS: Final = sites.CHANNEL_ROOTS | {"Send.arg"}

Declared = Mapping[str, Sequence[Type]]

# One step of a path: ``[0]``, ``[]``, ``{}``, ``{**}``, ``["key"]``, ``.field``.
_STEP: Final = re.compile(r'\[\d*\]|\{\}|\{\*\*\}|\["(?:[^"\\]|\\.)*"\]|\.\w+')
# The subclasses of these come back as the plain class (rules.TYPE_RULES): by the fix they get.
_BASE_OF_SUBCLASS_FIX: Final = {
    verdict.fix: fullname
    for fullname in ("builtins.str", "builtins.int", "builtins.float")
    for rule in [rules.TYPE_RULES[fullname]]
    for verdict in (rule.subclass_json, rule.subclass_msgpack)
    if verdict is not None
}


def is_declared(key: str, typ: Type, declared: Declared) -> bool:
    """Whether ``typ`` is a type the graph declares for channel ``key``."""
    return any(is_same_type(typ, channel) for channel in declared.get(key, ()))


def restates_channel(key: str, typ: Type, declared: Declared) -> bool:
    """Whether a value of ``typ`` written to channel ``key`` is of its declared type, but for
    ``Any`` joined in (``state.get("tags", set()) | {"x"}`` is ``set[str | Any]`` for a ``set[str]``
    channel): its problems are the declared type's, reported at the field."""
    channels = declared.get(key, ())
    if not channels or isinstance(proper_type(typ), AnyType):
        return False
    stripped = typ.accept(_AnyMembersDropped())
    return any(is_same_type(stripped, channel) for channel in channels)


class _AnyMembersDropped(TypeTranslator):
    """A type without the ``Any`` members of its unions (``set[str | Any]`` -> ``set[str]``)."""

    def visit_union_type(self, t: UnionType, /) -> Type:
        kept = [item for item in t.items if not isinstance(proper_type(item), AnyType)]
        return UnionType.make_union(self.translate_type_list(kept or t.items))

    def visit_type_alias_type(self, t: TypeAliasType, /) -> Type:
        return proper_type(t).accept(self)


def restated_update_fields(update: Type, node_root: str, declared: Declared) -> list[str]:
    """The paths (``node().key``) of the fields of a node's declared update type (a TypedDict, a
    model or a dataclass) whose type is the one the graph declares for that channel."""
    return [node_root + field_part(key) for key in restated_keys(proper_type(update), declared)]


def restated_keys(update: ProperType, declared: Declared) -> list[str]:
    """The fields of ``update`` (``restated_update_fields``)."""
    if not declared:
        return []
    if isinstance(update, TypedDictType):
        items = list(update.items.items())
    elif isinstance(update, Instance) and discovery.is_schema(update.type):
        items = [(key, var.type) for key, var, _ in model_fields(update.type) if var.type is not None]
    else:
        return []
    return [key for key, typ in items if is_declared(key, typ, declared)]


def update_class(update: ProperType) -> TypeInfo | None:
    """The class of a node's declared update type when the class alone decides its fields (a class
    without type arguments): what ``restated_keys`` answers is the same for every node declared with
    it. mypy types a TypedDict class named in an annotation with the class as its fallback (an
    anonymous TypedDict has ``typing._TypedDict``, which decides nothing)."""
    if isinstance(update, TypedDictType):
        fallback = update.fallback
        if fallback.args or fallback.type.typeddict_type is None:
            return None
        return fallback.type
    if isinstance(update, Instance) and not update.args:
        return update.type
    return None


def added(
    walker: Walker,
    found: Findings,
    root: str,
    declared: Declared,
    schemas: Sequence[TypeInfo],
) -> Findings:
    """``found``, the problems of values written under ``root`` (``Command.update``, ``node()``),
    without those the declared type of their channel restates or that come back as it."""
    if not declared or not found.problems:
        return found
    revalidated = bool(schemas) and any(
        base.fullname in rules.PYDANTIC_MODELS for base in schemas[0].mro
    )
    kept = tuple(
        problem for problem in found.problems
        if not _says_nothing_new(walker, problem, root, declared, revalidated)
    )
    return found if len(kept) == len(found.problems) else found._replace(problems=kept)


def _says_nothing_new(
    walker: Walker, problem: Problem, root: str, declared: Declared, revalidated: bool
) -> bool:
    place = channel_of(problem.path, root)
    if place is None or (problem.path[len(root):].startswith(".") and not root.endswith("()")):
        # ``root.key``: a field of a class written whole (``Send("work", job)``), which is where
        # its problem is declared (a graph-state class is not reported again: ``sites``).
        return False
    key, rest = place
    types = declared.get(key)
    if not types:
        return False
    steps = _steps(rest)
    if steps is None:
        return False
    if any(_restated(walker, problem, steps, typ) for typ in types):
        return True
    there = [typ for declared_type in types for typ in _declared_at(declared_type, steps)]
    base_name = _plain_base(problem)
    if base_name is not None:
        base = walker.lookup(base_name)
        return isinstance(base, TypeInfo) and any(_holds(base, typ) for typ in there)
    if revalidated and problem.fix == rules.TUPLE_AS_LIST.fix:
        return any(_is_sequence(typ) for typ in there)
    return False


def _plain_base(problem: Problem) -> str | None:
    """The plain class a lossy value comes back as, when it is a subclass of it: a ``str``, ``int``
    or ``float`` subclass, or (json) an enum with such a mixin, which is written as its value."""
    if problem.code is not codes.LOSSY:
        return None
    if problem.fix in _BASE_OF_SUBCLASS_FIX:
        return _BASE_OF_SUBCLASS_FIX[problem.fix]
    if problem.fix.startswith(ENUM_JSON_FIX_START):
        back_as = problem.what.rpartition(" ")[2]
        return next((mixin for mixin, name in rules.JSON_VALUE_MIXINS if name == back_as), None)
    return None


def channel_of(path: str, root: str) -> tuple[str, str] | None:
    """The channel a path under ``root`` writes, and the rest of the path below it:
    ``root["key"][0]`` (``root[0]["key"]`` for the inputs of ``batch``), or ``root.key[0]``."""
    if not path.startswith(root):
        return None
    rest = path[len(root):]
    if rest.startswith("[") and not rest.startswith('["'):
        rest = rest[rest.index("]") + 1:]
    if rest.startswith('["'):
        end = rest.find('"]', 2)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find('"]', end + 1)
        if end < 0:
            return None
        key = rest[2:end]  # a JSON string: read as JSON only when it escapes a character
        return json.loads(rest[1:end + 1]) if "\\" in key else key, rest[end + 2:]
    match = re.match(r"\.(\w+)", rest)
    return (match[1], rest[match.end():]) if match else None


def _steps(rest: str) -> list[str] | None:
    """The steps of a path below a channel, each index as ``[]``, each key as a field; ``None``
    when it cannot be read back."""
    steps = _STEP.findall(rest)
    if "".join(steps) != rest:
        return None
    return ["[]" if step[0] == "[" and not step.startswith('["') else
            field_part(json.loads(step[1:-1])) if step.startswith('["') else step
            for step in steps]


def _restated(walker: Walker, problem: Problem, steps: list[str], declared: Type) -> bool:
    """Whether the walk of ``declared`` finds the same problem at the same place."""
    where = "".join(steps)
    any_tuple = problem.fix == rules.TUPLE_AS_LIST.fix  # every tuple comes back as a list alike
    for known in walker.check_value(declared, "").problems:
        if (
            known.code is problem.code
            and known.what == problem.what
            and known.fix == problem.fix
            and (any_tuple or known.type_name == problem.type_name)
            and _steps(known.path) == _steps(where)
        ):
            return True
    return False


def _declared_at(typ: Type, steps: list[str]) -> Iterator[Type]:
    """The types ``typ`` declares at ``steps`` below it (each member of a union)."""
    proper = proper_type(typ)
    members = sites.union_items(proper)
    if not steps:
        yield from members
        return
    step, rest = steps[0], steps[1:]
    for member in members:
        for inner in _step_into(member, step):
            yield from _declared_at(inner, rest)


def _step_into(typ: Type, step: str) -> list[Type]:
    proper = proper_type(typ)
    if step == "[]":
        if isinstance(proper, TupleType):
            return list(proper.items)
        if isinstance(proper, Instance) and proper.args and (
            proper.type.fullname in rules.SEQUENCES | rules.SETS
            or proper.type.fullname in (rules.DEQUE, "builtins.tuple")
        ):
            return [proper.args[0]]
        return []
    if step == "{}":
        if isinstance(proper, Instance) and proper.type.fullname in rules.MAPPINGS:
            return list(proper.args[1:2])
        return []
    name = json.loads(step[1:-1]) if step.startswith('["') else step[1:]
    if isinstance(proper, TypedDictType):
        return [proper.items[name]] if name in proper.items else []
    if isinstance(proper, Instance) and proper.type.fullname in rules.MAPPINGS:
        return list(proper.args[1:2])
    return []


def _holds(base: TypeInfo, declared: Type) -> bool:
    """Whether a value of class ``base`` (what a subclass's value comes back as) is one of
    ``declared``."""
    proper = proper_type(declared)
    if isinstance(proper, AnyType):
        return True
    return isinstance(proper, Instance) and base.has_base(proper.type.fullname)


def _is_sequence(declared: Type) -> bool:
    """A list, a tuple, a sequence: what pydantic validates a tuple (or the list it comes back as)
    into."""
    proper = proper_type(declared)
    return isinstance(proper, TupleType) or (
        isinstance(proper, Instance)
        and (proper.type.fullname in rules.SEQUENCES or proper.type.fullname == "builtins.tuple")
    )
