"""An index of a module's syntax tree, built once per tree: what the checks look up in the module
being checked many times (its decorator calls, the graphs of its node functions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from mypy.nodes import MypyFile

_Index = TypeVar("_Index")


class TreeIndex(Generic[_Index]):
    """An index of a module's syntax tree, built once per tree (a daemon run re-parses an edited
    module)."""

    def __init__(self, build: Callable[[MypyFile], _Index]) -> None:
        self._build = build
        self._trees: dict[str, tuple[MypyFile, _Index]] = {}

    def of(self, tree: MypyFile) -> _Index:
        known = self._trees.get(tree.fullname)
        if known is None or known[0] is not tree:
            known = self._trees[tree.fullname] = (tree, self._build(tree))
        return known[1]

    def clear(self) -> None:
        self._trees.clear()
