"""Compare the speed and peak memory of mypy with and without the mypy-lgstate plugin.

    python benchmarks/run.py [--layout dense|realistic|plain|all] [--modules 500] [--repeat N]
                             [--python PATH] [--quick]

For each layout asked for (default: all three), generates a synthetic application (see
generate.py: ``realistic``, laid out like real LangGraph applications; ``dense``, graph code in
nearly every module; ``plain``, no LangGraph at all) in a work directory of its own, writes two mypy
configurations that differ only in ``plugins = ...`` and in their cache directory, and then runs
plain mypy and mypy with the plugin alternately (A/B/A/B...) so that machine noise hits both alike.
Three scenarios are measured: a cold run (no cache), a warm run with no change, and a warm run
after an edit of one widely imported module. For each one it prints the median wall time of each
configuration, the median of the per-pair ratios plugin / plain (and the same ratio of CPU time,
as a cross-check on a busy machine), and the ratio for peak memory (RSS of the mypy process),
followed by a verdict against the project's targets for that layout.

POSIX only (it uses os.wait4 to read the peak RSS of each mypy process). Standard library only;
mypy itself runs in the interpreter given by --python.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import generate

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORKDIR = REPO_ROOT / "benchmarks" / "_work"  # each layout in a subdirectory of its own
DEFAULT_PLUGIN = "mypy_lgstate.plugin"
SCENARIOS = ("cold", "warm no-change", "one-module edit")


@dataclasses.dataclass(frozen=True)
class Targets:
    """The project's targets for one layout: maximum ratios plugin / plain mypy."""

    time: dict[str, float] | None  # wall time, by scenario; None: no wall-time target
    memory: float | None  # peak RSS, in every scenario; None: no memory target
    instructions: float  # instructions executed (instructions.py), in every scenario


TARGETS = {
    # Where the plugin runs in a few modules out of ten, as in real applications.
    "realistic": Targets(time=dict.fromkeys(SCENARIOS, 1.03), memory=1.02, instructions=1.01),
    # Graph code in nearly every module: the worst case. Its wall-time and memory targets are the
    # ones this benchmark started with.
    "dense": Targets(
        time={"cold": 1.03, "warm no-change": 1.05, "one-module edit": 1.05}, memory=1.03, instructions=1.03
    ),
    # No LangGraph anywhere: the plugin should cost nothing. Its target is in instructions only.
    "plain": Targets(time=None, memory=None, instructions=1.003),
}
LAYOUT_CHOICES = (*generate.LAYOUTS, "all")
QUICK_MODULES = 60
SOURCE_HELP = "directory holding the mypy_lgstate to measure (default: this checkout)"
TARGET_MODULES = 500  # the targets are stated for apps of at least this many modules
# Adding a public name changes the module's interface, so mypy also rechecks every module that
# depends on it, which is what a real edit of a shared state module costs.
EDIT_SUFFIX = "\n\n# Appended by benchmarks/run.py (one-module edit).\nBENCHMARK_EDIT_MARKER = 1\n"
# Environment variables removed for mypy. mypy lets the first two override the config file, which
# could make both configurations share one cache or run differently. Without bytecode caching, every
# run with the plugin would compile the plugin's source again, a cost no installed plugin has.
REMOVED_ENV_VARS = ("MYPY_CACHE_DIR", "MYPY_NUM_WORKERS", "PYTHONDONTWRITEBYTECODE")


@dataclasses.dataclass(frozen=True)
class Config:
    name: str  # "plain" or "plugin"
    config_file: Path
    cache_dir: Path

    @property
    def exit_codes(self) -> tuple[int, ...]:
        """The exit codes of a successful run. 1 means "found errors", which the plugin is expected
        to do; plain mypy must find none, since the app is generated to type-check cleanly."""
        return (0, 1) if self.name == "plugin" else (0,)


@dataclasses.dataclass(frozen=True)
class Sample:
    seconds: float  # wall time
    cpu_seconds: float  # user + system time of mypy: barely affected by other load on the machine
    peak_mib: float
    exit_code: int
    output: str


@dataclasses.dataclass
class Scenario:
    label: str
    time_target: float | None
    plain: list[Sample] = dataclasses.field(default_factory=list)
    plugin: list[Sample] = dataclasses.field(default_factory=list)  # plugin[i] ran right after plain[i]

    def add(self, config: Config, sample: Sample, repetition: int, repeat: int) -> None:
        (self.plain if config.name == "plain" else self.plugin).append(sample)
        print(
            f"  {self.label} {repetition + 1}/{repeat} {config.name:<6} "
            f"{sample.seconds:7.2f} s (cpu {sample.cpu_seconds:6.2f} s) {sample.peak_mib:7.1f} MiB",
            flush=True,
        )

    def pair_ratios(self, measure: Callable[[Sample], float]) -> list[float]:
        # Ratios within a pair: adjacent runs share the machine's state, so per-pair ratios cancel
        # slow drifts that a ratio of the two medians would keep.
        return [measure(b) / measure(a) for a, b in zip(self.plain, self.plugin)]

    def ratio(self, measure: Callable[[Sample], float]) -> float:
        return statistics.median(self.pair_ratios(measure))


