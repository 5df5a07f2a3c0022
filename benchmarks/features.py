"""A feature of the realistic and plain layouts: a package of ordinary application code that imports
neither LangGraph nor LangChain (pydantic models, dataclass entities, request/response schemas, a
repository, an HTTP client over httpx, a service, helpers and API handlers), plus, in the realistic
layout, a few modules that import langchain_core but build nothing (tools, documents, prompts,
chat). Writes those modules; layered_app.py draws the features and puts the layouts together.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from gen_common import (
    DATETIME_IMPORT,
    FIELD_WORDS,
    PACKAGE,
    Field,
    FieldType,
    field_default,
    helper_functions,
    import_block,
)

# A feature: ordinary application code, importing neither LangGraph nor LangChain.
FEATURE_MODULES = ("__init__", "models", "entities", "schemas", "repository", "client", "service", "helpers", "api")
FEATURE_KINDS = {
    "__init__": "package",
    "models": "pydantic models",
    "entities": "dataclass entities",
    "schemas": "request/response schemas",
    "repository": "repository",
    "client": "HTTP client",
    "service": "service",
    "helpers": "helpers",
    "api": "API handlers",
}
# What a feature of the realistic layout may add that imports langchain_core but builds nothing:
# handed out in turn until the app's LangChain share is reached.
FEATURE_LANGCHAIN_MODULES = ("tools", "documents", "prompts", "chat")
FEATURE_WORDS = (
    "accounts customers invoices payments products inventory shipments notifications users teams "
    "reports subscriptions coupons analytics vendors contracts warehouses ledgers"
).split()


@dataclasses.dataclass(frozen=True)
class Feature:
    """A package of ordinary application code: models, storage, an HTTP client, a service, an API."""

    name: str  # package name, e.g. "accounts_003"
    prefix: str  # class-name prefix, e.g. "Accounts003"
    word: str  # e.g. "accounts", for URLs and messages
    upstream: tuple[Feature, ...]  # earlier features whose services this one's service calls
    embeds: Feature | None  # an earlier feature whose summary model this one's record holds
    record_fields: tuple[Field, ...]  # extra fields of the pydantic record
    stats_fields: tuple[Field, ...]  # extra fields of the dataclass entity
    langchain_modules: tuple[str, ...]  # which of FEATURE_LANGCHAIN_MODULES it has

    @property
    def module(self) -> str:
        return f"{PACKAGE}.{self.name}"


# Field types of the ordinary models. They are no graph state, so the types a checkpoint would not
# bring back (datetime, set, tuple) are as common here as in real code: the plugin must not report them.
MODEL_TYPES = (
    FieldType("str", '""'),
    FieldType("int", "0"),
    FieldType("float", "0.0"),
    FieldType("bool", "False"),
    FieldType("Optional[str]", "None", annotation_imports=("from typing import Optional",)),
    FieldType("list[str]", "[]", factory="list"),
    FieldType("dict[str, int]", "{}", factory="dict"),
    FieldType("Priority", '"normal"', annotation_imports=("from app.core.types import Priority",)),
    FieldType(
        "Optional[Address]",
        "None",
        annotation_imports=("from typing import Optional", "from app.core.types import Address"),
    ),
    FieldType(
        "Money",
        "zero_money()",
        factory="zero_money",
        annotation_imports=("from app.core.types import Money",),
        value_imports=("from app.utils.money import zero_money",),
    ),
    FieldType(
        "datetime.datetime",
        "utc_now()",
        factory="utc_now",
        annotation_imports=DATETIME_IMPORT,
        value_imports=("from app.utils.dates import utc_now",),
    ),
    FieldType("set[str]", "set()", factory="set"),
    FieldType("tuple[int, int]", "(0, 0)"),
)


def model_fields(rng: random.Random, count: int) -> tuple[Field, ...]:
    return tuple(Field(f"{rng.choice(FIELD_WORDS)}_{n}", rng.choice(MODEL_TYPES)) for n in range(count))


def feature_writers(rng: random.Random) -> dict[str, Callable[[Feature], str]]:
    """The writers of a feature's modules, by module (FEATURE_MODULES and FEATURE_LANGCHAIN_MODULES)."""
    return {
        "__init__": lambda f: f'"""The {f.name} feature: models, storage, client, service and API."""\n',
        "models": _feature_models_module,
        "entities": _feature_entities_module,
        "schemas": _feature_schemas_module,
        "repository": _feature_repository_module,
        "client": _feature_client_module,
        "service": _feature_service_module,
        "helpers": lambda f: _feature_helpers_module(f, rng),
        "api": _feature_api_module,
        "tools": _feature_tools_module,
        "documents": _feature_documents_module,
        "prompts": _feature_prompts_module,
        "chat": _feature_chat_module,
    }


