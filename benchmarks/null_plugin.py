"""A mypy plugin that does nothing, for an A/A run of the benchmark.

    python benchmarks/run.py --plugin benchmarks/null_plugin.py

Both configurations then do the same work, so the ratios show the benchmark's noise on this
machine, plus whatever merely loading a plugin costs mypy.
"""

from mypy.plugin import Plugin


def plugin(version: str) -> type[Plugin]:
    return Plugin
