"""The runtime checker, checked against the installed serializers on every oracle sample.

``test_oracle.py`` round-trips one value per row of the rule tables through the real serializers
and compares the outcome with the plugin's verdict on the declared type. Here the same values go
through ``ValueChecker`` (what ``find_problems`` and ``CheckedSaver`` use), each as a whole channel
value, as ``CheckedSaver`` sees it: its verdict must be what the serializer does, under every
profile. A langgraph release that changes what survives a checkpoint turns this test red.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from mypy_lgstate.runtime.values import ValueChecker
from test_oracle import (  # noqa: F401  (module-scoped fixtures, shared with the plugin's oracle)
    _MESSAGE_SUBCLASS,
    ALLOWLIST,
    LOAD_FAILS,
    LOSSY,
    OK,
    PROFILES,
    RAISES,
    SEVERITY,
    UNIMPORTABLE,
    derived_allowlists,
    runtime_verdicts,
    values,
    workspace,
)

_VERDICTS: Final = {
    "lgstate-unserializable": RAISES,
    "lgstate-lossy": LOSSY,
    "lgstate-unimportable": UNIMPORTABLE,
    "lgstate-allowlist": ALLOWLIST,
}

# Where the checker and the serializer disagree on purpose: (sample, profile) -> (serializer,
# checker, why). Each entry pins both sides.
# The plugin's oracle lists these too, and a private attribute at its default, which only a value
# shows: this checker compares it with the default, as the loader's new instance would.
KNOWN_DIFFERENCES: Final[dict[tuple[str, str], tuple[str, str, str]]] = {
    (sample, "json"): (LOAD_FAILS, OK, _MESSAGE_SUBCLASS)
    for sample in ("message_subclass", "sequence_of_message_subclass")
}


def _checker(profile: str, derived: list[tuple[str, ...]]) -> ValueChecker:
    checker = ValueChecker(
        profile="json" if profile == "json" else "msgpack",
        strict_msgpack=profile.startswith("strict"),
    )
    if profile == "strict":
        checker.allow_derived(derived)
    return checker


@pytest.mark.parametrize("profile", list(PROFILES))
def test_checker_agrees_with_the_serializer(
    profile: str,
    values: dict[str, Any],
    runtime_verdicts: dict[str, dict[str, tuple[str, str]]],
    derived_allowlists: dict[str, list[tuple[str, ...]]],
) -> None:
    mismatches = []
    for name, (serializer, detail) in sorted(runtime_verdicts[profile].items()):
        found = _checker(profile, derived_allowlists[name]).check(values[name], whole_channel=True)
        verdicts = [
            (RAISES if "raises TypeError" in f.what else LOSSY) if f.code == "lgstate-dict-key"
            else _VERDICTS[f.code]
            for f in found
        ]
        checker = max(verdicts, key=SEVERITY.index, default=OK)
        known = KNOWN_DIFFERENCES.get((name, profile))
        if known is not None:
            if (serializer, checker) != known[:2]:
                mismatches.append(
                    f"{name}: expected the known difference serializer={known[0]}"
                    f" checker={known[1]} ({known[2]}), got serializer={serializer} checker={checker}"
                )
            continue
        if serializer != checker:
            said = "; ".join(f.message("value") for f in found) or "nothing"
            mismatches.append(
                f"{name}: the serializer says {serializer}{f' ({detail})' if detail else ''},"
                f" the checker says {checker}: {said}"
            )
    assert not mismatches, (
        f"{len(mismatches)} disagreement(s) under profile {profile}:\n" + "\n".join(mismatches)
    )
