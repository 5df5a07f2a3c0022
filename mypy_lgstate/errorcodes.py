"""The plugin's error codes (SPEC section 5), created at import time so mypy accepts them in
``disable_error_code`` / ``enable_error_code`` and ``# type: ignore[...]``."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

# The builders that the runtime checker shares live in a module that does not import mypy.
from mypy_lgstate.messages import allowlist_message as allowlist_message
from mypy_lgstate.messages import problem_message as problem_message

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


# Messages -------------------------------------------------------------------------------------
# Every message names the path inside the state, the offending type, what happens at run time
# under the active profile, and the fix.


def unknown_key_message(node: str, key: str, update_type: str, state: str) -> str:
    return (
        f'Node "{node}" returns key "{key}" (in "{update_type}"), which is not a channel of graph '
        f'state "{state}": LangGraph drops it silently. Fix: add "{key}" to "{state}", or remove it'
        " from the update type"
    )


def untyped_node_message(node: str, return_type: str | None) -> str:
    declared = f'returns "{return_type}"' if return_type else "has no return type"
    return (
        f'Node "{node}" {declared}, so the values it writes to the checkpoint cannot be checked. '
        "Fix: declare a TypedDict of the keys it updates as its return type; mypy then checks every"
        " returned dict against it"
    )
