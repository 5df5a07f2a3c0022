"""What a module tells the modules that import it about its bodies: the summary of each function
whose result may reach a checkpoint (``summaries``), and its node tables (a module-level dict or
list of functions that a graph's module registers in a loop), read from its syntax before mypy
writes its cache.

mypy frees a module's bodies once it is checked, and loads a cached module without them, so another
module never reads them. What it needs of them is recorded here instead, in a hidden member of the
module: a variable whose type is a string literal of the record. The member is part of the module's
interface (its cache, and the hash mypy compares), so an edit that changes the record rechecks every
module that read it; in the daemon the member's trigger fires, and each check that read a record
depends on it (``emit.Emitter.record_record_read``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

from mypy.nodes import (
    GDEF,
    AssignmentStmt,
    CallExpr,
    Decorator,
    DictExpr,
    Expression,
    FuncDef,
    ListExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    StrExpr,
    SymbolNode,
    SymbolTableNode,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.types import Instance, LiteralType

from mypy_lgstate.routes import bodies, lists
from mypy_lgstate.routes.summaries import Summary, summarize_module

# The hidden member of a module that holds its record. The daemon deletes a module's names before it
# analyses its top level again (``mypy.server.aststrip``), all but those with an "@", which no name in
# the code can have: the record stays until the module is checked again, and recorded anew.
MEMBER: Final = "__mypy_lgstate@"
# How many functions of other modules a middleware list is followed through.
_DEPTH: Final = 6


def record(file: MypyFile, modules: dict[str, MypyFile]) -> None:
    """Store the record of ``file``: its functions' summaries and its node tables."""
    functions = summarize_module(file)
    tables = _tables(file)
    if not functions and not tables:
        file.names.pop(MEMBER, None)
        return
    builtins = modules.get("builtins")
    str_symbol = builtins.names.get("str") if builtins is not None else None
    if str_symbol is None or not isinstance(str_symbol.node, TypeInfo):
        return
    text = json.dumps(
        {
            "functions": {name: summary.to_json() for name, summary in functions.items()},
            "tables": tables,
        },
        sort_keys=True,
    )
    member = Var(MEMBER, LiteralType(text, Instance(str_symbol.node, [])))
    member._fullname = f"{file.fullname}.{MEMBER}"
    file.names[MEMBER] = SymbolTableNode(GDEF, member, module_public=False, plugin_generated=True)


def _tables(file: MypyFile) -> dict[str, list[tuple[str, str]]]:
    """The module-level dicts and lists of functions (``NODES = {"plan": plan, ...}``, ``STEPS =
    [("plan", plan), ...]``, ``[plan, review]``): each function with the name it would be added
    under."""
    found: dict[str, list[tuple[str, str]]] = {}
    for stmt in file.defs:
        if not (isinstance(stmt, AssignmentStmt) and len(stmt.lvalues) == 1):
            continue
        target = stmt.lvalues[0]
        if not isinstance(target, NameExpr) or not target.fullname:
            continue
        rows = _table_rows(stmt.rvalue)
        if rows:
            found[target.fullname] = rows
    return found


def _table_rows(expr: Expression) -> list[tuple[str, str]] | None:
    pairs: list[tuple[Expression | None, Expression]]
    if isinstance(expr, DictExpr):
        pairs = [(key, value) for key, value in expr.items if key is not None]
    elif isinstance(expr, (ListExpr, TupleExpr)):
        pairs = []
        for item in expr.items:
            if isinstance(item, TupleExpr) and len(item.items) == 2:
                pairs.append((item.items[0], item.items[1]))
            else:
                pairs.append((None, item))
    else:
        return None
    rows = []
    for label, fn in pairs:
        node = fn.node if isinstance(fn, RefExpr) else None
        if isinstance(node, Decorator):
            node = node.func
        if not isinstance(node, FuncDef):
            return None  # not a table of functions
        rows.append((label.value if isinstance(label, StrExpr) else node.name, node.fullname))
    return rows or None


class _Parsed:
    __slots__ = ("functions", "tables", "_summaries")

    def __init__(self, data: dict[str, object]) -> None:
        functions = data["functions"]
        tables = data["tables"]
        assert isinstance(functions, dict) and isinstance(tables, dict)
        self.functions: dict[str, dict[str, object]] = functions
        self.tables: dict[str, list[tuple[str, str]]] = tables
        self._summaries: dict[str, Summary] = {}

    def summary(self, name: str) -> Summary | None:
        found = self._summaries.get(name)
        if found is None:
            data = self.functions.get(name)
            if data is None:
                return None
            found = self._summaries[name] = Summary.from_json(data)
        return found