def seconds(sample: Sample) -> float:
    return sample.seconds


def cpu_seconds(sample: Sample) -> float:
    return sample.cpu_seconds


def peak_mib(sample: Sample) -> float:
    return sample.peak_mib


class MypyRunner:
    """Runs mypy on the generated app and measures each run on its own."""

    def __init__(self, python: str, app: generate.GeneratedApp, source: Path = REPO_ROOT) -> None:
        # mypy runs in the app's directory: a relative path (``.venv/bin/python``) is made absolute
        # here, a bare name (``python3``) is left to the search path.
        self.python = os.path.abspath(python) if os.sep in python else python
        self.app = app
        self.env = mypy_environment(source)

    def command(self, config: Config) -> list[str]:
        """The mypy command line for ``config``, run in ``self.app.root`` with ``self.env``."""
        return [self.python, "-m", "mypy", "--config-file", str(config.config_file), self.app.package_dir.name]

    def run(self, config: Config) -> Sample:
        return measured_run(self.command(config), self.app.root, self.env)

    def checked_run(self, config: Config) -> Sample:
        """Run, and stop the benchmark if mypy failed: timing a crash would be meaningless."""
        sample = self.run(config)
        if sample.exit_code not in config.exit_codes:
            sys.exit(f"{config.name} mypy exited with {sample.exit_code}:\n{sample.output}")
        return sample


