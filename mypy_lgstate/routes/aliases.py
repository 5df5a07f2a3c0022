"""``proper_type``: mypy's ``get_proper_type``, with the expansion of each type alias kept.

mypy expands a type alias every time its proper type is asked for, copying the whole target
(``AnyMessage``, a union of eight message classes; a TypedDict declared through an alias). The checks
ask for the same few aliases thousands of times in a large application: for LangChain's message
aliases and the application's own, this was an eighth of what the plugin costs a rechecking run.

An alias without type arguments always expands to the same type, as long as its target is the same
object: mypy makes a new target when it analyses the alias again. The daemon also merges a re-analysed
module into the old one in place, so there the expansions are not kept at all.
"""

from __future__ import annotations

from typing import Final, overload

from mypy.nodes import TypeAlias
from mypy.types import ProperType, Type, TypeAliasType, get_proper_type

# Each alias's target, and its expansion.
_expanded: Final[dict[TypeAlias, tuple[Type, ProperType]]] = {}
# Set by each build's plugin object before its first use of the checks; none kept until then.
_keep = False


def keep_expansions(keep: bool) -> None:
    """Whether expansions are kept (set by each new plugin object: not in the daemon); forgets
    those kept so far."""
    global _keep
    _keep = keep
    _expanded.clear()


@overload
def proper_type(typ: None) -> None: ...
@overload
def proper_type(typ: Type) -> ProperType: ...
def proper_type(typ: Type | None) -> ProperType | None:
    if type(typ) is not TypeAliasType or typ.args or typ.alias is None or not _keep:
        return get_proper_type(typ)
    alias = typ.alias
    known = _expanded.get(alias)
    if known is not None and known[0] is alias.target:
        return known[1]
    expanded = get_proper_type(typ)
    _expanded[alias] = (alias.target, expanded)
    return expanded
