"""The plugin's error codes (one page each in docs/errors/), created at import time so mypy accepts
them in ``disable_error_code`` / ``enable_error_code`` and ``# type: ignore[...]``. The words of
each rule's messages are in ``core/`` (``messages``, ``write_messages``, ``drift_messages``), shared
with the runtime checker and the audit; this module holds only what mypy needs to know of the codes."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

_CATEGORY: Final = "LangGraph state"

UNSERIALIZABLE: Final = ErrorCode(
    "lgstate-unserializable",
    "The serializer raises TypeError when the checkpoint is written",
    _CATEGORY,
)
LOSSY: Final = ErrorCode(
    "lgstate-lossy", "The value is written but comes back as a different type or value", _CATEGORY
)
DICT_KEY: Final = ErrorCode(
    "lgstate-dict-key", "A dict key type that the serializer changes or rejects", _CATEGORY
)
UNIMPORTABLE: Final = ErrorCode(
    "lgstate-unimportable",
    "A class the checkpoint loader cannot re-import: it comes back as a plain dict",
    _CATEGORY,
)
ALLOWLIST: Final = ErrorCode(
    "lgstate-allowlist",
    "Strict msgpack: a user class missing from the effective allowlist comes back as a dict",
    _CATEGORY,
)
UNKNOWN_KEY: Final = ErrorCode(
    "lgstate-unknown-key",
    "An update writes a key that is not a channel of the graph: LangGraph drops it",
    _CATEGORY,
)
DRIFT: Final = ErrorCode(
    "lgstate-drift",
    "A checkpointed class changed since the lock file: old checkpoints load wrong or incomplete state",
    _CATEGORY,
)
CHANNEL_TYPE: Final = ErrorCode(
    "lgstate-channel-type",
    "An update writes a value its channel does not accept, or a Send payload one its node's input"
    " does not declare",
    _CATEGORY,
)
# Off by default: on real applications most nodes are declared ``-> dict``, and this code asks for
# annotations rather than finding bugs. ``lgstate report`` and the runtime checker cover those nodes.
UNTYPED_NODE: Final = ErrorCode(
    "lgstate-untyped-node",
    "A node's return type is too loose to check",
    _CATEGORY,
    default_enabled=False,
)
ANY: Final = ErrorCode(
    "lgstate-any",
    "An Any / object value in graph state cannot be verified",
    _CATEGORY,
    default_enabled=False,
)
