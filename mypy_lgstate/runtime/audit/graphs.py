"""Today's graph, the reference of the audit: its channels, their declared types, its subgraphs.

``--graph MODULE:ATTR`` names a compiled graph, a ``StateGraph`` builder, or a function of no
arguments that returns either; it is imported with the current directory on ``sys.path``, as the
runtime checker's users run their tests. A channel's declared type is what LangGraph made of the
state schema's annotation (``LastValue(T)``: ``T``; a reducer's channel: ``T`` for the value, the
reducer's second parameter for a write).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import sys
import typing
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

import typing_extensions

from mypy_lgstate.core.config import find_config_file
from mypy_lgstate.core.langgraph_json import (
    GraphRef,
    LangGraphJsonError,
    find_langgraph_json,
    read_langgraph_json,
)
from mypy_lgstate.runtime.audit.compiler import Compiler
from mypy_lgstate.runtime.audit.conformance import ANY, Node, required_keys


class AuditInputError(Exception):
    """Input the audit cannot start from (a store, a graph): the message is the whole line."""


NO_VALUE: Final = object()  # a channel that holds nothing until it is written


class ChannelSpec(NamedTuple):
    name: str
    declared: Any  # the type of the value the channel holds
    value: Node
    write: Node  # what a pending write to it may hold
    # A reducer's channel whose reducer declares nothing for its second parameter (operator.add,
    # a lambda): a write is checked by what applying it gives (``apply_write``).
    reducer: Any = None
    shown: str = ""  # how messages name its value, when not by its key (the functional API)
    # What a node reads from it before any write: a reducer's channel starts from its type's
    # empty value (``list[int]``: ``[]``), so a checkpoint that holds none does not lack it.
    empty: Any = NO_VALUE


class GraphSpec(NamedTuple):
    label: str  # as given on the command line, with the subgraph's node path
    state: type | None  # the state schema class
    state_kind: str  # "TypedDict", "pydantic model", "dataclass" or ""
    state_node: Node | None  # the state schema as a whole (pydantic: LangGraph validates it)
    channels: dict[str, ChannelSpec]
    required: frozenset[str]  # channels the state schema requires a value for
    subgraphs: dict[str, GraphSpec]  # by node path, "outer|inner"
    schemas: tuple[Any, ...]  # what compile() derives the strict allowlist from
    builder: Any  # the StateGraph, for compile()'s allowlist
    nodes: frozenset[str] = frozenset()  # its node names: a checkpoint names those it ran
    declarer: str = "the graph's state"  # what declares its channels, when no state class does


def import_object(spec: str, option: str) -> Any:
    """``MODULE:ATTR`` (``ATTR`` may be dotted), imported with the current directory first on
    ``sys.path``. Every failure is one line."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise AuditInputError(f"{option} {spec}: expected MODULE:ATTR (for example app.graph:builder)")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as error:
        raise AuditInputError(
            f"{option} {spec}: cannot import {module_name}: {error_line(error)}"
        ) from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AuditInputError(f"{option} {spec}: {module_name} has no attribute {attribute}") from None
    return obj


def project_graphs(config_file: str | None) -> list[str]:
    """The graphs of the project's ``langgraph.json`` (what LangGraph's server deploys), as
    ``MODULE:ATTR``: a file by its module under the current directory or ``sys.path``."""
    found = find_langgraph_json(config_file or find_config_file())
    if found is None:
        raise AuditInputError("--graph: none given, and no langgraph.json names the graphs")
    try:
        project = read_langgraph_json(found)
    except LangGraphJsonError as error:
        raise AuditInputError(str(error)) from None
    if not project.graphs:
        raise AuditInputError(f"--graph: none given, and {project.path} names no graph")
    return [_spec(ref) for ref in project.graphs]


def _spec(ref: GraphRef) -> str:
    if ref.module is not None:
        return f"{ref.module}:{ref.attribute}"
    assert ref.file is not None
    module = _module_of_file(ref.file)
    if module is None:
        raise AuditInputError(
            f'langgraph.json: graph "{ref.name}": {ref.file} lies in no directory of sys.path or'
            " the current one: run the audit from the project's directory, or give --graph"
        )
    return f"{module}:{ref.attribute}"


