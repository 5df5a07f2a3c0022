"""mypy-lgstate: find LangGraph state that will not survive a checkpoint, at type-check time.

At run time this package only provides :func:`graph_state`, a no-op class decorator that marks a
class as graph state for the mypy plugin (``mypy_lgstate.plugin``). Importing it never imports mypy.
"""

from typing import TypeVar

__all__ = ["__version__", "compiled", "graph_state"]
__version__ = "0.1.0"

_C = TypeVar("_C", bound=type)


def compiled() -> bool:
    """Whether the plugin's checks were compiled with mypyc (``MYPY_LGSTATE_COMPILE=1`` when the
    package was built): told by how the walker is stored, without importing it (or mypy)."""
    from importlib.machinery import EXTENSION_SUFFIXES
    from importlib.util import find_spec

    spec = find_spec("mypy_lgstate.checker.walker")
    origin = spec.origin if spec is not None else None
    return origin is not None and origin.endswith(tuple(EXTENSION_SUFFIXES))


def graph_state(cls: _C) -> _C:
    """Mark ``cls`` as LangGraph graph state so that mypy-lgstate checks every field of it.

    Use it on state classes that are not passed to ``StateGraph(...)`` in the code mypy sees, such as
    a schema shared by several services. It returns ``cls`` unchanged.
    """
    return cls
