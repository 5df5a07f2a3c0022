"""Deeply nested state over one bad field: the plugin reports it once, in about plain mypy's time.

    python benchmarks/nested.py [--levels 20] [--repeat 7] [--profile msgpack] [--python PATH]

Writes a state module of ``--levels`` TypedDicts, each reaching the one below by two paths
(``inner: L{i-1}`` and ``other: list[L{i-1}]``), over one ``threading.Lock`` field, plus a pair of
mutually recursive pydantic models. A walk that followed every path would meet the lock 2**levels
times; the plugin walks each class once and reports the lock once.

The library caches are warmed first; then each measured run rechecks only the state module (it is
edited before every run), alternating plain mypy and mypy with the plugin, as ``run.py`` does. It
prints the plugin's diagnostics once, the median of the per-pair time ratios and the peak memory
of each configuration. Standard library only; mypy runs in the interpreter given by ``--python``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import generate
import run

PREAMBLE = '''\
import threading
from typing import TypedDict

from langgraph.graph import StateGraph
from pydantic import BaseModel


class Author(BaseModel):
    name: str
    books: "list[Book]"


class Book(BaseModel):
    title: str
    authors: list[Author]


class L0(TypedDict):
    lock: threading.Lock
    author: Author
'''


def state_module(levels: int) -> str:
    classes = [PREAMBLE]
    for level in range(1, levels + 1):
        below = f"L{level - 1}"
        classes.append(f"\n\nclass L{level}(TypedDict):\n    inner: {below}\n    other: list[{below}]\n")
    classes.append(f"\n\ngraph = StateGraph(L{levels})\n")
    return "".join(classes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--plugin", default="mypy_lgstate.plugin")
    parser.add_argument("--profile", default="msgpack", choices=("json", "msgpack"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="lgstate-nested-") as work:
        root = Path(work)
        package = root / "nested"
        package.mkdir()
        (package / "__init__.py").write_text("")
        target = package / "state.py"
        target.write_text(state_module(args.levels))
        app = generate.GeneratedApp(root, package, 2, 1, target)
        runner = run.MypyRunner(args.python, app)
        plain, plugin = run.write_configs(root, args.plugin)
        with plugin.config_file.open("a") as config:  # msgpack walks the models' fields too
            config.write(f"\n[mypy_lgstate]\nprofile = {args.profile}\n")
        for config in (plain, plugin):  # warm the library caches, unmeasured
            runner.checked_run(config)
        scenario = run.Scenario(f"{args.levels} levels", run.COLD_TARGET)
        for repetition in range(args.repeat):
            for config in (plain, plugin):
                with run.edited(target):
                    sample = runner.checked_run(config)
                scenario.add(config, sample, repetition, args.repeat)
                runner.checked_run(config)  # back to the unedited module, unmeasured

    diagnostics = [line for line in scenario.plugin[-1].output.splitlines() if ": error:" in line]
    print(f"\nthe plugin's diagnostics ({len(diagnostics)}):")
    for line in diagnostics:
        print(f"  {line}")
    ratio = scenario.ratio(run.seconds)
    print(
        f"\ntime: plain {statistics.median(map(run.seconds, scenario.plain)):.2f} s,"
        f" plugin {statistics.median(map(run.seconds, scenario.plugin)):.2f} s,"
        f" ratio {ratio:.3f} (pairs {min(scenario.pair_ratios(run.seconds)):.3f}"
        f"-{max(scenario.pair_ratios(run.seconds)):.3f});"
        f" cpu ratio {scenario.ratio(run.cpu_seconds):.3f};"
        f" memory ratio {scenario.ratio(run.peak_mib):.3f}"
    )


if __name__ == "__main__":
    main()
