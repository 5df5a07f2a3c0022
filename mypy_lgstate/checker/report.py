"""Turns findings into mypy errors, at the place docs/design.md names ("Where errors are reported").

A problem inside a class defined in the file being checked is reported on the line of the field that
declares it (the innermost such field); anything else is reported at the call that made the value
graph state, naming the declaring class and its file. mypy only reports into the file it is checking.

Each problem is reported once per file (``once``): a problem is identified by where it is declared
(the innermost field and the path from there, ``findings.Problem.identity``), not by the route that
reached it, so a class of another file used by several calls of this file is reported at the first of
them only. Under ``lgstate check`` each such message also carries the problem's identity
(``tagging``), which the command reads to report each problem once for the whole run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Iterator
from contextlib import ExitStack, contextmanager

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    Context,
    FakeInfo,
    FuncDef,
    IndexExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import CheckerPluginInterface

from mypy_lgstate.checker import errorcodes as codes
from mypy_lgstate.checker.allowlist import is_allowed
from mypy_lgstate.checker.findings import Anchor, Findings, Problem, UserClass
from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.core.messages import TAG_END, TAG_START, allowlist_what_fix, problem_message

# Set by the ``lgstate`` command for its builds: each message of a problem that may be reached from
# several files ends with its identity, which the command strips (``findings.parse_mypy_json``).
tagging: bool = False
# Where each file reported each problem: the file's tree (a daemon run re-parses an edited file), and
# by identity, the line and message it was reported with.
_reported: dict[str, tuple[MypyFile, dict[Hashable, tuple[int, str]]]] = {}


def report(
    api: CheckerPluginInterface,
    findings: Findings,
    call: Context,
    *,
    at_fields: bool = True,
    once_per_file: tuple[str, str] | None = None,
    allowed: frozenset[str] | None = None,
    configured: Iterable[str] = (),
    where: str | None = None,
) -> None:
    """Report ``findings``; with ``allowed`` (strict msgpack), also every user class not allowed.

    ``at_fields`` moves a problem to the line of its field when that lies in this file (state
    schemas); a write-site value is reported where it is written (``at_fields=False``), each time,
    unless ``once_per_file`` is given: a node's declared update type, the same at every call that
    registers the node (under any name), whose problems are reported at the first such call
    (``once``). It is ``(root, declarer)``: the path root of the findings (``node()``) and what
    declares them (the node function), which identifies a problem that no field does. ``call``
    may be a class (``state_classes``): its ``class`` line stands in for the call. ``where``: the
    ``file:line`` a written value is in, when it is reported away from it (a node of another module,
    at the call that registers it), named after the path.
    """
    assert isinstance(api, TypeChecker)
    if isinstance(call, TypeInfo):
        call = call.defn  # a TypedDict's TypeInfo has no line of its own
    problems = findings.problems if at_fields else _union_members_merged(findings.problems)
    found: list[tuple[Problem | UserClass, str, str, ErrorCode]] = [
        (problem, problem.what, problem.fix, problem.code) for problem in problems
    ]
    if allowed is not None:
        configured = tuple(configured)
        found += [
            (user_class, *allowlist_what_fix(user_class.kind, user_class.fullname), codes.ALLOWLIST)
            for user_class in findings.user_classes
            if not is_allowed(user_class, allowed, configured)
        ]
    for finding, what, fix, code in found:
        if not at_fields:
            message = problem_message(finding.path, finding.type_name, what, fix, where)
            if once_per_file is not None:
                root, declarer = once_per_file
                site = None if finding.anchors else (declarer, finding.path[len(root):])
                once(api, finding.identity(site), message, call, code, declared=None, written=where)
            elif finding.anchors:
                # A field of a class written whole (a Send's TypedDict, a graph's input model):
                # the field declares the problem, reported once where the file first meets it.
                once(api, finding.identity(), message, call, code, declared=None, written=where)
            else:
                fail(api, message, call, code)
            continue
        context, path, where, site = _locate(api, finding.path, finding.anchors, call)
        message = problem_message(path, finding.type_name, what, fix, where)
        declared = None if site is None else finding.identity(site)
        once(api, finding.identity(), message, context, code, declared=declared)


def method_site(call: Context) -> Context:
    """Where a method call is reported: the line of its name. A call chained over several lines
    (``StateGraph(Topic)\n.add_node("write", write)``) starts where the chain does, and each of its
    calls would otherwise share that first line, and its ``# type: ignore``."""
    if not isinstance(call, CallExpr) or not isinstance(call.callee, MemberExpr):
        return call
    callee = call.callee
    if callee.end_line is None or callee.end_line == callee.line:
        return call
    column = (callee.end_column or 0) - len(callee.name)
    return Context(callee.end_line, max(column, 0))


