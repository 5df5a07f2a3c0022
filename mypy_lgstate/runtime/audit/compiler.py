"""Today's declared types compiled into the nodes that check loaded values (``conformance.py``),
each type once: the origins of generic aliases to the node of their shape, a class the serializer
stores by its name to a ``ClassNode``, what a declaration cannot tell to ``ANY``.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import types
import typing
from collections import deque
from typing import Any, Final, Union

import typing_extensions

from mypy_lgstate.core import rules
from mypy_lgstate.runtime.audit.conformance import (
    ANY,
    ClassNode,
    CollectionNode,
    InstanceNode,
    LibraryClassNode,
    LiteralNode,
    MappingNode,
    Node,
    TupleNode,
    TypedDictNode,
    UnionNode,
)

_SEQUENCE_ORIGINS: Final = {
    list: (list,),
    collections.abc.Sequence: (collections.abc.Sequence,),
    collections.abc.MutableSequence: (collections.abc.MutableSequence,),
    set: (set,),
    frozenset: (frozenset,),
    collections.abc.Set: (collections.abc.Set,),
    collections.abc.MutableSet: (collections.abc.MutableSet,),
    deque: (deque,),
    collections.abc.Iterable: (collections.abc.Iterable,),
    collections.abc.Collection: (collections.abc.Collection,),
}
_MAPPING_ORIGINS: Final = {
    dict: (dict,),
    collections.abc.Mapping: (collections.abc.Mapping,),
    collections.abc.MutableMapping: (collections.abc.MutableMapping,),
}
# PEP 484's numeric tower: a bool where int is declared, an int where float is.
_PROMOTED: Final = {float: (float, int), complex: (complex, float, int)}
_LIBRARY_CLASSES: Final = frozenset(
    tuple(name.rsplit(".", 1)) for name in rules.LANGCHAIN_MODELS
)


class Compiler:
    """Compiles declared types into nodes, each type once."""

    def __init__(self) -> None:
        self._nodes: dict[Any, Node] = {}

    def compile(self, declared: Any) -> Node:
        try:
            node = self._nodes.get(declared)
        except TypeError:  # an unhashable annotation (Annotated metadata holding a dict)
            return self._compile(declared)
        if node is None:
            node = self._compile(declared)
            self._nodes[declared] = node
        return node

    def _compile(self, declared: Any) -> Node:
        origin = typing.get_origin(declared)
        args = typing.get_args(declared)
        if origin in (typing.Annotated, typing_extensions.Annotated):
            return self.compile(args[0])
        if origin in _WRAPPERS:
            return self.compile(args[0]) if args else ANY
        if declared in (Any, object, typing_extensions.Any) or isinstance(declared, typing.TypeVar):
            return ANY
        if declared is None or declared is type(None):
            return InstanceNode(None, (type(None),))
        if hasattr(declared, "__supertype__") and not isinstance(declared, type):  # NewType
            return self.compile(declared.__supertype__)
        if origin in (Union, types.UnionType):
            members = [self.compile(arg) for arg in args]
            if any(member is ANY for member in members):
                return ANY
            return UnionNode(declared, members)
        if origin in (typing.Literal, typing_extensions.Literal):
            return LiteralNode(declared, args)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return TupleNode(declared, None, self.compile(args[0]))
            if args == ((),):
                return TupleNode(declared, [], None)
            if not args:
                return InstanceNode(declared, (tuple,))
            return TupleNode(declared, [self.compile(arg) for arg in args], None)
        if origin in _SEQUENCE_ORIGINS:
            item = self.compile(args[0]) if args else ANY
            return CollectionNode(declared, _SEQUENCE_ORIGINS[origin], item)
        if origin in _MAPPING_ORIGINS:
            key = self.compile(args[0]) if args else ANY
            item = self.compile(args[1]) if len(args) > 1 else ANY
            return MappingNode(declared, _MAPPING_ORIGINS[origin], key, item)
        if origin is not None:  # another generic: its class, when it is one
            if isinstance(origin, type) and not _is_protocol(origin):
                return self._compile(origin)
            return ANY
        if isinstance(declared, typing.ForwardRef) or isinstance(declared, str):
            return ANY  # an annotation that did not resolve: nothing to compare with
        if not isinstance(declared, type):
            return ANY
        return self._compile_class(declared)

    def _compile_class(self, cls: type) -> Node:
        if cls in _SEQUENCE_ORIGINS:
            return CollectionNode(cls, _SEQUENCE_ORIGINS[cls], ANY)
        if cls in _MAPPING_ORIGINS:
            return MappingNode(cls, _MAPPING_ORIGINS[cls], ANY, ANY)
        if cls is tuple:
            return InstanceNode(cls, (tuple,))
        if cls in _PROMOTED:
            return InstanceNode(cls, _PROMOTED[cls])
        if typing_extensions.is_typeddict(cls):
            return TypedDictNode(self.compile, cls)
        if any((base.__module__, base.__name__) in _LIBRARY_CLASSES for base in cls.__mro__):
            return LibraryClassNode(cls)
        if _is_protocol(cls) or cls is type:
            return ANY
        stored_by_name = (
            issubclass(cls, enum.Enum)
            or dataclasses.is_dataclass(cls)
            or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
            or hasattr(cls, "__pydantic_validator__")
        )
        if stored_by_name:
            return ClassNode(self.compile, cls)
        return InstanceNode(cls, (cls,))


_WRAPPERS: Final = {
    origin
    for name in ("Required", "NotRequired", "ReadOnly", "ClassVar", "Final")
    for origin in (getattr(typing, name, None), getattr(typing_extensions, name, None))
    if origin is not None
}


def _is_protocol(cls: type) -> bool:
    return bool(getattr(cls, "_is_protocol", False))
