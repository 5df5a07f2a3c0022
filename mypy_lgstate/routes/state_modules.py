"""Which modules can declare channels of their own: the gate of what the plugin reads of each
module as its cache is written.

mypy writes a cache entry for every module it checks, the standard library and every installed
library included: most modules of a LangGraph application's build are libraries that never touch
LangGraph, and most of the application's own modules do not either (models, services, clients).
Reading all their classes at every cold run cost the plugin more than any of its checks, for
nothing. A field declares its own channel only as ``Annotated[T, reducer]`` or
``Annotated[T, SomeChannel]`` (the only form the plugin reads, and the one LangGraph documents), so
a module that imports no ``Annotated`` and nothing of LangGraph or LangChain declares none: its
models and dataclasses have the channels their bases declare, and the plugin need not read them.
Its TypedDicts are still read (``channel_specs.record_module``), because their bases are known from
their syntax alone.

The gate reads the module's import statements, which only a module just checked has (a module
loaded from the cache has none): it answers from the module's source, the same in every run,
parallel worker and the daemon.
"""

from __future__ import annotations

import os
from typing import Final

from mypy.nodes import Import, ImportAll, ImportFrom, MypyFile


# Where LangGraph's own state and channels live, and what every library built on them imports.
LANGGRAPH_PACKAGES: Final = frozenset({"langgraph", "langchain"})
_INSIDE: Final = tuple(f"{package}." for package in LANGGRAPH_PACKAGES)
# Modules whose ``Annotated`` a module may use through the module (``typing.Annotated``).
_ANNOTATED_MODULES: Final = frozenset({"typing", "typing_extensions"})
# The standard library's stubs (mypy's copy of typeshed): declare no graph state.
_STDLIB_STUBS: Final = f"{os.sep}typeshed{os.sep}stdlib{os.sep}"


def is_stdlib_stub(path: str) -> bool:
    """Whether the module at ``path`` is one of typeshed's standard library stubs."""
    return _STDLIB_STUBS in path


def may_declare_channels(file: MypyFile) -> bool:
    """Whether fields of the classes of ``file``, a module just checked, may declare channels of
    their own (reducers, channel classes): only in a module of LangGraph or LangChain, or one that
    imports from them, imports a name ``Annotated`` (from anywhere), the ``typing`` modules
    themselves, or ``*`` from anywhere; the user's modules and the libraries alike."""
    if is_stdlib_stub(file.path):
        return False
    name = file.fullname
    if name.startswith(_INSIDE) or name in LANGGRAPH_PACKAGES:
        return True
    for imported in file.imports:
        if isinstance(imported, ImportFrom):
            name = imported.id
            if not imported.relative and (name.startswith(_INSIDE) or name in LANGGRAPH_PACKAGES):
                return True
            for name, _ in imported.names:
                if name == "Annotated":
                    return True
        elif isinstance(imported, ImportAll):
            return True
        elif isinstance(imported, Import):
            for name, _ in imported.ids:
                if (
                    name.startswith(_INSIDE)
                    or name in LANGGRAPH_PACKAGES
                    or name in _ANNOTATED_MODULES
                ):
                    return True
    return False
