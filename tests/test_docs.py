"""Every error-code page shows the output the plugin really prints for its example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).resolve().parent.parent / "docs" / "errors").glob("*.md"))
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
    """One mypy cache per configuration, shared by all pages: langgraph is analysed once each."""
    return tmp_path_factory.mktemp("caches")


def lock_file(page: Path) -> str | None:
    """The page's ```json block: the lgstate.lock its example is checked against (lgstate-drift)."""
    found = re.search(r"```json\n(.*?)```", page.read_text(), re.S)
    return found.group(1) if found else None


def mypy_lines(workdir: Path, caches: Path, code: str, name: str) -> list[str]:
    (workdir / "app.py").write_text(code)
    (workdir / "mypy.ini").write_text(f"[mypy]\nplugins = mypy_lgstate.plugin\n{CONFIGS[name]}")
    cache = caches / name.replace(" ", "-")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(cache), "app.py"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    return [line for line in result.stdout.splitlines() if line.startswith("app.py:")]


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
