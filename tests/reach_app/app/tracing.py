"""A tracing wrapper, as applications write them: its result is typed Any."""

from collections.abc import Callable
from typing import Any


def traced_node(name: str, fn: Callable[..., Any]) -> Any:
    def run(state: Any) -> Any:
        return fn(state)

    run.__name__ = name
    return run
