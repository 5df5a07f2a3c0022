"""Whether a value loaded from a checkpoint is a value of the type today's code declares for it.

Each declared type is compiled once into a ``Node`` tree (``compiler.py``), which then checks any
number of loaded values without looking at the type again. A node reports ``Mismatch``es: where the
value parts from the declaration (a path such as ``["items"][2].sku``, and its pattern
``["items"][].sku``, which names the same place in every thread), and how:

- ``missing``: a required TypedDict key, or a required model field, the value lacks;
- ``fallback``: a pydantic model the loader could not validate (it fell back to
  ``model_construct``): a field holds what the model no longer accepts;
- ``extra``: the same, for a field a model that forbids extra fields (``extra="forbid"``) no longer
  declares;
- ``class``: a class (model, dataclass, NamedTuple, enum) is declared, and the value is something
  else (a dict, a bare value): the stored bytes tell why (``stored.py``);
- ``type``: any other value that is not of the declared type.

What a declaration cannot tell is accepted: ``Any``, ``object``, type variables, callables,
protocols, and whatever a class's annotations do not resolve to. LangChain's messages and
documents are library classes LangGraph serializes itself: they are checked by their class only.
It imports neither mypy nor LangGraph.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple, Union, cast

import typing_extensions

from mypy_lgstate.core import messages

# A path as the walk builds it: ``(parent, kind, key)`` links, formatted only for a mismatch.
# kinds: "k" a declared key, "m" a mapping's item, "i" a sequence item, "t" a fixed tuple item,
# "f" a field.
Path = Union[tuple["Path", str, Any], None]

MISSING: Final = "missing"
FALLBACK: Final = "fallback"
EXTRA: Final = "extra"
CLASS: Final = "class"
TYPE: Final = "type"

_PLAIN: Final = frozenset({str, int, float, bool, type(None)})
_MAX_DEPTH: Final = 200


class Mismatch(NamedTuple):
    path: str  # exact, relative to the checked value: ``["items"][2].sku``
    pattern: str  # the same place in any value: ``["items"][].sku``
    kind: str
    declared: Any  # the declared type there (a class for ``class``)
    owner: str  # the class that declares the place, "" for a channel itself
    detail: str  # what is wrong: the missing key, the validation error, the value's type
    segments: tuple[tuple[str, Any], ...]  # the path as steps, to find the stored bytes
    value: Any  # the loaded value there
    nested: bool = False  # a model's field deeper than its own (the model fell back whole)
    holder: Any = None  # the class whose field (or key) the place is, None for a channel itself


def format_path(path: Path) -> tuple[str, str, tuple[tuple[str, Any], ...]]:
    """The exact path, its pattern, and its steps."""
    steps: list[tuple[str, Any]] = []
    while path is not None:
        path, kind, key = path
        steps.append((kind, key))
    steps.reverse()
    exact, pattern = format_steps(steps)
    return exact, pattern, tuple(steps)


def format_steps(steps: Iterable[tuple[str, Any]]) -> tuple[str, str]:
    """The exact path and the pattern of ``steps``."""
    exact: list[str] = []
    pattern: list[str] = []
    for kind, key in steps:
        if kind == "f":
            part = messages.field_part(key)
            exact.append(part)
            pattern.append(part)
        elif kind == "k":
            part = _key(key)
            exact.append(part)
            pattern.append(part)
        elif kind == "m":
            exact.append(_key(key))
            pattern.append("{}")
        elif kind == "t":
            exact.append(f"[{key}]")
            pattern.append(f"[{key}]")
        else:
            exact.append(f"[{key}]")
            pattern.append("[]")
    return "".join(exact), "".join(pattern)


def _key(key: Any) -> str:
    return messages.key_part(key) if type(key) is str else f"[{key!r}]"


def type_name(declared: Any) -> str:
    """A declared type as a message shows it: ``list[Order]``, ``str | None``."""
    if isinstance(declared, type) and not typing.get_args(declared):
        return declared.__name__
    text = repr(declared)
    for prefix in ("typing_extensions.", "typing.", "builtins.", "collections.abc.", "collections."):
        text = text.replace(prefix, "")
    return text


def value_type_name(value: object) -> str:
    return type(value).__name__


class Node:
    """A compiled declared type."""

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        raise NotImplementedError

    def fits(self, value: Any) -> bool:
        """Whether the value is of this type, nothing reported."""
        found: list[Mismatch] = []
        self.check(value, None, found, 0)
        return not found

    def shape(self, value: Any) -> bool:
        """Whether the value is of this type's kind (a list for a list type, a dict or a payload
        for a class): a union reports the mismatches of the one member it resembles."""
        return True


def _mismatch(
    out: list[Mismatch],
    path: Path,
    kind: str,
    declared: Any,
    owner: str,
    detail: str,
    value: Any = None,
    nested: bool = False,
    holder: Any = None,
) -> None:
    exact, pattern, steps = format_path(path)
    out.append(Mismatch(exact, pattern, kind, declared, owner, detail, steps, value, nested, holder))


class AnyNode(Node):
    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        return


ANY: Final = AnyNode()


class InstanceNode(Node):
    """A value of a class, or of one of several (``int`` accepts a bool, ``float`` an int)."""

    def __init__(self, declared: Any, classes: tuple[type, ...]) -> None:
        self.declared = declared
        self.classes = classes
        self.exact = frozenset(classes)

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if type(value) in self.exact or isinstance(value, self.classes):
            return
        _mismatch(out, path, TYPE, self.declared, "", value_type_name(value))

    def shape(self, value: Any) -> bool:
        return isinstance(value, self.classes)


class LiteralNode(Node):
    def __init__(self, declared: Any, values: tuple[Any, ...]) -> None:
        self.declared = declared
        self.values = values

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if any(type(value) is type(v) and value == v for v in self.values):
            return
        _mismatch(out, path, TYPE, self.declared, "", repr(value))


class CollectionNode(Node):
    """list, Sequence, set, frozenset, deque: a container class and its items."""

    def __init__(self, declared: Any, classes: tuple[type, ...], item: Node) -> None:
        self.declared = declared
        self.classes = classes
        self.item = item

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if not isinstance(value, self.classes) or isinstance(value, (str, bytes)):
            _mismatch(out, path, TYPE, self.declared, "", value_type_name(value))
            return
        item = self.item
        if item is ANY or depth > _MAX_DEPTH:
            return
        elements = cast(Iterable[Any], value)
        if isinstance(item, InstanceNode):
            exact = item.exact
            for index, element in enumerate(elements):
                if type(element) not in exact:
                    item.check(element, (path, "i", index), out, depth + 1)
            return
        indexed = not isinstance(value, (set, frozenset))
        for index, element in enumerate(elements):
            item.check(element, (path, "i", index if indexed else ""), out, depth + 1)

    def shape(self, value: Any) -> bool:
        return isinstance(value, self.classes) and not isinstance(value, (str, bytes))


class TupleNode(Node):
    """A fixed-length tuple (``items``), or ``tuple[X, ...]`` (``variadic``)."""

    def __init__(self, declared: Any, items: list[Node] | None, variadic: Node | None) -> None:
        self.declared = declared
        self.items = items
        self.variadic = variadic

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if not isinstance(value, tuple):
            _mismatch(out, path, TYPE, self.declared, "", value_type_name(value))
            return
        if self.variadic is not None:
            for index, element in enumerate(value):
                self.variadic.check(element, (path, "i", index), out, depth + 1)
            return
        assert self.items is not None
        if len(value) != len(self.items):
            _mismatch(out, path, TYPE, self.declared, "", f"tuple of {len(value)}")
            return
        for index, (node, element) in enumerate(zip(self.items, value)):
            node.check(element, (path, "t", index), out, depth + 1)

    def shape(self, value: Any) -> bool:
        return isinstance(value, (tuple, list))


class MappingNode(Node):
    def __init__(self, declared: Any, classes: tuple[type, ...], key: Node, item: Node) -> None:
        self.declared = declared
        self.classes = classes
        self.key = key
        self.item = item

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if not isinstance(value, self.classes):
            _mismatch(out, path, TYPE, self.declared, "", value_type_name(value))
            return
        if depth > _MAX_DEPTH:
            return
        key_node, item = self.key, self.item
        keys = None if key_node is ANY else key_node
        items = None if item is ANY else item
        fast = item.exact if isinstance(item, InstanceNode) else frozenset()
        mapping = cast(Mapping[Any, Any], value)
        for key, element in mapping.items():
            if keys is not None and not (type(key) is str and _accepts_str(keys)) and not keys.fits(key):
                _mismatch(
                    out, (path, "m", key), TYPE, self.declared, "",
                    f"key of type {value_type_name(key)}",
                )
            if items is not None and type(element) not in fast:
                items.check(element, (path, "m", key), out, depth + 1)

    def shape(self, value: Any) -> bool:
        return isinstance(value, self.classes)


class UnionNode(Node):
    def __init__(self, declared: Any, members: list[Node]) -> None:
        self.declared = declared
        self.members = members
        # The classes whose instances fit with no look inside (AnyMessage's twelve message classes).
        self.leaves = frozenset(
            cls
            for member in members
            for cls in (
                member.exact if isinstance(member, InstanceNode)
                else (member.cls,) if isinstance(member, LibraryClassNode) else ()
            )
        )

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if type(value) in self.leaves:
            return
        members = self.members
        resembling = [member for member in members if member.shape(value)]
        for member in resembling:
            if member.fits(value):
                return
        if len(resembling) == 1:
            # One member is what the value was written as: say what is wrong inside it.
            resembling[0].check(value, path, out, depth)
            return
        _mismatch(out, path, TYPE, self.declared, "", value_type_name(value))

    def shape(self, value: Any) -> bool:
        return any(member.shape(value) for member in self.members)


class _FieldsNode(Node):
    """A class checked field by field; its fields are compiled on first use (classes may be
    recursive)."""

    def __init__(self, compile_field: Callable[[Any], Node], cls: type) -> None:
        self.compile_field = compile_field
        self.cls = cls
        self._fields: dict[str, Node] | None = None

    def fields(self) -> dict[str, Node]:
        if self._fields is None:
            self._fields = {}  # a recursive class meets itself: nothing more to check there
            self._fields = {
                name: self.compile_field(hint) for name, hint in _class_hints(self.cls).items()
            }
        return self._fields


class ClassNode(_FieldsNode):
    """A class the serializer stores by ``(module, name)``: a pydantic model, a dataclass, a
    NamedTuple or an enum."""

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        cls = self.cls
        if not isinstance(value, cls):
            _mismatch(out, path, CLASS, cls, "", value_type_name(value), value)
            return
        if depth > _MAX_DEPTH:
            return
        if issubclass(cls, enum.Enum):
            return
        reported = self._invalid_fields(value, path, out) if hasattr(cls, "__pydantic_validator__") else ()
        for name, node in self.fields().items():
            if node is not ANY and name not in reported:
                field = getattr(value, name, _ABSENT)
                if field is not _ABSENT:
                    start = len(out)
                    node.check(field, (path, "f", name), out, depth + 1)
                    _declared_by(cls, out, start)

    def _invalid_fields(self, value: Any, path: Path, out: list[Mismatch]) -> set[str]:
        """The fields that do not validate, each reported: the loader has then rebuilt the model
        with ``model_construct``, unvalidated (the same check as the loader's ``cls(**fields)``).
        What is wrong deeper inside a field is left to the field's own check."""
        data = dict(value.__dict__)
        extra = getattr(value, "__pydantic_extra__", None)
        if extra:
            data.update(extra)
        try:
            type(value).__pydantic_validator__.validate_python(data)
        except Exception as error:  # ValidationError, or a validator of the user's that raised
            reported = self.validation_errors(error, path, out)
            if not reported:
                _mismatch(out, path, FALLBACK, self.cls, self.cls.__name__, _first_line(str(error)))
                reported.update(self.fields())
            return reported
        return set()

    def validation_errors(self, error: Exception, path: Path, out: list[Mismatch]) -> set[str]:
        """Each error of a ``ValidationError`` of this class, as a mismatch where it lies (its
        kind by pydantic's error type: ``missing``, ``extra`` or ``fallback``); the fields they
        are in."""
        errors = getattr(error, "errors", None)
        reported: set[str] = set()
        for problem in errors() if callable(errors) else ():
            loc = problem.get("loc") or ()
            if not loc or not isinstance(loc[0], str):
                continue
            where, last, holder = self._located(loc, path)
            kind = {"missing": MISSING, "extra_forbidden": EXTRA}.get(problem.get("type"), FALLBACK)
            detail = str(last) if kind != FALLBACK else str(problem.get("msg", ""))
            _mismatch(
                out, where, kind, self.cls, self.cls.__name__, detail, problem.get("input"),
                nested=len(loc) > 1, holder=holder,
            )
            reported.add(loc[0])
        return reported

    def _located(self, loc: tuple[Any, ...], path: Path) -> tuple[Path, Any, type | None]:
        """The path pydantic's error location names, read along the declared types (a str is a
        model's field or a mapping's key, an int a list's index); it stops where they part. And
        the class whose field (or key) the last step is, when it is one."""
        node: Node | None = self
        last: Any = loc[-1]
        holder: type | None = None
        steps = list(loc)
        while steps:
            step = steps[0]
            if isinstance(node, UnionNode):
                # pydantic names the member it tried (``Prefs``) in a union of several; an
                # Optional adds no step.
                named = [m for m in node.members if isinstance(m, _FieldsNode) and m.cls.__name__ == step]
                structured = [m for m in node.members if not _is_none(m)]
                if named:
                    node = named[0]
                    steps.pop(0)
                elif len(structured) == 1:
                    node = structured[0]
                else:
                    break
                continue
            steps.pop(0)
            if isinstance(node, (ClassNode, TypedDictNode)) and isinstance(step, str):
                path = (path, "f" if isinstance(node, ClassNode) else "k", step)
                holder = node.cls
                node = node.fields().get(step)
            elif isinstance(node, MappingNode):
                path = (path, "m", step)
                node = node.item
            elif isinstance(node, (CollectionNode, TupleNode)) and isinstance(step, int):
                path = (path, "i", step)
                node = node.item if isinstance(node, CollectionNode) else node.variadic
            else:
                break
        return path, last, holder

    def shape(self, value: Any) -> bool:
        if isinstance(value, self.cls):
            return True
        if issubclass(self.cls, enum.Enum):
            return type(value) in _PLAIN or isinstance(value, (str, int, float))
        return isinstance(value, dict)  # what a class the loader could not rebuild comes back as


class TypedDictNode(_FieldsNode):
    def __init__(self, compile_field: Callable[[Any], Node], cls: type) -> None:
        super().__init__(compile_field, cls)
        self.required = required_keys(cls)

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if not isinstance(value, dict):
            _mismatch(out, path, TYPE, self.cls, "", value_type_name(value))
            return
        if depth > _MAX_DEPTH:
            return
        name = self.cls.__name__
        for key in self.required:
            if key not in value:
                _mismatch(out, (path, "k", key), MISSING, self.cls, name, key)
        for key, node in self.fields().items():
            if node is not ANY and key in value:
                start = len(out)
                node.check(value[key], (path, "k", key), out, depth + 1)
                _declared_by(self.cls, out, start)

    def shape(self, value: Any) -> bool:
        return isinstance(value, dict)


class LibraryClassNode(Node):
    """LangChain's messages and documents: checked by their class, not field by field."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def check(self, value: Any, path: Path, out: list[Mismatch], depth: int) -> None:
        if not isinstance(value, self.cls):
            _mismatch(out, path, TYPE, self.cls, "", value_type_name(value))

    def shape(self, value: Any) -> bool:
        return isinstance(value, self.cls)


_ABSENT: Final = object()


def _declared_by(cls: type, out: list[Mismatch], start: int) -> None:
    """The mismatches found from ``start`` on lie in a field of ``cls``: those no class deeper
    claims are declared by it (the message names the class that declares the field, not the
    state)."""
    for index in range(start, len(out)):
        if out[index].holder is None and not out[index].owner:
            out[index] = out[index]._replace(owner=cls.__name__, holder=cls)


def _is_none(node: Node) -> bool:
    return isinstance(node, InstanceNode) and node.classes == (type(None),)


def _accepts_str(node: Node) -> bool:
    return isinstance(node, InstanceNode) and str in node.exact


def _class_hints(cls: type) -> dict[str, Any]:
    """The declared fields of a class the value is rebuilt as: the annotations its checkpointed
    fields have (a model's fields, a dataclass's, a NamedTuple's or a TypedDict's keys). An
    annotation that does not resolve is taken as ``Any``."""
    fields = getattr(cls, "__pydantic_fields__", None)
    if isinstance(fields, dict):
        return {name: field.annotation for name, field in fields.items()}
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # a name imported only under TYPE_CHECKING, or any other failure
        hints = {name: Any for name in getattr(cls, "__annotations__", {})}
    if dataclasses.is_dataclass(cls):
        names = {field.name for field in dataclasses.fields(cls)}
        return {name: hint for name, hint in hints.items() if name in names}
    return {
        name: hint for name, hint in hints.items()
        if typing.get_origin(hint) is not typing.ClassVar
    }


def required_keys(cls: type) -> frozenset[str]:
    """A TypedDict's required keys. ``__required_keys__`` is wrong for a class written under ``from
    __future__ import annotations`` (the wrappers are strings then): the resolved annotations
    tell, as they tell LangGraph."""
    required = set(getattr(cls, "__required_keys__", ()))
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:
        return frozenset(required)
    for name, hint in hints.items():
        origin = typing.get_origin(hint)
        if origin in _NOT_REQUIRED:
            required.discard(name)
        elif origin in _REQUIRED:
            required.add(name)
    return frozenset(required)


_REQUIRED: Final = {getattr(typing, "Required", None), typing_extensions.Required} - {None}
_NOT_REQUIRED: Final = {getattr(typing, "NotRequired", None), typing_extensions.NotRequired} - {None}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
