"""The bundled example application shows exactly the diagnostics the README promises."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_mypy(config: str, cache: Path) -> str:
    # A cold run (--no-incremental); mypy still writes a cache: into the test's own directory, not
    # the checkout's .mypy_cache.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(cache),
         "--config-file", f"examples/{config}", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_json_profile_output_matches_the_recorded_output(tmp_path: Path) -> None:
    expected = (EXAMPLES / "expected-json.txt").read_text()
    assert run_mypy("mypy.ini", tmp_path / "cache") == expected


def test_msgpack_profile_output_matches_the_recorded_output(tmp_path: Path) -> None:
    expected = (EXAMPLES / "expected-msgpack.txt").read_text()
    assert run_mypy("mypy-msgpack.ini", tmp_path / "cache") == expected


def test_readme_quotes_the_summary_line() -> None:
    summary = (EXAMPLES / "expected-json.txt").read_text().splitlines()[-1]
    assert summary in (ROOT / "README.md").read_text()


def test_example_shows_node_and_write_site_diagnostics() -> None:
    output = (EXAMPLES / "expected-json.txt").read_text()
    for code in ("lgstate-unknown-key", "lgstate-unserializable", "lgstate-lossy", "lgstate-channel-type"):
        assert f"[{code}]" in output
    assert "interrupt.value" in output and "Command.update" in output


def test_examples_readme_lists_the_codes_each_profile_prints() -> None:
    """Each row of the table of mistakes names the code each profile reports (or "fine"): together,
    the codes of the recorded output, no more and no fewer."""
    readme = (EXAMPLES / "README.md").read_text()
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in readme.splitlines()
        if line.startswith("| ") and "`" in line
    ]
    for column, profile in ((2, "json"), (3, "msgpack")):
        expected = (EXAMPLES / f"expected-{profile}.txt").read_text()
        printed = Counter(re.findall(r"\[(lgstate-[a-z-]+)\]$", expected, re.MULTILINE))
        listed = Counter(code for row in rows for code in re.findall(r"`(lgstate-[a-z-]+)`", row[column]))
        assert listed == printed, profile
        errors = sum(printed.values())
        assert f"{profile} profile: {errors} errors" in readme
