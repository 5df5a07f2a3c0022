"""The one path findings take from a check to mypy: what the check read is recorded first, so that an
edit to one of those classes rechecks the module being checked, then what it found is reported
(``report``).

The reads become the module's indirect dependencies, returned to mypy once the module is checked
(incremental runs), and, when mypy keeps fine-grained dependencies (the daemon), triggers on the
classes for the code being checked.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import Context, FuncDef
from mypy.options import Options
from mypy.server.trigger import make_trigger, make_wildcard_trigger

from mypy_lgstate.checker.report import report
from mypy_lgstate.checker.findings import Findings
from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.routes.exported import member_name


class Emitter:
    """Reports the findings of one plugin object's checks, and remembers what they read."""

    def __init__(self, config: LGStateConfig, options: Options) -> None:
        self._configured = config.allowed_msgpack_modules
        # Modules whose classes a check in module M read, by M: returned to mypy as M's indirect
        # dependencies once M is checked, so that an edit to them rechecks M.
        self._read_modules: dict[str, set[str]] = {}
        self._triggers: dict[str, tuple[str, str]] = {}
        # The modules of each set of classes read (most checks of a graph read the same set).
        self._modules_of: dict[frozenset[tuple[str, str]], frozenset[str]] = {}
        # mypy reads plugin triggers only when it keeps fine-grained dependencies (the daemon).
        self._fine_grained = options.fine_grained_incremental or options.cache_fine_grained

    def forget(self) -> None:
        self._modules_of.clear()

    def __call__(
        self,
        api: TypeChecker,
        findings: Findings,
        context: Context,
        *,
        at_fields: bool = True,
        once_per_file: tuple[str, str] | None = None,
        allowed: frozenset[str] | None,
        where: str | None = None,
    ) -> None:
        """Record what the check read, then report what it found (``report.report``)."""
        self.record_reads(api, findings)
        if not findings.problems and (allowed is None or not findings.user_classes):
            return
        report(
            api,
            findings,
            context,
            at_fields=at_fields,
            once_per_file=once_per_file,
            allowed=allowed,
            configured=self._configured,
            where=where,
        )

    def reads_of(self, module: str) -> set[str]:
        """The modules the checks of ``module`` read (asked once the module is checked)."""
        return self._read_modules.pop(module, set())

    def record_record_read(self, api: TypeChecker, module: str) -> None:
        """Tell mypy that this check read what ``module`` recorded of its bodies (``exported``)."""
        self.record_reads(api, Findings(touched=frozenset({(module, member_name(module))})))

    def record_reads(self, api: TypeChecker, findings: Findings) -> None:
        """Tell mypy which classes this check read, so that an edit to one rechecks this module."""
        if not findings.touched:
            return
        tree = api.tree
        modules = self._modules_of.get(findings.touched)
        if modules is None:
            modules = self._modules_of[findings.touched] = frozenset(
                module for module, _ in findings.touched
            )
        reads = self._read_modules.setdefault(tree.fullname, set())
        reads |= modules
        reads.discard(tree.fullname)
        if not self._fine_grained:
            return
        function = api.scope.top_level_function()
        target = function.fullname if isinstance(function, FuncDef) else tree.fullname
        deps = tree.plugin_deps
        for _, fullname in findings.touched:
            triggers = self._triggers.get(fullname)
            if triggers is None:
                # The class itself changed (a TypedDict's items), or one of its members did.
                triggers = self._triggers[fullname] = (
                    make_trigger(fullname),
                    make_wildcard_trigger(fullname),
                )
            for trigger in triggers:
                deps.setdefault(trigger, set()).add(target)
