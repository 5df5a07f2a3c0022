"""``lgstate audit``: will the threads already stored resume on the code about to be deployed?

Every thread's latest checkpoint (or all of them) is read from the store, read-only, with the
serializer the application runs, and each stored channel value is compared with the type today's
graph declares for it (docs/audit.md). The modules: ``stores`` (opening a store, the serializer),
``graphs`` (today's graph), ``compiler`` and ``conformance`` (a declared type compiled once, and a
value against it), ``stored`` (what the bytes say when a class came back as something else),
``checkpoints`` (one checkpoint), ``wording`` (the messages, in the phrases of
``core/drift_messages.py``), ``problems`` (findings grouped by problem), ``run`` (batches,
processes, progress) and ``formats``. Importing this package imports neither mypy nor LangGraph;
running an audit imports LangGraph.
"""

from __future__ import annotations

from mypy_lgstate.runtime.audit.graphs import AuditInputError

__all__ = ["AuditInputError"]
