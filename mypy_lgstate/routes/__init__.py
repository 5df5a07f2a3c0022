"""What the code declares and writes, read from the syntax tree and the declared types mypy keeps:
one module per route to graph state (``discovery``: schema arguments and node parameters;
``builders`` and ``builder_calls``: the calls on a builder and the nodes they add; ``sites``: node
return types and write sites; ``bodies``: node bodies; ``functional``: the functional API;
``agents`` and ``middleware_lists``: LangChain agents; ``factories``: graphs whose type names no
schema; ``summaries``, ``exported``, ``reach`` and ``summary_values``: what crosses functions and
modules), what schema classes
declare (``schemas``, ``channel_specs``, ``model_facts``), and what the checks saw
(``coverage``, ``node_status``). The routes read; they never judge a type nor report: the checks
(``checker/``) do, on what the routes found. Nothing here imports the checks.
"""