class Records:
    """The records of other modules, parsed once per record text."""

    def __init__(self, lookup: Callable[[str], SymbolNode | None]) -> None:
        self._lookup = lookup
        self._parsed: dict[str, _Parsed] = {}

    def summary(self, module: str, name: str) -> Summary | None:
        """What ``module`` recorded of its function ``name`` (a fullname; a closure's is
        ``outer.<name>``); ``None``: nothing (no summary of it, or a module never recorded, such as
        an installed library's)."""
        parsed = self._of(module)
        return parsed.summary(name) if parsed is not None else None

    def recorded(self, module: str) -> bool:
        """Whether ``module`` recorded anything."""
        return self._of(module) is not None

    def table(self, fullname: str) -> list[tuple[str, str]] | None:
        """The functions of the node table ``fullname`` (a module-level variable), with their
        names, as its module recorded them."""
        module = fullname.rpartition(".")[0]
        parsed = self._of(module)
        return parsed.tables.get(fullname) if parsed is not None else None

    def middleware(self, function: FuncDef, read: Callable[[str], None]) -> lists.Recorded | None:
        """The middleware of the lists ``function`` returns, as its module recorded them: each
        item a name bound to what it names (``Budget()`` as a call of the class ``Budget``), for
        ``lists``, followed through the functions of other modules whose lists it returns. ``read``
        is told each module whose record was read."""
        return self._middleware(function, read, _DEPTH)

    def _middleware(
        self, function: FuncDef, read: Callable[[str], None], depth: int
    ) -> lists.Recorded | None:
        module = bodies.module_of(function)
        read(module)
        summary = self.summary(module, function.fullname)
        if summary is None or summary.listed is None or depth <= 0:
            return None
        items: list[Expression] = []
        for name in summary.listed:
            fullname = name.removesuffix("()")
            node = self._lookup(fullname)
            if node is None:
                continue
            ref = NameExpr(fullname.rpartition(".")[2])
            ref.node, ref.fullname = node, fullname
            items.append(CallExpr(ref, [], [], []) if name.endswith("()") else ref)
        found = lists.Recorded(items, [], [])
        for deferred in summary.deferred:
            self._deferred(deferred, found, read, depth)
        return found

    def _deferred(
        self, encoded: object, found: lists.Recorded, read: Callable[[str], None], depth: int
    ) -> None:
        """A parameter or a call whose list a recorded function returns."""
        if isinstance(encoded, list) and encoded[:1] == ["p"]:
            found.parameters.append(encoded[1])
            return
        if isinstance(encoded, list) and encoded[:1] == ["u"]:
            found.unresolved.append(encoded[1])
            return
        callee = encoded[1] if isinstance(encoded, list) and encoded[:1] == ["call"] else None
        node = self._lookup(callee[1]) if isinstance(callee, list) and callee[:1] == ["g"] else None
        if isinstance(node, Decorator):
            node = node.func
        inner = self._middleware(node, read, depth - 1) if isinstance(node, FuncDef) else None
        if inner is None or not isinstance(encoded, list):
            found.unresolved.append(
                "the middleware list comes from a call whose function records no list"
            )
            return
        found.items.extend(inner.items)
        found.unresolved.extend(inner.unresolved)
        arguments = encoded[2]
        for index in inner.parameters:
            given = arguments[index] if index < len(arguments) else None
            if isinstance(given, list) and given[:1] in (["p"], ["call"]):
                self._deferred(given, found, read, depth - 1)
            else:
                found.unresolved.append("the middleware list is built by an expression not followed")

    def _of(self, module: str) -> _Parsed | None:
        member = self._lookup(member_name(module))
        if not isinstance(member, Var) or not isinstance(member.type, LiteralType):
            return None
        text = member.type.value
        assert isinstance(text, str)
        parsed = self._parsed.get(text)
        if parsed is None:
            parsed = self._parsed[text] = _Parsed(json.loads(text))
        return parsed

    def forget(self) -> None:
        self._parsed.clear()


def member_name(module: str) -> str:
    """The fullname of the hidden member that holds ``module``'s record (what a check read)."""
    return f"{module}.{MEMBER}"
