"""Function summaries: what each function of a module returns, from its syntax and the declared
types it names, kept in the module's interface (``exported``) for the modules that register the
function as a node, call it from a node, or build a middleware list with it (docs/design.md,
"Function summaries").

A node's update is often built by another function: ``return await developer_deploy(state, pid)``,
``return build_update(state)``, ``upd = helper(state); return upd``, a method of an attribute
(``return await self.agent.invoke(state)``), or a wrapper's closure (``traced_node("n", fn)``). mypy
frees a module's bodies once it is checked and loads a cached module without them, so another
module never reads them. A summary is what the module that defines a function records of it
before its cache is written, the moment its syntax tree is whole and every declaration it names is
known, but before its bodies are checked (no inferred type of a body exists yet: a summary holds
expressions, never the types mypy infers for them):

- ``items``: the keys of the dicts it returns (its ``return {...}``, a returned local bound to a
  display with what its statements add to it), each with its line and its value as an expression;
- ``calls``: the calls whose results it returns (``f(...)``, ``await f(...)``, through a local);
- ``functions``: the functions it returns (a factory's closure, a decorator's parameter);
- ``commands``: the keys of the ``Command(update={...})`` it returns;
- ``opaque``: what else it returns, in words;
- ``listed`` / ``deferred``: the items of the middleware lists it returns (``lists``), and the
  calls and parameters whose lists it returns;
- ``adds``: the nodes it adds to a builder it is given (``def add_nodes(builder): builder.add_node(...)``).

An expression is kept as JSON (``encode``): literals, the names it reads (a global by its fullname,
a parameter by its index, a local by what is assigned to it, a local declared with a type by that
type), attributes, subscripts, calls with their arguments, ``await``, operators and displays. The
module that reads a summary evaluates it against the declarations it names as they are then
(``reach``): an edit to one of them rechecks the reader, in every mode, like any other read of a
declaration; an edit that changes a summary changes the module's interface.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    GDEF,
    LDEF,
    AssignmentStmt,
    AwaitExpr,
    BytesExpr,
    CallExpr,
    CastExpr,
    ClassDef,
    ComparisonExpr,
    ComplexExpr,
    ConditionalExpr,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FakeInfo,
    FloatExpr,
    ForStmt,
    FuncDef,
    GeneratorExpr,
    IndexExpr,
    IntExpr,
    LambdaExpr,
    ListComprehension,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    OpExpr,
    RefExpr,
    SetComprehension,
    SetExpr,
    StarExpr,
    Statement,
    StrExpr,
    TupleExpr,
    UnaryExpr,
    Var,
    WithStmt,
)
from mypy.semanal import is_trivial_body
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    TypeOfAny,
)

from mypy_lgstate.routes import bodies, lists
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements
from mypy_lgstate.routes.summarized import (
    AGENT_MIDDLEWARE,
    COMMAND,
    is_builder,
    worth_summarizing,
)

# How deep an expression is kept: a display in a display in a call is kept whole, deeper parts are
# "not read" (a summary stays small, and so does the module's interface).
DEPTH: Final = 6
# How many assignments of one local are followed (``x = a if c else b`` counts each).
_BINDINGS: Final = 4
_ADDING: Final = frozenset({"add_node"})
_SEQUENCES: Final = frozenset(
    {"builtins.list", "builtins.tuple", "typing.Sequence", "typing.MutableSequence"}
)

Encoded = Any  # an expression as JSON (``encode``)


class Summary(NamedTuple):
    """What a function returns, as its module recorded it (JSON-shaped, see the module's doc)."""

    state: int  # the index of the parameter a node receives its state in
    items: list[tuple[str | None, int, int, Encoded]]  # (key or None for ``**x``, key line, value line, value)
    # The calls whose results it returns; no line: a reader reports nothing at them, and a line in a
    # module's interface would recheck its importers whenever an edit above shifts it.
    calls: list[Encoded]
    functions: list[Encoded]
    commands: list[tuple[str, int]]
    opaque: list[str]
    listed: list[str] | None  # the middleware list items (``exported``'s names), None: no list
    deferred: list[Encoded]  # calls and parameters whose lists it returns
    adds: list[tuple[int, str, Encoded]]  # (builder parameter, node name, what runs)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"s": self.state}
        for name, value in zip("icfkolda", (self.items, self.calls, self.functions, self.commands,
                                            self.opaque, self.listed, self.deferred, self.adds)):
            if value or (name == "l" and value is not None):
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Summary:
        return cls(
            data["s"],
            [tuple(item) for item in data.get("i", ())],
            data.get("c", []),
            data.get("f", []),
            [tuple(key) for key in data.get("k", ())],
            data.get("o", []),
            data.get("l"),
            data.get("d", []),
            [tuple(added) for added in data.get("a", ())],
        )


def summarize_module(file: MypyFile) -> dict[str, Summary]:
    """The summaries of the module's functions and methods that return something a checkpoint may
    get (a dict, a list, a function, a ``Command``) or add nodes to a builder they are given, and of
    the functions those define and return (closures), keyed by fullname (a closure:
    ``outer.<name>``)."""
    found: dict[str, Summary] = {}
    for defn in _functions(file):
        if defn.body.body and worth_summarizing(defn):
            _summarize_into(defn, defn.fullname, file, found, ())
    return found


def summarize(defn: FuncDef, file: MypyFile) -> dict[str, Summary]:
    """The summary of one function of ``file`` (and of the closures it returns), by fullname."""
    found: dict[str, Summary] = {}
    if defn.body.body:
        _summarize_into(defn, defn.fullname, file, found, ())
    return found


def _summarize_into(
    defn: FuncDef, key: str, file: MypyFile, found: dict[str, Summary], outer: tuple[FuncDef, ...]
) -> None:
    encoder = _Encoder(defn, outer)
    summary = encoder.summary(file)
    found[key] = summary
    for name, nested in encoder.closures.items():
        if f"{key}.{name}" not in found:
            _summarize_into(nested, f"{key}.{name}", file, found, (*outer, defn))


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


class _Encoder:
    """Reads one function's body."""

    def __init__(self, defn: FuncDef, outer: tuple[FuncDef, ...]) -> None:
        self.defn = defn
        self.outer = outer
        self.closures: dict[str, FuncDef] = {}
        self._bindings: dict[Var, list[Expression]] | None = None
        self._loop_vars: set[Var] = set()
        self._following: set[Var] = set()

    def summary(self, file: MypyFile) -> Summary:
        defn = self.defn
        returned = bodies.returned(defn)
        state = bodies.state_parameter(defn)
        state_index = next(
            (i for i, arg in enumerate(defn.arguments) if arg.variable is state), 0
        )
        items: list[tuple[str | None, int, int, Encoded]] = []
        for display in returned.displays:
            for key, value in display.items:
                if key is None:
                    items.append((None, value.line, value.line, self.encode(value)))
                elif isinstance(key, StrExpr):
                    items.append((key.value, key.line, value.line, self.encode(value)))
        for key, value in returned.items:
            items.append((key.value, key.line, value.line, self.encode(value)))
        calls = [self.encode(call) for call in returned.calls]
        functions: list[Encoded] = []
        commands: list[tuple[str, int]] = []
        opaque = list(returned.why)
        if is_trivial_body(defn.body):  # ``defn.is_trivial_body`` is set for abstract methods only
            opaque.append("nothing: its body is a stub")
        for expr in returned.expressions:
            function = self._function(expr)
            if function is not None:
                functions.append(function)
                if isinstance(expr, NameExpr) and expr.node is not state:
                    opaque = [why for why in opaque if not why.startswith(f'"{expr.name}"')]
            elif isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr) and (
                expr.callee.fullname == COMMAND
            ):
                commands.extend(_command_keys(expr))
        listed, deferred = self._lists(file)
        return Summary(
            state_index, items, calls, functions, commands, opaque, listed, deferred, self._adds()
        )

    def _function(self, expr: Expression) -> Encoded | None:
        """A function ``expr`` is, when the function returns one: a closure it defines, one of its
        parameters (a decorator that returns what it is given), a function of a module."""
        if not isinstance(expr, NameExpr):
            return None
        node = expr.node
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, FuncDef) and expr.kind == LDEF:
            self.closures[node.name] = node
            return ["n", node.name]
        if isinstance(node, FuncDef) and node.fullname:
            return ["g", node.fullname]
        if isinstance(node, Var) and expr.kind == LDEF:
            parameter = self._parameter(node)
            if parameter is not None:
                return parameter
        return None

    def _lists(self, file: MypyFile) -> tuple[list[str] | None, list[Encoded]]:
        """The middleware items of the lists the function returns, when it is declared to return a
        list of ``Any`` or of middleware (or nothing): each as ``exported`` names it, and the calls
        and parameters whose lists it returns."""
        if not _may_return_middleware(self.defn):
            return None, []
        found = lists.returned_items(self.defn, file, "the middleware list", deferring=True)
        if not found.items and not found.deferred and not _declares_sequence(self.defn):
            return None, []  # no list: an empty one is said by its declared type (``-> list[...]``)
        # What is not known of the list travels with it: the agent that reads it counts it unknown.
        deferred = [self.encode(expr) for expr in found.deferred]
        deferred += [["u", why] for why in found.unresolved]
        names: list[str] = []
        for item in found.items:
            called = isinstance(item.expr, CallExpr)
            target = item.expr.callee if isinstance(item.expr, CallExpr) else item.expr
            if isinstance(target, RefExpr) and target.fullname:
                names.append(target.fullname + ("()" if called else ""))
            else:
                deferred.append(["u", "an item of the middleware list is not a name"])
        return names, deferred

    def _adds(self) -> list[tuple[int, str, Encoded]]:
        """The nodes the function adds to a builder it is given as a parameter."""
        signature = self.defn.type
        if not isinstance(signature, CallableType) or not any(
            is_builder(typ) for typ in signature.arg_types
        ):
            return []
        found: list[tuple[int, str, Encoded]] = []
        for stmt in statements(self.defn.body.body):
            call = getattr(stmt, "expr", None)
            while isinstance(call, CallExpr) and isinstance(call.callee, MemberExpr):
                receiver = call.callee.expr
                if call.callee.name in _ADDING and isinstance(receiver, NameExpr):
                    index = self._parameter_index(receiver)
                    added = _added_node(call) if index is not None else None
                    if index is not None and added is not None:
                        name, runs = added
                        found.append((index, name, self.encode(runs)))
                call = receiver
        return found

    # Expressions ---------------------------------------------------------------------------------

    def encode(self, expr: Expression, depth: int = DEPTH) -> Encoded:
        """``expr`` as JSON, as far as syntax and declarations tell (module doc)."""
        if depth <= 0:
            return ["u", "nested too deep"]
        deeper = depth - 1
        if isinstance(expr, StrExpr):
            return ["s", expr.value]
        if isinstance(expr, IntExpr):
            return ["i", expr.value]
        if isinstance(expr, FloatExpr):
            return ["f"]
        if isinstance(expr, ComplexExpr):
            return ["c"]
        if isinstance(expr, BytesExpr):
            return ["b"]
        if isinstance(expr, NameExpr):
            return self._name(expr, deeper)
        if isinstance(expr, MemberExpr):
            if expr.kind == GDEF and expr.fullname and expr.node is not None:
                return ["g", expr.fullname]  # ``module.name``
            return ["a", self.encode(expr.expr, deeper), expr.name]
        if isinstance(expr, CallExpr):
            callee = expr.callee
            if isinstance(callee, MemberExpr) and isinstance(callee.expr, StrExpr):
                return ["S"]  # ``"...".format(...)``, ``"".join(...)``: an f-string
            return [
                "call",
                self.encode(callee, deeper),
                [self.encode(arg, deeper) for arg in expr.args],
                [_KINDS.get(kind, "?") for kind in expr.arg_kinds],
                list(expr.arg_names),
            ]
        if isinstance(expr, AwaitExpr):
            return ["w", self.encode(expr.expr, deeper)]
        if isinstance(expr, IndexExpr):
            return ["x", self.encode(expr.base, deeper), self.encode(expr.index, deeper)]
        if isinstance(expr, OpExpr):
            return ["op", expr.op, self.encode(expr.left, deeper), self.encode(expr.right, deeper)]
        if isinstance(expr, ComparisonExpr):
            return ["B"]
        if isinstance(expr, UnaryExpr):
            return ["B"] if expr.op == "not" else self.encode(expr.expr, deeper)
        if isinstance(expr, ConditionalExpr):
            return ["if", self.encode(expr.if_expr, deeper), self.encode(expr.else_expr, deeper)]
        if isinstance(expr, DictExpr):
            return ["dict", [
                [None if key is None else self.encode(key, deeper), self.encode(value, deeper), value.line]
                for key, value in expr.items
            ]]
        if isinstance(expr, (ListExpr, TupleExpr, SetExpr)):
            kind = _DISPLAYS[type(expr)]
            return [kind, [
                ["*", self.encode(item.expr, deeper)] if isinstance(item, StarExpr)
                else self.encode(item, deeper)
                for item in expr.items
            ], [item.line for item in expr.items]]
        if isinstance(expr, DictionaryComprehension):
            return ["comp", "dict", self.encode(expr.value, deeper)]
        if isinstance(expr, (ListComprehension, SetComprehension, GeneratorExpr)):
            generator = expr if isinstance(expr, GeneratorExpr) else expr.generator
            kind = {ListComprehension: "list", SetComprehension: "set"}.get(type(expr), "gen")
            return ["comp", kind, self.encode(generator.left_expr, deeper)]
        if isinstance(expr, LambdaExpr):
            return ["L"]
        if isinstance(expr, CastExpr):
            return ["t", expr.type.serialize()]
        return ["u", "an expression not read"]

    def _name(self, expr: NameExpr, depth: int) -> Encoded:
        fullname = expr.fullname
        if fullname == "builtins.True":
            return ["T"]
        if fullname == "builtins.False":
            return ["F"]
        if fullname == "builtins.None":
            return ["N"]
        node = expr.node
        if isinstance(node, Decorator) and expr.kind == LDEF:
            node = node.func
        if isinstance(node, FuncDef) and expr.kind == LDEF:
            self.closures[node.name] = node
            return ["n", node.name]
        if isinstance(node, Var) and expr.kind == LDEF:
            parameter = self._parameter(node)
            if parameter is not None:
                return parameter
            return self._local(node, depth)
        if fullname:
            return ["g", fullname]
        return ["u", f'"{expr.name}", a name not known']

    def _parameter_index(self, expr: NameExpr) -> int | None:
        return next(
            (i for i, arg in enumerate(self.defn.arguments) if arg.variable is expr.node), None
        )

    def _parameter(self, var: Var) -> Encoded | None:
        """A parameter of this function (``["p", index]``) or of an enclosing one (``["P", how
        many functions out, index]``: a closure reads it)."""
        for index, arg in enumerate(self.defn.arguments):
            if arg.variable is var:
                return ["p", index]
        for up, outer in enumerate(reversed(self.outer), start=1):
            for index, arg in enumerate(outer.arguments):
                if arg.variable is var:
                    return ["P", up, index]
        return None

    def _local(self, var: Var, depth: int) -> Encoded:
        """A local variable: its declared type, else what is assigned to it."""
        if var.type is not None and not var.is_inferred:
            return ["t", var.type.serialize()]
        bindings = self._local_bindings()
        if var in self._loop_vars:
            return ["u", f'"{var.name}", a loop variable']
        assigned = bindings.get(var)
        if not assigned:
            return ["u", f'"{var.name}", a variable not assigned in its function']
        if var in self._following or len(assigned) > _BINDINGS:
            return ["u", f'"{var.name}", a variable assigned in a loop of assignments']
        self._following.add(var)
        try:
            encoded = [self.encode(rvalue, depth) for rvalue in assigned]
        finally:
            self._following.discard(var)
        result = encoded[-1]
        for earlier in reversed(encoded[:-1]):
            result = ["if", earlier, result]
        return result

    def _local_bindings(self) -> dict[Var, list[Expression]]:
        """What each local of the function is assigned (the function's own statements, and the
        enclosing functions' for a closure's free variables)."""
        if self._bindings is None:
            self._bindings = {}
            for function in (*self.outer, self.defn):
                for stmt in statements(function.body.body):
                    self._bind(stmt)
        return self._bindings

    def _bind(self, stmt: Statement) -> None:
        assert self._bindings is not None
        if isinstance(stmt, AssignmentStmt):
            for lvalue in stmt.lvalues:
                if isinstance(lvalue, NameExpr) and isinstance(lvalue.node, Var):
                    self._bindings.setdefault(lvalue.node, []).append(stmt.rvalue)
                elif isinstance(lvalue, (TupleExpr, ListExpr)):
                    self._loop_vars.update(_names(lvalue))
        elif isinstance(stmt, ForStmt):
            self._loop_vars.update(_names(stmt.index))
        elif isinstance(stmt, WithStmt):
            for target in stmt.target:
                if target is not None:
                    self._loop_vars.update(_names(target))


