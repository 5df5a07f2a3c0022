"""The ``lgstate`` command: mypy's build run in-process (``command``), the findings' formats
(``findings``), the coverage report (``coverage``) and the changes ``lock --check`` lists
(``lockdiff``)."""

from mypy_lgstate.cli.command import main as main
