"""The plugin's cost in instructions: the same comparison as run.py, free of machine noise.

    python benchmarks/instructions.py [--python PATH] [--plugin ENTRY] [--source DIR] [--cold]

Runs plain mypy and mypy with the plugin once each per scenario under valgrind's callgrind, which
counts the instructions the process executes: the same count whatever else the machine is doing.
Their ratio is what the plugin costs mypy on this application, without the noise that makes a wall
time ratio of a few percent hard to read on a shared machine. It is a cross-check of run.py, not a
replacement: instructions are not time (cache misses, for one, are not counted), and the targets
are stated in time.

Python's string hashing is seeded (PYTHONHASHSEED=0) so that set and dict orders, and with them the
work mypy does, repeat from run to run. What remains is mypy hashing some objects by address: runs of
identical code still differ by about 0.2%.

Under callgrind mypy runs about 50 times slower: the warm scenarios take about six minutes, a cold
run (``--cold``) twelve more. Needs valgrind (``apt install valgrind``); standard library otherwise.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=run.TARGET_MODULES, help="modules to generate")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy to run")
    parser.add_argument("--plugin", default=run.DEFAULT_PLUGIN, help="plugins= entry to compare")
    parser.add_argument("--workdir", type=Path, default=run.DEFAULT_WORKDIR.with_name("_work_instructions"))
    parser.add_argument("--source", type=Path, default=run.REPO_ROOT, help=run.SOURCE_HELP)
    parser.add_argument("--cold", action="store_true", help="also count a cold run (about twelve minutes more)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    plugin = str(Path(args.plugin).resolve()) if args.plugin.endswith(".py") else args.plugin

    args.workdir.mkdir(parents=True, exist_ok=True)
    app = generate.generate(args.workdir, args.modules, seed=0)
    configs = run.write_configs(args.workdir, plugin)
    runner = run.MypyRunner(args.python, app, args.source.resolve())
    runner.env["PYTHONHASHSEED"] = "0"
    print(f"app: {app.module_count} modules; edit target: {app.edit_target.relative_to(app.root)}")

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

    for config in configs:  # fill both caches (and compile the plugin's bytecode) before counting
        shutil.rmtree(config.cache_dir, ignore_errors=True)
        runner.checked_run(config)
    if args.cold:
        measure("cold", cold=True)
    measure("warm no-change")
    measure("one-module edit", edit=True)

    print()
    print(f"{'scenario':<16} {'plain':>16} {'plugin':>16} {'ratio':>6}")
    for label, plain, with_plugin in rows:
        print(f"{label:<16} {plain:>16,} {with_plugin:>16,} {with_plugin / plain:6.3f}")


if __name__ == "__main__":
    main()
