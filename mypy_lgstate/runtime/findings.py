"""What the runtime checker finds: a problem (where it is, the plugin's error code, the message), a
finding before it is worded under its root path, and the error ``CheckedSaver`` raises with them."""

from __future__ import annotations

from typing import Final, NamedTuple

from mypy_lgstate.core.messages import problem_message

# The plugin's error codes (``checker/errorcodes.py`` holds them as mypy ``ErrorCode`` objects).
UNSERIALIZABLE: Final = "lgstate-unserializable"
LOSSY: Final = "lgstate-lossy"
DICT_KEY: Final = "lgstate-dict-key"
UNIMPORTABLE: Final = "lgstate-unimportable"
ALLOWLIST: Final = "lgstate-allowlist"


class Problem(NamedTuple):
    """One value the serializer gets wrong: where it is, the plugin's error code, and the message."""

    path: str
    code: str
    message: str


class Finding(NamedTuple):
    """A problem before it is worded: the saver words it again under its own root path."""

    path: str
    code: str
    type_name: str
    what: str
    fix: str

    def message(self, root: str) -> str:
        return problem_message(root + self.path, self.type_name, self.what, self.fix, None)


class CheckpointValueError(TypeError):
    """A value that will not survive the checkpoint, found before the serializer saw it.

    A ``TypeError``, as the serializer's own failure is: code that handles one handles the other.
    """

    def __init__(
        self,
        problems: list[Problem],
        *,
        channel: str | None,
        node: str | None,
        source: str,
        target: str,
        summary: str | None = None,
    ) -> None:
        self.problems = problems
        self.channel = channel  # None for a value the serializer did not rebuild at a load
        self.node = node  # the node that wrote the value, when LangGraph tells
        lines = [summary or f"{source} wrote {target} that will not survive the checkpoint:"]
        lines += [f"  {problem.message}  [{problem.code}]" for problem in problems]
        super().__init__("\n".join(lines))
