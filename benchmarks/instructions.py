"""The plugin's cost in instructions: the same comparison as run.py, free of machine noise.

    python benchmarks/instructions.py [--layout dense|realistic|plain|all] [--python PATH]
                                      [--plugin ENTRY] [--source DIR] [--cold]

For each layout asked for (default: all three; see generate.py), runs plain mypy and mypy with the
plugin once each per scenario under valgrind's callgrind, which counts the instructions the process
executes: the same count whatever else the machine is doing. Their ratio is what the plugin costs
mypy on that application, without the noise that makes a wall time ratio of a few percent hard to
read on a shared machine. It prints one table per layout and a verdict against the layout's
instruction target (run.TARGETS): instructions are not time (cache misses, for one, are not
counted), and the time targets are run.py's.

Python's string hashing is seeded (PYTHONHASHSEED=0) so that set and dict orders, and with them the
work mypy does, repeat from run to run. What remains is mypy hashing some objects by address: runs of
identical code still differ by about 0.2%.

Under callgrind mypy runs about 50 times slower: on the dense layout the warm scenarios take about
six minutes, a cold run (``--cold``) twelve more; each layout is measured in turn. Needs valgrind
(``apt install valgrind``); standard library otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import generate
import run

COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(runner: run.MypyRunner, config: run.Config) -> int:
    """The instructions one mypy run executes (it must succeed, as in run.py)."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *runner.command(config)]
    result = subprocess.run(
        command, cwd=runner.app.root, env=runner.env, capture_output=True, text=True
    )
    found = COLLECTED.search(result.stderr)
    if result.returncode not in config.exit_codes or found is None:
        sys.exit(f"{config.name} mypy under callgrind exited with {result.returncode}:\n{result.stderr[-2000:]}")
    return int(found.group(1))


def measure_layout(args: argparse.Namespace, plugin: str, layout: str) -> tuple[str, str]:
    """Count the scenarios of one layout; print its table and verdict. Returns the table and verdict."""
    target = run.TARGETS[layout].instructions
    workdir = args.workdir / layout
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"\n=== {layout} layout ({workdir})")
    app = generate.generate(workdir, args.modules, seed=0, layout=layout)
    configs = run.write_configs(workdir, plugin)
    runner = run.MypyRunner(args.python, app, args.source.resolve())
    runner.env["PYTHONHASHSEED"] = "0"
    run.describe(app)

    for config in configs:  # fill both caches (and compile the plugin's bytecode) before counting
        shutil.rmtree(config.cache_dir, ignore_errors=True)
        runner.checked_run(config)
    rechecked = [run.rechecked_modules(runner, config, app.edit_target) for config in configs]
    print(
        f"edit target: {app.edit_target.relative_to(app.root)}; the edit rechecks {rechecked[0]} of the "
        f"{app.module_count} modules ({rechecked[1]} with the plugin)"
    )

    rows: list[tuple[str, int, int]] = []

    def measure(label: str, *, cold: bool = False, edit: bool = False) -> None:
        counts = []
        for config in configs:
            if cold:
                shutil.rmtree(config.cache_dir, ignore_errors=True)
            else:
                runner.checked_run(config)  # the cache is complete and matches the unedited app
            with run.edited(app.edit_target) if edit else contextlib.nullcontext():
                counts.append(instructions(runner, config))
            print(f"  {label} {config.name:<6} {counts[-1]:>16,} instructions", flush=True)
        rows.append((label, counts[0], counts[1]))

    if args.cold:
        measure("cold", cold=True)
    measure("warm no-change")
    measure("one-module edit", edit=True)

    lines = [
        f"{layout} layout: {app.shares()}",
        f"{'scenario':<16} {'plain':>16} {'plugin':>16} {'ratio':>7} {'target':>7}",
    ]
    failures = []
    for label, plain, with_plugin in rows:
        ratio = with_plugin / plain
        lines.append(f"{label:<16} {plain:>16,} {with_plugin:>16,} {ratio:7.4f} {target:7.3f}")
        if ratio > target:
            failures.append(f"{label} {ratio:.4f} > {target}")
    caveat = "" if args.cold else " (cold not counted: --cold)"
    if app.module_count < run.TARGET_MODULES:
        caveat += f" (only {app.module_count} modules; the targets are for {run.TARGET_MODULES} or more)"
    if failures:
        verdict = f"FAIL - {'; '.join(failures)}{caveat}"
    else:
        verdict = f"PASS - every instruction ratio <= {target}{caveat}"
    table = "\n".join(lines)
    print(f"\n{table}\n\nverdict: {verdict}")
    return table, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    run.add_layout_argument(parser)
    parser.add_argument("--modules", type=int, default=run.TARGET_MODULES, help="modules to generate")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy to run")
    parser.add_argument("--plugin", default=run.DEFAULT_PLUGIN, help="plugins= entry to compare")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=run.DEFAULT_WORKDIR.with_name("_work_instructions"),
        help="where the apps, configs and caches go (WORKDIR/<layout>)",
    )
    parser.add_argument("--source", type=Path, default=run.REPO_ROOT, help=run.SOURCE_HELP)
    parser.add_argument("--cold", action="store_true", help="also count a cold run (about twelve minutes more)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    plugin = str(Path(args.plugin).resolve()) if args.plugin.endswith(".py") else args.plugin

    source_digest = run.plugin_source_digest(plugin, args.source.resolve())
    results = [(layout, *measure_layout(args, plugin, layout)) for layout in run.selected_layouts(args)]
    if len(results) > 1:
        print("\n=== all layouts")
        for layout, table, verdict in results:
            print(f"\n{table}\nverdict: {verdict}")
    if run.plugin_source_digest(plugin, args.source.resolve()) != source_digest:
        # mypy then throws away the plugin configuration's cache: the counts after the change are wrong.
        print("warning: the plugin's source changed while the benchmark ran; rerun on an unchanging checkout")


if __name__ == "__main__":
    main()
