"""Where the plugin's time goes in the edit run: the seconds spent in each of its entry points,
measured inside mypy's process, with garbage collection counted apart.

    python benchmarks/inside.py --python .venv/bin/python [--source DIR] [--repeat N]

It generates the app of ``run.py``, warms both configurations' caches, then runs the one-module
edit ``--repeat`` times (default 5) with plain mypy and with the plugin, alternately. Each run is
mypy's own ``api.run``, in a process whose plugin class has a timer around its hooks (every check
a hook runs), ``report_config_data`` (the records written with each module's cache),
``get_additional_indirect_deps`` (the end-of-module checks) and the hook lookups; a collection that
starts inside one of them counts as garbage collection, not as its time. It prints the median of
each over the runs. ``--source`` measures another copy of the package (for instance a
``git archive`` of a commit). ``run.py`` measures the whole run against plain mypy; this says which part of the
plugin's share is which.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import generate
import run

DEFAULT_WORKDIR = run.REPO_ROOT / "benchmarks" / "_work_inside"
ENTRY_POINTS = (
    "report_config_data", "get_additional_indirect_deps", "get_function_hook", "get_method_hook"
)
# Run in mypy's process: time each entry point of the plugin class, then run mypy as ``mypy`` would.
DRIVER = f"""
import gc, json, sys, time
from mypy import api
import mypy_lgstate.plugin as plugin

spent = {{}}
collecting = [0.0, 0.0]

def on_collection(phase, info):
    if phase == "start":
        collecting[1] = time.perf_counter()
    else:
        collecting[0] += time.perf_counter() - collecting[1]

def timed(name, function):
    def entry(*args, **kwargs):
        start, collected = time.perf_counter(), collecting[0]
        try:
            return function(*args, **kwargs)
        finally:
            in_gc = collecting[0] - collected
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start - in_gc

    return entry

dispatch = plugin.LGStatePlugin._dispatch
plugin.LGStatePlugin._dispatch = lambda self, method: timed("hooks", dispatch(self, method))
for name in {ENTRY_POINTS!r}:
    setattr(plugin.LGStatePlugin, name, timed(name, getattr(plugin.LGStatePlugin, name)))
gc.callbacks.append(on_collection)
start = time.perf_counter()
api.run(sys.argv[1:])
spent["mypy run"] = time.perf_counter() - start
spent["garbage collection"] = collecting[0]
print(json.dumps(spent))
"""


def edit_run(runner: run.MypyRunner, config: run.Config, edit_target: Path) -> dict[str, float]:
    """One timed edit run of ``config``, then its cache brought back to the unedited app."""
    command = [runner.python, "-c", DRIVER, *runner.command(config)[3:]]
    with run.edited(edit_target):
        result = subprocess.run(
            command, cwd=runner.app.root, env=runner.env, capture_output=True, text=True
        )
    runner.checked_run(config)
    lines = result.stdout.strip().splitlines()
    if result.returncode not in (0, 1) or not lines:
        sys.exit(f"the edit run failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return dict(json.loads(lines[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy to run")
    parser.add_argument("--source", type=Path, default=run.REPO_ROOT, help=run.SOURCE_HELP)
    parser.add_argument("--repeat", type=int, default=5, help="edit runs (default 5)")
    parser.add_argument(
        "--workdir", type=Path, default=DEFAULT_WORKDIR, help="app, config and cache"
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    app = generate.generate(args.workdir, run.TARGET_MODULES, seed=0)
    configs = run.write_configs(args.workdir, run.DEFAULT_PLUGIN)
    runner = run.MypyRunner(args.python, app, args.source.resolve())
    for config in configs:
        runner.checked_run(config)  # warm caches
    # Plain mypy and mypy with the plugin alternately, as in run.py.
    samples: dict[str, list[dict[str, float]]] = {config.name: [] for config in configs}
    for _ in range(args.repeat):
        for config in configs:
            samples[config.name].append(edit_run(runner, config, app.edit_target))
    runs = f"{args.repeat} runs each"
    print(f"one-module edit of {app.module_count} modules, {runs}, median seconds:")
    print(f"  {'':<30} {'plain':>7} {'plugin':>7}  (plugin's range)")
    for name in ("mypy run", "hooks", *ENTRY_POINTS, "garbage collection"):
        medians = []
        for config in configs:
            values = [sample.get(name, 0.0) for sample in samples[config.name]]
            medians.append(statistics.median(values))
        low, high = min(values), max(values)
        print(f"  {name:<30} {medians[0]:7.3f} {medians[1]:7.3f}  ({low:.3f} to {high:.3f})")


if __name__ == "__main__":
    main()
