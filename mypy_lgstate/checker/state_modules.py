"""Which modules can declare graph state: the gate of what the plugin records as each module's cache
is written.

mypy writes a cache entry for every module it checks, the standard library and every installed
library included: most modules of a LangGraph application's build are libraries that never touch
LangGraph. Reading their classes at every cold run cost the plugin more than any of its checks of the
user's code, for nothing: a library's fields have channels of their own only through LangGraph or
LangChain (``add_messages``, the channel classes, ``MessagesState``, ``AgentState``).

The gate reads the module's import statements, which only a module just checked has (a module
loaded from the cache has none): it answers from the module's source, the same in every run,
parallel worker and the daemon.
"""

from __future__ import annotations

import os
from typing import Final

from mypy.nodes import Import, ImportAll, ImportFrom, MypyFile

from mypy_lgstate.core.libraries import is_library

# Where LangGraph's own state and channels live, and what every library built on them imports.
LANGGRAPH_PACKAGES: Final = frozenset({"langgraph", "langchain"})
_INSIDE: Final = tuple(f"{package}." for package in LANGGRAPH_PACKAGES)
# The standard library's stubs (mypy's copy of typeshed): nearly half the modules of a build.
_STDLIB_STUBS: Final = f"{os.sep}typeshed{os.sep}stdlib{os.sep}"


def may_declare_state(file: MypyFile) -> bool:
    """Whether the classes of ``file``, a module just checked, may declare graph state of their own
    (channels, reducers): always in the user's code; in a library (site-packages, typeshed) only in
    a module of LangGraph or LangChain or one that imports from them.

    A library module that gets their names only through a module of its own package (``from
    .compat import add_messages``) is not read: this runs for every module of every cold run, and
    such a module's models and dataclasses still have the channels their bases declare."""
    path = file.path
    if not is_library(path):
        return True
    if _STDLIB_STUBS in path:
        return False
    name = file.fullname
    if name.startswith(_INSIDE) or name in LANGGRAPH_PACKAGES:
        return True
    for imported in file.imports:
        if isinstance(imported, (ImportFrom, ImportAll)):
            name = imported.id
            if not imported.relative and (name.startswith(_INSIDE) or name in LANGGRAPH_PACKAGES):
                return True
        elif isinstance(imported, Import):
            for name, _ in imported.ids:
                if name.startswith(_INSIDE) or name in LANGGRAPH_PACKAGES:
                    return True
    return False
