"""Short digests that tell one version of some bytes from another (options, a lock file, the
plugin's source): what mypy compares to know whether its cache still holds.

They detect changes, nothing more, so a checksum suffices. ``hashlib`` is not used on purpose: a warm
mypy run with nothing to recheck never imports it, and importing it (OpenSSL's set-up) plus hashing
the plugin's source cost such a run more than all of the plugin's other work.
"""

from __future__ import annotations

import json
import os
import time
import zlib

# A source file changed this recently may change again within the file system's timestamp
# resolution (a few milliseconds) without a new stamp: its digest is computed, never remembered.
_SETTLED_SECONDS = 2.0


def short_digest(data: bytes) -> str:
    """Eight hex digits: a CRC-32 of ``data``."""
    return f"{zlib.crc32(data):08x}"


def source_digest(package: str, memo: str | None = None) -> str:
    """Eight hex digits that change when a ``.py`` file under the directory ``package`` is added,
    removed, renamed or edited: a CRC-32 of each file's path and content, in a fixed order.

    Every mypy start needs it, warm runs included, where checksumming the source cost more than
    the plugin's other work. ``memo`` (a file in mypy's cache directory) keeps the digest with each
    file's size and modification time: while none of them changes, the digest is read back instead
    of computed. A checkout that touches every file computes it again, with the same result."""
    files = _source_files(package)
    stamps = [[relative, stat.st_mtime_ns, stat.st_size] for relative, stat in files]
    if memo is not None:
        try:
            with open(memo, encoding="utf-8") as file:
                known = json.load(file)
            if known["files"] == stamps:
                return str(known["digest"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, unreadable or from another layout: computed below
    crc = 0
    for relative, _ in files:
        crc = zlib.crc32(relative.encode(), crc)
        with open(os.path.join(package, relative), "rb") as file:
            crc = zlib.crc32(file.read(), crc)
    digest = f"{crc:08x}"
    settled = time.time_ns() - int(_SETTLED_SECONDS * 1e9)
    if memo is not None and all(stat.st_mtime_ns < settled for _, stat in files):
        _write_memo(memo, {"digest": digest, "files": stamps})
    return digest


def _source_files(package: str) -> list[tuple[str, os.stat_result]]:
    """The ``.py`` files under ``package`` (``__pycache__`` left out), by their path relative to
    it, sorted, with their ``stat``."""
    found: list[tuple[str, os.stat_result]] = []
    pending = [""]
    while pending:
        folder = pending.pop()
        with os.scandir(os.path.join(package, folder)) as entries:
            for entry in entries:
                relative = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        pending.append(relative)
                elif entry.name.endswith(".py"):
                    found.append((relative, entry.stat()))
    found.sort(key=lambda item: item[0])
    return found


def _write_memo(memo: str, data: object) -> None:
    """Write ``memo`` whole or not at all (parallel workers may write it at once); a cache
    directory that cannot be written is no error."""
    temporary = f"{memo}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, memo)
    except OSError:
        try:
            os.remove(temporary)
        except OSError:
            pass
