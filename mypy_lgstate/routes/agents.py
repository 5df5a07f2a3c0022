"""LangChain agents (``langchain.agents.create_agent``, docs/discovery.md): the state schemas an
agent's graph is built from, its middleware's hooks, which run as nodes, and the structured
response it keeps.

``create_agent`` merges ``state_schema`` (default ``AgentState``) with the ``state_schema`` of each
middleware into the graph's state, and adds each middleware's ``before_*`` / ``after_*`` hooks as
nodes. A middleware's ``state_schema`` is a class attribute of an ``AgentMiddleware`` subclass, or
the ``state_schema=`` of a decorator (``before_model`` & co.), which builds an ``AgentMiddleware``
instance with it. Its generic parameter (``AgentMiddleware[S]``) changes nothing at run time.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    CallExpr,
    Expression,
    IndexExpr,
    OpExpr,
    RefExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import FunctionContext
from mypy.subtypes import find_member
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Overloaded,
    Type,
    TypedDictType,
    TypeType,
    TypeVarType,
    UnionType,
)

from mypy_lgstate.routes import discovery, lists, middleware_lists, sites
from mypy_lgstate.routes.aliases import proper_type

AGENT_MIDDLEWARE: Final = "langchain.agents.middleware.types.AgentMiddleware"
# The channel an agent with a ``response_format=`` keeps the parsed response in.
STRUCTURED_RESPONSE: Final = "structured_response"
# The hooks create_agent adds as graph nodes (``wrap_*`` hooks wrap calls and write no state).
NODE_HOOKS: Final = tuple(
    f"{prefix}{when}_{what}"
    for prefix in ("", "a")
    for when in ("before", "after")
    for what in ("agent", "model")
)


class Agent(NamedTuple):
    """The graph a ``create_agent(...)`` call builds, as far as the call and this module show."""

    states: list[TypeInfo]  # checked as state: ``state_schema=``, each middleware's own
    classes: tuple[TypeInfo, ...]  # every class of its channels, which compile() derives from
    nodes: list[sites.Node]  # the middleware's hooks
    unresolved: list[str]  # why some middleware is not known (for lgstate report)
    # The type of the parsed response an agent with a ``response_format=`` checkpoints.
    structured_response: Type | None


def create_agent_graph(
    ctx: FunctionContext, scope: lists.Scope, elsewhere: lists.Elsewhere | None = None
) -> Agent:
    """What ``create_agent(state_schema=..., middleware=[...], response_format=...)`` declares.
    ``elsewhere``: what another module recorded of the middleware lists its functions return."""
    assert isinstance(ctx.api, TypeChecker)
    bound = discovery.bound_arguments(ctx)
    base = discovery.given_schema(bound, "state_schema")
    # The graph's own type names AgentState and its input and output schemas.
    defaults = discovery.graph_type_schemas(ctx.default_return_type)
    states: list[TypeInfo] = [base] if base is not None else []
    channel_classes = [*states, *defaults]
    nodes: list[sites.Node] = []
    given_middleware, unresolved = middleware_of(
        bound.get("middleware"), ctx.api, scope, ctx.context.line, elsewhere
    )
    for middleware in given_middleware:
        schema = declared_state_schema(middleware)
        if schema is not None:
            states.append(schema)
        else:
            schema = generic_state(middleware)
        if schema is not None:
            channel_classes.append(schema)
        nodes.extend(hook_nodes(middleware))
    response = (
        structured_response(bound["response_format"], ctx.default_return_type)
        if "response_format" in bound
        else None
    )
    return Agent(
        list(dict.fromkeys(states)), tuple(dict.fromkeys(channel_classes)), nodes, unresolved, response
    )


def middleware_of(
    argument: tuple[Expression, Type] | None,
    api: TypeChecker,
    scope: lists.Scope,
    line: int,
    elsewhere: lists.Elsewhere | None = None,
) -> tuple[list[Instance], list[str]]:
    """The middleware passed as ``middleware=`` (each item by its own class: the list's type is
    their join), followed through the list's variables and helpers in this module
    (``middleware_lists``); and why some items are not known, if so."""
    if argument is None:
        return [], []
    expr, typ = argument
    items = middleware_lists.middleware_items(expr, api, scope, line, elsewhere)
    types = items.types
    if items.unresolved:
        # What the list's declared type says of the rest (usually the join, AgentMiddleware).
        proper = proper_type(typ)
        types = [*types, proper.args[0]] if isinstance(proper, Instance) and proper.args else types
    found: list[Instance] = []
    for item in types:
        middleware = proper_type(item)
        if (
            isinstance(middleware, Instance)
            and middleware.type.has_base(AGENT_MIDDLEWARE)
            and middleware not in found
        ):
            found.append(middleware)
    return found, items.unresolved


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
    proper = proper_type(typ) if typ is not None else None
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


def structured_response(argument: tuple[Expression, Type], agent: Type) -> Type | None:
    """The type of the ``structured_response`` an agent keeps: the class the ``response_format=``
    argument names (``Model``, ``ToolStrategy(Model)``, ``ToolStrategy(A | B)``), read from the
    argument itself, so that the call's context cannot hide it (``return create_agent(...)`` in a
    function declared ``-> Any``); else from the graph's type (``CompiledStateGraph[AgentState[Model],
    ...]``, inferred by mypy). ``None`` when the response is untyped (a JSON-schema dict)."""
    named = _named_schema(argument[0])
    if named is not None:
        return named
    proper = proper_type(agent)
    if not isinstance(proper, Instance) or not proper.args:
        return None
    state = proper_type(proper.args[0])
    if not isinstance(state, TypedDictType):
        return None
    response = state.items.get(STRUCTURED_RESPONSE)
    if response is None or isinstance(proper_type(response), (AnyType, TypeVarType)):
        return None
    if _is_loose_dict(response):
        return None
    return response


def _named_schema(expr: Expression) -> Type | None:
    """The class (or union of classes) a ``response_format=`` expression names."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        if expr.callee.fullname in _STRATEGIES and expr.args:
            return _named_schema(expr.args[0])
        return None
    if isinstance(expr, OpExpr) and expr.op == "|":
        left, right = _named_schema(expr.left), _named_schema(expr.right)
        return UnionType.make_union([left, right]) if left is not None and right is not None else None
    if (
        isinstance(expr, IndexExpr)
        and isinstance(expr.base, RefExpr)
        and expr.base.fullname in _UNIONS
    ):  # ``Union[A, B]``
        members = expr.index.items if isinstance(expr.index, TupleExpr) else [expr.index]
        named = [_named_schema(member) for member in members]
        known = [typ for typ in named if typ is not None]
        return UnionType.make_union(known) if known and len(known) == len(named) else None
    if isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo) and discovery.is_schema(expr.node):
        return discovery.schema_type(expr.node)
    return None


_UNIONS: Final = frozenset({"typing.Union", "typing_extensions.Union"})
# The strategies that wrap a response schema (``langchain.agents.structured_output``).
_STRATEGIES: Final = frozenset(
    f"langchain.agents.structured_output.{name}"
    for name in ("ToolStrategy", "ProviderStrategy", "AutoStrategy")
)


def _is_loose_dict(typ: Type) -> bool:
    """``dict[str, Any]``: a raw JSON-schema ``response_format`` gives a plain dict back."""
    proper = proper_type(typ)
    return (
        isinstance(proper, Instance)
        and proper.type.fullname == "builtins.dict"
        and len(proper.args) == 2
        and isinstance(proper_type(proper.args[1]), AnyType)
    )
