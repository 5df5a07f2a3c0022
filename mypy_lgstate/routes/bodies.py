"""Node bodies: what a node declared ``-> dict`` (or with no return type at all) really returns.

Most nodes are written ``def node(state: State) -> dict`` and return dict displays. mypy infers the
type of every item of those displays while it checks the body; this module reads them back:

- each ``return {...}``, item by item;
- a returned local bound to a display in the same function (``update = {...}; update["k"] = v;
  return update``);
- ``{**state, "k": v}``: the spread is an item like any other (the checks skip an instance of the
  graph's own state);
- ``return Command(...)`` (checked where it is built), ``return state``, ``return None`` and a bare
  ``return`` add nothing.

Any other returned expression (a call, an attribute, a parameter of another type) is something the
body does not tell: the node stays unchecked, as a node declared ``-> dict[str, Any]`` always was.

When the types exist (docs/design.md, "Node bodies"): mypy 2.x checks a module's top level (where
``add_node`` usually is) before its function bodies, and frees a module's bodies, with the types it
inferred for them, once the module is checked. The one moment the bodies of a module and their types
are all there is the end of that module's check, when mypy calls the plugin's
``get_additional_indirect_deps``. So a node registered in the module being checked is read then, in
the same process and with the same checker, in every mode (cold, warm, ``--num-workers``, the
daemon's checks of a changed module). A node whose body lies in another module is not read: mypy
starts checking a module as soon as the interfaces of its imports are known, possibly while another
worker is still checking their bodies, and a warm run rechecks the graph's module without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    GDEF,
    LDEF,
    AssignmentStmt,
    AwaitExpr,
    CallExpr,
    ConditionalExpr,
    Context,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    ExpressionStmt,
    FakeInfo,
    FuncDef,
    FuncItem,
    GeneratorExpr,
    IndexExpr,
    ListComprehension,
    MemberExpr,
    MypyFile,
    NameExpr,
    OperatorAssignmentStmt,
    RefExpr,
    ReturnStmt,
    SetComprehension,
    Statement,
    StrExpr,
    Var,
    YieldExpr,
)
from mypy.types import AnyType, CallableType, Instance, NoneType, Type, TypeOfAny

from mypy_lgstate.core.messages import key_part
from mypy_lgstate.routes import sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.lists import statements

def is_loose(ret: Type) -> bool:
    """Whether a node's declared return type (coroutines unwrapped) leaves its writes unchecked:
    none at all, ``Any``, ``dict``, ``dict[str, Any]``, ``dict[str, object]``, ``Mapping[str, Any]``,
    alone or beside ``None`` and ``Command``."""
    loose = False
    for part in sites.union_items(proper_type(ret)):
        if isinstance(part, NoneType) or (
            isinstance(part, Instance) and part.type.fullname == sites.COMMAND
        ):
            continue
        if isinstance(part, AnyType):
            loose = True
        elif isinstance(part, Instance) and part.type.fullname in sites.MAPPINGS:
            value = proper_type(part.args[1]) if len(part.args) == 2 else None
            if not (
                value is None
                or isinstance(value, AnyType)
                or (isinstance(value, Instance) and value.type.fullname == "builtins.object")
            ):
                return False
            loose = True
        else:
            return False
    return loose


def local_function(node: sites.Node, api: TypeChecker) -> FuncDef | None:
    """The function definition behind a node, when mypy checks its body in the module being
    checked: a function of the module (or one nested in the function being checked), a method of
    one of its classes, or the ``__call__`` of an instance of one. A function without annotations
    is not checked (unless ``check_untyped_defs``): its body has no types to read."""
    defn = _local_definition(node, api.tree)
    if defn is None or defn.is_dynamic() and not api.options.check_untyped_defs:
        return None
    return defn


def _local_definition(node: sites.Node, tree: MypyFile) -> FuncDef | None:
    defn = definition(node)
    if defn is None:
        return None
    expr = node.expr
    if isinstance(expr, NameExpr) and expr.kind == LDEF and isinstance(expr.node, (FuncDef, Decorator)):
        # A function nested in the function being checked: its body is this module's.
        return defn if defn.body.body else None
    return _with_body(defn, tree)


def definition(node: sites.Node) -> FuncDef | None:
    """The function definition behind a node, wherever it is defined: the function or method its
    expression names, the definition of its callable type, or the ``__call__`` of an instance."""
    expr = node.expr
    target = expr.node if isinstance(expr, RefExpr) else None
    if isinstance(target, Decorator):
        target = target.func
    if isinstance(target, FuncDef):
        return target
    proper = proper_type(node.type)
    if isinstance(proper, CallableType):
        # A static or class method reached through its class is defined by its Decorator.
        defined = proper.definition
        if isinstance(defined, Decorator):
            defined = defined.func
        return defined if isinstance(defined, FuncDef) else None
    if isinstance(proper, Instance):
        call = proper.type.get_method("__call__")
        if isinstance(call, Decorator):
            call = call.func
        if isinstance(call, FuncDef):
            return call
    return None


def module_of(defn: FuncDef) -> str:
    """The module that defines a function or method."""
    if not isinstance(defn.info, FakeInfo):
        return defn.info.module_name
    return defn.fullname.rpartition(".")[0]


def function_name(defn: FuncDef) -> str:
    """How messages name a node function: ``fn``, or ``Class.method`` for a method."""
    return defn.name if isinstance(defn.info, FakeInfo) else f"{defn.info.name}.{defn.name}"


def _with_body(defn: FuncDef, tree: MypyFile) -> FuncDef | None:
    """``defn`` when ``tree`` defines it (a function imported by name is another module's: the
    daemon keeps its body, which the other module reads in its own check)."""
    return defn if module_of(defn) == tree.fullname and defn.body.body else None


class Returned(NamedTuple):
    """What a function's ``return`` statements give back, as far as its body tells."""

    displays: list[DictExpr]  # dict displays returned, directly or through a local
    items: list[tuple[StrExpr, Expression]]  # ``update["key"] = value`` on such a local
    opaque: bool  # some return gives something the body does not tell (a call is followed instead)
    expressions: list[Expression]  # every returned expression (the functional API's values)
    # The calls whose results it returns (``return f(...)``, ``return await f(...)``, a local bound to
    # one): followed through the called function's summary (``summaries``).
    calls: list[Expression]
    why: list[str]  # what the opaque returns are, in words (``lgstate report``)

    @property
    def keys(self) -> Iterator[StrExpr]:
        for display in self.displays:
            for key, _ in display.items:
                if isinstance(key, StrExpr):
                    yield key
        for key, _ in self.items:
            yield key


