"""Every output the documentation quotes is the output the code really gives.

- An error-code page (``docs/errors/*.md``) shows, after each ```python example, a ```text block of
  the ``app.py:`` lines mypy prints for it, under one of ``CONFIGS``.
- In the README and the other pages, every ```text block (and a ```python block that quotes what it
  returns) says on the line before it how it is produced: ``<!-- output: KIND ARGS -->``, one of
  ``KINDS`` below. A block this test runs is compared with what the code prints; a block another
  test produces names that test (``tested-by``), which compares the page with the real output
  itself. A block with no marker fails the test: a behaviour change must fail a test rather than
  leave the documentation untrue.

The mypy runs share one cache per configuration with the error pages (langgraph is analysed once
for each); the configuration examples need no library at all.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

import library_caches
from mypy_lgstate.cli import command as cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "errors").glob("*.md"))
# The pages whose blocks carry markers.
MARKED_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The configurations a page's example may be written for, tried in this order.
CONFIGS = {
    "json": "",
    "msgpack": "[mypy_lgstate]\nprofile = msgpack\n",
    "strict msgpack": "[mypy_lgstate]\nprofile = msgpack\nstrict_msgpack = true\n",
    "lgstate-any enabled": "enable_error_code = lgstate-any\n",
    "lgstate-untyped-node enabled": "enable_error_code = lgstate-untyped-node\n",
}


def examples(page: Path) -> list[tuple[str, list[str]]]:
    """Each ```python block followed by a ```text block of ``app.py:`` lines."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", page.read_text(), re.S)
    return [
        (code, [line for line in text.splitlines() if line.startswith("app.py:")])
        for (kind, code), (next_kind, text) in zip(blocks, blocks[1:])
        if kind == "python" and next_kind == "text" and "app.py:" in text
    ]


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache per configuration, shared by all pages, each from the libraries' warm cache."""
    caches = tmp_path_factory.mktemp("caches")
    for name in CONFIGS:
        library_caches.seed(caches / _cache_name(name), _mypy_ini(name))
    return caches


def _mypy_ini(name: str) -> str:
    return f"[mypy]\nplugins = mypy_lgstate.plugin\n{CONFIGS[name]}"


def _cache_name(name: str) -> str:
    return name.replace(" ", "-")


def lock_file(page: Path) -> str | None:
    """The page's ```json block: the lgstate.lock its example is checked against (lgstate-drift)."""
    found = re.search(r"```json\n(.*?)```", page.read_text(), re.S)
    return found.group(1) if found else None


def run_mypy(workdir: Path, caches: Path, code: str, name: str) -> list[str]:
    """What mypy prints for ``code`` as ``app.py`` under configuration ``name``."""
    (workdir / "app.py").write_text(code)
    (workdir / "mypy.ini").write_text(_mypy_ini(name))
    cache = caches / _cache_name(name)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(cache), "app.py"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.splitlines()


def mypy_lines(workdir: Path, caches: Path, code: str, name: str) -> list[str]:
    return [line for line in run_mypy(workdir, caches, code, name) if line.startswith("app.py:")]


@pytest.mark.parametrize("page", PAGES, ids=[page.stem for page in PAGES])
def test_page_quotes_real_output(page: Path, tmp_path: Path, caches: Path) -> None:
    found = examples(page)
    assert found, f"{page.name} has no example with its output"
    lock = lock_file(page)
    if lock is not None:
        (tmp_path / "lgstate.lock").write_text(lock)
    for code, expected in found:
        outputs: dict[str, list[str]] = {}
        for name in CONFIGS:
            outputs[name] = mypy_lines(tmp_path, caches, code, name)
            if outputs[name] == expected:
                break
        else:
            shown = "\n".join(f"--- {name}:\n" + "\n".join(lines) for name, lines in outputs.items())
            pytest.fail(f"{page.name}: no configuration prints the quoted output\n{shown}")


# The README and the other pages ---------------------------------------------------------------------


class Block(NamedTuple):
    page: Path
    line: int
    kind: str  # the marker's first word ("" for a block without a marker)
    args: str  # the rest of the marker
    text: str  # the block, unindented
    before: str  # the fenced block above it (an example's source or configuration), unindented

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


_FENCE = re.compile(
    r"(?:^[ \t]*<!-- output: (?P<marker>.*?) -->\n)?^(?P<indent>[ \t]*)```(?P<lang>\w*)\n"
    r"(?P<body>.*?)^(?P=indent)```",
    re.S | re.M,
)


def blocks(page: Path) -> list[Block]:
    """The output blocks of ``page``: its ```text blocks, and any block with a marker."""
    text = page.read_text()
    found: list[Block] = []
    before = ""
    for match in _FENCE.finditer(text):
        body = textwrap.dedent(match["body"])
        marker = match["marker"]
        if marker is not None or match["lang"] == "text":
            kind, _, args = (marker or "").partition(" ")
            line = text[: match.start("indent")].count("\n") + 1
            found.append(Block(page, line, kind, args, body, before))
        before = body
    return found


ALL_BLOCKS = [block for page in MARKED_PAGES for block in blocks(page)]


def test_every_output_block_says_how_it_is_produced() -> None:
    unmarked = [block.id for block in ALL_BLOCKS if block.kind not in KINDS]
    assert not unmarked, f"add an <!-- output: KIND ... --> marker ({', '.join(KINDS)}): {unmarked}"


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[block.id for block in ALL_BLOCKS])
def test_output_block_is_true(block: Block, tmp_path: Path, caches: Path) -> None:
    KINDS[block.kind](block, tmp_path, caches)