# --- feature modules (no LangGraph, no LangChain) -------------------------------------------------


def _feature_models_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "import datetime",
        "from typing import Optional",
        "from pydantic import BaseModel, Field",
        "from app.core.types import Address, CustomerId, Money, Priority, RecordId, Status",
        "from app.utils.dates import utc_now",
        "from app.utils.money import zero_money",
    ]
    embedded = ""
    if f.embeds is not None:
        imports.append(f"from {f.embeds.module}.models import {f.embeds.prefix}Summary")
        embedded = f"    {f.embeds.name}: Optional[{f.embeds.prefix}Summary] = None\n"
    extra = "".join(f"    {fld.name}: {fld.type.annotation} = {field_default(fld, True)}\n" for fld in f.record_fields)
    return f'''"""Domain models of the {f.name} feature."""

{import_block(imports, annotated=f.record_fields, valued=f.record_fields)}

class {p}Line(BaseModel):
    sku: str
    quantity: int = 1
    unit_price: Money = Field(default_factory=zero_money)


class {p}Summary(BaseModel):
    record_id: RecordId
    name: str
    status: Status


class {p}Record(BaseModel):
    record_id: RecordId
    customer_id: CustomerId
    name: str
    status: Status = "active"
    priority: Priority = "normal"
    address: Optional[Address] = None
    lines: list[{p}Line] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    created_at: datetime.datetime = Field(default_factory=utc_now)
{embedded}{extra}
    def total(self) -> Money:
        cents = sum(line.quantity * line.unit_price["amount_cents"] for line in self.lines)
        return {{"amount_cents": cents, "currency": "EUR"}}

    def summary(self) -> {p}Summary:
        return {p}Summary(record_id=self.record_id, name=self.name, status=self.status)
'''


def _feature_entities_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "import datetime",
        "from dataclasses import dataclass, field",
        "from app.core.types import RecordId",
    ]
    extra = "".join(f"    {fld.name}: {fld.type.annotation} = {field_default(fld, False)}\n" for fld in f.stats_fields)
    return f'''"""Events and counters of the {f.name} feature."""

{import_block(imports, annotated=f.stats_fields, valued=f.stats_fields)}

@dataclass(frozen=True)
class {p}Event:
    kind: str
    record_id: RecordId
    at: datetime.datetime
    details: dict[str, str] = field(default_factory=dict)


@dataclass
class {p}Stats:
    created: int = 0
    updated: int = 0
    other: int = 0
    seen: set[str] = field(default_factory=set)
{extra}
    def record(self, event: {p}Event) -> None:
        self.seen.add(event.record_id)
        if event.kind == "created":
            self.created += 1
        elif event.kind == "updated":
            self.updated += 1
        else:
            self.other += 1
'''


def _feature_schemas_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "from pydantic import BaseModel, Field",
        f"from {f.module}.models import {p}Record",
        "from app.core.types import Money",
    ]
    return f'''"""Request and response bodies of the {f.name} API."""

{import_block(imports)}

class {p}CreateRequest(BaseModel):
    customer_id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=200)
    tags: list[str] = Field(default_factory=list)


class {p}Response(BaseModel):
    record_id: str
    name: str
    status: str
    total: Money

    @classmethod
    def from_record(cls, record: {p}Record) -> "{p}Response":
        return cls(record_id=record.record_id, name=record.name, status=record.status, total=record.total())


class {p}ListResponse(BaseModel):
    items: list[{p}Response]
    total: int
    offset: int
'''


def _feature_repository_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        f"from {f.module}.models import {p}Record",
        "from app.core.errors import NotFoundError",
        "from app.core.types import CustomerId, Page, RecordId",
    ]
    return f'''"""Storage of {f.name} records."""

{import_block(imports)}

class {p}Repository:
    def __init__(self) -> None:
        self._rows: dict[RecordId, {p}Record] = {{}}

    def get(self, record_id: RecordId) -> {p}Record:
        record = self._rows.get(record_id)
        if record is None:
            raise NotFoundError("{f.name}", record_id)
        return record

    def save(self, record: {p}Record) -> None:
        self._rows[record.record_id] = record

    def delete(self, record_id: RecordId) -> bool:
        return self._rows.pop(record_id, None) is not None

    def for_customer(self, customer_id: CustomerId) -> list[{p}Record]:
        return [row for row in self._rows.values() if row.customer_id == customer_id]

    def page(self, offset: int = 0, limit: int = 50) -> Page[{p}Record]:
        rows = sorted(self._rows.values(), key=lambda row: row.created_at)
        return Page(items=rows[offset : offset + limit], total=len(rows), offset=offset)
'''