def _module_of_file(path: str) -> str | None:
    """The module ``path`` is imported as: its dotted path from the deepest directory of
    ``sys.path`` (or the current one) that holds it, as ``import_object`` imports it."""
    stem = os.path.splitext(os.path.abspath(path))[0]
    best: str | None = None
    for entry in [os.getcwd(), *sys.path]:
        root = os.path.abspath(entry or os.curdir).rstrip(os.sep) + os.sep
        if not stem.startswith(root):
            continue
        parts = stem[len(root):].split(os.sep)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            module = ".".join(parts)
            if best is None or len(module) < len(best):
                best = module
    return best


def load_graph(spec: str, compiler: Compiler) -> GraphSpec:
    obj = import_object(spec, "--graph")
    builder, compiled = _resolve(obj, spec)
    if builder is None:
        return _entrypoint_spec(spec, compiled, compiler)
    return _graph_spec(spec, builder, compiled, compiler)


def _resolve(obj: Any, spec: str) -> tuple[Any, Any]:
    """The ``StateGraph`` and the compiled graph; no builder for the functional API's
    ``@entrypoint``, a graph of its own (``Pregel``)."""
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    for _ in range(2):  # a factory's result is resolved once more
        if isinstance(obj, StateGraph):
            try:
                return obj, obj.compile()
            except Exception:  # an unfinished builder still declares its channels
                return obj, None
        builder = getattr(obj, "builder", None)
        if isinstance(builder, StateGraph):
            return builder, obj
        if isinstance(obj, Pregel) and builder is None:
            return None, obj
        if callable(obj) and not isinstance(obj, type):
            try:
                signature = inspect.signature(obj)
            except (TypeError, ValueError):
                signature = None
            if signature is not None and any(
                p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                for p in signature.parameters.values()
            ):
                raise AuditInputError(
                    f"--graph {spec}: a factory must take no arguments; name the graph it builds"
                )
            try:
                obj = obj()
            except Exception as error:
                raise AuditInputError(f"--graph {spec}: calling it raised {error_line(error)}") from None
            continue
        break
    raise AuditInputError(
        f"--graph {spec}: not a LangGraph graph (a compiled graph, a StateGraph, an @entrypoint, or"
        f" a function that returns one), but {type(obj).__name__}"
    )


def _entrypoint_spec(label: str, workflow: Any, compiler: Compiler) -> GraphSpec:
    """An ``@entrypoint`` workflow: the input it is invoked with (``__start__``, read again when
    an interrupted run resumes), and what it saves for ``previous`` (``__previous__``, read by the
    thread's next run); with ``entrypoint.final[R, S]``, also the value it returned
    (``__end__``). Their types are read from the function's annotations, as mypy reads them
    (LangGraph keeps them unresolved under ``from __future__ import annotations``)."""
    from langgraph._internal._constants import PREVIOUS
    from langgraph.constants import END, START
    from langgraph.func import entrypoint

    name, node = next(iter(workflow.nodes.items()))
    function: Any = getattr(node.bound, "func", None)
    try:
        parameters = list(inspect.signature(function).parameters.values())
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:  # no function (a Runnable), or annotations that do not resolve
        parameters, hints = [], {}
    argument = parameters[0].name if parameters else "input"
    returned = hints.get("return", Any)
    final = typing.get_origin(returned) is entrypoint.final and len(typing.get_args(returned)) == 2
    value, save = typing.get_args(returned) if final else (returned, returned)
    declared = {START: hints.get(argument, Any), PREVIOUS: save}
    shown = {START: f"{name}({argument})", PREVIOUS: f"{name}().save" if final else f"{name}()"}
    if final:
        declared[END], shown[END] = value, f"{name}().value"
    channels = {
        channel: ChannelSpec(
            channel, typ, compiler.compile(typ), compiler.compile(typ), shown=shown[channel]
        )
        for channel, typ in declared.items()
    }
    # compile()'s allowlist: LangGraph derives it from the channels' types as it holds them.
    schemas = [getattr(workflow.channels.get(channel), "typ", None) for channel in (START, END, PREVIOUS)]
    schemas.append(getattr(workflow, "context_schema", None))
    return GraphSpec(
        label, None, "", None, channels, frozenset(), {}, tuple(schemas), workflow,
        frozenset(workflow.nodes), declarer=name,
    )


