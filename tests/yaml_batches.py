"""The YAML cases of ``test-data/`` (pytest-mypy-plugins) checked many to one mypy build.

pytest-mypy-plugins runs mypy once per case, and each run spends most of its time loading the
libraries' cache: about 0.6 s for a case whose own check takes a few milliseconds. The cases of one
file that share a configuration form a batch instead: each case's ``main`` becomes a module of its
own (``lgcase_<n>``, unique in the session), one mypy run checks them all, and each case is held
against the lines of its own module, with the module's name put back to ``main``. What a case
expects, and how it is compared, stay pytest-mypy-plugins' own (``OutputChecker``).

A case runs alone, as pytest-mypy-plugins runs it, when a batch could change what it sees: it has
files besides ``main`` (their module names would collide), its configuration names ``main``, it sets
environment variables or turns the cache off. A batch whose run stops mypy (a blocking error such as
code mypy cannot parse, or a crash: exit status 2) is run again case by case, so that each case gets
the output it would get alone. A line of mypy's output that belongs to no case's module is given to
every case of the batch, where it fails any case that does not expect it.
"""

from __future__ import annotations

import configparser
import io
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pytest_mypy_plugins import utils
from pytest_mypy_plugins.item import MypyExecutor, OutputChecker, YamlTestItem

PREFIX = "lgcase_"
FATAL = 2  # mypy's exit status when it stops: a blocking error or a crash
CASE_LINE = re.compile(rf"^({PREFIX}\d+)\.py:")


@dataclass
class Batch:
    items: list[YamlTestItem] = field(default_factory=list)
    modules: dict[str, str] = field(default_factory=dict)  # nodeid -> the case's module name
    output: dict[str, str] | None = None  # nodeid -> the case's lines, named as pytest-mypy-plugins names them
    alone: bool = False  # the batch stopped mypy: each case runs by itself

    def result(self, item: YamlTestItem) -> str | None:
        """The case's output, from the batch's one run (made on the first call); ``None`` when the
        case must run alone."""
        if self.output is None and not self.alone:
            self._run()
        return None if self.alone else self.output[item.nodeid]  # type: ignore[index]

    def _run(self) -> None:
        first = self.items[0]
        with tempfile.TemporaryDirectory(prefix="lgstate-yaml-", dir=first.root_directory) as work:
            execution_path = Path(work).absolute()
            files = []
            for item in self.items:
                module = self.modules[item.nodeid]
                (execution_path / f"{module}.py").write_text(item.files[0].content)
                files.append(f"{module}.py")
            with utils.cd(execution_path):
                executor = MypyExecutor(
                    same_process=False,
                    execution_path=execution_path,
                    rootdir=getattr(getattr(first.parent, "config", None), "rootdir", None),
                    environment_variables={},
                    mypy_executable=shutil.which("mypy") or "mypy",
                    modify_pythonpath=first.modify_pythonpath,
                )
                returncode, (stdout, stderr) = executor.execute([
                    "--show-traceback", "--no-error-summary", "--no-pretty", "--hide-error-context",
                    "--cache-dir", first.incremental_cache_dir,
                    f"--config-file={first.prepare_config_file(execution_path)}",
                    *files,
                ])
        if returncode == FATAL:
            self.alone = True
            return
        by_module: dict[str, list[str]] = {module: [] for module in self.modules.values()}
        shared: list[str] = []
        for line in (stdout + stderr).splitlines():
            found = CASE_LINE.match(line)
            (by_module[found.group(1)] if found and found.group(1) in by_module else shared).append(line)
        self.output = {
            nodeid: "\n".join(
                re.sub(rf"\b{module}\b", "main", line) for line in [*by_module[module], *shared]
            )
            for nodeid, module in self.modules.items()
        }


def effective_config(item: YamlTestItem) -> str:
    """The configuration a case runs under: the base ini file with the case's ``mypy_config:``
    merged in, as pytest-mypy-plugins merges them (``configs.join_ini_configs``)."""
    parser = configparser.ConfigParser()
    if item.base_ini_fpath:
        parser.read(item.base_ini_fpath)
    extra = item.additional_mypy_config
    if extra:
        parser.read_string(extra if "[mypy]" in extra else f"[mypy]\n{extra}")
    text = io.StringIO()
    parser.write(text)
    return text.getvalue()


def batch_key(item: YamlTestItem) -> tuple[str, str] | None:
    """The batch a case may join (its file and configuration), or ``None`` when it runs alone."""
    config = item.additional_mypy_config
    if (
        len(item.files) != 1
        or item.disable_cache
        or item.environment_variables
        or re.search(r"\bmain\b", config)
        or re.search(rf"\b{PREFIX}\d+\b", item.files[0].content)
    ):
        return None
    return str(item.path), config


def form_batches(items: list[YamlTestItem]) -> dict[str, Batch]:
    """Each case that can share a run, by node id, with its batch. A batch of one case is no
    batch: that case runs alone."""
    batches: dict[tuple[str, str], Batch] = {}
    for number, item in enumerate(items):
        key = batch_key(item)
        if key is not None:
            batch = batches.setdefault(key, Batch())
            batch.items.append(item)
            batch.modules[item.nodeid] = f"{PREFIX}{number}"
    return {
        item.nodeid: batch
        for batch in batches.values()
        if len(batch.items) > 1
        for item in batch.items
    }


def run_case(item: YamlTestItem, batch: Batch | None) -> None:
    """Check one case: from its batch's run, or alone."""
    output = batch.result(item) if batch is not None else None
    if output is None:
        YamlTestItem.runtest(item)
        return
    # The lines name files relative to the directory of the run, as the checker takes them.
    checker = OutputChecker(
        expect_fail=item.expect_fail, execution_path=Path.cwd(), expected_output=item.expected_output
    )
    checker.check(1 if output else 0, output, "")
