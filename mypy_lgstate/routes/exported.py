"""What a module tells the modules that import it about its bodies: the keys its node-shaped
functions return (``shaped_nodes``), and the middleware classes the lists its functions return hold
(``lists``), read from its syntax before mypy writes its cache.

mypy frees a module's bodies once it is checked, and loads a cached module without them, so another
module never reads them. What it needs of them is recorded here instead, in a hidden member of the
module: a variable whose type is a string literal of the record. The member is part of the module's
interface (its cache, and the hash mypy compares), so an edit that changes the record rechecks every
module that read it; in the daemon the member's trigger fires, and each check that read a record
depends on it (``emit.Emitter.record_reads``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, NamedTuple

from mypy.nodes import (
    GDEF,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    MypyFile,
    NameExpr,
    RefExpr,
    SymbolNode,
    SymbolTableNode,
    TypeInfo,
    Var,
)
from mypy.types import CallableType, Instance, LiteralType

from mypy_lgstate.routes import bodies, lists
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.shaped_nodes import Candidate

# The hidden member of a module that holds its record. The daemon deletes a module's names before it
# analyses its top level again (``mypy.server.aststrip``), all but those with an "@", which no name in
# the code can have: the record stays until the module is checked again, and recorded anew.
MEMBER: Final = "__mypy_lgstate@"
AGENT_MIDDLEWARE: Final = "langchain.agents.middleware.types.AgentMiddleware"
_SEQUENCES: Final = frozenset({"builtins.list", "builtins.tuple", "typing.Sequence"})


class NodeRecord(NamedTuple):
    """What a module recorded of one of its node-shaped functions."""

    why: str  # a key of ``shaped_nodes.WHY``, or "" when its own module checks it
    keys: list[tuple[str, int]]  # each key its returned dicts write, with its line


def record(file: MypyFile, nodes: list[Candidate], modules: dict[str, MypyFile]) -> None:
    """Store the record of ``file``: its node-shaped functions (``nodes``) and the middleware of the
    lists its functions return."""
    middleware = _middleware_lists(file)
    if not nodes and not middleware:
        file.names.pop(MEMBER, None)
        return
    builtins = modules.get("builtins")
    str_symbol = builtins.names.get("str") if builtins is not None else None
    if str_symbol is None or not isinstance(str_symbol.node, TypeInfo):
        return
    text = json.dumps(
        {
            "nodes": {
                node.defn.fullname: [node.why, [[key.value, key.line] for key in node.returned.keys]]
                for node in nodes
            },
            "middleware": middleware,
        },
        sort_keys=True,
    )
    member = Var(MEMBER, LiteralType(text, Instance(str_symbol.node, [])))
    member._fullname = f"{file.fullname}.{MEMBER}"
    file.names[MEMBER] = SymbolTableNode(GDEF, member, module_public=False, plugin_generated=True)


def _middleware_lists(file: MypyFile) -> dict[str, list[str]]:
    """For each module-level function declared to return a list of middleware, what each item
    names: the class it instantiates or the function it calls (``pkg.mw.Budget()``), or the name it
    is (``pkg.mw.audit``, a decorator-made middleware)."""
    found: dict[str, list[str]] = {}
    for defn in file.defs:
        function = defn.func if isinstance(defn, Decorator) else defn
        if not isinstance(function, FuncDef) or not _returns_middleware(function):
            continue
        names = []
        for item in lists.returned_items(function, file, "the middleware list").items:
            called = isinstance(item.expr, CallExpr)
            target = item.expr.callee if isinstance(item.expr, CallExpr) else item.expr
            if isinstance(target, RefExpr) and target.fullname:
                names.append(target.fullname + ("()" if called else ""))
        found[function.fullname] = names
    return found


def _returns_middleware(function: FuncDef) -> bool:
    signature = proper_type(function.type)
    if not isinstance(signature, CallableType):
        return False
    returned = proper_type(signature.ret_type)
    if not (isinstance(returned, Instance) and returned.type.fullname in _SEQUENCES and returned.args):
        return False
    item = proper_type(returned.args[0])
    return isinstance(item, Instance) and item.type.has_base(AGENT_MIDDLEWARE)


class Elsewhere(NamedTuple):
    """A registered node defined in another module, and what that module recorded of it."""

    defn: FuncDef
    recorded: NodeRecord
    path: str  # the file of its module, as mypy names it


class _Parsed(NamedTuple):
    nodes: dict[str, NodeRecord]
    middleware: dict[str, list[str]]


class Records:
    """The records of other modules, parsed once per record text."""

    def __init__(self, lookup: Callable[[str], SymbolNode | None]) -> None:
        self._lookup = lookup
        self._parsed: dict[str, _Parsed] = {}

    def node(self, defn: FuncDef) -> NodeRecord | None:
        """What ``defn``'s module recorded of it (``None``: it is not node-shaped there, or its
        module was never recorded, such as an installed library's)."""
        parsed = self._of(bodies.module_of(defn))
        return parsed.nodes.get(defn.fullname) if parsed is not None else None

    def middleware(self, function: FuncDef) -> list[Expression] | None:
        """The items of the lists ``function`` returns, as its module recorded them: each a name
        bound to what it names (``Budget()`` as a call of the class ``Budget``), for ``lists``."""
        parsed = self._of(bodies.module_of(function))
        names = parsed.middleware.get(function.fullname) if parsed is not None else None
        if names is None:
            return None
        items: list[Expression] = []
        for name in names:
            fullname = name.removesuffix("()")
            node = self._lookup(fullname)
            if node is None:
                continue
            ref = NameExpr(fullname.rpartition(".")[2])
            ref.node, ref.fullname = node, fullname
            items.append(CallExpr(ref, [], [], []) if name.endswith("()") else ref)
        return items

    def _of(self, module: str) -> _Parsed | None:
        member = self._lookup(member_name(module))
        if not isinstance(member, Var) or not isinstance(member.type, LiteralType):
            return None
        text = member.type.value
        assert isinstance(text, str)
        parsed = self._parsed.get(text)
        if parsed is None:
            data = json.loads(text)
            parsed = self._parsed[text] = _Parsed(
                {
                    name: NodeRecord(why, [(key, line) for key, line in keys])
                    for name, (why, keys) in data["nodes"].items()
                },
                data["middleware"],
            )
        return parsed

    def forget(self) -> None:
        self._parsed.clear()


def member_name(module: str) -> str:
    """The fullname of the hidden member that holds ``module``'s record (what a check read)."""
    return f"{module}.{MEMBER}"
