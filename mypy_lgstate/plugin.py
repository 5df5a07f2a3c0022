"""mypy entry point: ``plugins = ["mypy_lgstate.plugin"]``.

The plugin class only dispatches: each hook is an O(1) lookup of the callee's fullname, and the work
is done in ``checks`` (imported on the first hook that fires), with the route modules (``routes/``:
where state is declared and written), ``walker`` (what the serializer does with a type), ``writes``
(what a write adds), ``allowlist`` (strict msgpack) and ``report`` (where an error goes).
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from mypy.nodes import Decorator, FuncDef, ImportFrom, MypyFile, OverloadedFuncDef, SymbolNode, TypeInfo
from mypy.options import Options
from mypy.plugin import (
    ClassDefContext,
    FunctionContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Overloaded,
    Type,
    TypeVarType,
    get_proper_type,
)

import mypy_lgstate
from mypy_lgstate.checker import errorcodes  # noqa: F401  (registers the error codes with mypy)
from mypy_lgstate.core import lockfile
from mypy_lgstate.core.config import ConfigError, LGStateConfig, load_config
from mypy_lgstate.core.digest import short_digest, source_digest
from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.core.lockfile import NO_LOCK, Lock, LockFileError, lock_path, read_lock

if TYPE_CHECKING:
    from mypy_lgstate.checker.checks import Checks

# mypy records this (with a hash of this file) in its cache, and discards every cached module when it
# changes; __init__ refines it (see ``_version``).
__version__ = mypy_lgstate.__version__

STATE_GRAPH: Final = "langgraph.graph.state.StateGraph"
# The callee mypy names when it checks a dict display against a type context (``return {...}`` in a
# function declared ``-> dict``).
DICT_DISPLAY: Final = "<dict>"

# Callee fullnames -> the name of the ``Checks`` method that handles them.
FUNCTION_HOOKS: Final = {
    "langgraph.graph.state.StateGraph": "state_graph",
    "mypy_lgstate.graph_state": "graph_state_decorator",
    "langgraph.types.Command": "function_write_site",
    "langgraph.types.Send": "function_write_site",
    "langgraph.types.interrupt": "function_write_site",
    "langgraph.func.task": "task",
    "langchain.agents.factory.create_agent": "create_agent",
    "langgraph.prebuilt.chat_agent_executor.create_react_agent": "create_react_agent",
    **{
        f"langchain.agents.middleware.types.{decorator}": "middleware_decorator"
        for decorator in ("before_model", "after_model", "before_agent", "after_agent")
    },
    **{
        f"langchain.agents.middleware.types.{decorator}": "wrap_middleware_decorator"
        for decorator in ("wrap_model_call", "wrap_tool_call")
    },
}
# mypy names a method after the class of the receiver: a compiled StateGraph, or a plain Pregel.
METHOD_HOOKS: Final = {
    "langgraph.graph.state.StateGraph.add_node": "add_node",
    "langgraph.graph.state.StateGraph.add_sequence": "add_sequence",
    "langgraph.graph.state.StateGraph.add_conditional_edges": "add_conditional_edges",
    # ``compile(checkpointer=PostgresSaver(...))``: the saver's own rules for the graph.
    "langgraph.graph.state.StateGraph.compile": "compile",
    # ``@entrypoint(...)`` applied to the function: the call of the decorator instance.
    "langgraph.func.entrypoint.__call__": "entrypoint",
    **{
        f"{owner}.{method}": "graph_input"
        for owner in ("langgraph.graph.state.CompiledStateGraph", "langgraph.pregel.main.Pregel")
        for method in (
            "invoke", "ainvoke", "stream", "astream", "batch", "abatch", "stream_events",
            "astream_events", "batch_as_completed", "abatch_as_completed", "update_state",
            "aupdate_state", "bulk_update_state", "abulk_update_state",
        )
    },
}
# mypy names a method after the receiver's class, so a method of a ``StateGraph`` subclass
# (``TracedGraph.add_node``) is recognised by its name, then its class (see ``get_method_hook``).
BUILDER_METHODS: Final = {
    name: METHOD_HOOKS[f"{STATE_GRAPH}.{name}"]
    for name in ("add_node", "add_sequence", "add_conditional_edges", "compile")
}

_PYDANTIC_MODEL: Final = "pydantic.main.BaseModel"
_PYDANTIC_V1_MODEL: Final = "pydantic.v1.main.BaseModel"
# Imported in the daemon process only, before it first loads plugins. Not
# ``options.fine_grained_incremental``: ``dmypy run`` compares the snapshot of the daemon's first
# build (where it is true) with one taken from the options of the run (where it is false), so the
# versions would always differ and every ``dmypy run`` would restart the daemon.
_IN_DAEMON: Final = "mypy.dmypy_server"
# The source digest of the last run, kept in mypy's cache directory (``source_digest``).
_SOURCE_MEMO: Final = "mypy_lgstate-source.json"


class LGStatePlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        try:
            self.config: LGStateConfig = load_config(options.config_file)
            # ``lgstate lock`` writes the file from this build: the old one is not compared with.
            self.lock: Lock = (
                read_lock(lock_path(self.config.lock_file, options.config_file))
                if lockfile.collected is None
                else NO_LOCK
            )
        except (ConfigError, LockFileError) as error:
            # One line, like mypy's own configuration errors, and no traceback.
            print(error, file=sys.stderr)
            raise SystemExit(2) from None
        # What every user module's result depends on: the options, and the lock file's content
        # (a changed lock must recheck the classes it records).
        digest = self.config.digest()
        if self.lock.digest:
            digest = short_digest(f"{digest}{self.lock.digest}".encode())
        global __version__
        __version__ = _version(digest, options.cache_dir, daemon=_IN_DAEMON in sys.modules)
        # dmypy keeps checking with the plugin object of its first build, but makes a new one on
        # every run: that is the moment to drop verdicts memoized from classes edited since.
        for earlier in _LIVE_PLUGINS:
            earlier.forget()
        _LIVE_PLUGINS.add(self)
        self._checks: Checks | None = None
        # The hook call answered last (``_dispatch``). Not in the daemon, which may check a function
        # again within one run after dropping its errors: the repeat must then report them again.
        self._skips_repeats = not options.fine_grained_incremental
        self._last_call: _Call | None = None
        self._writes_no_cache = options.fine_grained_incremental or options.cache_dir == os.devnull
        self._ready = False  # ``_checks_ready``
        # Asked for twice per module, and stored in each module's cache entry: a short digest.
        self._config_data = digest
        self._state_classes_by_module: dict[str, list[str]] = {}
        for fullname in self.config.state_classes:
            module, _, name = fullname.rpartition(".")
            self._state_classes_by_module.setdefault(module, []).append(name)
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {
            fullname: self._dispatch(method) for fullname, method in METHOD_HOOKS.items()
        }
        self._function_hooks: dict[str, Callable[[FunctionContext], Type]] = {
            fullname: self._dispatch(method) for fullname, method in FUNCTION_HOOKS.items()
        }
        # A returned dict display tells the checks which checker checks its module (the end of a
        # module's check, where node bodies are read, is handed the module alone); in the daemon,
        # which rechecks a node's body alone, its displays are also read as they are checked
        # (``Checks.dict_display``).
        self._function_hooks[DICT_DISPLAY] = self._dict_display
        if options.fine_grained_incremental:
            self._method_hooks["builtins.dict.__setitem__"] = self._dispatch("dict_item")
        # The hook of every callee looked up so far: the tables above, and what other callees
        # turned out to be (a graph subclass or factory, or nothing). mypy asks for every call it
        # checks, libraries included: all but the first ask of a callee are one dict lookup.
        self._resolved_functions: dict[str, Callable[[FunctionContext], Type] | None] = dict(
            self._function_hooks
        )
        self._resolved_methods: dict[str, Callable[[MethodContext], Type] | None] = dict(
            self._method_hooks
        )

    def _checks_ready(self) -> None:
        """Set up, for this build, what the route modules keep across calls, before their first use.
        They are imported on the first call that needs them, not with the plugin: a warm run with
        nothing to check never loads them."""
        if not self._ready:
            import mypy_lgstate.routes.aliases as aliases
            import mypy_lgstate.routes.schemas as schemas

            # The daemon merges a module analysed again into its old tree in place: nothing read of
            # a class or an alias is kept there.
            build_memos = not self.options.fine_grained_incremental
            aliases.keep_expansions(build_memos)
            schemas.keep_fields(build_memos)
            self._ready = True

    @property
    def checks(self) -> Checks:
        if self._checks is None:
            from mypy_lgstate.checker.checks import Checks

            self._checks_ready()
            self._checks = Checks(self.config, self.options, self._lookup, self.lock, self._module)
        return self._checks

    def forget(self) -> None:
        self._last_call = None
        self._resolved_functions = dict(self._function_hooks)
        self._resolved_methods = dict(self._method_hooks)
        if self._checks is not None:
            self._checks.forget()

    def _dispatch(self, method: str) -> Callable[..., Type]:
        def hook(ctx: FunctionContext | MethodContext) -> Type:
            call = _Call(method, ctx)
            if call == self._last_call:
                # mypy tries each candidate of an overloaded callee in turn, asking the hook for each:
                # the same call with the same argument types finds what the last ask found, and
                # its findings were reported past mypy's error filters (``report.fail``).
                return ctx.default_return_type
            result: Type = getattr(self.checks, method)(ctx)
            # Only a call answered with mypy's own type can be answered again the same way.
            repeatable = self._skips_repeats and result is ctx.default_return_type
            self._last_call = call if repeatable else None
            return result

        return hook

    def _dict_display(self, ctx: FunctionContext) -> Type:
        # Every dict display of every module comes here, in code that never touches LangGraph too.
        # Until a hook of graph code has fired there is no node body to read and no checker to note
        # (the end of a module's check finds its checker itself): nothing is imported or built.
        checks = self._checks
        return ctx.default_return_type if checks is None else checks.dict_display(ctx)

    # mypy's hooks --------------------------------------------------------------------------------

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        try:
            return self._resolved_functions[fullname]
        except KeyError:
            method = (
                "declared_graph" if self._declares_graph(fullname)
                else "builder_helper" if self._adds_nodes(fullname)
                else None
            )
            hook = self._resolved_functions[fullname] = (
                self._dispatch(method) if method is not None else None
            )
            return hook

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        try:
            return self._resolved_methods[fullname]
        except KeyError:
            owner, _, name = fullname.rpartition(".")
            method = BUILDER_METHODS.get(name)
            hook = self._resolved_methods[fullname] = (
                self._dispatch(method)
                if method is not None and _is_state_graph(self._lookup(owner))
                else None
            )
            return hook

    def _module(self, name: str) -> MypyFile | None:
        return self._modules.get(name) if self._modules is not None else None

    def _lookup(self, fullname: str) -> SymbolNode | None:
        if self._modules is None:
            return None
        sym = self.lookup_fully_qualified(fullname)
        return sym.node if sym is not None else None

    def _declares_graph(self, fullname: str) -> bool:
        """Whether a call of ``fullname`` makes a graph whose type names its schemas: a subclass
        of ``StateGraph``, or a function declared to return one (a project's factory)."""
        node = self._lookup(fullname)
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, (FuncDef, OverloadedFuncDef)):
            signature = get_proper_type(node.type)
            if isinstance(signature, Overloaded):
                signature = signature.items[0]
            if not isinstance(signature, CallableType):
                return False
            returned = get_proper_type(signature.ret_type)
            return isinstance(returned, Instance) and (
                returned.type.fullname == STATE_GRAPH or _is_state_graph(returned.type)
            )
        return _is_state_graph(node)

    def _adds_nodes(self, fullname: str) -> bool:
        """Whether ``fullname`` is a project's function given a builder whose state its signature
        leaves open (``def add_nodes(builder: StateGraph[S]) -> None``): the nodes it adds are
        checked where it is called with a builder of a known state."""
        node = self._lookup(fullname)
        if isinstance(node, Decorator):
            node = node.func
        if not isinstance(node, FuncDef) or not isinstance(node.type, CallableType):
            return False
        return any(open_builder(typ) for typ in node.type.arg_types)

    def get_customize_class_mro_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        # A daemon run that processes several changed modules analyses them one after the other,
        # checking the users of each in between: a class analysed again may have changed since
        # verdicts were memoized from it earlier in the same run (issue 19).
        if self._checks is not None and self.options.fine_grained_incremental:
            self._checks.forget()
        # The one hook that sees a class body in every mode, while mypy analyses it: pydantic
        # models only, so that no other plugin's hook for other classes is shadowed.
        info = self._lookup(fullname)
        if isinstance(info, TypeInfo) and (
            info.has_base(_PYDANTIC_MODEL) or info.has_base(_PYDANTIC_V1_MODEL)
        ):
            from mypy_lgstate.routes.model_facts import record

            return record
        return None

    def report_config_data(self, ctx: ReportConfigContext) -> object:
        if not ctx.is_check and self._modules is not None:
            # mypy is about to write the module's cache: mypy 2.x writes it once the module's
            # interface is checked, before its bodies (and before ``get_additional_indirect_deps``).
            # The last moment to put the channels its classes declare into their metadata, where
            # every later run, worker and module reads them (``channel_specs``).
            file = self._modules.get(ctx.id)
            if file is not None:
                from mypy_lgstate.routes.channel_specs import record_module

                self._checks_ready()
                record_module(file, self._modules)
                if not is_library(ctx.path):
                    # What the modules that import it read of its bodies.
                    self._record_summaries(file)
        # Library and typeshed modules never hold findings: keep their caches across option changes.
        return None if is_library(ctx.path) else self._config_data

    def _record_summaries(self, file: MypyFile) -> None:
        # ``import ... as``: a ``from`` import of a package's module runs importlib's Python code at
        # every call, and this runs for every module mypy writes.
        import mypy_lgstate.routes.exported as exported

        exported.record(file, self._modules or {})

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        # Called once a module is checked: the one moment a class named in ``state_classes`` can
        # be checked in its own module, whatever else uses it.
        self._checks_ready()
        user_module = not is_library(file.path)
        if self._writes_no_cache:
            # The channels of the module's classes, and its functions' summaries: recorded as the
            # cache is written, or here in the runs that write none (the daemon), where
            # ``report_config_data`` is not asked.
            from mypy_lgstate.routes.channel_specs import record_module

            record_module(file, self._modules or {}, daemon=self.options.fine_grained_incremental)
            if user_module:
                self._record_summaries(file)
        names = self._state_classes_by_module.get(file.fullname)
        if names:
            self.checks.check_configured_state_classes(
                file, names, self._modules, self.options.config_file
            )
        # The node bodies its hooks asked for: their types exist until this call returns.
        sends = user_module and _imports_deprecated_send(file)
        checks = self.checks if sends else self._checks
        if checks is None:
            return set()
        checks.finish_module(file, self._modules, deprecated_sends=sends)
        return checks.reads_of(file.fullname)