def returned(defn: FuncDef) -> Returned:
    """What ``defn`` returns, as far as its body tells; for a generator, what it yields last: LangGraph
    runs a generator node to its end and writes the last value it yields (its ``return`` value is
    dropped), so a yield followed by another one in the function's own statements is never written."""
    body = defn.body.body
    generator = defn.is_generator or defn.is_async_generator
    if generator and not _declares_iterator(defn):
        # mypy reports the declared type: no guess of ours
        return Returned([], [], True, [], [], ["a generator whose declared type is no iterator"])
    last_yield = max(
        (index for index, stmt in enumerate(body) if _yielded(stmt) is not None), default=0
    )
    returns: list[Expression] = []
    writes: list[Statement] = []  # the statements that may bind or change a local
    for index, top in enumerate(body):
        for stmt in statements([top]):
            if isinstance(stmt, (AssignmentStmt, OperatorAssignmentStmt, ExpressionStmt)):
                writes.append(stmt)
            if generator:
                yielded = _yielded(stmt)
                if yielded is not None and index >= last_yield:
                    returns.append(yielded)
            elif isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                returns.append(stmt.expr)
    state = state_parameter(defn)
    displays: list[DictExpr] = []
    items: list[tuple[StrExpr, Expression]] = []
    calls: list[Expression] = []
    why: list[str] = []
    # a returned local -> what else is bound to it or added to it, when something is
    locals_seen: dict[Var, str | None] = {}
    for expr in _alternatives(returns):
        if isinstance(expr, DictExpr):
            displays.append(expr)
        elif isinstance(expr, NameExpr) and (
            expr.fullname == "builtins.None" or (state is not None and expr.node is state)
        ):
            continue
        elif isinstance(expr, CallExpr) and _is_command(expr.callee):
            continue  # checked where it is built
        elif is_call(expr):
            calls.append(expr)
        elif isinstance(expr, NameExpr) and expr.kind == LDEF and isinstance(expr.node, Var):
            var = expr.node
            if var not in locals_seen:
                locals_seen[var] = _bound_displays(var, writes, displays, items, calls)
                if locals_seen[var] is not None:
                    why.append(f'"{var.name}", {locals_seen[var]}')
        else:
            why.append(_what(expr))
    return Returned(displays, items, bool(why), list(_alternatives(returns)), calls, why)