def _mypy(block: Block, tmp_path: Path, caches: Path) -> None:
    """The ```python block above is ``app.py``; the block is what mypy prints for it (``$ mypy
    app.py`` lines are the command, not its output). ARGS: the configuration, default json."""
    printed = run_mypy(tmp_path, caches, block.before, block.args or "json")
    assert printed == [line for line in block.text.splitlines() if not line.startswith("$ ")]


def _config(block: Block, tmp_path: Path, caches: Path) -> None:
    """The ```toml (pyproject.toml) or ```ini (mypy.ini) block above is the plugin's configuration;
    the block is the line mypy stops with (exit 2)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    if block.before.lstrip().startswith("[tool."):
        name, head = "pyproject.toml", '[tool.mypy]\nplugins = ["mypy_lgstate.plugin"]\n\n'
    else:
        name, head = "mypy.ini", "[mypy]\nplugins = mypy_lgstate.plugin\n\n"
    (tmp_path / name).write_text(head + block.before)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "app.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert (result.returncode, (result.stdout + result.stderr).splitlines()) == (
        2, block.text.splitlines()
    )


def _excerpt(block: Block, tmp_path: Path, caches: Path) -> None:
    """Lines of the file ARGS (which another test compares with a real run); a line ending in
    ``...`` is shortened."""
    lines = (ROOT / block.args).read_text().splitlines()
    for quoted in block.text.splitlines():
        if quoted.endswith("..."):
            assert any(line.startswith(quoted[:-3]) for line in lines), quoted
        else:
            assert quoted in lines


def _file(block: Block, tmp_path: Path, caches: Path) -> None:
    """The whole file ARGS (which another test compares with a real run)."""
    assert block.text == (ROOT / block.args).read_text()


def _tested_by(block: Block, tmp_path: Path, caches: Path) -> None:
    """``tests/test_x.py::test_name``: that test runs the real code and finds its output in the
    page itself."""
    path, _, name = block.args.partition("::")
    source = (ROOT / path).read_text()
    assert re.search(rf"^def {name}\(", source, re.M), f"{block.args} does not exist"
    assert block.page.name in source, f"{path} does not read {block.page.name}"


def _synopsis(block: Block, tmp_path: Path, caches: Path) -> None:
    """The command's synopsis: each subcommand's line names every option it takes. ARGS: the
    subcommands it is the synopsis of (default: all of them, and -V)."""
    top, subparsers = cli.parser()
    names = block.args.split() or list(subparsers)
    if not block.args:
        assert "-V" in block.text and "--version" in block.text
    for name in names:
        sub = subparsers[name]
        lines = block.text.split(f"lgstate {name}", 1)[1].split("\nlgstate ", 1)[0]
        for action in sub._actions:
            if action.option_strings and "--help" not in action.option_strings:
                assert re.search(
                    "|".join(rf"\[{re.escape(option)}\b" for option in action.option_strings), lines
                ), f"lgstate {name} {action.option_strings}"


def _tree(block: Block, tmp_path: Path, caches: Path) -> None:
    """The source tree: each entry exists, and a folder whose modules are listed lists every one
    (its ``__init__.py`` aside), as the package's own modules are."""
    listed: dict[str, set[str]] = {"": set()}
    folder = ""
    for line in block.text.splitlines():
        entry = re.match(r"( *)(\S+)", line)
        if entry is None or line.startswith(" " * 6):  # a description going on
            continue
        indent, name = len(entry[1]), entry[2]
        if indent == 0:
            assert (ROOT / name).exists(), name
        elif name.endswith("/"):
            folder = name
            listed[folder] = set()
        elif name.endswith(".py"):
            listed["" if indent == 2 else folder].add(name)
    package = ROOT / "mypy_lgstate"
    for folder, names in listed.items():
        modules = {path.name for path in (package / folder).glob("*.py")}
        if folder:
            modules.discard("__init__.py")
        assert names <= modules, f"{folder}: no such module {sorted(names - modules)}"
        if names:
            assert names == modules, f"{folder}: not listed {sorted(modules - names)}"


def _python(block: Block, tmp_path: Path, caches: Path) -> None:
    """A ```python block whose last expression's value is shown in the comment below it (``...``
    stands for the rest of a long string; spaces and line breaks are not compared)."""
    code, _, comment = block.text.partition("\n# ")
    tree = ast.parse(code)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr)
    namespace: dict[str, object] = {}
    exec(compile(tree, block.id, "exec"), namespace)
    value = eval(compile(ast.Expression(last.value), block.id, "eval"), namespace)
    shown = "".join(("# " + comment).replace("#", "").split())
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    assert re.fullmatch(pattern, "".join(repr(value).split())), repr(value)


KINDS = {
    "mypy": _mypy,
    "config": _config,
    "excerpt": _excerpt,
    "file": _file,
    "tested-by": _tested_by,
    "synopsis": _synopsis,
    "tree": _tree,
    "python": _python,
}


def test_every_install_line_names_the_package_by_its_checkout() -> None:
    """mypy-lgstate is on no registry: a page's ``pip install`` line installs it from a checkout
    (``/path/to/mypy-lgstate``, as the README's install section says), with extras it declares."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    found = []
    for page in [*MARKED_PAGES, ROOT / "examples" / "README.md", ROOT / "benchmarks" / "README.md"]:
        for line in page.read_text().splitlines():
            if "pip install" not in line:
                continue
            for requirement in re.findall(r"[\"']?(\S*mypy-lgstate\S*?)[\"']?(?:\s|$)", line):
                found.append(requirement)
                path, _, extra = requirement.partition("[")
                assert path == "/path/to/mypy-lgstate", f"{page.name}: {line.strip()}"
                assert not extra or extra.rstrip("]") in extras, f"{page.name}: {line.strip()}"
    assert "/path/to/mypy-lgstate[audit]" in found
