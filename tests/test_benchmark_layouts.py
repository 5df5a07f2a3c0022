"""The benchmark's generated applications are laid out as their README says: the realistic one like
real LangGraph applications (about 30% of the modules import LangGraph or LangChain, about 10%
build graphs, nodes or agents), the plain one with no LangGraph at all, the dense one as the worst
case. The performance targets are stated for these shares; a generator that drifts from them would
measure something else. Generation only: no mypy runs here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import generate  # noqa: E402  (a script's sibling module, as benchmarks/run.py imports it)


def shares(tmp_path: Path, layout: str) -> tuple[generate.GeneratedApp, float, float]:
    app = generate.generate(tmp_path, 500, seed=0, layout=layout)
    assert app.module_count == len(list(app.package_dir.rglob("*.py")))
    return app, app.langchain_modules / app.module_count, app.builder_modules / app.module_count


def test_realistic_layout_has_the_shares_of_real_applications(tmp_path: Path) -> None:
    app, importing, building = shares(tmp_path, "realistic")
    assert app.module_count >= 500
    assert 0.27 <= importing <= 0.33
    assert 0.08 <= building <= 0.12
    assert app.bad_field_count > 0  # the plugin has something to report
    # The edit touches the module nearly everything depends on.
    assert app.edit_target == app.package_dir / "core" / "types.py"
    users = [p for p in app.package_dir.rglob("*.py") if "app.core.types" in p.read_text()]
    assert len(users) >= app.module_count // 4


def test_plain_layout_imports_no_langgraph(tmp_path: Path) -> None:
    app, importing, building = shares(tmp_path, "plain")
    assert app.module_count >= 500
    assert importing == building == 0
    for path in app.package_dir.rglob("*.py"):
        assert "langgraph" not in path.read_text() and "langchain" not in path.read_text(), path


@pytest.mark.parametrize("seed", [0, 1])
def test_dense_layout_is_graph_code_nearly_everywhere(tmp_path: Path, seed: int) -> None:
    app = generate.generate(tmp_path, 500, seed=seed, layout="dense")
    assert app.langchain_modules / app.module_count > 0.5
    assert app.builder_modules / app.module_count > 0.5
