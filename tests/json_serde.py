"""A checkpoint serializer that writes strict JSON: what the json profile stands for, through a real
saver's own ``serde``. Shared by the run-time tests of json claims (not a test module)."""

from __future__ import annotations

import json
from typing import Any


class JsonSerde:
    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return "json", json.dumps(obj).encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return json.loads(data[1])
