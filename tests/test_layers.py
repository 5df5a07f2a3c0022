"""The package's layers (docs/design.md, "Layers"), held to its imports.

The imports are read from the source with ``ast``, nothing is imported. Those under
``TYPE_CHECKING`` and inside functions count like the others: a reader follows them all the same. A
module may import the modules of its own layer and of the layers its layer stands on (and those
stand on), never one above or beside it; and no module reaches itself through its imports.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mypy_lgstate"


class Layer(NamedTuple):
    name: str
    paths: tuple[str, ...]  # inside the package: a module, or a folder ending with "/"
    stands_on: tuple[str, ...]  # the layers right under it; theirs are under it too


# Bottom up, as docs/design.md lists them.
LAYERS: tuple[Layer, ...] = (
    Layer("core", ("__init__.py", "core/"), ()),
    Layer("runtime", ("runtime/", "pytest_plugin.py"), ("core",)),
    Layer("routes", ("routes/",), ("core",)),
    Layer("checker", ("checker/",), ("routes",)),
    Layer("plugin", ("plugin.py",), ("checker",)),
    Layer("cli", ("cli/", "__main__.py"), ("plugin", "runtime")),
)


def modules(package: Path) -> dict[str, Path]:
    """Each module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The modules of the package that module ``name`` imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source not in known:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                yield (submodule if submodule in known else source), node.lineno


def layer_of(path: str, layers: Sequence[Layer]) -> Layer:
    """The layer whose longest path holds ``path`` (relative to the package)."""
    matches = [
        (len(entry), layer)
        for layer in layers
        for entry in layer.paths
        if path == entry or (entry.endswith("/") and path.startswith(entry))
    ]
    assert matches, f"{path} is on no layer: add it to LAYERS and to docs/design.md"
    return max(matches, key=lambda match: match[0])[1]


def under(layer: Layer, layers: Sequence[Layer]) -> set[str]:
    """The layers ``layer`` stands on, directly or through others."""
    by_name = {each.name: each for each in layers}
    found: set[str] = set()
    pending = list(layer.stands_on)
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending.extend(by_name[name].stands_on)
    return found


def climbs(package: Path, layers: Sequence[Layer]) -> list[str]:
    """Every import of a module on a layer its importer does not stand on."""
    known = modules(package)
    found = []
    for name, path in known.items():
        layer = layer_of(path.relative_to(package).as_posix(), layers)
        allowed = under(layer, layers) | {layer.name}
        for imported, line in imports(name, path, known):
            target = layer_of(known[imported].relative_to(package).as_posix(), layers)
            if target.name not in allowed:
                found.append(f"{name}:{line} ({layer.name}) imports {imported} ({target.name})")
    return found


def cycles(package: Path) -> list[list[str]]:
    """The modules that reach themselves through their imports, one list per cycle (Tarjan)."""
    known = modules(package)
    graph = {
        name: sorted({imported for imported, _ in imports(name, path, known)})
        for name, path in known.items()
    }
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = lowlink[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for imported in graph[name]:
            if imported not in index:
                visit(imported)
                lowlink[name] = min(lowlink[name], lowlink[imported])
            elif imported in on_stack:
                lowlink[name] = min(lowlink[name], index[imported])
        if lowlink[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1 or name in graph[name]:
                found.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    return found


def test_no_import_climbs_to_a_higher_layer() -> None:
    assert climbs(ROOT / PACKAGE, LAYERS) == []


def test_no_module_imports_itself_back() -> None:
    assert cycles(ROOT / PACKAGE) == []


# A module a reader can hold in mind: past this, it is split along a seam a reader would name.
MAX_LINES = 600


def test_no_module_is_over_the_size_a_reader_holds() -> None:
    package = ROOT / PACKAGE
    sizes = {
        path.relative_to(package).as_posix(): len(path.read_text().splitlines())
        for path in modules(package).values()
    }
    assert {name: size for name, size in sizes.items() if size > MAX_LINES} == {}


def test_every_module_is_on_a_layer() -> None:
    package = ROOT / PACKAGE
    for path in modules(package).values():
        layer_of(path.relative_to(package).as_posix(), LAYERS)


def test_the_design_lists_the_same_layers() -> None:
    """docs/design.md gives one line per layer, ``- **name** (`path`, ...), on other: what it is``,
    in the same order."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    listed = []
    for line in section.splitlines():
        match = re.match(r"- \*\*(\w+)\*\* \(([^)]*)\)(?:, on ([\w ,]+?))?: ", line)
        if match is not None:
            stands_on = re.split(r", | and ", match[3]) if match[3] else []
            paths = tuple(re.findall(r"`([^`]+)`", match[2]))
            listed.append(Layer(match[1], paths, tuple(stands_on)))
    assert listed == list(LAYERS)


def test_the_checks_find_a_climb_and_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from pkg.low import b\n")
    (package / "low" / "b.py").write_text("def f() -> None:\n    import pkg.low.a\n")
    (package / "high.py").write_text("from pkg.low.a import x\n")
    (package / "mid.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import high\n"
    )
    layers = (
        Layer("low", ("__init__.py", "low/"), ()),
        Layer("mid", ("mid.py",), ("low",)),
        Layer("high", ("high.py",), ("mid",)),
    )
    assert climbs(package, layers) == ["pkg.mid:3 (mid) imports pkg.high (high)"]
    assert cycles(package) == [["pkg.low.a", "pkg.low.b"]]
