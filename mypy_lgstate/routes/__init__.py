"""Where graph state is declared and written, one module per route: schema arguments and node
parameters (``discovery``), the calls on a builder and the nodes they add (``builders``), node
return types and write sites (``sites``), node bodies (``bodies``), the functional API
(``functional``), LangChain agents (``agents``) and their middleware lists (``middleware_lists``),
graphs whose type names no schema (``factories``), and ``Send`` payloads against their node's
input (``sends``). Each turns what mypy and the syntax tree show
into classes, nodes and values for ``checker.checks``, which runs the same checks on all of them."""
