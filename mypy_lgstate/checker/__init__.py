"""The mypy side's checks: what each hook does (``checks``), the checks of what is written to a
graph's channels (``writes``, ``channels``, ``repeats``) and of ``Send`` payloads (``sends``), the
walk of a type by the profile's rules (``walker``, its judges ``containers``, ``models``, ``enums``
and ``generics``, which know it as ``judging.Walk``, and the ``findings`` they return), the one path
from a finding to mypy (``emit``), where it is reported (``report``) under which code
(``errorcodes``), and the checks built on the walk (``allowlist``, ``drift``). They read the code
through ``routes/`` and word their messages with ``core/``. Imported by the plugin on the first hook
that fires (``errorcodes`` alone at its start: mypy must know the codes).
"""
