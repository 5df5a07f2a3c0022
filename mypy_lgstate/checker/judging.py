"""What a judge of the walk (``containers``, ``models``, ``enums``, ``generics``) asks of the walker
that calls it. The walker hands each type to the judge of its family; the judge decides with
``verdict`` and ``problem``, and walks what the type holds through the walker again. The walker
imports its judges, so they know it by this protocol alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from mypy.errorcodes import ErrorCode
from mypy.nodes import MypyFile, SymbolNode, TypeInfo
from mypy.types import Instance, Type

from mypy_lgstate.checker.findings import Findings, UserClassKind
from mypy_lgstate.core import rules
from mypy_lgstate.core.config import Profile


class Walk(Protocol):
    profile: Profile
    serializer: str  # "the JSON serializer", as messages name it
    lookup: Callable[[str], SymbolNode | None]  # a class by its fullname, in the build
    module: Callable[[str], MypyFile | None]  # a module of the build by its name

    def walk(self, typ: Type, in_model_value: bool) -> Findings: ...

    def verdict(self, typ: Type, verdict: rules.Verdict) -> Findings: ...

    def problem(self, code: ErrorCode, typ: Type, what: str, fix: str) -> Findings: ...

    def type_name(self, typ: Type) -> str: ...

    def is_safe_type(self, info: TypeInfo) -> bool: ...

    def importable(self, typ: Instance, in_model_value: bool) -> Findings: ...

    def user_class(self, typ: Instance, kind: UserClassKind, in_model_value: bool) -> Findings: ...

    def class_findings(
        self, info: TypeInfo, typ: Instance | None, in_model_value: bool
    ) -> Findings: ...
