"""The pytest plugin (entry point ``pytest11``): the ``lgstate_saver`` fixture.

pytest loads this module in every session of every project where mypy-lgstate is installed, so it
imports nothing at import time beyond pytest itself: the fixture imports LangGraph when a test asks
for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mypy_lgstate.runtime.saver import CheckedSaver


@pytest.fixture
def lgstate_saver(request: pytest.FixtureRequest) -> CheckedSaver:
    """A ``CheckedSaver`` around a fresh ``InMemorySaver``, with the options of the project's
    ``[tool.mypy_lgstate]`` / ``[mypy_lgstate]`` section (found from pytest's root directory up).

    Compile the graph with it and run it: a value that will not survive a checkpoint raises
    ``CheckpointValueError`` at the write, naming the node, the channel and the path.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    from mypy_lgstate.core.config import ConfigError
    from mypy_lgstate.runtime.saver import CheckedSaver

    try:
        return CheckedSaver.from_project(InMemorySaver(), start=request.config.rootpath)
    except ConfigError as error:
        problem = str(error)
    # Outside the except block: a failure raised there would chain the ConfigError to it, and
    # pytest would show the line twice.
    pytest.fail(problem, pytrace=False)
