"""``python -m mypy_lgstate``: the ``lgstate`` command."""

from mypy_lgstate.cli import run

if __name__ == "__main__":
    run()
