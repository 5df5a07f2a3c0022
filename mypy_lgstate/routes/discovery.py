"""Where graph state is declared: the schema arguments of ``StateGraph(...)`` and ``add_node(...)``,
the type of a graph (``StateGraph`` subclasses and factories), the first-parameter class of a node
or path callable, and the classes named in ``state_classes``.

Only the call being checked is read (its argument expressions and their types) and the declared
signatures they name, never function bodies; ``builders`` reads the other builder calls of the same
scope from the syntax tree. docs/discovery.md explains why.
"""

from __future__ import annotations

import gc
from typing import Final

from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    ARG_NAMED,
    ARG_OPT,
    ARG_POS,
    AssignmentStmt,
    CallExpr,
    Decorator,
    Expression,
    ExpressionStmt,
    FuncDef,
    MemberExpr,
    MypyFile,
    RefExpr,
    TypeInfo,
)
from mypy.plugin import FunctionContext, MethodContext
from mypy.subtypes import find_member
from mypy.typevars import fill_typevars_with_any
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Type,
    TypedDictType,
    TypeOfAny,
    TypeType,
    has_type_vars,
)

from mypy_lgstate.core import rules
from mypy_lgstate.core.config import closest_name
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements

STATE_GRAPH: Final = "langgraph.graph.state.StateGraph"
RUNNABLE: Final = "langchain_core.runnables.base.Runnable"
# The type of an argument read from the syntax tree alone: its expression names the class.
NO_TYPE: Final = AnyType(TypeOfAny.special_form)

# ``StateGraph(...)`` arguments whose class is checkpointed (``input`` / ``output`` are deprecated
# spellings), and those that are run-scoped: never checkpointed, but walked for the strict allowlist.
CHECKPOINTED_ARGS: Final = frozenset({"state_schema", "input_schema", "output_schema", "input", "output"})
RUN_SCOPED_ARGS: Final = frozenset({"context_schema", "config_schema"})


def schema_class(expr: Expression, typ: Type) -> TypeInfo | None:
    """The class an argument like ``State`` names, if it is a TypedDict, model or dataclass."""
    info: TypeInfo | None = None
    if isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo):
        info = expr.node
    else:
        proper = proper_type(typ)
        if isinstance(proper, CallableType) and proper.is_type_obj():
            info = proper.type_object()
        elif isinstance(proper, TypeType):
            item = proper_type(proper.item)
            if isinstance(item, Instance):
                info = item.type
            elif isinstance(item, TypedDictType):
                info = item.fallback.type
    return info if info is not None and is_schema(info) else None


def is_schema(info: TypeInfo) -> bool:
    return (
        info.typeddict_type is not None
        or "dataclass" in info.metadata
        or any(base.fullname in rules.PYDANTIC_MODELS for base in info.mro)
    )


def schema_type(info: TypeInfo) -> Type:
    """The type of a value of the schema class, for walks that start from a type."""
    return info.typeddict_type if info.typeddict_type is not None else fill_typevars_with_any(info)


def state_graph_schemas(ctx: FunctionContext) -> tuple[list[TypeInfo], list[TypeInfo]]:
    """The checkpointed and the run-scoped schema classes of a ``StateGraph(...)`` call."""
    checkpointed: list[TypeInfo] = []
    run_scoped: list[TypeInfo] = []
    for name, expr, typ in [*arguments(ctx), *_unexpected_keywords(ctx)]:
        if name in CHECKPOINTED_ARGS:
            target = checkpointed
        elif name in RUN_SCOPED_ARGS:
            target = run_scoped
        else:
            continue
        info = schema_class(expr, typ)
        if info is not None and info not in target:
            target.append(info)
    return checkpointed, run_scoped


def declared_graph_schemas(ctx: FunctionContext) -> tuple[list[TypeInfo], list[TypeInfo]]:
    """The checkpointed and the run-scoped classes of a call of a ``StateGraph`` subclass, or of a
    project's factory declared to return a graph (``def create_graph(state: type[S]) ->
    StateGraph[S]``): its schema arguments, and the schemas its returned type names."""
    checkpointed, run_scoped = state_graph_schemas(ctx)
    for info in graph_type_schemas(ctx.default_return_type):
        if info not in checkpointed:
            checkpointed.append(info)
    return checkpointed, run_scoped


