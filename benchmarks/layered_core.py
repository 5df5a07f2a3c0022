"""The shared modules of the realistic and plain layouts (see generate.py): ``app/core`` (types,
config, errors, logging, an HTTP client base) and ``app/utils`` (text, money, dates, ids,
collections, retry, validation), plus the ``app/core/records`` the realistic layout's LangGraph
domains import (a re-export of the shared types). The texts are fixed: no module here draws from
the random generator.
"""

from __future__ import annotations


def types_module() -> str:
    return '''"""Types shared by the whole application: identifiers, statuses, money, addresses, pages.

Nearly every module depends on this one, directly or through the models.
"""

from dataclasses import dataclass
from typing import Generic, Literal, NewType, TypeVar

from typing_extensions import TypedDict

CustomerId = NewType("CustomerId", str)
RecordId = NewType("RecordId", str)
Priority = Literal["low", "normal", "high"]
Status = Literal["active", "suspended", "closed"]

T = TypeVar("T")


class Money(TypedDict):
    amount_cents: int
    currency: str


class Address(TypedDict):
    street: str
    city: str
    postcode: str


class AuditEntry(TypedDict):
    step: str
    ticket_id: str
    ok: bool


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing."""

    items: list[T]
    total: int
    offset: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.items) < self.total
'''


def shared_records_module() -> str:
    return '''"""The records the graph states use: the application's shared types."""

from app.core.types import Address, AuditEntry, Money, Priority

__all__ = ["Address", "AuditEntry", "Money", "Priority"]
'''


def config_module() -> str:
    return '''"""Application settings, read once from the environment."""

import functools
import os

from pydantic import BaseModel, Field

from app.core.types import Priority


class Settings(BaseModel):
    environment: str = "development"
    api_base_url: str = "http://localhost:8000"
    timeout_seconds: float = 10.0
    currency: str = "EUR"
    default_priority: Priority = "normal"
    page_size: int = 50
    feature_flags: dict[str, bool] = Field(default_factory=dict)

    def enabled(self, flag: str) -> bool:
        return self.feature_flags.get(flag, False)


@functools.cache
def get_settings() -> Settings:
    return Settings(
        environment=os.environ.get("APP_ENV", "development"),
        api_base_url=os.environ.get("APP_API_URL", "http://localhost:8000"),
    )
'''


def errors_module() -> str:
    return '''"""The application's exceptions."""


class AppError(Exception):
    """Base class of every error the application raises on purpose."""


class NotFoundError(AppError):
    def __init__(self, kind: str, key: str) -> None:
        super().__init__(f"{kind} {key} not found")
        self.kind = kind
        self.key = key


class ValidationError(AppError):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


class UpstreamError(AppError):
    def __init__(self, url: str, status: int) -> None:
        super().__init__(f"{url} answered {status}")
        self.status = status
'''


def log_module() -> str:
    return '''"""Logging helpers."""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)


@contextmanager
def timed(logger: logging.Logger, label: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        logger.debug("%s took %.3f s", label, time.perf_counter() - start)
'''


def http_module() -> str:
    return '''"""A small JSON client over httpx, which the features' API clients extend."""

from typing import Any

import httpx

from app.core.config import Settings
from app.core.errors import UpstreamError


class JsonClient:
    def __init__(self, settings: Settings, client: httpx.Client | None = None) -> None:
        self._client = client or httpx.Client(base_url=settings.api_base_url, timeout=settings.timeout_seconds)

    def get_json(self, path: str, params: dict[str, str] | None = None) -> Any:
        return self._decode(self._client.get(path, params=params))

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        return self._decode(self._client.post(path, json=body))

    def _decode(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise UpstreamError(str(response.url), response.status_code)
        return response.json()

    def close(self) -> None:
        self._client.close()
'''


def text_utils_module() -> str:
    return '''"""Text helpers."""

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NON_WORD.sub("-", ascii_text.lower()).strip("-")


def truncate(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def normalize_tags(tags: list[str]) -> list[str]:
    return sorted({slugify(tag) for tag in tags if tag.strip()})
'''


def money_utils_module() -> str:
    return '''"""Arithmetic on Money."""

from app.core.types import Money


def zero_money(currency: str = "EUR") -> Money:
    return {"amount_cents": 0, "currency": currency}


def add_money(left: Money, right: Money) -> Money:
    if left["currency"] != right["currency"]:
        raise ValueError(f"cannot add {left['currency']} to {right['currency']}")
    return {"amount_cents": left["amount_cents"] + right["amount_cents"], "currency": left["currency"]}


def format_money(money: Money) -> str:
    return f"{money['amount_cents'] / 100:.2f} {money['currency']}"
'''


def dates_utils_module() -> str:
    return '''"""Date helpers."""

import datetime


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def days_between(start: datetime.datetime, end: datetime.datetime) -> int:
    return (end - start).days


def parse_iso(text: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
'''


def ids_utils_module() -> str:
    return '''"""New identifiers."""

import uuid

from app.core.types import CustomerId, RecordId


def new_record_id(prefix: str) -> RecordId:
    return RecordId(f"{prefix}_{uuid.uuid4().hex[:12]}")


def new_customer_id() -> CustomerId:
    return CustomerId(f"cus_{uuid.uuid4().hex[:12]}")
'''


def collections_utils_module() -> str:
    return '''"""Small generic helpers over collections."""

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
K = TypeVar("K")


def chunked(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def group_by(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    groups: dict[K, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def first(items: Iterable[T], default: T) -> T:
    for item in items:
        return item
    return default
'''


def retry_utils_module() -> str:
    return '''"""Retrying calls to flaky upstream services."""

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from app.core.errors import UpstreamError

P = ParamSpec("P")
R = TypeVar("R")


def retry(attempts: int = 3, delay: float = 0.1) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            for attempt in range(attempts - 1):
                try:
                    return function(*args, **kwargs)
                except UpstreamError:
                    time.sleep(delay * (attempt + 1))
            return function(*args, **kwargs)

        return wrapper

    return decorate
'''


def validation_utils_module() -> str:
    return '''"""Checks of input values."""

import re

from app.core.errors import ValidationError

_EMAIL = re.compile(r"^[^@\\s]+@[^@\\s]+\\.[a-z]+$")


def require_email(value: str) -> str:
    if not _EMAIL.match(value):
        raise ValidationError("email", "not an address")
    return value.lower()


def require_non_empty(field: str, value: str) -> str:
    if not value.strip():
        raise ValidationError(field, "must not be empty")
    return value.strip()


def require_range(field: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValidationError(field, f"must be between {low} and {high}")
    return value
'''