def _feature_client_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        f"from {f.module}.models import {p}Record",
        "from app.core.http import JsonClient",
        "from app.core.types import RecordId",
        "from app.utils.retry import retry",
    ]
    return f'''"""Client of the upstream {f.word} API."""

{import_block(imports)}

class {p}Client(JsonClient):
    @retry(attempts=3)
    def fetch(self, record_id: RecordId) -> {p}Record:
        return {p}Record.model_validate(self.get_json(f"/{f.word}/{{record_id}}"))

    def search(self, query: str, limit: int = 20) -> list[{p}Record]:
        data = self.get_json("/{f.word}", params={{"q": query, "limit": str(limit)}})
        return [{p}Record.model_validate(item) for item in data]

    def push(self, record: {p}Record) -> None:
        self.post_json("/{f.word}", record.model_dump(mode="json"))
'''


def _feature_service_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "import functools",
        f"from {f.module}.client import {p}Client",
        f"from {f.module}.entities import {p}Event, {p}Stats",
        f"from {f.module}.models import {p}Line, {p}Record",
        f"from {f.module}.repository import {p}Repository",
        "from app.core.config import Settings, get_settings",
        "from app.core.log import get_logger",
        "from app.core.types import CustomerId, Money, Page, RecordId",
        "from app.utils.dates import utc_now",
        "from app.utils.ids import new_record_id",
        "from app.utils.money import add_money",
        "from app.utils.text import normalize_tags",
        "from app.utils.validation import require_non_empty",
    ]
    params = "".join(f", {u.name}: {u.prefix}Service" for u in f.upstream)
    assigns = "".join(f"        self._{u.name} = {u.name}\n" for u in f.upstream)
    describe = "".join(
        f"        parts.append(self._{u.name}.describe_customer(record.customer_id))\n" for u in f.upstream
    )
    arguments = "".join(f", {u.name}_service()" for u in f.upstream)
    for u in f.upstream:
        imports.append(f"from {u.module}.service import {u.prefix}Service, default_service as {u.name}_service")
    return f'''"""Business logic of the {f.name} feature."""

{import_block(imports)}
logger = get_logger(__name__)


class {p}Service:
    def __init__(self, repository: {p}Repository, client: {p}Client, settings: Settings{params}) -> None:
        self._repository = repository
        self._client = client
        self._settings = settings
{assigns}        self.stats = {p}Stats()

    def create(self, customer_id: CustomerId, name: str, tags: list[str]) -> {p}Record:
        record = {p}Record(
            record_id=new_record_id("{f.word[:3]}"),
            customer_id=customer_id,
            name=require_non_empty("name", name),
            tags=normalize_tags(tags),
        )
        self._repository.save(record)
        self._emit("created", record.record_id)
        return record

    def get(self, record_id: RecordId) -> {p}Record:
        return self._repository.get(record_id)

    def page(self, offset: int, limit: int) -> Page[{p}Record]:
        return self._repository.page(offset, min(limit, self._settings.page_size))

    def refresh(self, record_id: RecordId) -> {p}Record:
        record = self._client.fetch(record_id)
        self._repository.save(record)
        self._emit("updated", record_id)
        return record

    def add_line(self, record_id: RecordId, sku: str, quantity: int, unit_price: Money) -> Money:
        record = self.get(record_id)
        record.lines.append({p}Line(sku=sku, quantity=quantity, unit_price=unit_price))
        return record.total()

    def balance(self, customer_id: CustomerId) -> Money:
        total: Money = {{"amount_cents": 0, "currency": self._settings.currency}}
        for record in self._repository.for_customer(customer_id):
            total = add_money(total, record.total())
        return total

    def describe(self, record_id: RecordId) -> str:
        record = self.get(record_id)
        parts = [f"{{record.name}} ({{record.status}})"]
{describe}        return "; ".join(parts)

    def describe_customer(self, customer_id: CustomerId) -> str:
        records = self._repository.for_customer(customer_id)
        return f"{{len(records)}} {f.word} records"

    def _emit(self, kind: str, record_id: RecordId) -> None:
        self.stats.record({p}Event(kind=kind, record_id=record_id, at=utc_now()))
        logger.info("{f.name} %s %s", kind, record_id)


@functools.cache
def default_service() -> {p}Service:
    settings = get_settings()
    return {p}Service({p}Repository(), {p}Client(settings), settings{arguments})
'''


