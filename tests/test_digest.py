"""The digest of the plugin's source, which mypy records as the plugin's version: an edit to any
of its files must change it (mypy would otherwise replay errors cached by the old code), and a
warm run reads it back from its memo in the cache directory instead of checksumming the source."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mypy_lgstate.core.digest import source_digest


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "package"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("A = 1\n")
    (package / "sub" / "rules.py").write_text("B = 2\n")
    (package / "sub" / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\0")
    _settle(package)
    return package


def _settle(package: Path) -> None:
    """Date every file a minute back: a memo is only kept for files not just written."""
    for path in package.rglob("*"):
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 60 * 10**9))


def test_an_edit_a_new_file_or_a_rename_changes_the_digest(tmp_path: Path) -> None:
    package = _package(tmp_path)
    digests = {source_digest(str(package))}
    (package / "sub" / "rules.py").write_text("B = 3\n")  # same size
    digests.add(source_digest(str(package)))
    (package / "sub" / "extra.py").write_text("")
    digests.add(source_digest(str(package)))
    (package / "sub" / "extra.py").rename(package / "sub" / "other.py")
    digests.add(source_digest(str(package)))
    (package / "sub" / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\1")  # not source
    digests.add(source_digest(str(package)))
    assert len(digests) == 4


def test_the_memo_is_read_back_until_a_file_changes(tmp_path: Path) -> None:
    package = _package(tmp_path)
    memo = tmp_path / "memo.json"
    digest = source_digest(str(package), str(memo))
    assert digest == source_digest(str(package))
    # Read back, not computed: a planted digest in the memo is what comes out.
    planted = json.loads(memo.read_text())
    memo.write_text(json.dumps({**planted, "digest": "planted"}))
    assert source_digest(str(package), str(memo)) == "planted"
    # An edited file has a new stamp: computed again, and remembered.
    (package / "__init__.py").write_text("A = 2\n")
    _settle(package)
    edited = source_digest(str(package), str(memo))
    assert edited not in (digest, "planted")
    assert json.loads(memo.read_text())["digest"] == edited


def test_a_file_written_just_now_is_never_remembered(tmp_path: Path) -> None:
    package = _package(tmp_path)
    memo = tmp_path / "memo.json"
    (package / "__init__.py").write_text("A = 2\n")  # its stamp may not change at a second edit
    source_digest(str(package), str(memo))
    assert not memo.exists()


def test_a_broken_or_unwritable_memo_is_no_error(tmp_path: Path) -> None:
    package = _package(tmp_path)
    expected = source_digest(str(package))
    memo = tmp_path / "memo.json"
    memo.write_text("{not json")
    assert source_digest(str(package), str(memo)) == expected
    assert source_digest(str(package), str(tmp_path / "missing" / "memo.json")) == expected