def _names(expr: Expression) -> Iterator[Var]:
    if isinstance(expr, NameExpr) and isinstance(expr.node, Var):
        yield expr.node
    elif isinstance(expr, (TupleExpr, ListExpr)):
        for item in expr.items:
            yield from _names(item.expr if isinstance(item, StarExpr) else item)


_KINDS: Final = {ARG_POS: "p", ARG_NAMED: "n", ARG_STAR: "*", ARG_STAR2: "**"}
_DISPLAYS: Final = {ListExpr: "list", TupleExpr: "tuple", SetExpr: "set"}


def _command_keys(call: CallExpr) -> Iterator[tuple[str, int]]:
    """The keys a ``Command(update={...})`` display writes."""
    for arg, name in zip(call.args, call.arg_names):
        if name == "update" and isinstance(arg, DictExpr):
            for key, _ in arg.items:
                if isinstance(key, StrExpr):
                    yield key.value, key.line


def _added_node(call: CallExpr) -> tuple[str, Expression] | None:
    """The name and the callable of ``builder.add_node("name", fn)`` / ``add_node(fn)``."""
    if not (isinstance(call.callee, MemberExpr) and call.callee.name == "add_node"):
        return None
    positional = [arg for arg, kind in zip(call.args, call.arg_kinds) if kind == ARG_POS]
    named = {name: arg for arg, name in zip(call.args, call.arg_names) if name is not None}
    node = named.get("node", positional[0] if positional else None)
    action = named.get("action", positional[1] if len(positional) > 1 else None)
    if action is None and node is not None and not isinstance(node, StrExpr):
        action = node
    if action is None:
        return None
    if isinstance(node, StrExpr):
        return node.value, action
    name = action.name if isinstance(action, (NameExpr, MemberExpr)) else "<node>"
    return name, action


def _declares_sequence(defn: FuncDef) -> bool:
    signature = defn.type
    if not isinstance(signature, CallableType):
        return False
    returned = proper_type(signature.ret_type)
    return isinstance(returned, Instance) and returned.type.fullname in _SEQUENCES


def _may_return_middleware(defn: FuncDef) -> bool:
    """Whether ``defn`` is declared to return a list of ``Any`` or of middleware (or nothing)."""
    signature = defn.type
    if not isinstance(signature, CallableType):
        return True
    returned = proper_type(signature.ret_type)
    if isinstance(returned, AnyType):
        return returned.type_of_any != TypeOfAny.special_form
    if not (isinstance(returned, Instance) and returned.type.fullname in _SEQUENCES and returned.args):
        return False
    item = proper_type(returned.args[0])
    if isinstance(item, AnyType):
        return True
    return isinstance(item, Instance) and (
        item.type.has_base(AGENT_MIDDLEWARE) or item.type.fullname == "builtins.object"
    )

