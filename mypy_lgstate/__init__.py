"""mypy-lgstate: find LangGraph state that will not survive a checkpoint, at type-check time.

At run time this package only provides :func:`graph_state`, a no-op class decorator that marks a
class as graph state for the mypy plugin (``mypy_lgstate.plugin``). Importing it never imports mypy.
"""

from typing import TypeVar

__all__ = ["__version__", "graph_state"]
__version__ = "0.1.0"

_C = TypeVar("_C", bound=type)


def graph_state(cls: _C) -> _C:
    """Mark ``cls`` as LangGraph graph state so that mypy-lgstate checks every field of it.

    Use it on state classes that are not passed to ``StateGraph(...)`` in the code mypy sees, such as
    a schema shared by several services. It returns ``cls`` unchanged.
    """
    return cls
