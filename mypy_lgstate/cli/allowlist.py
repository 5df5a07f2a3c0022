"""``lgstate allowlist``: the classes every graph checkpoints, as strict msgpack's allowlist.

With ``LANGGRAPH_STRICT_MSGPACK=true`` (the default LangGraph's warning announces), the loader
rebuilds only the classes on its allowlist; any other comes back as a dict or its bare value,
silently. ``compile()`` derives part of the list from the declared schemas, not all of it: never
NamedTuples or ``SecretStr``, nothing reached through ``Sequence`` or ``Mapping``, nothing under a
field typed ``Any``. The command lists every class ``lgstate lock`` records (the same build, the
same snapshots: every class reachable from a graph-state root, the values of the functional API's
``@entrypoint`` and ``@task`` functions included), marks what ``compile()`` does not derive, and
names the ``Any``-typed fields, whose classes no declaration tells.

Formats (measured: ``tests/test_allowlist.py`` loads each class back through a serializer given
the Python list; LangGraph's ``langgraph.json`` reference documents the ``serde`` block):
- ``python``: ``[("module", "Class"), ...]`` for ``JsonPlusSerializer(allowed_msgpack_modules=...)``;
- ``langgraph-json``: ``{"serde": {"allowed_msgpack_modules": [["module", "Class"], ...]}}``;
- ``toml``: the plugin's own ``allowed_msgpack_modules`` (``"module.Class"``).
``--check FILE`` reads a list in any of these (``.py``, ``.json``, ``.toml`` / ``.ini`` / ``.cfg``)
and exits 1 when it lacks a class.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from typing import Final, NamedTuple

from mypy_lgstate.cli.mypy_build import run_mypy
from mypy_lgstate.cli.subcommands import ArgumentError, Subcommand, UsageError, output
from mypy_lgstate.core import config, lockfile, rules
from mypy_lgstate.core.drift import STORED_BY_NAME, split_top_level, type_parts

FORMATS: Final = ("python", "langgraph-json", "toml")
_NAME: Final = re.compile(r"[\w.]+")
_NOT_DERIVED: Final = {
    "NamedTuple": "a NamedTuple: compile() does not derive it",
    "secret": "compile() does not derive it",
    "reach": "reached only through a type compile() does not look inside (Sequence, Mapping...)",
    # The roots lockfile.not_derived names, by why.
    "task": "returned by a @task: compile() does not derive it",
    "entrypoint": (
        "an @entrypoint's value, whose annotations LangGraph reads as strings under"
        " from __future__ import annotations: compile() does not derive it"
    ),
}


class Entry(NamedTuple):
    module: str
    name: str
    note: str  # why compile() does not derive it, or ""

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


class Allowlist(NamedTuple):
    entries: list[Entry]
    any_fields: list[str]  # "Root.path.field (type)": what they hold is not listed


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check", metavar="FILE",
        help="write nothing; exit 1 when FILE's list (a .py, langgraph.json, or the plugin's"
        " configuration) lacks a class the graphs checkpoint",
    )


def allowlist(args: argparse.Namespace) -> int:
    if args.check is not None and not os.path.isfile(args.check):
        raise ArgumentError(f"--check {args.check}: no such file")
    roots: lockfile.LockData = {}
    not_derived: dict[str, str] = {}
    run_mypy(args, lock_roots=roots, not_derived=not_derived)
    found = collect(roots, not_derived)
    if args.check is None:
        output(args, WRITERS[args.format](found))
        if args.format == "langgraph-json":  # JSON has no comments: the notes go to stderr
            for line in _any_notes(found, "lgstate: "):
                print(line, file=sys.stderr)
        return 0
    listed = read_list(args.check)
    missing = [
        entry for entry in found.entries if entry.dotted not in listed and entry.module not in listed
    ]
    if not missing:
        print(f"{args.check} lists every class the graphs checkpoint ({len(found.entries)})")
        return 0
    print(f"{args.check} lacks {len(missing)} of the {len(found.entries)} classes the graphs checkpoint:")
    for entry in missing:
        print(f"  {entry.dotted}" + (f" ({entry.note})" if entry.note else ""))
    print("run lgstate allowlist to print the whole list")
    return 1


COMMAND: Final = Subcommand(
    help="list the classes the graphs checkpoint, as the allowed_msgpack_modules strict msgpack"
    " needs (--check: exit 1 when a committed list lacks one)",
    formats=FORMATS,
    run=allowlist,
    arguments=_arguments,
)


def collect(roots: lockfile.LockData, not_derived: dict[str, str] | None = None) -> Allowlist:
    """Every class the serializer stores by ``(module, name)`` in the snapshots of ``roots``;
    ``not_derived``: the roots ``compile()`` derives nothing from, and why (a key of
    ``_NOT_DERIVED``)."""
    not_derived = not_derived or {}
    entries: dict[tuple[str, str], Entry] = {}
    any_fields: list[str] = []
    secrets = {name.rpartition(".") for name in rules.SECRET_TYPES}
    for record_path, record in sorted(
        ((path, record) for classes in roots.values() for path, record in classes.items()),
        key=lambda item: item[0],  # two roots may hold the same path (two modules' State)
    ):
        module, name = record["class"]
        if record.get("kind") in STORED_BY_NAME:
            note = _NOT_DERIVED["NamedTuple"] if record["kind"] == "NamedTuple" else ""
            entries.setdefault((module, name), Entry(module, name, note))
        for field, declared in sorted(record.get("fields", {}).items()):
            names = set(_NAME.findall(declared["type"]))
            for secret_module, _, secret in secrets:
                if f"{secret_module}.{secret}" in names:
                    entries.setdefault(
                        (secret_module, secret), Entry(secret_module, secret, _NOT_DERIVED["secret"])
                    )
            if "Any" in names or "builtins.object" in names:
                where = f"{record_path}.{field} ({declared['type'].replace('builtins.', '')})"
                if where not in any_fields:
                    any_fields.append(where)
    derived = _derived(roots, not_derived)
    # Why a class the graphs do not derive is not derived: the first root that holds it says.
    why = {
        ".".join(record["class"]): not_derived[root]
        for root in sorted(not_derived, reverse=True) if root in roots
        for record in roots[root].values()
    }
    for key, entry in entries.items():
        dotted = ".".join(key)
        if not entry.note and dotted not in derived:
            entries[key] = entry._replace(note=_NOT_DERIVED[why.get(dotted, "reach")])
    return Allowlist(sorted(entries.values()), any_fields)


def _derived(roots: lockfile.LockData, not_derived: dict[str, str]) -> set[str]:
    """The classes ``compile()`` derives from each root, read from the recorded field types: it
    walks unions and the arguments of list, set, tuple, dict, deque and frozenset only, adds
    models, dataclasses and enums, walks a model's, a dataclass's and a TypedDict's fields, and
    never adds or enters a NamedTuple (docs/rules.md, "Strict msgpack"). A functional-API root
    (``app.flow.workflow(inputs)``, a value, not a class) starts from the classes at its top: an
    ``@entrypoint``'s are derived, as its graph derives them from its annotations, but none of
    ``not_derived``'s."""
    records = {
        ".".join(record["class"]): record
        for classes in roots.values() for record in classes.values()
    }
    derived: set[str] = set()
    visited: set[str] = set()

    def walk(text: str) -> None:
        for member in split_top_level(text, " | "):
            head, args = type_parts(member)
            if head in rules.ALLOWLIST_WALKED_ORIGINS:
                for arg in args:
                    walk(arg)
            elif head in records and head not in visited:
                visited.add(head)
                record = records[head]
                if record.get("kind") in ("pydantic model", "dataclass", "Enum"):
                    derived.add(head)
                if record.get("kind") in ("pydantic model", "dataclass", "TypedDict"):
                    for field in record.get("fields", {}).values():
                        walk(field["type"])

    for root, classes in roots.items():
        if root in not_derived:
            continue
        walk(root)
        for path, record in classes.items():  # a functional-API root's value, at its top
            if "(" in root and root.endswith("." + path.rstrip("[]")):
                walk(".".join(record["class"]))
    return derived


