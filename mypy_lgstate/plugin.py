"""mypy entry point: ``plugins = ["mypy_lgstate.plugin"]``.

The plugin class only dispatches: each hook is an O(1) lookup of the callee's fullname, and the work
is done by ``discovery`` (where state is declared), ``walker`` (what the serializer does with a type),
``allowlist`` (strict msgpack) and ``report`` (where an error goes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Final

from mypy.nodes import ClassDef, MypyFile, TypeInfo
from mypy.options import Options
from mypy.checker import TypeChecker
from mypy.plugin import (
    CheckerPluginInterface,
    FunctionContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import Type

import mypy_lgstate
from mypy_lgstate import discovery
from mypy_lgstate.allowlist import derive_allowlist
from mypy_lgstate.config import ConfigError, LGStateConfig, load_config
from mypy_lgstate.report import report
from mypy_lgstate.walker import Findings, Walker

# mypy records this (with a hash of this file) in its cache; __init__ folds in a hash of the options,
# so that ``dmypy run`` restarts when they change.
__version__ = mypy_lgstate.__version__

GRAPH_STATE_DECORATOR: Final = "mypy_lgstate.graph_state"
STATE_GRAPH: Final = "langgraph.graph.state.StateGraph"
ADD_NODE: Final = "langgraph.graph.state.StateGraph.add_node"

_LIBRARY_DIRS: Final = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}", f"{os.sep}typeshed{os.sep}")


class LGStatePlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        try:
            self.config: LGStateConfig = load_config(options.config_file)
        except ConfigError as error:
            # One line, like mypy's own configuration errors, and no traceback.
            print(error, file=sys.stderr)
            raise SystemExit(2) from None
        sys.modules[__name__].__dict__["__version__"] = f"{mypy_lgstate.__version__}+{self.config.digest()}"
        self.walker = Walker(self.config, options)
        self._strict = self.config.profile == "msgpack" and self.config.strict_msgpack
        self._state_class_names = frozenset(self.config.state_classes)
        # Modules whose classes a check in module M read, by M: returned to mypy as M's indirect
        # dependencies once M is checked, so that an edit to them rechecks M.
        self._read_modules: dict[str, set[str]] = {}
        self._function_hooks: dict[str, Callable[[FunctionContext], Type]] = {
            STATE_GRAPH: self._state_graph,
            GRAPH_STATE_DECORATOR: self._graph_state_decorator,
        }
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {
            ADD_NODE: self._add_node,
        }

    # Dispatch ------------------------------------------------------------------------------------

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return self._function_hooks.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return self._method_hooks.get(fullname)

    def report_config_data(self, ctx: ReportConfigContext) -> object:
        # Library and typeshed modules never hold findings: keep their caches across option changes.
        if any(part in ctx.path for part in _LIBRARY_DIRS):
            return None
        return self.config.to_data()

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        return self._read_modules.pop(file.fullname, set())

    # Hooks ---------------------------------------------------------------------------------------

    def _state_graph(self, ctx: FunctionContext) -> Type:
        checkpointed, run_scoped = discovery.state_graph_schemas(ctx)
        self._check_state(ctx, checkpointed, allowlist_from=[*checkpointed, *run_scoped])
        return ctx.default_return_type

    def _graph_state_decorator(self, ctx: FunctionContext) -> Type:
        if isinstance(ctx.context, ClassDef) and discovery.is_schema(ctx.context.info):
            self._check_state(ctx, [ctx.context.info], allowlist_from=[ctx.context.info])
        return ctx.default_return_type

    def _add_node(self, ctx: MethodContext) -> Type:
        schema = discovery.node_input_schema(ctx)
        if schema is not None:
            graph = discovery.graph_type_schemas(ctx.type)
            self._check_state(ctx, [schema], allowlist_from=[*graph, schema])
        return ctx.default_return_type

    # Checks --------------------------------------------------------------------------------------

    def _check_state(
        self,
        ctx: FunctionContext | MethodContext,
        schemas: Iterable[TypeInfo],
        *,
        allowlist_from: Iterable[TypeInfo],
    ) -> None:
        allowed = self._allowlist(allowlist_from)
        for info in schemas:
            findings = self.walker.check_state_class(info)
            self._record_reads(ctx.api, findings)
            report(
                ctx.api,
                findings,
                ctx.context,
                allowed=allowed,
                configured=self.config.allowed_msgpack_modules,
            )

    def _allowlist(self, schemas: Iterable[TypeInfo]) -> frozenset[str] | None:
        """The derived allowlist in strict msgpack mode (``None`` when the mode is off)."""
        if not self._strict:
            return None
        if not self.config.derive_allowlist:
            return frozenset()
        return derive_allowlist(discovery.schema_type(info) for info in schemas)

    def _record_reads(self, api: CheckerPluginInterface, findings: Findings) -> None:
        assert isinstance(api, TypeChecker)
        module = api.tree.fullname
        reads = self._read_modules.setdefault(module, set())
        reads.update(mod for mod, _ in findings.touched if mod != module)


def plugin(version: str) -> type[LGStatePlugin]:
    return LGStatePlugin