def mypy_environment(source: Path = REPO_ROOT) -> dict[str, str]:
    """The environment mypy runs in: without what would override the configurations, and with the
    plugin imported from this checkout (or ``source``) even if the project is not installed. Both
    configurations get the same environment, so this does not favour either."""
    env = {key: value for key, value in os.environ.items() if key not in REMOVED_ENV_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH", "")]))
    return env


def measured_run(argv: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    """Run ``argv`` in ``cwd`` and measure that one process: wall time, CPU time, peak RSS."""
    # Output goes to a file rather than a pipe: nothing has to read it while we wait.
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        # wait4 returns the resource usage of this one child, whereas
        # getrusage(RUSAGE_CHILDREN) would give the maximum over every child so far.
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # tell Popen it has been reaped
        output.seek(0)
        text = output.read().decode(errors="replace")
    cpu = usage.ru_utime + usage.ru_stime
    return Sample(elapsed, cpu, _max_rss_to_mib(usage.ru_maxrss), process.returncode, text)


def _max_rss_to_mib(max_rss: int) -> float:
    # ru_maxrss is in bytes on macOS and in KiB on Linux and the BSDs.
    return max_rss / (1024 * 1024 if sys.platform == "darwin" else 1024)


def write_configs(workdir: Path, plugin: str) -> tuple[Config, Config]:
    configs = []
    for name, extra in (("plain", ""), ("plugin", f"plugins = {plugin}\n")):
        cache_dir = workdir / f"cache-{name}"
        config_file = workdir / f"mypy-{name}.ini"
        config_file.write_text(
            f"# Written by benchmarks/run.py; the two files differ only in the plugin and the cache.\n"
            f"[mypy]\nstrict = True\ncache_dir = {cache_dir}\n{extra}"
        )
        configs.append(Config(name, config_file, cache_dir))
    return configs[0], configs[1]


def bench_cold(runner: MypyRunner, configs: tuple[Config, Config], repeat: int, targets: Targets) -> Scenario:
    scenario = Scenario("cold", targets.time["cold"] if targets.time else None)
    for repetition in range(repeat):
        for config in configs:
            shutil.rmtree(config.cache_dir, ignore_errors=True)
            scenario.add(config, runner.checked_run(config), repetition, repeat)
    return scenario


def bench_warm(runner: MypyRunner, configs: tuple[Config, Config], repeat: int, targets: Targets) -> Scenario:
    scenario = Scenario("warm no-change", targets.time["warm no-change"] if targets.time else None)
    for config in configs:
        runner.checked_run(config)  # make sure the cache is complete and up to date
    for repetition in range(repeat):
        for config in configs:
            scenario.add(config, runner.checked_run(config), repetition, repeat)
    return scenario


@contextmanager
def edited(target: Path) -> Iterator[None]:
    """``target`` with ``EDIT_SUFFIX`` appended, for the duration of the block."""
    original = target.read_text()
    target.write_text(original + EDIT_SUFFIX)
    try:
        yield
    finally:
        target.write_text(original)


def bench_edit(
    runner: MypyRunner, configs: tuple[Config, Config], repeat: int, target: Path, targets: Targets
) -> Scenario:
    scenario = Scenario("one-module edit", targets.time["one-module edit"] if targets.time else None)
    for config in configs:
        runner.checked_run(config)
    for repetition in range(repeat):
        for config in configs:
            with edited(target):
                sample = runner.checked_run(config)
            scenario.add(config, sample, repetition, repeat)
            # Bring this cache back to the unedited app (unmeasured), so that every measured run
            # rechecks the same modules.
            runner.checked_run(config)
    return scenario


# mypy -v logs every SCC (group of modules importing each other) it is about to check from source.
SCHEDULED = re.compile(r"Scheduling SCC (?:singleton|of size \d+) \(([^)]*)\) as ")


def rechecked_modules(runner: MypyRunner, config: Config, target: Path) -> int:
    """How many of the app's modules mypy checks again after the one-module edit, read from mypy's
    verbose log (an unmeasured run). Its cache must match the unedited app; it does again after."""
    with edited(target):
        command = [*runner.command(config), "-v"]
        result = subprocess.run(command, cwd=runner.app.root, env=runner.env, capture_output=True, text=True)
    if result.returncode not in config.exit_codes:
        sys.exit(f"{config.name} mypy -v exited with {result.returncode}:\n{result.stdout}{result.stderr[-2000:]}")
    runner.checked_run(config)
    package = runner.app.package_dir.name
    modules = {
        module
        for found in SCHEDULED.finditer(result.stderr)
        for module in found.group(1).split()
        if module == package or module.startswith(package + ".")
    }
    return len(modules)


def plugin_source_digest(plugin: str, source: Path = REPO_ROOT) -> str:
    """A hash of the plugin's source in ``source`` (this checkout by default; or of its file, for a path)."""
    files = [Path(plugin)] if plugin.endswith(".py") else sorted((source / plugin.split(".")[0]).rglob("*.py"))
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _median(samples: list[Sample], measure: Callable[[Sample], float]) -> float:
    return statistics.median(measure(sample) for sample in samples)


def report(scenarios: list[Scenario], modules: int, targets: Targets) -> str:
    """Print the table of one layout and its verdict; return the verdict."""
    print()
    print(
        f"{'scenario':<16} {'plain s':>8} {'plugin s':>9} {'ratio':>6} {'pairs range':>13} {'target':>7} "
        f"{'cpu ratio':>9}   {'plain MiB':>9} {'plugin MiB':>10} {'mem ratio':>9} {'target':>7}"
    )
    failures = []
    for scenario in scenarios:
        time_ratio = scenario.ratio(seconds)
        pairs = scenario.pair_ratios(seconds)
        memory = scenario.ratio(peak_mib)
        time_target = "-" if scenario.time_target is None else f"{scenario.time_target:.2f}"
        memory_target = "-" if targets.memory is None else f"{targets.memory:.2f}"
        print(
            f"{scenario.label:<16} {_median(scenario.plain, seconds):8.2f} "
            f"{_median(scenario.plugin, seconds):9.2f} {time_ratio:6.3f} "
            f"{f'{min(pairs):.3f}-{max(pairs):.3f}':>13} {time_target:>7} "
            f"{scenario.ratio(cpu_seconds):9.3f}   "
            f"{_median(scenario.plain, peak_mib):9.1f} {_median(scenario.plugin, peak_mib):10.1f} "
            f"{memory:9.3f} {memory_target:>7}"
        )
        if scenario.time_target is not None and time_ratio > scenario.time_target:
            failures.append(f"{scenario.label} time {time_ratio:.3f} > {scenario.time_target}")
        if targets.memory is not None and memory > targets.memory:
            failures.append(f"{scenario.label} memory {memory:.3f} > {targets.memory}")
    print()
    caveat = ""
    if modules < TARGET_MODULES:
        caveat = f" (only {modules} modules; the targets are for {TARGET_MODULES} or more: indicative only)"
    if targets.time is None and targets.memory is None:
        verdict = (
            f"no wall-time or memory target for this layout; its target is in instructions "
            f"(<= {targets.instructions}: instructions.py){caveat}"
        )
    elif failures:
        verdict = f"FAIL - {'; '.join(failures)}{caveat}"
    else:
        verdict = f"PASS - every time ratio and memory ratio (<= {targets.memory}) within target{caveat}"
    print(f"verdict: {verdict}")
    return verdict


def add_layout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layout",
        action="append",
        choices=LAYOUT_CHOICES,
        help="application to measure: dense, realistic, plain (no LangGraph) or all; repeatable (default all)",
    )


def selected_layouts(args: argparse.Namespace) -> list[str]:
    """The layouts ``--layout`` asked for, each once, in the order of generate.LAYOUTS."""
    asked = set(args.layout or ["all"])
    return [layout for layout in generate.LAYOUTS if layout in asked or "all" in asked]


def describe(app: generate.GeneratedApp) -> None:
    """Print what the generated app is."""
    print(
        f"app: {app.module_count} modules in {app.package_dir}, "
        f"{app.bad_field_count} checkpoint-unsafe state fields;"
    )
    print(f"     {app.shares()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_layout_argument(parser)
    parser.add_argument(
        "--modules", type=int, help=f"modules to generate (default {TARGET_MODULES}; {QUICK_MODULES} with --quick)"
    )
    parser.add_argument("--repeat", type=int, help="pairs per scenario (default 7 cold, 11 warm; 1 with --quick)")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy to run (default: this one)")
    parser.add_argument("--plugin", default=DEFAULT_PLUGIN, help=f"plugins= entry (default {DEFAULT_PLUGIN})")
    parser.add_argument(
        "--workdir", type=Path, default=DEFAULT_WORKDIR, help="where the apps, configs and caches go (WORKDIR/<layout>)"
    )
    parser.add_argument("--source", type=Path, default=REPO_ROOT, help=SOURCE_HELP)
    parser.add_argument("--seed", type=int, default=0, help="seed for the generated app (default 0)")
    parser.add_argument("--quick", action="store_true", help="smoke test: a small app and one pair per scenario")
    args = parser.parse_args()
    # mypy reads a plugin path relative to the config file, which lives in the work directory.
    plugin = str(Path(args.plugin).resolve()) if args.plugin.endswith(".py") else args.plugin
    modules = args.modules or (QUICK_MODULES if args.quick else TARGET_MODULES)
    # Odd counts, so that each median is one measured pair. Single pairs scatter by several percent
    # on a shared 2-core machine, as much as the targets allow: the medians need many of them.
    cold_repeat = args.repeat or (1 if args.quick else 7)
    warm_repeat = args.repeat or (1 if args.quick else 11)
    version = subprocess.run([args.python, "-m", "mypy", "--version"], capture_output=True, text=True)
    if version.returncode != 0:
        sys.exit(f"cannot run mypy with {args.python}:\n{version.stderr}")
    print(f"{version.stdout.strip()} on {args.python}; plugin {plugin}")
    print(f"pairs: cold {cold_repeat}, warm {warm_repeat}")

    source_digest = plugin_source_digest(plugin, args.source.resolve())
    verdicts = []
    for layout in selected_layouts(args):
        targets = TARGETS[layout]
        workdir = args.workdir / layout
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"\n=== {layout} layout ({workdir})")
        # Regenerated every time: cheap, and it undoes an edit left behind by an interrupted run.
        app = generate.generate(workdir, modules, args.seed, layout)
        configs = write_configs(workdir, plugin)
        runner = MypyRunner(args.python, app, args.source.resolve())
        describe(app)

        # One unmeasured cold run each: fills the OS file cache and compiles the plugin's bytecode
        # before anything is timed, and checks that both configurations work.
        for config in configs:
            shutil.rmtree(config.cache_dir, ignore_errors=True)
            sample = runner.checked_run(config)
            errors = sum(": error:" in line for line in sample.output.splitlines())
            print(f"{config.name} mypy: exit code {sample.exit_code}, {errors} errors")
        rechecked = [rechecked_modules(runner, config, app.edit_target) for config in configs]
        print(
            f"edit target: {app.edit_target.relative_to(app.root)}; the edit rechecks {rechecked[0]} of the "
            f"{app.module_count} modules ({rechecked[1]} with the plugin)"
        )

        scenarios = [
            bench_cold(runner, configs, cold_repeat, targets),
            bench_warm(runner, configs, warm_repeat, targets),
            bench_edit(runner, configs, warm_repeat, app.edit_target, targets),
        ]
        print(f"\n{layout} layout: {app.shares()}")
        verdicts.append((layout, report(scenarios, app.module_count, targets)))
    if len(verdicts) > 1:
        print()
        for layout, verdict in verdicts:
            print(f"{layout:<10} {verdict}")
    if plugin_source_digest(plugin, args.source.resolve()) != source_digest:
        # mypy then invalidates the plugin configuration's whole cache, so some runs did far more work.
        print("warning: the plugin's source changed while the benchmark ran; rerun on an unchanging checkout")


if __name__ == "__main__":
    main()