def as_python(found: Allowlist) -> str:
    lines = [
        "# lgstate allowlist: the classes the graphs checkpoint. Under LANGGRAPH_STRICT_MSGPACK=true",
        "# pass them to JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_MSGPACK_MODULES).",
        "ALLOWED_MSGPACK_MODULES = [",
    ]
    for entry in found.entries:
        note = f"  # {entry.note}" if entry.note else ""
        lines.append(f"    ({json.dumps(entry.module)}, {json.dumps(entry.name)}),{note}")
    lines.append("]")
    return "\n".join(lines + _any_notes(found, "# "))


def as_langgraph_json(found: Allowlist) -> str:
    """The ``serde`` block of ``langgraph.json`` (JSON has no comments: the notes are left out)."""
    block = {"serde": {"allowed_msgpack_modules": [[e.module, e.name] for e in found.entries]}}
    return json.dumps(block, indent=2)


def as_toml(found: Allowlist) -> str:
    lines = ["[tool.mypy_lgstate]", "allowed_msgpack_modules = ["]
    for entry in found.entries:
        note = f"  # {entry.note}" if entry.note else ""
        lines.append(f"    {json.dumps(entry.dotted)},{note}")
    lines.append("]")
    return "\n".join(lines + _any_notes(found, "# "))


def _any_notes(found: Allowlist, comment: str) -> list[str]:
    if not found.any_fields:
        return []
    lines = [f"{comment}Not listed: the classes of what these fields typed Any hold (add them yourself):"]
    lines += [f"{comment}  {where}" for where in found.any_fields]
    return lines


WRITERS: Final = {"python": as_python, "langgraph-json": as_langgraph_json, "toml": as_toml}


def read_list(path: str) -> set[str]:
    """The dotted names (``module.Class``, or a bare module) a committed list holds."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--check {path}: cannot be read: {error}") from None
    if path.endswith(".json"):
        return _from_json(path, text)
    if path.endswith(".py"):
        return _from_python(path, text)
    try:
        return set(config.read_config(path).allowed_msgpack_modules)
    except config.ConfigError as error:
        raise UsageError(str(error)) from None


def _from_json(path: str, text: str) -> set[str]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise UsageError(f"--check {path}: not valid JSON: {error}") from None
    pairs = document.get("serde", {}).get("allowed_msgpack_modules") if isinstance(document, dict) else None
    if not isinstance(pairs, list):
        raise UsageError(f"--check {path}: no serde.allowed_msgpack_modules list")
    return {".".join(pair) for pair in pairs if isinstance(pair, list) and all(isinstance(p, str) for p in pair)}


def _from_python(path: str, text: str) -> set[str]:
    """Every ``("module", "Class")`` pair written in the file."""
    try:
        tree = ast.parse(text, path)
    except SyntaxError as error:
        raise UsageError(f"--check {path}:{error.lineno}: not valid Python: {error.msg}") from None
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 2 and all(
            isinstance(elt, ast.Constant) and isinstance(elt.value, str) for elt in node.elts
        ):
            found.add(".".join(elt.value for elt in node.elts))  # type: ignore[attr-defined]
    return found