_LIVE_PLUGINS: weakref.WeakSet[LGStatePlugin] = weakref.WeakSet()


class _Call:
    """What a hook's checks read of its call: the check, the call expression, how the candidate
    binds its arguments, and the types mypy inferred for them (they differ between overload
    candidates when a candidate's type context changes an argument's inferred type)."""

    __slots__ = ("method", "context", "parameters", "arg_names", "arg_types", "returned", "receiver")

    def __init__(self, method: str, ctx: FunctionContext | MethodContext) -> None:
        self.method = method
        self.context = ctx.context
        self.parameters = ctx.callee_arg_names
        self.arg_names = ctx.arg_names
        self.arg_types = ctx.arg_types
        self.returned = ctx.default_return_type
        self.receiver = ctx.type if isinstance(ctx, MethodContext) else None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Call)
            and self.context is other.context
            and self.method == other.method
            and self.parameters == other.parameters
            and self.arg_names == other.arg_names
            and self.arg_types == other.arg_types
            and self.returned == other.returned
            and self.receiver == other.receiver
        )

    __hash__ = None  # type: ignore[assignment]


def _imports_deprecated_send(file: MypyFile) -> bool:
    """``from langgraph.constants import Send``: its calls are checked once the module is."""
    return any(isinstance(imported, ImportFrom) and imported.id == "langgraph.constants" for imported in file.imports)


