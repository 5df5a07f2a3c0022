"""The mypy side: what each hook does (``checks``), the checks of what is written to a graph's
channels (``writes``, ``channels``, ``repeats``) and of ``Send`` payloads (``sends``), the walk of a
type by the profile's rules (``walker``, its judges ``containers``, ``models``, ``enums`` and
``generics``, and the ``findings`` they return), the one path from a finding to mypy (``emit``) and
where and how it is reported (``report``, ``errorcodes``), and the checks built on the walk
(``allowlist``, ``drift``, ``model_facts``). Imported by the plugin on the first hook that fires."""
