"""The functional API's checks (``routes/functional.py`` reads what an ``@entrypoint`` or a
``@task`` checkpoints): each value walked and reported on the function's ``def`` line, each a root
of the lock file (``drift.function_root``), and, when the return type does not tell, the body read
once the module is checked; ``lgstate report`` is told of each (``coverage.functional``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mypy.checker import TypeChecker
from mypy.nodes import FuncDef
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import Type

from mypy_lgstate.checker import drift
from mypy_lgstate.checker.emit import Emitter
from mypy_lgstate.checker.pending_bodies import Body, Pending
from mypy_lgstate.checker.walker import Walker
from mypy_lgstate.core.config import LGStateConfig
from mypy_lgstate.core.lockfile import Lock
from mypy_lgstate.routes import functional

if TYPE_CHECKING:
    from mypy_lgstate.routes.coverage import CoverageRecorder


class FunctionalChecks:
    def __init__(
        self, walker: Walker, emit: Emitter, bodies: Pending, config: LGStateConfig, lock: Lock
    ) -> None:
        self._walker = walker
        self._emit = emit
        self._bodies = bodies
        self._json_profile = config.profile == "json"
        self._lock = lock

    def check(
        self,
        ctx: FunctionContext | MethodContext,
        function: FuncDef,
        values: list[tuple[str, Type]],
        allowed: frozenset[str] | None,
        recorder: CoverageRecorder | None,
        *,
        task: bool,
    ) -> None:
        """What a functional-API function checkpoints, reported on its ``def`` line: its declared
        values, each a root of the lock file, and, when its return type does not tell, what its
        body returns."""
        assert isinstance(ctx.api, TypeChecker)
        api = ctx.api
        for path, typ in values:
            findings = self._walker.check_value(typ, path, channel=True)
            self._emit(api, findings, function, at_fields=False, allowed=allowed)
            drift.function_root(
                api, function, path, typ, self._lock, task=task, json_profile=self._json_profile
            )
        loose = functional.returns_loose(function)
        record = (
            recorder.functional(ctx, function, values, task=task, from_body=loose)
            if recorder is not None
            else None
        )
        if loose:
            self._bodies.add(
                Body(api, function, function, function.name, None, None, (), allowed, True, record)
            )
