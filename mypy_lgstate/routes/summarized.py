"""Which functions of a module get a summary (``summaries``): those whose result may reach a
checkpoint and whose declared type does not say all of it. A module whose functions return none of
these (models, records, lists of records, strings) records nothing: most modules of an application
never touch LangGraph, and a summary costs them its reading, and their interface its size.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import FuncDef, TypeInfo
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Type,
    TypedDictType,
    TypeVarType,
    UnionType,
)

from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.sites import LISTS

COMMAND: Final = "langgraph.types.Command"
STATE_GRAPH: Final = "langgraph.graph.state.StateGraph"
AGENT_MIDDLEWARE: Final = "langchain.agents.middleware.types.AgentMiddleware"


def worth_summarizing(defn: FuncDef) -> bool:
    """Whether what ``defn`` returns may reach a checkpoint and its declared type does not say it
    all: no declared return type, or one that holds a dict, a function, a ``Command``, ``Any``, a
    list that may hold middleware or commands, or the state class its own parameters are declared
    as (a node may return a dict where the whole state is declared); or it is given a builder (it
    may add nodes). Most functions of an application return none of these (a model, a list of
    records, a ``TypedDict`` record made from other values): their modules record nothing."""
    signature = defn.type
    if not isinstance(signature, CallableType):
        return True  # unannotated: its body tells
    given = signature.arg_types
    return _may_hold_update(signature.ret_type, given) or any(map(is_builder, given))


def _may_hold_update(typ: Type, given: list[Type]) -> bool:
    """``given``: the types of the function's parameters."""
    ret = proper_type(typ)
    if isinstance(ret, UnionType):
        return any(_may_hold_update(item, given) for item in ret.items)
    if isinstance(ret, (AnyType, CallableType)):
        return True
    if isinstance(ret, TypedDictType):
        return _is_given(ret.fallback.type, given)
    if not isinstance(ret, Instance):
        return False
    name = ret.type.fullname
    if name in _WRAPPING and ret.args:  # a coroutine's or a generator's result
        return _may_hold_update(ret.args[_WRAPPING[name]], given)
    if name in LISTS:
        return not ret.args or _may_be_listed(ret.args[0])
    if "dataclass" in ret.type.metadata or ret.type.has_base("pydantic.main.BaseModel"):
        return _is_given(ret.type, given)
    return name in _UPDATES or ret.type.has_base(AGENT_MIDDLEWARE)


def _may_be_listed(typ: Type) -> bool:
    """Whether a list of ``typ`` may be a middleware list or a node's commands."""
    item = proper_type(typ)
    if isinstance(item, UnionType):
        return any(_may_be_listed(member) for member in item.items)
    if isinstance(item, (AnyType, TypeVarType)):
        return True
    return isinstance(item, Instance) and (
        item.type.fullname in ("builtins.object", COMMAND) or item.type.has_base(AGENT_MIDDLEWARE)
    )


def _is_given(info: TypeInfo, given: list[Type]) -> bool:
    """Whether a parameter is declared as the class ``info`` (a node's whole state)."""
    for typ in given:
        proper = proper_type(typ)
        if isinstance(proper, TypedDictType):
            proper = proper.fallback
        if isinstance(proper, Instance) and proper.type is info:
            return True
    return False


# Types whose values a summary may tell more of than the declared type: mappings (their keys),
# sequences (middleware lists), functions (a wrapper's closure), ``Command``.
_UPDATES: Final = frozenset(
    {
        "builtins.dict", "typing.Mapping", "typing.MutableMapping", "builtins.object",
        "builtins.function", "typing.Callable", COMMAND,
    }
)
_WRAPPING: Final = {
    "typing.Coroutine": 2, "typing.Awaitable": 0, "typing.Iterator": 0, "typing.Generator": 0,
    "typing.AsyncIterator": 0, "typing.AsyncGenerator": 0, "typing.Iterable": 0,
    "typing.AsyncIterable": 0,
}


def is_builder(typ: Type) -> bool:
    """A ``StateGraph`` (or a subclass of it)."""
    proper = proper_type(typ)
    return isinstance(proper, Instance) and proper.type.has_base(STATE_GRAPH)
