"""Compare a cold ``lgstate check`` with a cold ``mypy`` that runs the plugin on the same files.

    python benchmarks/check.py [--app example|realistic|all] [--modules 150] [--repeat 5]
                               [--python PATH]

``lgstate check`` is mypy with the plugin and ``check_untyped_defs``, plus its own output: what it
may cost beyond mypy is building that output and nothing else (target: at most 1.1 times mypy's
wall time). Both commands read one configuration (the plugin enabled, ``check_untyped_defs``, a
cache directory of their own) and both start from an empty cache in every run. Runs alternate,
mypy then ``lgstate check``, so that machine noise hits both alike; the table gives the median
wall and CPU time of each and the median of the per-pair ratios (as ``run.py`` does).

Two applications: ``example``, the bundled example app (``examples/triage``, five modules: what a
user trying the tool first runs), and ``realistic``, the generated app laid out like real LangGraph
applications (``generate.py --layout realistic``; ``--modules`` sets its size).

Standard library only; mypy and the plugin run in the interpreter given by ``--python``, with this
checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import generate
import run

TARGET = 1.1  # lgstate check / mypy with the plugin, cold wall time
APPS = ("example", "realistic")
EXAMPLE = run.REPO_ROOT / "examples"


class Command:
    """One of the two commands compared, on one app, with its own cache."""

    def __init__(self, name: str, argv: list[str], cache_dir: Path) -> None:
        self.name = name
        self.argv = argv
        self.cache_dir = cache_dir
        self.samples: list[run.Sample] = []


def write_config(workdir: Path) -> Path:
    config = workdir / "check.ini"
    config.write_text(
        "# Written by benchmarks/check.py: what lgstate check runs mypy with.\n"
        "[mypy]\nplugins = mypy_lgstate.plugin\ncheck_untyped_defs = True\n"
    )
    return config


def commands(python: str, config: Path, target: str, workdir: Path) -> tuple[Command, Command]:
    mypy_cache = workdir / "cache-mypy"
    lgstate_cache = workdir / "cache-lgstate"
    mypy = Command(
        "mypy", [python, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(mypy_cache), target], mypy_cache
    )
    lgstate = Command(
        "lgstate",
        [python, "-m", "mypy_lgstate", "check", "-q", "--config-file", str(config), target, "--",
         "--cache-dir", str(lgstate_cache)],
        lgstate_cache,
    )
    return mypy, lgstate


def measure(command: Command, cwd: Path, env: dict[str, str]) -> run.Sample:
    shutil.rmtree(command.cache_dir, ignore_errors=True)
    sample = run.measured_run(command.argv, cwd, env)
    if sample.exit_code not in (0, 1):  # 1: findings, which both report on these apps
        sys.exit(f"{command.name} exited with {sample.exit_code}:\n{sample.output}")
    return sample


def bench_app(args: argparse.Namespace, app: str) -> tuple[str, float]:
    workdir = args.workdir / f"check-{app}"
    workdir.mkdir(parents=True, exist_ok=True)
    if app == "example":
        cwd, target, what = EXAMPLE, "triage", "examples/triage (5 modules)"
    else:
        generated = generate.generate(workdir, args.modules, 0, "realistic")
        cwd, target = generated.root, generated.package_dir.name
        what = f"the realistic layout, {generated.module_count} modules"
    config = write_config(workdir)
    pair = commands(os.path.abspath(args.python), config, target, workdir)
    env = run.mypy_environment()
    print(f"\n=== {app}: {what}")
    for command in pair:  # unmeasured: fills the OS file cache and compiles the bytecode
        first = measure(command, cwd, env)
        print(f"  {command.name:<7} exit {first.exit_code}, {len(first.output.splitlines())} lines of output")
    for repetition in range(args.repeat):
        for command in pair:
            sample = measure(command, cwd, env)
            command.samples.append(sample)
            print(
                f"  {repetition + 1}/{args.repeat} {command.name:<7} {sample.seconds:7.2f} s "
                f"(cpu {sample.cpu_seconds:6.2f} s) {sample.peak_mib:7.1f} MiB",
                flush=True,
            )
    mypy, lgstate = pair

    def ratio(of: Callable[[run.Sample], float]) -> float:
        return statistics.median(of(b) / of(a) for a, b in zip(mypy.samples, lgstate.samples))

    def median(command: Command, of: Callable[[run.Sample], float]) -> float:
        return statistics.median(of(sample) for sample in command.samples)

    wall = ratio(run.seconds)
    line = (
        f"{app:<10} {median(mypy, run.seconds):8.2f} {median(lgstate, run.seconds):10.2f} {wall:7.3f} "
        f"{ratio(run.cpu_seconds):9.3f} {TARGET:7.2f}"
    )
    return line, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", action="append", choices=(*APPS, "all"), help="example, realistic or all (default)")
    parser.add_argument("--modules", type=int, default=150, help="size of the realistic app (default 150)")
    parser.add_argument("--repeat", type=int, default=5, help="pairs per app (default 5)")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy to run (default: this one)")
    parser.add_argument("--workdir", type=Path, default=run.DEFAULT_WORKDIR, help="where the apps and caches go")
    args = parser.parse_args()
    asked = set(args.app or ["all"])
    version = subprocess.run([args.python, "-m", "mypy", "--version"], capture_output=True, text=True)
    print(f"{version.stdout.strip()} on {args.python}; pairs: {args.repeat}")
    lines, failures = [], []
    for app in APPS:
        if app in asked or "all" in asked:
            line, wall = bench_app(args, app)
            lines.append(line)
            if wall > TARGET:
                failures.append(f"{app} {wall:.3f} > {TARGET}")
    print(f"\n{'app':<10} {'mypy s':>8} {'lgstate s':>10} {'ratio':>7} {'cpu ratio':>9} {'target':>7}")
    print("\n".join(lines))
    verdict = f"FAIL - {'; '.join(failures)}" if failures else f"PASS - every cold ratio <= {TARGET}"
    print(f"\nverdict: {verdict}")


if __name__ == "__main__":
    main()
