"""The wording of the problems both halves report: the mypy plugin and the runtime checker.

This module imports nothing from mypy, so that ``mypy_lgstate.runtime`` can use it in a test run.
Every message names the path inside the state, the offending type, what happens at run time under
the active profile, and the fix.
"""

from __future__ import annotations

from typing import Final


def problem_message(path: str, type_name: str, what: str, fix: str, where: str | None) -> str:
    """``where`` names the declaring class and file when the problem is reported away from it."""
    located = f"{path} ({where})" if where else path
    return f'{located} is "{type_name}": {what}. Fix: {fix}'


_STRICT_PAYLOAD: Final = {
    "Enum": ("Enum", "the member's value"),
    "SecretStr": ("secret", "the bare secret value"),
    "dataclass": ("dataclass", "a plain dict"),
    "NamedTuple": ("NamedTuple", "a plain dict"),
    "pydantic model": ("pydantic model", "a plain dict"),
    "subclass": ("subclass", "its constructor arguments"),
}


def allowlist_what_fix(kind: str, fullname: str) -> tuple[str, str]:
    """What strict msgpack does with a class missing from the allowlist, and the fix."""
    noun, payload = _STRICT_PAYLOAD.get(kind, (kind, "a plain dict"))
    module, _, name = fullname.rpartition(".")
    what = (
        f"this {noun} is not on the strict msgpack allowlist, so the checkpoint loader returns"
        f" {payload} instead"
    )
    fix = (
        f'pass ("{module}", "{name}") in the serializer\'s allowed_msgpack_modules, and add'
        f' "{fullname}" to the plugin\'s allowed_msgpack_modules'
    )
    return what, fix


def allowlist_message(
    path: str, type_name: str, kind: str, fullname: str, where: str | None
) -> str:
    what, fix = allowlist_what_fix(kind, fullname)
    return problem_message(path, type_name, what, fix, where)
