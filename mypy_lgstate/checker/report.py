"""Turns findings into mypy errors, at the place docs/design.md names ("Where errors are reported").

A problem inside a class defined in the file being checked is reported on the line of the field that
declares it (the innermost such field); anything else is reported at the call that made the value
graph state, naming the declaring class and its file. mypy only reports into the file it is checking,
and it drops an error repeated with the same message on the same line, so a class used by several
graphs is reported once per location.
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import AssignmentStmt, Context, IndexExpr, NameExpr, RefExpr, TypeInfo, Var
from mypy.plugin import CheckerPluginInterface

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.allowlist import is_allowed
from mypy_lgstate.checker.walker import Anchor, Findings, anchored_path


def report(
    api: CheckerPluginInterface,
    findings: Findings,
    call: Context,
    *,
    at_fields: bool = True,
    allowed: frozenset[str] | None = None,
    configured: Iterable[str] = (),
) -> None:
    """Report ``findings``; with ``allowed`` (strict msgpack), also every user class not allowed.

    ``at_fields`` moves a problem to the line of its field when that lies in this file (state
    schemas); a write-site value is reported where it is written (``at_fields=False``). ``call``
    may be a class (``state_classes``): its ``class`` line stands in for the call.
    """
    assert isinstance(api, TypeChecker)
    if isinstance(call, TypeInfo):
        call = call.defn  # a TypedDict's TypeInfo has no line of its own
    for problem in findings.problems:
        context, path, where = (
            _locate(api, problem.path, problem.anchors, call)
            if at_fields
            else (call, problem.path, None)
        )
        message = codes.problem_message(path, problem.type_name, problem.what, problem.fix, where)
        fail(api, message, context, problem.code)
    if allowed is None:
        return
    configured = tuple(configured)
    for user_class in findings.user_classes:
        if is_allowed(user_class, allowed, configured):
            continue
        context, path, where = (
            _locate(api, user_class.path, user_class.anchors, call)
            if at_fields
            else (call, user_class.path, None)
        )
        message = codes.allowlist_message(
            path, user_class.type_name, user_class.kind, user_class.fullname, where
        )
        fail(api, message, context, codes.ALLOWLIST)


def fail(api: TypeChecker, message: str, context: Context, code: ErrorCode) -> None:
    """Report one error, also from inside a speculative check.

    mypy tries each candidate of an overloaded callee (``invoke``, ``stream``, ``interrupt``,
    ``add_node``) with errors filtered: an error reported then would be dropped and would reject the
    candidate, turning a finding into a bogus "No overload variant" error. A finding is about the
    argument values, the same whichever candidate wins, so it is reported past the filters; mypy
    drops the repeats that other candidates produce (same line, same message).
    """
    errors = api.msg.errors
    watchers = errors._watchers
    if not watchers:
        api.fail(message, context, code=code)
        return
    errors._watchers = []
    try:
        api.fail(message, context, code=code)
    finally:
        errors._watchers = watchers


def _locate(
    api: TypeChecker, path: str, anchors: tuple[Anchor, ...], call: Context
) -> tuple[Context, str, str | None]:
    """Where to report a problem at ``path``, the path to show, and the class to name.

    On the line of the innermost field of ``anchors`` declared in this file, under the path from
    that field's class: the same message whichever graph or route reached it, so mypy shows it once.
    Otherwise at ``call``, under the whole path, naming the class that declares the outermost field.

    Only this module's syntax tree is read: other modules' class bodies are freed after they are
    checked and never loaded from the cache, so reading them would differ between cold and warm runs.
    """
    module = api.tree.fullname
    for anchor in reversed(anchors):
        line, _ = _field_home(anchor[0], anchor[1], module)
        if line is not None:
            return Context(line=line, column=0), anchored_path(path, anchor), None
    if not anchors:
        return call, path, None
    _, home = _field_home(anchors[0][0], anchors[0][1], module)
    source = api.modules.get(home.module_name)
    if source is None:
        return call, path, home.fullname
    return call, path, f"{home.fullname} in {api.msg.errors.simplify_path(source.path)}"


def _field_home(info: TypeInfo, field: str, module: str) -> tuple[int | None, TypeInfo]:
    """The line in ``module`` that declares ``field`` of ``info`` (``None`` when it lies in another
    file), and the class the search ended in: the declaring class, or the first one of another module.

    A TypedDict's MRO does not hold its TypedDict bases and its keys have no symbols, so an inherited
    key is traced through the base-class expressions of the class definitions in this file.
    """
    seen: set[str] = set()
    while info.module_name == module and info.fullname not in seen:
        seen.add(info.fullname)
        if info.typeddict_type is None:  # a model or dataclass: the anchor is the declaring class
            sym = info.names.get(field)
            line = sym.node.line if sym is not None and isinstance(sym.node, Var) else -1
            if line <= 0 and info.is_named_tuple:  # mypy makes a NamedTuple's field Vars itself
                line = next(
                    (stmt.line for stmt in info.defn.defs.body
                     if isinstance(stmt, AssignmentStmt)
                     and any(isinstance(lv, NameExpr) and lv.name == field for lv in stmt.lvalues)),
                    -1,
                )
            return (line if line > 0 else None), info
        for stmt in info.defn.defs.body:
            if isinstance(stmt, AssignmentStmt) and any(
                isinstance(lv, NameExpr) and lv.name == field for lv in stmt.lvalues
            ):
                return stmt.line, info
        base = _typeddict_base_with(info, field)
        if base is None:
            # A functional ``TypedDict("S", {...})`` has no class body: its line is the assignment.
            line = info.line if info.line > 0 else info.defn.line
            return (line if line > 0 else None), info
        info = base
    return None, info


def _typeddict_base_with(info: TypeInfo, field: str) -> TypeInfo | None:
    for expr in (*info.defn.base_type_exprs, *info.defn.removed_base_type_exprs):
        if isinstance(expr, IndexExpr):  # ``Base[T]``
            expr = expr.base
        if isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo):
            base = expr.node
            if base.typeddict_type is not None and field in base.typeddict_type.items:
                return base
    return None
