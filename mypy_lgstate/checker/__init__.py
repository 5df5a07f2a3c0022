"""The mypy side: what each hook does (``checks``), the walk of a type by the profile's rules
(``walker``), where and how a finding is reported (``report``, ``errorcodes``), and the checks built
on the walk (``allowlist``, ``drift``, ``model_facts``). Imported by the plugin on the first hook
that fires."""