def state_parameter(defn: FuncDef) -> Var | None:
    """The parameter a node receives its state in: the first one, after ``self`` / ``cls``."""
    parameters = defn.arguments
    if not isinstance(defn.info, FakeInfo) and not defn.is_static:
        parameters = parameters[1:]  # ``self``: the state is the next one
    return parameters[0].variable if parameters else None


def is_call(expr: Expression) -> bool:
    """``f(...)`` or ``await f(...)``: a call whose result is followed through its function."""
    if isinstance(expr, AwaitExpr):
        expr = expr.expr
    return isinstance(expr, CallExpr) and not _is_command(expr.callee)


def _what(expr: Expression) -> str:
    """A returned expression the body does not tell, in words."""
    if isinstance(expr, DictionaryComprehension):
        return "a dict comprehension"
    if isinstance(expr, (ListComprehension, SetComprehension, GeneratorExpr)):
        return "a comprehension"
    if isinstance(expr, MemberExpr):
        return f"an attribute (.{expr.name})"
    if isinstance(expr, NameExpr):
        return f'"{expr.name}", a value built elsewhere'
    if isinstance(expr, IndexExpr):
        return "an item of another value"
    return "a value built elsewhere"


def _declares_iterator(defn: FuncDef) -> bool:
    """Whether a generator function's declared return type is an iterator (or none at all)."""
    signature = defn.type
    if not isinstance(signature, CallableType):
        return True
    ret = proper_type(signature.ret_type)
    if isinstance(ret, AnyType):
        return ret.type_of_any == TypeOfAny.unannotated
    return sites.is_iterator(ret)


def _yielded(stmt: Statement) -> Expression | None:
    """The value of a ``yield`` statement."""
    if isinstance(stmt, ExpressionStmt) and isinstance(stmt.expr, YieldExpr):
        return stmt.expr.expr
    return None


def returned_display(function: FuncDef, display: Context) -> Returned | None:
    """``display`` alone, when it is a dict display ``function`` returns."""
    if isinstance(display, DictExpr) and any(d is display for d in returned(function).displays):
        return Returned([display], [], False, [display], [], [])
    return None


def returned_item(function: FuncDef, args: list[list[Expression]]) -> Returned | None:
    """The item of ``update["key"] = value`` (the arguments of ``dict.__setitem__``) alone, when
    ``function`` returns ``update``."""
    if len(args) == 2 and args[0] and args[1]:
        key, value = args[0][0], args[1][0]
        if any(k is key for k, _ in returned(function).items):
            assert isinstance(key, StrExpr)
            return Returned([], [(key, value)], False, [], [], [])
    return None


def _alternatives(returns: list[Expression]) -> Iterator[Expression]:
    """The returned expressions, with ``a if cond else b`` as both ``a`` and ``b``."""
    for expr in returns:
        if isinstance(expr, ConditionalExpr):
            yield from _alternatives([expr.if_expr, expr.else_expr])
        else:
            yield expr


def _is_command(callee: Expression) -> bool:
    return isinstance(callee, RefExpr) and callee.fullname == sites.COMMAND


