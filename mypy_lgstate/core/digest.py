"""Short digests that tell one version of some bytes from another (options, a lock file, the
plugin's source): what mypy compares to know whether its cache still holds.

They detect changes, nothing more, so a checksum suffices. ``hashlib`` is not used on purpose: a warm
mypy run with nothing to recheck never imports it, and importing it (OpenSSL's set-up) plus hashing
the plugin's source cost such a run more than all of the plugin's other work.
"""

from __future__ import annotations

import os
import zlib


def short_digest(data: bytes) -> str:
    """Eight hex digits: a CRC-32 of ``data``."""
    return f"{zlib.crc32(data):08x}"


def source_digest(package: str) -> str:
    """Eight hex digits that change when a ``.py`` file under the directory ``package`` is added,
    removed, renamed or edited: a CRC-32 of each file's path and content, in a fixed order. Every
    mypy start computes it, warm runs included, so the files are checksummed one by one as they are
    read, never copied into one buffer, and ``__pycache__`` is not listed."""
    crc = 0
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                crc = zlib.crc32(path[len(package) :].encode(), crc)
                with open(path, "rb") as file:
                    crc = zlib.crc32(file.read(), crc)
    return f"{crc:08x}"
