"""Where installed libraries and typeshed's stubs live: never the user's code.

The plugin records no dependency on these modules, and the ``lgstate`` command and its report
leave them out."""

from __future__ import annotations

import os
from typing import Final

LIBRARY_DIRS: Final = tuple(
    f"{os.sep}{name}{os.sep}" for name in ("site-packages", "dist-packages", "typeshed")
)
