"""LangChain agents (``langchain.agents.create_agent``, docs/discovery.md): the state schemas an
agent's graph is built from, and its middleware's hooks, which run as nodes.

``create_agent`` merges ``state_schema`` (default ``AgentState``) with the ``state_schema`` of each
middleware into the graph's state, and adds each middleware's ``before_*`` / ``after_*`` hooks as
nodes. A middleware's ``state_schema`` is a class attribute of an ``AgentMiddleware`` subclass, or
the ``state_schema=`` of a decorator (``before_model`` & co.), which builds an ``AgentMiddleware``
instance with it. Its generic parameter (``AgentMiddleware[S]``) changes nothing at run time.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import Expression, ListExpr, TupleExpr, TypeInfo, Var
from mypy.subtypes import find_member
from mypy.types import CallableType, Instance, Overloaded, Type, TypeType, get_proper_type

from mypy_lgstate.routes import discovery, sites

AGENT_MIDDLEWARE: Final = "langchain.agents.middleware.types.AgentMiddleware"
# The hooks create_agent adds as graph nodes (``wrap_*`` hooks wrap calls and write no state).
NODE_HOOKS: Final = tuple(
    f"{prefix}{when}_{what}"
    for prefix in ("", "a")
    for when in ("before", "after")
    for what in ("agent", "model")
)


def middleware_of(
    argument: tuple[Expression, Type] | None, api: TypeChecker
) -> list[Instance]:
    """The middleware passed as ``middleware=``: each item of a list or tuple display by its own
    type (the list's type is their join), else the item type of the argument's type."""
    if argument is None:
        return []
    expr, typ = argument
    if isinstance(expr, (ListExpr, TupleExpr)):
        types = [api.lookup_type_or_none(item) for item in expr.items]
    else:
        proper = get_proper_type(typ)
        types = [proper.args[0]] if isinstance(proper, Instance) and proper.args else []
    found: list[Instance] = []
    for item in types:
        middleware = get_proper_type(item) if item is not None else None
        if isinstance(middleware, Instance) and middleware.type.has_base(AGENT_MIDDLEWARE):
            found.append(middleware)
    return found


def declared_state_schema(middleware: Instance) -> TypeInfo | None:
    """The ``state_schema`` class attribute an ``AgentMiddleware`` subclass sets (mypy infers
    ``state_schema = S`` as the class's constructor, ``state_schema: type[S] = S`` as ``type[S]``)."""
    for base in middleware.type.mro:
        sym = base.names.get("state_schema")
        if sym is None:
            continue
        if base.fullname == AGENT_MIDDLEWARE or not isinstance(sym.node, Var):
            return None
        return _class_object_schema(sym.node.type)
    return None


def _class_object_schema(typ: Type | None) -> TypeInfo | None:
    proper = get_proper_type(typ) if typ is not None else None
    if isinstance(proper, Overloaded):
        proper = proper.items[0]
    if isinstance(proper, CallableType):
        return discovery.type_schema(proper.ret_type)
    if isinstance(proper, TypeType):
        return discovery.type_schema(proper.item)
    return None


def generic_state(middleware: Instance) -> TypeInfo | None:
    """The state parameter of ``AgentMiddleware[S, ...]``: what a decorator middleware was given as
    ``state_schema=`` (or inferred from the hook's parameter: hence used for channels only)."""
    base = next((b for b in middleware.type.mro if b.fullname == AGENT_MIDDLEWARE), None)
    if base is None:
        return None
    mapped = map_instance_to_supertype(middleware, base)
    return discovery.type_schema(mapped.args[0]) if mapped.args else None


def hook_nodes(middleware: Instance) -> list[sites.Node]:
    """The node hooks a middleware class defines itself (the base class's do nothing), named as
    create_agent names their nodes (``Middleware.before_model``)."""
    found: list[sites.Node] = []
    for hook in NODE_HOOKS:
        owner = next((b for b in middleware.type.mro if hook in b.names), None)
        if owner is None or owner.fullname == AGENT_MIDDLEWARE:
            continue
        bound = find_member(hook, middleware, middleware)
        if bound is not None:
            found.append(sites.Node(f"{middleware.type.name}.{hook}", bound))
    return found
