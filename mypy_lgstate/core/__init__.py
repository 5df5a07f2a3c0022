"""What every part of mypy-lgstate shares, importing nothing of mypy: the verdict tables
(``rules``), the wording of every message (``messages``), the options (``config``), the lock file
(``lockfile``) and where installed libraries live (``libraries``). The runtime checker runs on these
alone."""
