"""What every part of mypy-lgstate shares, importing nothing of mypy: the verdict tables (``rules``)
and each rule's words (``messages``, ``write_messages``, ``drift`` and ``drift_messages``), the
options (``config``), the lock file (``lockfile``), digests (``digest``) and where installed
libraries live (``libraries``). The runtime checker and the audit run on these alone."""
