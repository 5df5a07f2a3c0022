"""A support-ticket triage agent built with LangGraph: the example application of mypy-lgstate.

It is written with a few mistakes that LangGraph users make every day, each marked ``# MISTAKE:``.
Run ``mypy --config-file examples/mypy.ini examples/`` from the project root to see the plugin find
them, and ``examples/mypy-msgpack.ini`` for the msgpack profile.
"""
