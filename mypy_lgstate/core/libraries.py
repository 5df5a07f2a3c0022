"""Where installed libraries and typeshed's stubs live: never the user's code.

The plugin records no dependency on these modules, and the ``lgstate`` command and its report
leave them out."""

from __future__ import annotations

import os
from typing import Final

LIBRARY_DIRS: Final = tuple(
    f"{os.sep}{name}{os.sep}" for name in ("site-packages", "dist-packages", "typeshed")
)


def is_library(path: str) -> bool:
    """Whether the module at ``path`` is an installed library's or typeshed's."""
    for library_dir in LIBRARY_DIRS:
        if library_dir in path:
            return True
    return False