def _union_members_merged(problems: tuple[Problem, ...]) -> list[Problem]:
    """A written value's problems, the members of a union that fare alike as one (``Refund |
    Escalate``: the JSON serializer raises on either): one value, one line, one message."""
    merged: dict[tuple[str, str, str], Problem] = {}
    for problem in problems:
        key = (problem.path, problem.code.code, problem.what)
        known = merged.get(key)
        if known is None:
            merged[key] = problem
        elif problem.type_name not in known.type_name.split(" | "):
            fix = known.fix if problem.fix in known.fix.split("; ") else f"{known.fix}; {problem.fix}"
            type_name = f"{known.type_name} | {problem.type_name}"
            merged[key] = known._replace(type_name=type_name, fix=fix)
    return list(merged.values())


def once(
    api: TypeChecker,
    identity: Hashable,
    message: str,
    context: Context,
    code: ErrorCode,
    *,
    declared: Hashable | None,
    written: str | None = None,
) -> None:
    """Report the problem ``identity`` unless this file already reports it (at another call that
    made the same class graph state). ``written``: the ``file:line`` of the value or key reported,
    when it is in another file (``lgstate check`` shows it as a related location). ``declared``: the message is on the problem's own line (its
    field in this file), the best place ``lgstate check`` can show it, and this is the identity of
    the field there, which subclasses of its class share (a TypedDict base's key). Either identity
    reported already counts: a field of another module's class held by the fields of two roots of
    this file is one problem, reported on the first root's line.

    The tag keeps ``identity``, which other files can compute too: they cannot see which TypedDict
    base declares a key (mypy keeps no trace of it outside the base's own syntax tree).

    The earlier report counts only while mypy still holds it (or a ``# type: ignore`` took it): the
    daemon drops the errors of a function it checks again, and then the next call reports it.
    """
    keys = [(code.code, identity)]
    if declared is not None:
        keys.insert(0, (code.code, declared))
    errors = api.msg.errors
    file = errors.file
    tree, seen = _reported.get(file, (None, {}))
    if tree is not api.tree:
        seen = {}
        _reported[file] = (api.tree, seen)
    for key in keys:
        earlier = seen.get(key)
        if earlier is not None and _still_reported(api, file, *earlier, code):
            return
    if tagging:
        place = "call" if declared is None else "home"
        if written is not None:
            place += f" {written}"
        message += f"{TAG_START}{_digest((code.code, identity))} {place}{TAG_END}"
    for key in keys:
        seen[key] = (context.line, message)
    fail(api, message, context, code)


def _still_reported(api: TypeChecker, file: str, line: int, message: str, code: ErrorCode) -> bool:
    errors = api.msg.errors
    if any(
        info.line == line and info.message == message for info in errors.error_info_map.get(file, ())
    ):
        return True
    return code.code in errors.used_ignored_lines.get(file, {}).get(line, ())


def _digest(identity: Hashable) -> str:
    """A problem's identity as text, the same in every process (``hash()`` is salted per process)."""
    return hashlib.sha256(repr(identity).encode()).hexdigest()[:16]


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
) -> tuple[Context, str, str | None, tuple[str, str] | None]:
    """Where to report a problem at ``path``, the path to show, the class to name, and, on a field's
    line, the field's declaring class and the path from it (where the problem is declared).

    On the line of the innermost field of ``anchors`` declared in this file, under the path from
    the class that declares that field: the same message whichever graph, subclass or route reached
    it.
    Otherwise at ``call``, under the whole path, naming the class that declares the outermost field.

    Only this module's syntax tree is read: other modules' class bodies are freed after they are
    checked and never loaded from the cache, so reading them would differ between cold and warm runs.
    """
    module = api.tree.fullname
    for info, field, length in reversed(anchors):
        line, home = _field_home(info, field, module)
        if line is not None:
            # Named after the class that declares the field (a TypedDict base), as models are.
            rest = path[len(path) - length:]
            return Context(line=line, column=0), home.name + rest, None, (home.fullname, rest)
    if not anchors:
        return call, path, None, None
    _, home = _field_home(anchors[0][0], anchors[0][1], module)
    source = api.modules.get(home.module_name)
    if source is None or is_library(source.path):
        return call, path, home.fullname, None  # an installed library: its module says where
    return call, path, f"{home.fullname} in {api.msg.errors.simplify_path(source.path)}", None


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


@contextmanager
def reporting_in(api: TypeChecker, defn: FuncDef) -> Iterator[None]:
    """Report as if mypy were checking ``defn``: the daemon keeps a function's errors with the
    function (its target), and drops them when it rechecks the function. A function nested in
    another one belongs to the outer one's target, which is not known here: the module's then."""
    errors = api.msg.errors
    saved = errors.scope
    scope = api.tscope
    with ExitStack() as stack:
        errors.scope = scope
        if scope.module is None:
            stack.enter_context(scope.module_scope(api.tree.fullname))
        if scope.function is None:
            if not isinstance(defn.info, FakeInfo):
                stack.enter_context(scope.class_scope(defn.info))
                stack.enter_context(scope.function_scope(defn))
            elif api.tree.names.get(defn.name) is not None:
                stack.enter_context(scope.function_scope(defn))
        try:
            yield
        finally:
            errors.scope = saved
