"""What the checks keep for a build: ``proper_type`` keeps the expansion of a type alias without
arguments, and expands it again when mypy gives the alias a new target (it analyses the alias again)
or when expansions are not kept (the daemon); ``model_fields`` keeps the fields of each class, but not
in the daemon. Real aliases and classes, from a real mypy build."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from mypy.build import BuildSource, build
from mypy.nodes import MypyFile, TypeAlias, TypeInfo
from mypy.options import Options
from mypy.types import Instance, TypeAliasType, get_proper_type

from mypy_lgstate.routes import aliases, schemas

SOURCE = """
from dataclasses import dataclass, field
from typing import TypeVar
T = TypeVar("T")
Pair = tuple[int, str]
Payload = dict[str, list[Pair]]
Boxed = list[T]

@dataclass
class Row:
    name: str
    tags: list[str] = field(default_factory=list)
"""


@pytest.fixture(scope="module")
def tree() -> MypyFile:
    options = Options()
    options.incremental = False
    options.cache_dir = os.devnull
    result = build([BuildSource(None, "m", SOURCE)], options)
    assert not result.errors, result.errors
    return result.files["m"]


@pytest.fixture(autouse=True)
def kept() -> Iterator[None]:
    aliases.keep_expansions(True)
    schemas.keep_fields(True)
    yield
    aliases.keep_expansions(True)
    schemas.keep_fields(True)


def _alias(tree: MypyFile, name: str) -> TypeAlias:
    node = tree.names[name].node
    assert isinstance(node, TypeAlias)
    return node


def test_an_alias_is_expanded_once_as_mypy_expands_it(tree: MypyFile) -> None:
    payload = TypeAliasType(_alias(tree, "Payload"), [])
    first = aliases.proper_type(payload)
    assert str(first) == str(get_proper_type(payload)) == "dict[str, list[tuple[int, str]]]"
    assert aliases.proper_type(TypeAliasType(_alias(tree, "Payload"), [])) is first


def test_a_new_target_is_expanded_again(tree: MypyFile) -> None:
    alias = _alias(tree, "Pair")
    before = aliases.proper_type(TypeAliasType(alias, []))
    target = alias.target
    other = get_proper_type(_alias(tree, "Payload").target)
    assert isinstance(other, Instance)
    alias.target = other
    try:
        after = aliases.proper_type(TypeAliasType(alias, []))
    finally:
        alias.target = target
    assert str(before) == "tuple[int, str]"
    assert str(after) == str(other)
    assert str(aliases.proper_type(TypeAliasType(alias, []))) == str(before)


def test_nothing_is_kept_in_the_daemon_or_for_type_arguments(tree: MypyFile) -> None:
    pair = _alias(tree, "Pair")
    aliases.keep_expansions(False)
    assert aliases.proper_type(TypeAliasType(pair, [])) is not aliases.proper_type(
        TypeAliasType(pair, [])
    )
    aliases.keep_expansions(True)
    boxed = _alias(tree, "Boxed")
    payload = get_proper_type(_alias(tree, "Payload").target)
    assert isinstance(payload, Instance)
    key = payload.args[0]  # str
    first = aliases.proper_type(TypeAliasType(boxed, [key]))
    assert aliases.proper_type(TypeAliasType(boxed, [key])) is not first
    assert str(first) == "list[str]"


def test_the_fields_of_a_class_are_read_once_but_not_in_the_daemon(tree: MypyFile) -> None:
    row = tree.names["Row"].node
    assert isinstance(row, TypeInfo)
    first = schemas.model_fields(row)
    assert [name for name, _, _ in first] == ["name", "tags"]
    assert schemas.model_fields(row) is first
    schemas.keep_fields(False)
    again = schemas.model_fields(row)
    assert again == first and again is not first
    assert schemas.model_fields(row) is not again
