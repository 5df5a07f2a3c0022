"""Turns findings into mypy errors, at the place SPEC section 5 names.

A problem inside a class defined in the file being checked is reported on the line of the field that
declares it (the innermost such field); anything else is reported at the call that made the value
graph state, naming the declaring class and its file. mypy only reports into the file it is checking,
and it drops an error repeated with the same message on the same line, so a class used by several
graphs is reported once per location.
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.checker import TypeChecker
from mypy.nodes import Context
from mypy.plugin import CheckerPluginInterface

from mypy_lgstate import errorcodes as codes
from mypy_lgstate.allowlist import is_allowed
from mypy_lgstate.walker import Anchor, Findings, field_line


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
    schemas); a write-site value is reported where it is written (``at_fields=False``).
    """
    assert isinstance(api, TypeChecker)
    for problem in findings.problems:
        context, where = _locate(api, problem.anchors, call) if at_fields else (call, None)
        message = codes.problem_message(
            problem.path, problem.type_name, problem.what, problem.fix, where
        )
        api.fail(message, context, code=problem.code)
    if allowed is None:
        return
    configured = tuple(configured)
    for user_class in findings.user_classes:
        if is_allowed(user_class, allowed, configured):
            continue
        context, where = (
            _locate(api, user_class.anchors, call) if at_fields else (call, None)
        )
        message = codes.allowlist_message(
            user_class.path, user_class.type_name, user_class.kind, user_class.fullname, where
        )
        api.fail(message, context, code=codes.ALLOWLIST)


def _locate(
    api: TypeChecker, anchors: tuple[Anchor, ...], call: Context
) -> tuple[Context, str | None]:
    module = api.tree.fullname
    for info, field in reversed(anchors):
        if info.module_name == module:
            context = Context(line=field_line(info, field), column=0)
            return context, None
    if not anchors:
        return call, None
    root = anchors[0][0]
    source = api.modules.get(root.module_name)
    where = root.fullname if source is None else f"{root.fullname} in {source.path}"
    return call, where