def _graph_spec(label: str, builder: Any, compiled: Any, compiler: Compiler) -> GraphSpec:
    from langgraph._internal._typing import MISSING
    from langgraph.channels.binop import BinaryOperatorAggregate
    from langgraph.channels.last_value import LastValue, LastValueAfterFinish

    channels: dict[str, ChannelSpec] = {}
    for name, channel in builder.channels.items():
        declared = getattr(channel, "typ", Any)
        if isinstance(channel, (LastValue, LastValueAfterFinish)):
            node = compiler.compile(declared)
            channels[name] = ChannelSpec(name, declared, node, node)
        elif isinstance(channel, BinaryOperatorAggregate):
            write = compiler.compile(_reducer_update(channel.operator))
            empty = channel.value if channel.value is not MISSING else NO_VALUE
            channels[name] = ChannelSpec(
                name, declared, compiler.compile(declared), write,
                channel if write is ANY else None, empty=empty,
            )
        else:  # Topic, a channel class of the user's: what it stores is its own
            channels[name] = ChannelSpec(name, Any, ANY, ANY)
    state = builder.state_schema
    kind, required = _state_kind(state)
    state_node = compiler.compile(state) if kind == "pydantic model" else None
    subgraphs: dict[str, GraphSpec] = {}
    if compiled is not None:
        try:
            found = list(compiled.get_subgraphs(recurse=True))
        except Exception:
            found = []
        for namespace, subgraph in found:
            sub_builder = getattr(subgraph, "builder", None)
            if sub_builder is not None and hasattr(sub_builder, "channels"):
                spec = _graph_spec(f"{label} > {namespace}", sub_builder, None, compiler)
                subgraphs[namespace] = spec
    schemas = [builder.state_schema, builder.input_schema, builder.output_schema]
    schemas += [node.input_schema for node in builder.nodes.values()]
    schemas += [
        branch.input_schema
        for branches in builder.branches.values()
        for branch in branches.values()
        if branch.input_schema is not None
    ]
    return GraphSpec(
        label, state if isinstance(state, type) else None, kind, state_node, channels,
        frozenset(
            name for name in required
            if name in channels and channels[name].empty is NO_VALUE
        ),
        subgraphs, tuple(schemas), builder, frozenset(builder.nodes),
    )


def _state_kind(state: Any) -> tuple[str, Iterable[str]]:
    if not isinstance(state, type):
        return "", ()
    if typing_extensions.is_typeddict(state):
        return "TypedDict", required_keys(state)
    fields = getattr(state, "__pydantic_fields__", None)
    if isinstance(fields, dict):
        return "pydantic model", [name for name, field in fields.items() if field.is_required()]
    if dataclasses.is_dataclass(state):
        return "dataclass", [
            field.name for field in dataclasses.fields(state)
            if field.init
            and field.default is dataclasses.MISSING
            and field.default_factory is dataclasses.MISSING
        ]
    return "", ()


def _reducer_update(reducer: Any) -> Any:
    """What a reducer takes as its second argument (``Any`` when it does not say)."""
    try:
        parameters = list(inspect.signature(reducer).parameters.values())
        hints = typing.get_type_hints(reducer, include_extras=True)
    except Exception:
        return Any
    if len(parameters) < 2:
        return Any
    return hints.get(parameters[1].name, Any)


def apply_write(channel: Any, write: Any) -> Any:
    """What a reducer's channel holds once ``write`` is applied to it, as LangGraph applies a
    thread's pending writes when it resumes: the write's own contribution (applied to the
    channel's empty value, so that the stored value's problems are not found again)."""
    from langgraph._internal._typing import MISSING

    fresh = channel.from_checkpoint(MISSING)
    fresh.update([write])
    return fresh.get()


def reducer_name(channel: Any) -> str:
    operator = channel.operator
    return str(getattr(operator, "__name__", None) or type(operator).__name__)


def strict_allowlist(graphs: Iterable[GraphSpec]) -> set[tuple[str, ...]]:
    """What ``compile()`` derives for the strict allowlist from each graph's schemas and channels
    (LangGraph's own function, as the application runs it)."""
    from langgraph._internal import _serde

    allowed: set[tuple[str, ...]] = set()
    for graph in graphs:
        for spec in (graph, *graph.subgraphs.values()):
            allowed |= _serde.build_serde_allowlist(
                schemas=[schema for schema in spec.schemas if schema is not None],
                channels=spec.builder.channels,
            )
    return allowed


def error_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
