"""How the runtime checker knows a value's class: by the name mypy gives it (``mypy_fullname``,
the name ``rules.py`` looks it up by), whether the loader finds it again by its name
(``is_importable``), and how a value of it is walked (``decide``): by its shape, else by the row of
the type table its MRO reaches, as ``walker.py`` decides a declared type.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections import deque
from typing import Final, NamedTuple

from mypy_lgstate.core import rules

# Where a value's runtime class name is not the name mypy (and so ``rules.py``) knows it by.
RUNTIME_NAMES: Final = {
    "builtins.function": "types.FunctionType",
    "builtins.method": "types.MethodType",
    "builtins.builtin_function_or_method": "types.BuiltinFunctionType",
    "builtins.method-wrapper": "types.BuiltinFunctionType",
    "builtins.wrapper_descriptor": "types.BuiltinFunctionType",
    "builtins.method_descriptor": "types.BuiltinFunctionType",
    "builtins.module": "types.ModuleType",
    "builtins.ellipsis": "types.EllipsisType",
}


# Values that every profile keeps as they are: the leaves of most walks, decided without a lookup.
PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def mypy_fullname(cls: type) -> str:
    module = cls.__module__
    if module.startswith("pathlib."):  # Python 3.13 defines the path classes in pathlib._local
        module = "pathlib"
    name = f"{module}.{cls.__qualname__}"
    return RUNTIME_NAMES.get(name, name)


def is_importable(cls: type) -> bool:
    """Whether the loader, which looks ``cls`` up as ``__name__`` in module ``__module__``, finds
    ``cls`` itself (not a class defined in a function, nor another class of the same name)."""
    module = sys.modules.get(cls.__module__)
    return module is not None and getattr(module, cls.__name__, None) is cls


def defaults_only(cls: type) -> bool:
    """A dataclass (not a pydantic model) whose fields all have a plain default: msgpack writes its
    class object as a dict of them."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "model_fields"):
        return False
    return all(field.default is not dataclasses.MISSING for field in dataclasses.fields(cls))


# How a class is walked, decided once per class.
LEAF: Final = "leaf"
LIST: Final = "list"
DICT: Final = "dict"
TUPLE: Final = "tuple"
NAMED_TUPLE: Final = "named tuple"
SET: Final = "set"
DEQUE: Final = "deque"
ENUM: Final = "enum"
MODEL: Final = "model"
DATACLASS: Final = "dataclass"
RULE: Final = "rule"
CLASS_OBJECT: Final = "class object"


class Decision(NamedTuple):
    """How a value of a class is walked: its kind, and for a class of the type table, its row."""

    kind: str
    rule: rules.TypeRule | None = None
    rule_name: str = ""  # the row's name
    exact: bool = True  # the class is the row's own, not a subclass of it
    back_as: str = ""  # for a dict or list subclass: the plain type it comes back as


def decide(cls: type, *, profile: str, strict: bool, safe_types: frozenset[str]) -> Decision:
    """How a value of ``cls`` is walked under ``profile``: decided once per class."""
    mro = [mypy_fullname(base) for base in cls.__mro__]
    if safe_types and any(name in safe_types for name in mro):
        return Decision(LEAF)
    if issubclass(cls, type):
        return Decision(CLASS_OBJECT)
    if cls is list:
        return Decision(LIST)
    if cls is dict:
        return Decision(DICT)
    if cls is set or cls is frozenset:
        return Decision(SET)
    if cls is deque:
        return Decision(DEQUE)
    if cls is tuple:
        return Decision(TUPLE)
    if issubclass(cls, enum.Enum):
        return Decision(ENUM)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return Decision(NAMED_TUPLE)
    for base, name in zip(cls.__mro__, mro):
        rule = rules.TYPE_RULES.get(name)
        if rule is not None:
            decision = Decision(RULE, rule, name, exact=base is cls)
            if _rule_findings_are_fixed(decision, cls, profile=profile, strict=strict):
                verdict = rule.verdict(profile, exact=base is cls)
                if verdict.outcome == "ok":
                    return Decision(LEAF)
            return decision
    if any(name in rules.PYDANTIC_MODELS for name in mro):
        return Decision(MODEL)
    if dataclasses.is_dataclass(cls):
        return Decision(DATACLASS)
    if issubclass(cls, dict):
        return Decision(RULE, back_as="dict")
    if issubclass(cls, list):
        return Decision(RULE, back_as="list")
    return Decision(RULE)


def _rule_findings_are_fixed(
    decision: Decision, cls: type, *, profile: str, strict: bool
) -> bool:
    """Whether a row's verdict is all there is to say about a class (no strict-mode extras)."""
    if profile != "msgpack":
        return True
    if decision.rule_name in rules.LANGCHAIN_MODELS:
        return mypy_fullname(cls) in rules.STRICT_SAFE_CLASSES
    if decision.rule_name in rules.SECRET_TYPES:
        return not strict
    if decision.rule_name in rules.REBUILT_BY_CLASS_NAME and not decision.exact:
        return not strict
    return True
