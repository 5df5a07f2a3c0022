"""The ``lgstate`` command: its parser and the table of subcommands (``command``), what they share
(``subcommands``), mypy's build run in-process (``mypy_build``), and one module per subcommand:
``check`` (with the findings' formats, ``findings``), ``report``, ``lock`` (with the changes
``--check`` lists, ``lockdiff``), ``allowlist`` and ``audit``.

``main`` returns the exit status (the tests call it in their own process); ``run``, the console
script and ``python -m mypy_lgstate``, ends the process with it at once.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from mypy_lgstate.cli.command import main as main


def run() -> NoReturn:
    """``main``, then out of the process as mypy leaves it: the output flushed, the heap left as it
    is. A run holds mypy's whole build (every module's tree and types); freeing it object by object
    at interpreter exit took as long as the run itself. Every file the command writes is closed
    before ``main`` returns."""
    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader is gone (`lgstate check | head`): the status stands
            pass
    os._exit(status)
