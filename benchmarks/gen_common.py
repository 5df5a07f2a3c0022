"""What the writers of every layout share (see generate.py): the package name, the types a
generated field can have and the maker that hands fields out, and helpers for writing a module's
text (isort-style import blocks, dict literals, field defaults, ordinary helper functions).

Imports no other module of the generator: the others import it.
"""

from __future__ import annotations

import dataclasses
import random
import re

PACKAGE = "app"
# One state field in BAD_FIELD_EVERY gets a checkpoint-unsafe type (a few percent, as the
# benchmark needs); counting instead of sampling guarantees even small apps get some.
BAD_FIELD_EVERY = 30
FIELD_WORDS = "title owner region channel score summary labels counts locale source status weight notes budget".split()

# Top-level module names the generated code imports from outside the stdlib, for grouping imports.
THIRD_PARTY = {"httpx", "langchain", "langchain_core", "langgraph", "pydantic", "typing_extensions"}
# The kinds of module (as the summary names them) that build graphs, nodes or agents.
BUILDER_KINDS = frozenset({"nodes", "routing", "graph", "functional workflow", "agent", "service graph"})
# A module imports LangGraph or LangChain when one of its import statements names them.
LANGCHAIN_IMPORT = re.compile(r"^(?:from|import) (?:langgraph|langchain_core|langchain)\b", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class FieldType:
    """A type a generated state field can have, with what the generator needs to use it."""

    annotation: str
    sample: str  # an expression of this type, used in updates, invoke payloads and defaults
    factory: str | None = None  # zero-argument callable for mutable defaults; None: use sample
    annotation_imports: tuple[str, ...] = ()
    value_imports: tuple[str, ...] = ()  # what `sample` and `factory` need


def _from_records(name: str) -> tuple[str]:
    return (f"from app.core.records import {name}",)


GOOD_TYPES = (
    FieldType("str", '"text"'),
    FieldType("int", "3"),
    FieldType("float", "0.5"),
    FieldType("bool", "True"),
    FieldType("Optional[str]", "None", annotation_imports=("from typing import Optional",)),
    FieldType("Priority", '"high"', annotation_imports=_from_records("Priority")),
    FieldType('Literal["draft", "final"]', '"draft"', annotation_imports=("from typing import Literal",)),
    FieldType("list[str]", '["a", "b"]', factory="list"),
    FieldType("list[int]", "[1, 2, 3]", factory="list"),
    FieldType("dict[str, int]", '{"k": 1}', factory="dict"),
    FieldType("dict[str, list[str]]", '{"k": ["v"]}', factory="dict"),
    FieldType(
        "Address",
        "empty_address()",
        factory="empty_address",
        annotation_imports=_from_records("Address"),
        value_imports=("from app.core.factories import empty_address",),
    ),
    FieldType("list[AuditEntry]", "[]", factory="list", annotation_imports=_from_records("AuditEntry")),
    FieldType(
        "Optional[Money]",
        "None",
        annotation_imports=("from typing import Optional", *_from_records("Money")),
    ),
)
DATETIME_IMPORT = ("import datetime",)
# Types whose values do not survive a checkpoint round trip.
BAD_TYPES = (
    FieldType(
        "datetime.datetime",
        "datetime.datetime(2024, 1, 1)",
        annotation_imports=DATETIME_IMPORT,
        value_imports=DATETIME_IMPORT,
    ),
    FieldType("tuple[int, int]", "(0, 0)"),
    FieldType("set[str]", '{"a"}', factory="set"),
)


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    type: FieldType


class FieldMaker:
    """Hands out uniquely named fields; every BAD_FIELD_EVERY-th one gets a bad type (drawn at
    random, or with ``cycle_bad_types`` each of BAD_TYPES in turn, so that a few are all of them)."""

    def __init__(self, rng: random.Random, cycle_bad_types: bool = False) -> None:
        self.rng = rng
        self.cycle_bad_types = cycle_bad_types
        self.made = 0
        self.bad = 0

    def fields(self, count: int) -> tuple[Field, ...]:
        result = []
        for position in range(count):
            self.made += 1
            if self.made % BAD_FIELD_EVERY == BAD_FIELD_EVERY // 4:
                self.bad += 1
                if self.cycle_bad_types:
                    field_type = BAD_TYPES[(self.bad - 1) % len(BAD_TYPES)]
                else:
                    field_type = self.rng.choice(BAD_TYPES)
            else:
                field_type = self.rng.choice(GOOD_TYPES)
            result.append(Field(f"{self.rng.choice(FIELD_WORDS)}_{position}", field_type))
        return tuple(result)


# --- helpers for writing modules -----------------------------------------------------------------


def import_block(
    lines: list[str], annotated: tuple[Field, ...] = (), valued: tuple[Field, ...] = ()
) -> str:
    """isort-style import block: `lines` plus what the annotations and values of fields need."""
    wanted = set(lines)
    for field in annotated:
        wanted.update(field.type.annotation_imports)
    for field in valued:
        wanted.update(field.type.value_imports)
    sections: dict[str, list[str]] = {"stdlib": [], "third_party": [], "first_party": []}
    from_names: dict[str, set[str]] = {}
    for line in sorted(wanted):
        if line.startswith("import "):
            sections[_section(line.removeprefix("import "))].append(line)
        else:
            # Merge "from X import a" and "from X import b" into one line, as a formatter would.
            module, names = line.removeprefix("from ").split(" import ")
            from_names.setdefault(module, set()).update(name.strip() for name in names.split(","))
    for module in sorted(from_names):
        sections[_section(module)].append(f"from {module} import {', '.join(sorted(from_names[module]))}")
    return "\n\n".join("\n".join(block) for block in sections.values() if block) + "\n"


def _section(module: str) -> str:
    top = module.split(".")[0]
    if top == PACKAGE:
        return "first_party"
    return "third_party" if top in THIRD_PARTY else "stdlib"


def dict_literal(items: dict[str, str], indent: str) -> str:
    body = "".join(f'{indent}    "{key}": {value},\n' for key, value in items.items())
    return "{\n" + body + indent + "}"


def field_default(field: Field, pydantic: bool) -> str:
    if field.type.factory is None:
        return field.type.sample
    if pydantic:
        return f"Field(default_factory={field.type.factory})"
    return f"field(default_factory={field.type.factory})"


def helper_functions(rng: random.Random, tag: str) -> str:
    """A few ordinary typed helper functions, so modules are not just LangGraph boilerplate."""
    templates = (
        "def count_words_{tag}_{n}(texts: list[str]) -> dict[str, int]:\n"
        "    counts: dict[str, int] = {{}}\n"
        "    for text in texts:\n"
        "        for word in text.split():\n"
        "            counts[word] = counts.get(word, 0) + {k}\n"
        "    return counts\n",
        "def top_items_{tag}_{n}(scores: dict[str, float], limit: int = {k}) -> list[str]:\n"
        "    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)\n"
        "    return [name for name, _ in ranked[:limit]]\n",
        "def normalize_{tag}_{n}(values: list[float]) -> list[float]:\n"
        "    total = sum(values) or 1.0\n"
        "    return [round(value / total, {k}) for value in values]\n",
        "def first_match_{tag}_{n}(items: list[str], prefix: str) -> str | None:\n"
        "    for item in items:\n"
        "        if item.startswith(prefix):\n"
        "            return item\n"
        "    return None\n",
    )
    # n keeps the names in a module unique; k is a small constant that varies between helpers.
    chosen = [rng.choice(templates).format(tag=tag, n=n, k=n + 1) for n in range(rng.randint(1, 4))]
    return "\n\n" + "\n\n".join(chosen)


def pick_fields(fields: tuple[Field, ...], rng: random.Random, count: int) -> tuple[Field, ...]:
    return tuple(rng.sample(fields, min(count, len(fields))))


def field_values(fields: tuple[Field, ...]) -> dict[str, str]:
    return {f.name: f.type.sample for f in fields}
