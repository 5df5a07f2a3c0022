"""``python -m mypy_lgstate``: the ``lgstate`` command."""

from mypy_lgstate.cli.command import main

if __name__ == "__main__":
    raise SystemExit(main())