def open_builder(typ: Type) -> bool:
    """A builder type whose state is a type variable or ``Any`` (``StateGraph[S]``)."""
    proper = get_proper_type(typ)
    if not (isinstance(proper, Instance) and proper.type.has_base(STATE_GRAPH)):
        return False
    state = get_proper_type(proper.args[0]) if proper.args else None
    return state is None or isinstance(state, (TypeVarType, AnyType))


def _is_state_graph(node: SymbolNode | None) -> bool:
    """A subclass of ``StateGraph`` (``StateGraph`` itself has its own hooks)."""
    return isinstance(node, TypeInfo) and node.fullname != STATE_GRAPH and node.has_base(STATE_GRAPH)


def _version(options_digest: str, cache_dir: str, *, daemon: bool) -> str:
    """The version mypy records for this plugin.

    It includes a hash of the package's own source: mypy hashes only this file, and an edit to
    another module of the package must not replay stale cached errors. In the daemon it also folds in
    the options and the lock file, so that ``dmypy run`` restarts when they change (the daemon ignores
    ``report_config_data``). A plain mypy run leaves them out: there, ``report_config_data`` rechecks
    exactly the user's modules, where folding them in would discard the cache of every library too.
    """
    package = os.path.dirname(os.path.abspath(__file__))
    memo = None if cache_dir == os.devnull else os.path.join(cache_dir, _SOURCE_MEMO)
    version = f"{mypy_lgstate.__version__}+{source_digest(package, memo)}"
    return f"{version}.{options_digest}" if daemon else version


def plugin(version: str) -> type[LGStatePlugin]:
    return LGStatePlugin
