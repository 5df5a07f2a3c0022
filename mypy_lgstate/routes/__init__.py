"""Where graph state is declared and written, one module per route: schema arguments and node
parameters (``discovery``), the other calls on a builder (``builders``), node return types and
write sites (``sites``), node bodies (``bodies``), the functional API (``functional``) and
LangChain agents (``agents``). Each turns what mypy and the syntax tree show into classes and values
for ``checker.checks``."""
