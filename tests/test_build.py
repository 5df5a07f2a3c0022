"""The build backend (build_support/backend.py): the pure build asks for nothing more than
setuptools, the compiled one for the mypy the package runs with, and an editable install is never
compiled. The compiled build itself is built and tested whole by .ci/run's third stage;
``test_cli.test_version`` checks there that it is the build under test."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli before 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path) -> ModuleType:
    """A build file as a module of its own (neither is importable from the package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def backend() -> ModuleType:
    return _load("lgstate_build_backend", ROOT / "build_support" / "backend.py")


@pytest.fixture(scope="module")
def setup_script() -> ModuleType:
    return _load("lgstate_setup_script", ROOT / "setup.py")


def test_pyproject_names_the_backend(backend: ModuleType) -> None:
    system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert (system["build-backend"], system["backend-path"]) == ("backend", ["build_support"])


@pytest.mark.parametrize(("value", "compiling"), [(None, False), ("0", False), ("1", True)])
def test_what_the_build_asks_for(
    backend: ModuleType, monkeypatch: pytest.MonkeyPatch, value: str | None, compiling: bool
) -> None:
    if value is None:
        monkeypatch.delenv(backend.COMPILE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(backend.COMPILE_VARIABLE, value)
    assert backend.compiling() is compiling
    assert backend.get_requires_for_build_wheel() == (["mypy>=2.4,<3"] if compiling else [])


def test_the_compiler_is_the_mypy_the_package_runs_with(backend: ModuleType) -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert backend.MYPYC_REQUIREMENT in dependencies


@pytest.mark.parametrize(
    ("argv", "compiled"),
    [
        (["setup.py", "dist_info", "--output-dir", "out"], False),
        (["setup.py", "-q", "egg_info"], False),
        (["setup.py", "bdist_wheel", "--dist-dir", "out"], True),
        (["setup.py", "-v", "bdist_wheel"], True),
    ],
)
def test_the_metadata_step_compiles_nothing(
    setup_script: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: list[str],
    compiled: bool,
) -> None:
    """pip asks for the metadata before it builds: mypyc runs in the build alone."""
    monkeypatch.setenv("MYPY_LGSTATE_COMPILE", "1")
    monkeypatch.setattr(sys, "argv", argv)
    asked: list[list[str]] = []

    def mypycify(paths: list[str], opt_level: str) -> list[str]:
        asked.append(paths)
        return ["compiled"]

    monkeypatch.setattr("mypyc.build.mypycify", mypycify)
    monkeypatch.setattr(setup_script, "__file__", str(tmp_path / "setup.py"))  # its build/ here
    assert setup_script.ext_modules() == (["compiled"] if compiled else [])
    assert bool(asked) is compiled


def test_a_misspelt_value_is_one_line(backend: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(backend.COMPILE_VARIABLE, "yes")
    with pytest.raises(SystemExit, match=re.escape(
        "MYPY_LGSTATE_COMPILE: expected 1 (compile) or 0 (pure Python), got 'yes'"
    )):
        backend.compiling()


def test_an_editable_install_is_never_compiled(
    backend: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(backend.COMPILE_VARIABLE, "1")
    refused = "MYPY_LGSTATE_COMPILE=1: an editable install is never compiled; install without -e"
    with pytest.raises(SystemExit, match=re.escape(refused)):
        backend.get_requires_for_build_editable()
    with pytest.raises(SystemExit, match=re.escape(refused)):
        backend.build_editable(str(tmp_path))


def test_every_module_of_the_checks_is_compiled_and_nothing_else(backend: ModuleType) -> None:
    modules = backend.compiled_modules()
    package = ROOT / "mypy_lgstate"
    expected = sorted(
        path.relative_to(ROOT).as_posix()
        for name in ("checker", "routes", "core")
        for path in (package / name).glob("*.py")
        if path.name != "__init__.py"
    )
    expected = [module for module in expected if module not in backend.STARTUP_MODULES]
    assert sorted(modules) == expected
    assert "mypy_lgstate/checker/walker.py" in modules and "mypy_lgstate/plugin.py" not in modules


def test_the_modules_left_python_are_those_a_mypy_start_imports(backend: ModuleType) -> None:
    # A compiled module imported with the plugin would load the compiled library in every run.
    code = (
        "import sys, mypy_lgstate.plugin; print(*sorted(name for name, module in sys.modules.items()"
        " if name.startswith('mypy_lgstate.') and not hasattr(module, '__path__')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported = {name.replace(".", "/") + ".py" for name in result.stdout.split()}
    packages = tuple(f"mypy_lgstate/{name}/" for name in backend.COMPILED_PACKAGES)
    assert {module for module in imported if module.startswith(packages)} == backend.STARTUP_MODULES
