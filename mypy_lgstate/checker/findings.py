"""What a walk of a type finds: the problems (each with its path and the fields that declare it), the
user classes strict msgpack must allow, and the classes read. Built by the walker (``walker.py``) and
its judges, read by the reporting (``report.py``), and narrowed or moved by the checks of writes
(``outside``, ``naming``, ``repathed``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, NamedTuple, TypeVar

from mypy.errorcodes import ErrorCode
from mypy.nodes import TypeInfo

from mypy_lgstate.core import messages

# Where a problem sits: the classes and fields that declare it, outermost first, each with the length
# of the path from that field on (``.when`` for ``State.items[].when`` anchored at ``Item.when``). The
# plugin reports a problem on the line of the innermost such field that lies in the file being
# checked, under the path from that field's class; the innermost anchor identifies the problem.
Anchor = tuple[TypeInfo, str, int]
UserClassKind = Literal["Enum", "dataclass", "NamedTuple", "pydantic model", "SecretStr", "subclass"]


# The value classes below are NamedTuples: cheap to build, hash and compare, and defined without the
# code generation of dataclasses (the plugin is imported in every mypy run).


class Problem(NamedTuple):
    """One thing the serializer gets wrong, at a path relative to where the walk started."""

    code: ErrorCode
    path: str
    type_name: str
    what: str
    fix: str
    anchors: tuple[Anchor, ...] = ()
    # msgpack: worded apart when it is a channel's whole value (``bytearray``).
    whole_channel_differs: bool = False
    # The innermost recursive type alias the problem lies in, with the length of the path from it:
    # mutually recursive aliases reach the same member by several paths within one field.
    alias: tuple[str, int] | None = None

    def under(self, prefix: str, field: Field | None = None) -> Problem:
        path, anchors = _placed(self.path, self.anchors, prefix, field)
        return self._replace(path=path, anchors=anchors)

    def identity(self, site: object = None) -> tuple[object, ...]:
        """The same problem reached by another path has the same identity: it is reported once.
        ``site``: where it is declared, when the caller knows better than the anchors (the base
        class that declares a TypedDict key)."""
        where = _site(self.path, self.anchors) if site is None else site
        if self.alias is not None and (not self.anchors or self.alias[1] < self.anchors[-1][2]):
            # Inside a recursive alias below the innermost field: the alias declares it.
            name, length = self.alias
            field = (self.anchors[-1][0].fullname, self.anchors[-1][1]) if self.anchors else None
            where = (field, name, self.path[len(self.path) - length:])
        if self.anchors:
            # A declared field: its type is the same wherever it is reached, but for the arguments
            # of a generic class, which a class nesting itself grows at every level (``Node[T]``
            # holding ``Node[list[T]]``): one problem per declaration, named by the first reached.
            return (self.code.code, self.what, self.fix, where)
        return (self.code.code, self.type_name, self.what, where)


class UserClass(NamedTuple):
    """A class the strict msgpack loader only rebuilds when it is on the allowlist."""

    fullname: str
    kind: UserClassKind
    path: str
    type_name: str
    anchors: tuple[Anchor, ...] = ()

    def under(self, prefix: str, field: Field | None = None) -> UserClass:
        path, anchors = _placed(self.path, self.anchors, prefix, field)
        return self._replace(path=path, anchors=anchors)

    def identity(self, site: object = None) -> tuple[object, ...]:
        where = _site(self.path, self.anchors) if site is None else site
        return (self.fullname, self.kind, where)


# A field of a class: (the class, the field's name).
Field = tuple[TypeInfo, str]


def _placed(
    path: str, anchors: tuple[Anchor, ...], prefix: str, field: Field | None
) -> tuple[str, tuple[Anchor, ...]]:
    path = prefix + path
    if field is None:
        return path, anchors
    return path, ((*field, len(path)), *anchors)


def _site(path: str, anchors: tuple[Anchor, ...]) -> object:
    """Where a problem is declared: its innermost field and the path from there, else its path."""
    if not anchors:
        return path
    info, _, length = anchors[-1]
    return info.fullname, path[len(path) - length:]


class Findings(NamedTuple):
    """What a walk found: problems, the classes strict msgpack must allow, and every class it read
    (as ``(module, fullname)``: the plugin tells mypy about them, so that an edit to one rechecks
    the modules whose verdicts depend on it)."""

    problems: tuple[Problem, ...] = ()
    user_classes: tuple[UserClass, ...] = ()
    touched: frozenset[tuple[str, str]] = frozenset()

    def under(self, prefix: str, field: Field | None = None) -> Findings:
        if not self.problems and not self.user_classes:
            return self
        return Findings(
            tuple(p.under(prefix, field) for p in self.problems),
            tuple(c.under(prefix, field) for c in self.user_classes),
            self.touched,
        )

    def touching(self, info: TypeInfo) -> Findings:
        if info.module_name in _STABLE_MODULES:  # never edited: no dependency worth recording
            return self
        key = (info.module_name, info.fullname)
        if key in self.touched:
            return self
        return Findings(self.problems, self.user_classes, self.touched | {key})


NOTHING: Final = Findings()
_Found = TypeVar("_Found", Problem, UserClass)
# Standard-library modules whose classes decide most verdicts (``str``, ``list``, ``datetime``...).
_STABLE_MODULES: Final = frozenset(
    {"builtins", "typing", "typing_extensions", "collections", "collections.abc", "datetime",
     "decimal", "uuid", "pathlib", "enum", "re", "ipaddress", "zoneinfo", "types", "abc"}
)


def merge(parts: list[Findings]) -> Findings:
    if not parts:
        return NOTHING
    if len(parts) == 1:
        return parts[0]
    # Most parts found nothing and read classes already read by another part: merge cheaply.
    problems: list[Problem] = []
    classes: list[UserClass] = []
    touched: frozenset[tuple[str, str]] = frozenset()
    for part in parts:
        problems += part.problems
        classes += part.user_classes
        if not part.touched <= touched:
            touched = touched | part.touched if touched else part.touched
    if not problems and not classes:
        return Findings(touched=touched) if touched else NOTHING
    # A class reached by several paths (``inner: Item`` and ``items: list[Item]``) would report its
    # problems once per path, and nested classes multiply the paths: keep the first of each.
    return Findings(_first_of_each(problems), _first_of_each(classes), touched)


def _first_of_each(found: list[_Found]) -> tuple[_Found, ...]:
    first: dict[object, _Found] = {}
    for item in found:
        first.setdefault(item.identity(), item)
    return tuple(first.values())


def channel_values(found: Findings, root: str, *, fields: bool, saver: str = "sqlite") -> Findings:
    """``found``, with the problems that read otherwise for a channel's whole value reworded: those
    at ``root`` itself, or at its fields (``fields``: ``root`` is a state class or an update type),
    that are worded for a value below the top of a channel. A saver that serializes each channel
    value on its own (``memory``, ``postgres``) keeps a whole channel's bytearray: no problem."""
    if not any(problem.whole_channel_differs for problem in found.problems):
        return found
    back_as, fix = messages.WHOLE_BYTEARRAY_LOSSY
    whole = messages.lossy_what(messages.SERIALIZERS["msgpack"], back_as)

    def at_top(problem: Problem) -> bool:
        if not fields:
            return problem.path == root
        return bool(problem.anchors) and problem.path == root + messages.field_part(
            problem.anchors[0][1]
        )

    if saver != "sqlite":
        return found._replace(
            problems=tuple(
                p for p in found.problems if not (p.whole_channel_differs and at_top(p))
            )
        )
    return found._replace(
        problems=tuple(
            p._replace(what=whole, fix=fix) if p.whole_channel_differs and at_top(p) else p
            for p in found.problems
        )
    )