def _bound_displays(
    var: Var,
    writes: list[Statement],
    displays: list[DictExpr],
    items: list[tuple[StrExpr, Expression]],
    calls: list[Expression] | None,
) -> str | None:
    """Add the displays bound to ``var`` and what its statements add to it (``var["key"] = value``,
    ``var.update({...})`` or ``var.update(key=value)``, ``var |= {...}``, ``var.setdefault("key",
    value)``), and, when ``calls`` is given, the calls bound to it (``update = build(state)``, whose
    result is followed); what else is bound to it or added to it, in words, when something is."""
    other: str | None = None
    bound = False
    for stmt in writes:
        if isinstance(stmt, AssignmentStmt):
            for lvalue in stmt.lvalues:
                if _is(lvalue, var):
                    if isinstance(stmt.rvalue, DictExpr):
                        displays.append(stmt.rvalue)
                        bound = True
                    elif calls is not None and is_call(stmt.rvalue):
                        calls.append(stmt.rvalue)
                        bound = True
                    else:
                        other = f"bound to {_what(stmt.rvalue)}"
                elif isinstance(lvalue, IndexExpr) and _is(lvalue.base, var):
                    if isinstance(lvalue.index, StrExpr):
                        items.append((lvalue.index, stmt.rvalue))
                    else:
                        other = "given an item whose key is not a string literal"
        elif isinstance(stmt, OperatorAssignmentStmt) and _is(stmt.lvalue, var):
            if stmt.op == "|" and isinstance(stmt.rvalue, DictExpr):
                displays.append(stmt.rvalue)
            else:
                other = f"updated with {_what(stmt.rvalue)}"
        elif isinstance(stmt, ExpressionStmt):
            call = stmt.expr
            if not (
                isinstance(call, CallExpr)
                and isinstance(call.callee, MemberExpr)
                and _is(call.callee.expr, var)
            ):
                continue
            method = call.callee.name
            if method == "update":
                for arg, kind, name in zip(call.args, call.arg_kinds, call.arg_names):
                    if kind == ARG_NAMED and name is not None:
                        key = StrExpr(name)
                        key.set_line(arg)
                        items.append((key, arg))
                    elif kind == ARG_POS and isinstance(arg, DictExpr):
                        displays.append(arg)
                    else:
                        other = f"updated with {_what(arg)}"
            elif method == "setdefault" and len(call.args) == 2:
                first, value = call.args
                if isinstance(first, StrExpr):
                    items.append((first, value))
                else:
                    other = "given an item whose key is not a string literal"
    if other is None and not bound:
        return "not bound in this function"
    return other


def local_displays(expr: Expression, scope: FuncItem | MypyFile, before: int) -> list[DictExpr] | None:
    """The dict displays a variable passed at a write site holds (``update = {...}; update["k"] = v;
    Command(update=update)``), read from the statements of its scope before the call, each item to
    be checked by its own inferred type (a ``var["k"] = v`` item as a display of its own); ``None``
    when something else is bound to it, or it is not a variable of ``scope``."""
    if not (isinstance(expr, NameExpr) and isinstance(expr.node, Var)):
        return None
    if expr.kind != (GDEF if isinstance(scope, MypyFile) else LDEF):
        return None
    body = scope.defs if isinstance(scope, MypyFile) else scope.body.body
    writes = [stmt for stmt in statements(body) if stmt.line < before]
    displays: list[DictExpr] = []
    items: list[tuple[StrExpr, Expression]] = []
    if _bound_displays(expr.node, writes, displays, items, None) is not None:
        return None
    for key, value in items:
        display = DictExpr([(key, value)])
        display.set_line(value)
        displays.append(display)
    return displays


def _is(expr: Expression, var: Var) -> bool:
    return isinstance(expr, NameExpr) and expr.node is var


def values(returned: Returned, root: str, api: TypeChecker) -> Iterator[sites.Value]:
    """Each value the returned displays write, by its own inferred type, under ``root`` (the node's
    ``name()``), with the paths of a write site's update (``root["key"]``; see ``dotted``)."""
    for display in returned.displays:
        for value in sites.values_of(display, root, api):
            # A key that is not a string names no channel (mypy reports it against the return type).
            if value.path.startswith((f'{root}["', f"{root}{{**}}")):
                yield value
    for key, expr in returned.items:
        yield from sites.values_of(expr, root + key_part(key.value), api)


def written_items(returned: Returned) -> Iterator[tuple[str, Expression]]:
    """Each channel a body's returned displays write, with the expression written to it."""
    for display in returned.displays:
        for key, value in display.items:
            if isinstance(key, StrExpr):
                yield key.value, value
    for key, value in returned.items:
        yield key.value, value


def unknown_keys(returned: Returned, channels: frozenset[str]) -> Iterator[StrExpr]:
    """The returned string keys that are not channels of the graph."""
    return (key for key in returned.keys if key.value not in channels)


def under_keys(value: sites.Value, root: str, keys: list[str]) -> bool:
    """Whether ``value`` is written under one of ``keys`` (``root["key"]`` or below)."""
    for key in keys:
        top = root + key_part(key)
        if value.path.startswith(top) and value.path[len(top):len(top) + 1] in ("", "[", "{"):
            return True
    return False


def dotted(path: str, root: str) -> str:
    """``node()["key"]...`` as ``node().key...``, the way a node's update type names its keys."""
    rest = path[len(root):]
    if rest.startswith('["'):
        end = rest.find('"]')
        key = rest[2:end]
        if end > 0 and key.isidentifier():
            return f"{root}.{key}{rest[end + 2:]}"
    return path