def called_factories(tree: MypyFile) -> dict[str, list[TypeInfo]]:
    """The functions of ``tree`` (not generic) declared to return a graph that its top level calls
    (``builder = build_builder()``, ``graph = build_builder().compile()``), each with the classes
    its declared type names: that call reports them, so the body's own ``StateGraph(State)`` does
    not. mypy may check the body after the call (a cold run) or before it (the daemon, after an
    edit): one place in every mode."""
    found: dict[str, list[TypeInfo]] = {}
    for stmt in statements(tree.defs):
        if isinstance(stmt, AssignmentStmt):
            expr: Expression | None = stmt.rvalue
        else:
            expr = stmt.expr if isinstance(stmt, ExpressionStmt) else None
        while isinstance(expr, CallExpr):
            node = expr.callee.node if isinstance(expr.callee, RefExpr) else None
            if isinstance(node, Decorator):
                node = node.func
            if (
                isinstance(node, FuncDef)
                and node.fullname == f"{tree.fullname}.{node.name}"
                and isinstance(node.type, CallableType)
                and not node.type.variables
                and not has_type_vars(node.type.ret_type)
            ):
                named = graph_type_schemas(node.type.ret_type)
                if named:
                    found[node.fullname] = named
            expr = expr.callee.expr if isinstance(expr.callee, MemberExpr) else None
    return found


def given_schema(bound: BoundArguments, parameter: str) -> TypeInfo | None:
    """The class a call gives as ``parameter`` (``add_node(..., input_schema=X)``,
    ``create_agent(state_schema=X)``), when it is a schema."""
    given = bound.get(parameter)
    return schema_class(*given) if given is not None else None


def graph_type_schemas(graph: Type) -> list[TypeInfo]:
    """The state, input and output schema classes named by a ``StateGraph[S, C, I, O]`` type (or a
    compiled graph's), also through a subclass (``TracedGraph[S]``)."""
    proper = proper_type(graph)
    if not isinstance(proper, Instance):
        return []
    if proper.type.fullname != STATE_GRAPH:
        base = state_graph_base(proper.type)
        if base is not None:
            proper = map_instance_to_supertype(proper, base)
    if len(proper.args) != 4:
        return []
    found: list[TypeInfo] = []
    for index in (0, 2, 3):
        arg = proper_type(proper.args[index])
        if isinstance(arg, TypedDictType):
            info = arg.fallback.type
        elif isinstance(arg, Instance):
            info = arg.type
        else:
            continue
        if is_schema(info) and info not in found:
            found.append(info)
    return found


def state_graph_base(info: TypeInfo) -> TypeInfo | None:
    """``StateGraph`` itself when ``info`` is a subclass of it."""
    for base in info.mro[1:]:
        if base.fullname == STATE_GRAPH:
            return base
    return None


def first_parameter_schema(callable_type: Type) -> TypeInfo | None:
    """The class annotating the first parameter of a node or path callable, which LangGraph adds to
    the graph's channels (``state_graph.py``: ``get_type_hints`` of the function, the bound method,
    or the instance's ``__call__``). Runnables are left alone, as LangGraph does."""
    proper = proper_type(callable_type)
    if isinstance(proper, Instance):
        if proper.type.has_base(RUNNABLE):
            return None
        call = find_member("__call__", proper, proper)
        signature = proper_type(call) if call is not None else None
    else:
        signature = proper
    if not isinstance(signature, CallableType) or signature.is_type_obj():
        return None
    for kind, arg_type in zip(signature.arg_kinds, signature.arg_types):
        if kind not in (ARG_POS, ARG_OPT):
            return None
        return type_schema(arg_type)
    return None