def _feature_helpers_module(f: Feature, rng: random.Random) -> str:
    p = f.prefix
    imports = [
        f"from {f.module}.models import {p}Record",
        "from app.core.types import Status",
        "from app.utils.collections import group_by",
    ]
    return f'''"""Helpers of the {f.name} feature."""

{import_block(imports)}

def active(records: list[{p}Record]) -> list[{p}Record]:
    return [record for record in records if record.status == "active"]


def count_by_status(records: list[{p}Record]) -> dict[Status, int]:
    return {{status: len(group) for status, group in group_by(records, lambda record: record.status).items()}}
{helper_functions(rng, f.name)}'''


def _feature_api_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        f"from {f.module}.schemas import {p}CreateRequest, {p}ListResponse, {p}Response",
        f"from {f.module}.service import {p}Service",
        "from app.core.errors import NotFoundError",
        "from app.core.types import CustomerId, RecordId",
    ]
    return f'''"""HTTP handlers of the {f.name} feature (the web framework calls these)."""

{import_block(imports)}

def create(service: {p}Service, request: {p}CreateRequest) -> {p}Response:
    record = service.create(CustomerId(request.customer_id), request.name, request.tags)
    return {p}Response.from_record(record)


def read(service: {p}Service, record_id: str) -> {p}Response | None:
    try:
        record = service.get(RecordId(record_id))
    except NotFoundError:
        return None
    return {p}Response.from_record(record)


def list_page(service: {p}Service, offset: int = 0, limit: int = 20) -> {p}ListResponse:
    page = service.page(offset, limit)
    items = [{p}Response.from_record(record) for record in page.items]
    return {p}ListResponse(items=items, total=page.total, offset=page.offset)
'''


# --- feature modules that import langchain_core (realistic layout) --------------------------------


def _feature_tools_module(f: Feature) -> str:
    imports = [
        "from langchain_core.tools import BaseTool, tool",
        f"from {f.module}.service import default_service",
        "from app.core.types import CustomerId, RecordId",
        "from app.utils.money import format_money",
    ]
    return f'''"""LangChain tools over the {f.name} service, for the agents."""

{import_block(imports)}

@tool
def describe_{f.name}(record_id: str) -> str:
    """Describe one {f.word} record."""
    return default_service().describe(RecordId(record_id))


@tool
def balance_{f.name}(customer_id: str) -> str:
    """The customer's {f.word} balance."""
    return format_money(default_service().balance(CustomerId(customer_id)))


TOOLS: list[BaseTool] = [describe_{f.name}, balance_{f.name}]
'''


def _feature_documents_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "from langchain_core.documents import Document",
        f"from {f.module}.models import {p}Record",
    ]
    return f'''"""{f.name} records as LangChain documents, for retrieval."""

{import_block(imports)}

def to_document(record: {p}Record) -> Document:
    text = f"{{record.name}}: {{', '.join(record.tags)}}"
    return Document(page_content=text, metadata={{"record_id": record.record_id, "source": "{f.name}"}})


def to_documents(records: list[{p}Record]) -> list[Document]:
    return [to_document(record) for record in records]


def record_ids(documents: list[Document]) -> list[str]:
    return [str(document.metadata["record_id"]) for document in documents if "record_id" in document.metadata]
'''


def _feature_prompts_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "from langchain_core.messages import BaseMessage",
        "from langchain_core.prompts import ChatPromptTemplate",
        f"from {f.module}.models import {p}Record",
    ]
    return f'''"""Prompts about {f.name} records."""

{import_block(imports)}

SUMMARY_PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "You summarize {f.word} records for support agents."),
        ("human", "Record: {{record}}\\n\\nQuestion: {{question}}"),
    ]
)


def summary_messages(record: {p}Record, question: str) -> list[BaseMessage]:
    return SUMMARY_PROMPT.format_messages(record=record.model_dump_json(), question=question)
'''


def _feature_chat_module(f: Feature) -> str:
    p = f.prefix
    imports = [
        "from langchain_core.messages import AIMessage, HumanMessage",
        "from pydantic import BaseModel, ValidationError",
        f"from {f.module}.models import {p}Summary",
    ]
    return f'''"""Chat messages about {f.name} records, and the model's structured replies."""

{import_block(imports)}

class {p}Verdict(BaseModel):
    ok: bool
    reason: str = ""


def ask_about(summary: {p}Summary, question: str) -> HumanMessage:
    return HumanMessage(content=f"{{question}}\\n\\n{{summary.model_dump_json()}}")


def parse_verdict(message: AIMessage) -> {p}Verdict | None:
    content = message.content
    if not isinstance(content, str):
        return None
    try:
        return {p}Verdict.model_validate_json(content)
    except ValidationError:
        return None
'''
