"""Nodes read where they are defined: the usual ``nodes/`` + ``graph.py`` layout, where the function
an ``add_node`` registers lives in another module (docs/design.md, "Nodes in another module").

mypy reads a module's bodies in that module alone: it frees them once the module is checked, loads a
cached module without them, and may check the graph's module in another worker while the nodes'
module is still being checked. So a node of another module is checked in two halves, each where it
is sound in every mode:

- **In its own module**, once that module is checked (``Checks.finish_module``), with that module's
  types: a *node-shaped* function has its returned items checked as a registered node's are, by the
  profile's rules and against the declared fields of its state class, each reported on its line.
- **In the graph's module**, at the ``add_node`` that registers it: what only the graph can tell (a
  returned key that is no channel of the graph) is compared with what the node's module recorded of
  the function from its syntax (``record``) before mypy wrote its cache. The record is a hidden member
  of the module, part of its interface: an edit that changes it rechecks every module that read it,
  in a warm run as in the daemon (where it fires the member's trigger).

A function is node-shaped when LangGraph could run it as a node and its own module does not use it as
something else:
- its first parameter (after ``self`` / ``cls``) is named ``state`` (LangGraph's typed ``add_node``
  accepts no other name) and is declared as a TypedDict, pydantic model or dataclass;
- its declared return type does not tell what it writes (none, ``dict``, ``dict[str, Any]``, ``Any``,
  ``Mapping[str, Any]``): a declared update type is checked where ``add_node`` registers the function;
- a key of a dict it returns is a field of its state class: a node updates its state;
- its own module never calls it: a function called there (``variables = prompt_vars(state)``) is a
  helper whose dict feeds a prompt or an API, not the checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, NamedTuple

from mypy.nodes import (
    ARG_OPT,
    ARG_POS,
    CallExpr,
    ClassDef,
    Decorator,
    FakeInfo,
    FuncDef,
    MemberExpr,
    MypyFile,
    NameExpr,
    TypeInfo,
)
from mypy.options import Options
from mypy.server.subexpr import get_subexpressions
from mypy.types import CallableType

from mypy_lgstate.routes import bodies, discovery, sites
from mypy_lgstate.routes.schemas import schema_keys

# Why a node-shaped function is not checked in its own module, as ``lgstate report`` words it ("" when
# it is: "opaque" ones are checked too, as far as their bodies tell).
WHY: Final = {
    "untyped": "mypy does not check an unannotated function: annotate it or set check_untyped_defs",
    "no state class": "its state parameter is not declared as a TypedDict, model or dataclass",
    "called": "its module calls it, as a helper",
    "no field": "none of the keys it returns is a field of its state class",
    "opaque": "it returns a value built elsewhere",
}


class Candidate(NamedTuple):
    """A function of the module whose first parameter is ``state`` and whose declared return type
    does not tell what it writes."""

    defn: FuncDef
    state: TypeInfo | None  # the declared state class
    returned: bodies.Returned
    why: str  # a key of ``WHY``, or "" when it is checked in its own module

    @property
    def read_here(self) -> bool:
        """Whether its own module checks what it returns (an ``opaque`` body as far as it tells)."""
        return self.why in ("", "opaque")


def candidates(file: MypyFile, options: Options) -> list[Candidate]:
    """The node-shaped functions of ``file`` and the others with a ``state`` parameter that return a
    loose type, from its syntax and declarations (the same before and after its bodies are checked)."""
    shaped: list[tuple[FuncDef, TypeInfo | None, bodies.Returned]] = []
    for defn in _functions(file):
        state = _state_parameter(defn)
        if state is None:
            continue
        signature = defn.type if isinstance(defn.type, CallableType) else None
        ret = sites.node_return_type(signature) if signature is not None else None
        if ret is not None and not bodies.is_loose(ret):
            continue  # a declared update type: checked where the node is registered
        state_class = (
            discovery.type_schema(signature.arg_types[state]) if signature is not None else None
        )
        shaped.append((defn, state_class, bodies.returned(defn)))
    if not shaped:
        return []
    called = _called(file)
    found = []
    for defn, state_class, returned in shaped:
        if defn.is_dynamic() and not options.check_untyped_defs:
            why = "untyped"
        elif state_class is None:
            why = "no state class"
        elif defn.fullname in called or (not isinstance(defn.info, FakeInfo) and defn.name in called):
            why = "called"
        elif not any(key.value in schema_keys(state_class) for key in returned.keys):
            why = "no field" if returned.displays or returned.items else "opaque"
        else:
            why = "opaque" if returned.opaque else ""
        found.append(Candidate(defn, state_class, returned, why))
    return found


def _functions(file: MypyFile) -> Iterator[FuncDef]:
    """The module's functions and the methods of its classes (static and class methods included)."""
    for defn in file.defs:
        if isinstance(defn, Decorator):
            defn = defn.func
        if isinstance(defn, FuncDef):
            yield defn
        elif isinstance(defn, ClassDef) and not isinstance(defn.info, FakeInfo):
            for member in defn.defs.body:
                if isinstance(member, Decorator):
                    member = member.func
                if isinstance(member, FuncDef):
                    yield member


def _state_parameter(defn: FuncDef) -> int | None:
    """The index of the parameter named ``state`` in the function's signature, when it is the first
    one a node receives (after ``self`` / ``cls``)."""
    index = 0 if isinstance(defn.info, FakeInfo) or defn.is_static else 1
    arguments = defn.arguments
    if len(arguments) <= index:
        return None
    argument = arguments[index]
    if argument.variable.name != "state" or argument.kind not in (ARG_POS, ARG_OPT):
        return None
    return index


def _called(file: MypyFile) -> set[str]:
    """The functions a call of the module names: fullnames, and the bare names of methods (a
    ``self.helper(state)`` call is resolved only when it is type-checked)."""
    found: set[str] = set()
    for expr in get_subexpressions(file):
        if type(expr) is CallExpr:
            assert isinstance(expr, CallExpr)
            callee = expr.callee
            if isinstance(callee, NameExpr) and callee.fullname:
                found.add(callee.fullname)
            elif isinstance(callee, MemberExpr):
                found.add(callee.name)
                if callee.fullname:
                    found.add(callee.fullname)
    return found