def in_alias(found: Findings, alias: str) -> Findings:
    """``found``, the findings of recursive alias ``alias``, marked as declared by it (unless a
    recursive alias inside it already declares them)."""
    return found._replace(
        problems=tuple(
            p if p.alias is not None else p._replace(alias=(alias, len(p.path)))
            for p in found.problems
        )
    )


def in_field(found: Findings, owner: TypeInfo, name: str) -> Findings:
    """``found``, the findings of the type of field ``name`` of ``owner``, placed under that field."""
    if not found.problems and not found.user_classes:  # the usual case: nothing to move
        return found
    return found.under(messages.field_part(name), (owner, name))


def naming(findings: Findings, path: str, type_name: str) -> Findings:
    """``findings`` with the problems found at ``path`` itself naming ``type_name``: a hollow
    container is reported under the type of the display it stands for."""
    problems = tuple(
        problem._replace(type_name=type_name) if problem.path == path else problem
        for problem in findings.problems
    )
    return findings._replace(problems=problems)


def outside(findings: Findings, paths: Sequence[str]) -> Findings:
    """``findings`` without those at or below any of ``paths``."""

    def kept(path: str) -> bool:
        return not any(
            path.startswith(dropped) and path[len(dropped):len(dropped) + 1] in ("", ".", "[", "{")
            for dropped in paths
        )

    return findings._replace(
        problems=tuple(p for p in findings.problems if kept(p.path)),
        user_classes=tuple(c for c in findings.user_classes if kept(c.path)),
    )


def repathed(findings: Findings, move: Callable[[str], str]) -> Findings:
    """``findings`` with each path replaced by ``move(path)``."""
    return findings._replace(
        problems=tuple(p._replace(path=move(p.path)) for p in findings.problems),
        user_classes=tuple(c._replace(path=move(c.path)) for c in findings.user_classes),
    )
