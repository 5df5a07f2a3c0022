"""Short digests that tell one version of some bytes from another (options, a lock file, the
plugin's source): what mypy compares to know whether its cache still holds.

They detect changes, nothing more, so a checksum suffices. ``hashlib`` is not used on purpose: a warm
mypy run with nothing to recheck never imports it, and importing it (OpenSSL's set-up) plus hashing
the plugin's source cost such a run more than all of the plugin's other work.
"""

from __future__ import annotations

import zlib


def short_digest(data: bytes) -> str:
    """Eight hex digits: a CRC-32 of ``data``."""
    return f"{zlib.crc32(data):08x}"