def type_schema(typ: Type) -> TypeInfo | None:
    """The schema class of a value type: a TypedDict, model or dataclass. A parametrized generic
    TypedDict or dataclass (``Box[int]``) is a typing alias at run time, not a class: ``None``."""
    proper = proper_type(typ)
    if isinstance(proper, TypedDictType):
        info = proper.fallback.type
        return None if info.type_vars else info
    if isinstance(proper, Instance) and is_schema(proper.type):
        if proper.type.type_vars and "dataclass" in proper.type.metadata:
            return None
        return proper.type
    return None


def configured_schemas(file: MypyFile, names: list[str]) -> list[TypeInfo]:
    """The schema classes of ``file`` named in ``state_classes``."""
    return [
        sym.node
        for sym in map(file.names.get, names)
        if sym is not None and isinstance(sym.node, TypeInfo) and is_schema(sym.node)
    ]


def configured_problem(file: MypyFile, name: str) -> str | None:
    """What is wrong with the ``state_classes`` entry for class ``name`` of ``file``: it names no
    class of the module (the closest one is suggested), or a class that is not a schema."""
    sym = file.names.get(name)
    entry = f"{file.fullname}.{name}"
    if sym is not None and isinstance(sym.node, TypeInfo):
        if is_schema(sym.node):
            return None
        return f'"{entry}" is not a TypedDict, a pydantic model or a dataclass, so it is not graph state'
    classes = [key for key, found in file.names.items() if isinstance(found.node, TypeInfo)]
    meant = closest_name(name, classes)
    guess = f", did you mean {file.fullname}.{meant}?" if meant is not None else ""
    return f'"{entry}" names no class of module {file.fullname}{guess}'


def checker_of(file: MypyFile, modules: object) -> TypeChecker | None:
    """The type checker that has just checked ``file``.

    mypy hands ``get_additional_indirect_deps`` only the file. Its checker is still alive then (and
    set to report into that file), and it refers to the build's module table, which mypy gave this
    plugin through ``set_modules``: it is found among the referrers of that table. This runs only for
    modules that define a class named in ``state_classes``.
    """
    for referrer in gc.get_referrers(modules):
        if isinstance(referrer, TypeChecker) and referrer.tree is file:
            return referrer
    return None


# A call's actual arguments by the parameter they bind to (the first one, for ``*args``).
BoundArguments = dict[str | None, tuple[Expression, Type]]


def bound_arguments(ctx: FunctionContext | MethodContext) -> BoundArguments:
    found: BoundArguments = {}
    for name, expr, typ in arguments(ctx):
        found.setdefault(name, (expr, typ))
    return found


def arguments(
    ctx: FunctionContext | MethodContext,
) -> list[tuple[str | None, Expression, Type]]:
    """Each actual argument as (the name it binds to, its expression, its type)."""
    found = []
    for formal, names, exprs, types in zip(
        ctx.callee_arg_names, ctx.arg_names, ctx.args, ctx.arg_types
    ):
        for actual_name, expr, typ in zip(names, exprs, types):
            found.append((actual_name or formal, expr, typ))
    return found


def _unexpected_keywords(
    ctx: FunctionContext | MethodContext,
) -> list[tuple[str | None, Expression, Type]]:
    """Keyword arguments that match no parameter, which mypy leaves out of ``ctx.args``.

    ``StateGraph`` declares the deprecated ``input=`` / ``output=`` / ``config_schema=`` through an
    empty ``**kwargs: Unpack[...]``: mypy reports them as unexpected, yet LangGraph still uses them.
    """
    call = ctx.context
    if not isinstance(call, CallExpr):
        return []
    mapped = {id(expr) for exprs in ctx.args for expr in exprs}
    api = ctx.api
    found: list[tuple[str | None, Expression, Type]] = []
    for kind, name, expr in zip(call.arg_kinds, call.arg_names, call.args):
        if kind == ARG_NAMED and id(expr) not in mapped:
            typ = api.lookup_type_or_none(expr) if isinstance(api, TypeChecker) else None
            found.append((name, expr, AnyType(TypeOfAny.special_form) if typ is None else typ))
    return found
