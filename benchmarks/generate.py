"""Generate a synthetic LangGraph application for benchmarking mypy-lgstate.

    python benchmarks/generate.py OUTDIR --modules 500 [--seed 0]

writes the package OUTDIR/app with at least ``--modules`` modules. The app is a set of "domains"
(app/<domain>/...), each with TypedDict, pydantic and dataclass states, sync and async nodes in
modules of their own (``nodes/``: typed updates, and ``-> dict[str, Any]`` nodes whose updates are
read from their bodies), ``Command[Literal[...]]`` / ``interrupt`` / ``Send`` sites and three
compiled graphs registering those nodes (``graph.py``), a functional-API
workflow, a LangChain agent with middleware, and a graph built by a ``StateGraph`` subclass around a
helper schema, plus a few shared core modules. Domains import states, helpers and graphs from earlier domains, so the import
graph is a realistic DAG rather than isolated islands.

The code type-checks with plain ``mypy --strict`` without errors. About one state field in thirty
has a type that does not survive a checkpoint round trip (datetime, tuple, set), so that the plugin
has something to report. The output is fully determined by ``--modules`` and ``--seed``.

Standard library only: ``run.py`` imports this module and calls :func:`generate`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import shutil
from pathlib import Path

PACKAGE = "app"
# Every domain package has exactly these modules; __init__ counts as a module too.
DOMAIN_MODULES = (
    "__init__",
    "state",
    "model_state",
    "dc_state",
    "nodes/__init__",
    "nodes/intake",
    "nodes/review",
    "nodes/pricing",
    "nodes/jobs",
    "nodes/bookkeeping",
    "routing",
    "graph",
    "workflow",
    "agent",
)
# One state field in BAD_FIELD_EVERY gets a checkpoint-unsafe type (a few percent, as the
# benchmark needs); counting instead of sampling guarantees even small apps get some.
BAD_FIELD_EVERY = 30
DOMAIN_WORDS = "billing support orders search shipping returns catalog pricing loyalty fraud onboarding reviews".split()
FIELD_WORDS = "title owner region channel score summary labels counts locale source status weight notes budget".split()

# Top-level module names the generated code imports from outside the stdlib, for grouping imports.
THIRD_PARTY = {"langchain", "langchain_core", "langgraph", "pydantic", "typing_extensions"}


@dataclasses.dataclass(frozen=True)
class FieldType:
    """A type a generated state field can have, with what the generator needs to use it."""

    annotation: str
    sample: str  # an expression of this type, used in updates, invoke payloads and defaults
    factory: str | None = None  # zero-argument callable for mutable defaults; None: use sample
    annotation_imports: tuple[str, ...] = ()
    value_imports: tuple[str, ...] = ()  # what `sample` and `factory` need


def _from_records(name: str) -> tuple[str]:
    return (f"from app.core.records import {name}",)


GOOD_TYPES = (
    FieldType("str", '"text"'),
    FieldType("int", "3"),
    FieldType("float", "0.5"),
    FieldType("bool", "True"),
    FieldType("Optional[str]", "None", annotation_imports=("from typing import Optional",)),
    FieldType("Priority", '"high"', annotation_imports=_from_records("Priority")),
    FieldType('Literal["draft", "final"]', '"draft"', annotation_imports=("from typing import Literal",)),
    FieldType("list[str]", '["a", "b"]', factory="list"),
    FieldType("list[int]", "[1, 2, 3]", factory="list"),
    FieldType("dict[str, int]", '{"k": 1}', factory="dict"),
    FieldType("dict[str, list[str]]", '{"k": ["v"]}', factory="dict"),
    FieldType(
        "Address",
        "empty_address()",
        factory="empty_address",
        annotation_imports=_from_records("Address"),
        value_imports=("from app.core.factories import empty_address",),
    ),
    FieldType("list[AuditEntry]", "[]", factory="list", annotation_imports=_from_records("AuditEntry")),
    FieldType(
        "Optional[Money]",
        "None",
        annotation_imports=("from typing import Optional", *_from_records("Money")),
    ),
)
DATETIME_IMPORT = ("import datetime",)
# Types whose values do not survive a checkpoint round trip.
BAD_TYPES = (
    FieldType(
        "datetime.datetime",
        "datetime.datetime(2024, 1, 1)",
        annotation_imports=DATETIME_IMPORT,
        value_imports=DATETIME_IMPORT,
    ),
    FieldType("tuple[int, int]", "(0, 0)"),
    FieldType("set[str]", '{"a"}', factory="set"),
)


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    type: FieldType


@dataclasses.dataclass(frozen=True)
class Domain:
    name: str  # package name, e.g. "billing_003"
    prefix: str  # class-name prefix, e.g. "Billing003"
    upstream: Domain | None  # an earlier domain this one imports from
    calls_upstream_graph: bool  # whether its review module runs the upstream graph
    state_fields: tuple[Field, ...]
    ticket_fields: tuple[Field, ...]  # NotRequired extras on the nested ticket TypedDict
    model_fields: tuple[Field, ...]
    job_fields: tuple[Field, ...]

    @property
    def module(self) -> str:
        return f"{PACKAGE}.{self.name}"


@dataclasses.dataclass(frozen=True)
class GeneratedApp:
    root: Path  # directory to run mypy in; contains the package directory
    package_dir: Path
    module_count: int
    bad_field_count: int
    edit_target: Path  # leaf state module the one-module-edit benchmark appends to


class _FieldMaker:
    """Hands out uniquely named fields; every BAD_FIELD_EVERY-th one gets a bad type."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.made = 0
        self.bad = 0

    def fields(self, count: int) -> tuple[Field, ...]:
        result = []
        for position in range(count):
            self.made += 1
            if self.made % BAD_FIELD_EVERY == BAD_FIELD_EVERY // 4:
                self.bad += 1
                field_type = self.rng.choice(BAD_TYPES)
            else:
                field_type = self.rng.choice(GOOD_TYPES)
            result.append(Field(f"{self.rng.choice(FIELD_WORDS)}_{position}", field_type))
        return tuple(result)


def generate(outdir: Path, modules: int, seed: int = 0) -> GeneratedApp:
    """Write OUTDIR/app with at least `modules` modules, replacing any previous OUTDIR/app."""
    rng = random.Random(seed)
    maker = _FieldMaker(rng)
    files = {
        "__init__.py": '"""Synthetic LangGraph application generated by benchmarks/generate.py."""\n',
        "core/__init__.py": '"""Code shared by every domain."""\n',
        "core/records.py": _records_module(),
        "core/factories.py": _factories_module(),
        "core/messages.py": _messages_module(),
        "core/runtime.py": _runtime_module(),
    }
    domain_count = max(1, math.ceil((modules - len(files)) / len(DOMAIN_MODULES)))
    domains: list[Domain] = []
    for index in range(domain_count):
        word = DOMAIN_WORDS[index % len(DOMAIN_WORDS)]
        domains.append(
            Domain(
                name=f"{word}_{index:03d}",
                prefix=f"{word.capitalize()}{index:03d}",
                upstream=rng.choice(domains) if domains else None,
                calls_upstream_graph=rng.random() < 0.5,
                state_fields=maker.fields(rng.randint(4, 8)),
                ticket_fields=maker.fields(rng.randint(0, 2)),
                model_fields=maker.fields(rng.randint(3, 6)),
                job_fields=maker.fields(rng.randint(2, 5)),
            )
        )

    writers = {
        "__init__": lambda d: f'"""The {d.name} domain: states, nodes and graphs."""\n',
        "state": _state_module,
        "model_state": _model_state_module,
        "dc_state": _dc_state_module,
        "nodes/__init__": lambda d: f'"""The nodes of the {d.name} graphs, one module per concern."""\n',
        "nodes/intake": lambda d: _intake_module(d, rng),
        "nodes/review": lambda d: _review_module(d, rng),
        "nodes/pricing": lambda d: _pricing_module(d, rng),
        "nodes/jobs": lambda d: _jobs_module(d, rng),
        "nodes/bookkeeping": lambda d: _bookkeeping_module(d, rng),
        "routing": _routing_module,
        "graph": _graph_module,
        "workflow": lambda d: _workflow_module(d, rng),
        "agent": _agent_module,
    }
    for domain in domains:
        for module in DOMAIN_MODULES:
            files[f"{domain.name}/{module}.py"] = writers[module](domain)

    package_dir = outdir / PACKAGE
    if package_dir.exists():
        shutil.rmtree(package_dir)
    for relative, text in files.items():
        path = package_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return GeneratedApp(
        root=outdir,
        package_dir=package_dir,
        module_count=len(files),
        bad_field_count=maker.bad,
        edit_target=package_dir / "core" / "records.py",
    )


# --- helpers for writing modules -----------------------------------------------------------------


def _imports(
    lines: list[str], annotated: tuple[Field, ...] = (), valued: tuple[Field, ...] = ()
) -> str:
    """isort-style import block: `lines` plus what the annotations and values of fields need."""
    wanted = set(lines)
    for field in annotated:
        wanted.update(field.type.annotation_imports)
    for field in valued:
        wanted.update(field.type.value_imports)
    sections: dict[str, list[str]] = {"stdlib": [], "third_party": [], "first_party": []}
    from_names: dict[str, set[str]] = {}
    for line in sorted(wanted):
        if line.startswith("import "):
            sections[_section(line.removeprefix("import "))].append(line)
        else:
            # Merge "from X import a" and "from X import b" into one line, as a formatter would.
            module, names = line.removeprefix("from ").split(" import ")
            from_names.setdefault(module, set()).update(name.strip() for name in names.split(","))
    for module in sorted(from_names):
        sections[_section(module)].append(f"from {module} import {', '.join(sorted(from_names[module]))}")
    return "\n\n".join("\n".join(block) for block in sections.values() if block) + "\n"


def _section(module: str) -> str:
    top = module.split(".")[0]
    if top == PACKAGE:
        return "first_party"
    return "third_party" if top in THIRD_PARTY else "stdlib"


def _dict_literal(items: dict[str, str], indent: str) -> str:
    body = "".join(f'{indent}    "{key}": {value},\n' for key, value in items.items())
    return "{\n" + body + indent + "}"


def _default(field: Field, pydantic: bool) -> str:
    if field.type.factory is None:
        return field.type.sample
    if pydantic:
        return f"Field(default_factory={field.type.factory})"
    return f"field(default_factory={field.type.factory})"


def _helpers(rng: random.Random, tag: str) -> str:
    """A few ordinary typed helper functions, so modules are not just LangGraph boilerplate."""
    templates = (
        "def count_words_{tag}_{n}(texts: list[str]) -> dict[str, int]:\n"
        "    counts: dict[str, int] = {{}}\n"
        "    for text in texts:\n"
        "        for word in text.split():\n"
        "            counts[word] = counts.get(word, 0) + {k}\n"
        "    return counts\n",
        "def top_items_{tag}_{n}(scores: dict[str, float], limit: int = {k}) -> list[str]:\n"
        "    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)\n"
        "    return [name for name, _ in ranked[:limit]]\n",
        "def normalize_{tag}_{n}(values: list[float]) -> list[float]:\n"
        "    total = sum(values) or 1.0\n"
        "    return [round(value / total, {k}) for value in values]\n",
        "def first_match_{tag}_{n}(items: list[str], prefix: str) -> str | None:\n"
        "    for item in items:\n"
        "        if item.startswith(prefix):\n"
        "            return item\n"
        "    return None\n",
    )
    # n keeps the names in a module unique; k is a small constant that varies between helpers.
    chosen = [rng.choice(templates).format(tag=tag, n=n, k=n + 1) for n in range(rng.randint(1, 4))]
    return "\n\n" + "\n\n".join(chosen)


# --- core modules --------------------------------------------------------------------------------


def _records_module() -> str:
    return '''"""Records shared by the states of every domain (a leaf module: it imports nothing from app)."""

from typing import Literal

from typing_extensions import TypedDict

Priority = Literal["low", "normal", "high"]


class Address(TypedDict):
    street: str
    city: str
    postcode: str


class Money(TypedDict):
    amount_cents: int
    currency: str


class AuditEntry(TypedDict):
    step: str
    ticket_id: str
    ok: bool
'''


def _factories_module() -> str:
    return '''"""Constructors for the shared records."""

from app.core.records import Address, AuditEntry


def empty_address() -> Address:
    return {"street": "", "city": "", "postcode": ""}


def audit_entry(step: str, ticket_id: str) -> AuditEntry:
    return {"step": step, "ticket_id": ticket_id, "ok": True}
'''


def _messages_module() -> str:
    return '''"""Helpers for chat messages in graph state."""

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage


def reply(text: str) -> AIMessage:
    return AIMessage(content=text)


def ask(text: str) -> HumanMessage:
    return HumanMessage(content=text)


def last_text(messages: Sequence[AnyMessage]) -> str:
    if not messages:
        return ""
    content = messages[-1].content
    return content if isinstance(content, str) else ""
'''


def _runtime_module() -> str:
    return '''"""Run-time configuration shared by every graph."""

from langchain_core.runnables import RunnableConfig


def thread_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}
'''


# --- domain modules ------------------------------------------------------------------------------


def _state_module(d: Domain) -> str:
    p = d.prefix
    imports = [
        "import operator",
        "from typing import Annotated, Optional",
        "from langchain_core.messages import AnyMessage",
        "from langgraph.graph.message import add_messages",
        "from typing_extensions import NotRequired, TypedDict",
        "from app.core.records import Address, AuditEntry, Priority",
    ]
    upstream_field = ""
    if d.upstream is not None:
        imports.append(f"from {d.upstream.module}.state import {d.upstream.prefix}Ticket")
        upstream_field = f"    upstream: Optional[{d.upstream.prefix}Ticket]\n"
    ticket_extra = "".join(f"    {f.name}: NotRequired[{f.type.annotation}]\n" for f in d.ticket_fields)
    state_fields = "".join(f"    {f.name}: {f.type.annotation}\n" for f in d.state_fields)
    return f'''"""TypedDict state of the {d.name} main graph."""

{_imports(imports, annotated=d.state_fields + d.ticket_fields)}

class {p}Ticket(TypedDict):
    ticket_id: str
    priority: Priority
    address: Address
    tags: list[str]
{ticket_extra}

class {p}State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    ticket: {p}Ticket
{upstream_field}    audit: Annotated[list[AuditEntry], operator.add]
    results: Annotated[list[str], operator.add]
    approved: NotRequired[bool]
{state_fields}

class {p}Update(TypedDict, total=False):
    """What a node may return: any subset of the state keys."""

    messages: list[AnyMessage]
    audit: list[AuditEntry]
    results: list[str]
    approved: bool
{state_fields}

class {p}Task(TypedDict):
    """Payload that routing.fan_out sends to the "work" node."""

    ticket_id: str
    item: str
'''


def _model_state_module(d: Domain) -> str:
    # The nested records of pydantic and dataclass states are TypedDicts: nested models and
    # dataclasses are what the plugin's default (json) profile reports, and only the few
    # deliberately bad fields should be reported.
    p = d.prefix
    imports = [
        "from typing import Annotated",
        "from langchain_core.messages import AnyMessage",
        "from langgraph.graph.message import add_messages",
        "from pydantic import BaseModel, Field",
        "from typing_extensions import TypedDict",
        "from app.core.factories import empty_address",
        "from app.core.records import Address, Priority",
    ]
    fields = "".join(f"    {f.name}: {f.type.annotation} = {_default(f, True)}\n" for f in d.model_fields)
    update_fields = "".join(f"    {f.name}: {f.type.annotation}\n" for f in d.model_fields)
    return f'''"""Pydantic state of the {d.name} pricing graph."""

{_imports(imports, annotated=d.model_fields, valued=d.model_fields)}

class {p}LineItem(TypedDict):
    sku: str
    quantity: int
    unit_cents: int


class {p}Quote(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)
    priority: Priority = "normal"
    lines: list[{p}LineItem] = Field(default_factory=list)
    address: Address = Field(default_factory=empty_address)
    total_cents: int = 0
{fields}

class {p}QuoteUpdate(TypedDict, total=False):
    messages: list[AnyMessage]
    lines: list[{p}LineItem]
    total_cents: int
{update_fields}'''


def _dc_state_module(d: Domain) -> str:
    p = d.prefix
    imports = [
        "from dataclasses import dataclass, field",
        "from typing import Optional",
        "from typing_extensions import TypedDict",
    ]
    fields = "".join(f"    {f.name}: {f.type.annotation} = {_default(f, False)}\n" for f in d.job_fields)
    update_fields = "".join(f"    {f.name}: {f.type.annotation}\n" for f in d.job_fields)
    return f'''"""Dataclass state of the {d.name} batch-job graph."""

{_imports(imports, annotated=d.job_fields, valued=d.job_fields)}

class {p}Step(TypedDict):
    name: str
    done: bool


@dataclass
class {p}Job:
    steps: list[{p}Step] = field(default_factory=list)
    attempts: int = 0
    error: Optional[str] = None
{fields}

class {p}JobUpdate(TypedDict, total=False):
    steps: list[{p}Step]
    attempts: int
    error: Optional[str]
{update_fields}'''


def _pick(fields: tuple[Field, ...], rng: random.Random, count: int) -> tuple[Field, ...]:
    return tuple(rng.sample(fields, min(count, len(fields))))


def _values(fields: tuple[Field, ...]) -> dict[str, str]:
    return {f.name: f.type.sample for f in fields}


def _intake_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        "from app.core.messages import last_text, reply",
        "from app.core.factories import audit_entry",
        f"from {d.module}.state import {p}State, {p}Update",
    ]
    summarizer = "summarize"
    if d.upstream is not None:
        imports.append(f"from {d.upstream.module}.nodes.intake import summarize as upstream_summarize")
        summarizer = "upstream_summarize"
    intake_fields = _pick(d.state_fields, rng, 2)
    enrich_fields = _pick(d.state_fields, rng, 1)
    intake_update = {
        "messages": '[reply(f"Received: {text}")]',
        "audit": '[audit_entry("intake", state["ticket"]["ticket_id"])]',
        **_values(intake_fields),
    }
    enrich_update = {"results": "[summary]", **_values(enrich_fields)}
    return f'''"""Nodes that take {d.name} tickets in."""

{_imports(imports, valued=intake_fields + enrich_fields)}

def summarize(tags: list[str]) -> str:
    return ", ".join(sorted(set(tags)))


def intake(state: {p}State) -> {p}Update:
    text = last_text(state["messages"])
    return {_dict_literal(intake_update, "    ")}


async def enrich(state: {p}State) -> {p}Update:
    summary = {summarizer}(state["ticket"]["tags"])
    return {_dict_literal(enrich_update, "    ")}
{_helpers(rng, d.name)}'''


def _review_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        "from typing import Literal",
        "from langgraph.types import Command, interrupt",
        "from app.core.messages import last_text, reply",
        "from app.core.factories import audit_entry",
        f"from {d.module}.state import {p}State, {p}Task, {p}Update",
    ]
    escalate = ""
    if d.calls_upstream_graph and d.upstream is not None:
        imports.append(f"from {d.upstream.module} import graph as upstream_graph")
        escalate = f'''

def escalate(state: {p}State) -> {p}Update:
    outcome = upstream_graph.start(state["ticket"]["ticket_id"], last_text(state["messages"]))
    return {{"results": [str(len(outcome))]}}
'''
    approve_fields = _pick(d.state_fields, rng, 1)
    approve_update = {"approved": "True", **_values(approve_fields)}
    return f'''"""Human review of {d.name} tickets, and the workers they fan out to."""

{_imports(imports, valued=approve_fields)}

def review(state: {p}State) -> Command[Literal["finish", "intake"]]:
    decision = interrupt(
        {{
            "question": "Approve this ticket?",
            "ticket_id": state["ticket"]["ticket_id"],
            "priority": state["ticket"]["priority"],
        }}
    )
    if decision == "approve":
        return Command(
            update={_dict_literal(approve_update, "            ")},
            goto="finish",
        )
    return Command(update={{"messages": [reply("Needs another pass")]}}, goto="intake")


def work(state: {p}Task) -> {p}Update:
    return {{"results": [f"{{state['ticket_id']}}:{{state['item']}}"]}}


def finish(state: {p}State) -> {p}Update:
    return {{
        "messages": [reply("Done")],
        "audit": [audit_entry("finish", state["ticket"]["ticket_id"])],
    }}
{escalate}{_helpers(rng, d.name)}'''


def _pricing_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        "from typing import Literal",
        "from langgraph.types import Command",
        "from app.core.messages import reply",
        f"from {d.module}.model_state import {p}LineItem, {p}Quote, {p}QuoteUpdate",
    ]
    price_fields = _pick(d.model_fields, rng, 2)
    price_update = {"total_cents": "total", **_values(price_fields)}
    return f'''"""Nodes of the {d.name} pricing graph (pydantic state)."""

{_imports(imports, valued=price_fields)}

def gate(state: {p}Quote) -> Command[Literal["price", "__end__"]]:
    if not state.lines:
        return Command(update={{"messages": [reply("Nothing to price")]}}, goto="__end__")
    return Command(goto="price")


def price(state: {p}Quote) -> {p}QuoteUpdate:
    total = sum(line["quantity"] * line["unit_cents"] for line in state.lines)
    return {_dict_literal(price_update, "    ")}


async def check(state: {p}Quote) -> {p}QuoteUpdate:
    extra = {p}LineItem(sku="fee", quantity=1, unit_cents=len(state.lines))
    return {{"lines": [*state.lines, extra]}}
{_helpers(rng, d.name)}'''


def _jobs_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        f"from {d.module}.dc_state import {p}Job, {p}JobUpdate, {p}Step",
    ]
    run_fields = _pick(d.job_fields, rng, 1)
    run_update = {"attempts": "state.attempts + 1", **_values(run_fields)}
    return f'''"""Nodes of the {d.name} batch-job graph (dataclass state)."""

{_imports(imports, valued=run_fields)}

def plan(state: {p}Job) -> {p}JobUpdate:
    steps = [{p}Step(name=f"step-{{index}}", done=False) for index in range(3)]
    return {{"steps": steps}}


async def run_steps(state: {p}Job) -> {p}JobUpdate:
    for step in state.steps:
        step["done"] = True
    return {_dict_literal(run_update, "    ")}
{_helpers(rng, d.name)}'''


def _bookkeeping_module(d: Domain, rng: random.Random) -> str:
    """Nodes declared ``-> dict[str, Any]``, as many projects write them: what they write is only
    known from the dict displays they return. Beside them, a function of the same shape that is no
    node (prompt variables), as real projects have."""
    p = d.prefix
    imports = [
        "from typing import Any",
        "from app.core.messages import ask, last_text",
        f"from {d.module}.dc_state import {p}Job",
        f"from {d.module}.model_state import {p}Quote",
        f"from {d.module}.state import {p}State",
    ]
    tag_fields = _pick(d.state_fields, rng, 1)
    discount_fields = _pick(d.model_fields, rng, 1)
    tag_update = {
        "messages": '[ask(variables["question"])]',
        "ticket": 'state["ticket"]',
        **_values(tag_fields),
    }
    discount_update = {"total_cents": "max(0, state.total_cents - 100)", **_values(discount_fields)}
    return f'''"""Nodes of the {d.name} graphs that return plain dicts."""

{_imports(imports, valued=tag_fields + discount_fields)}

def prompt_variables(state: {p}State) -> dict[str, Any]:
    """What the tagging prompt is formatted with: no state update."""
    return {{"question": last_text(state["messages"]), "tags": ", ".join(state["ticket"]["tags"])}}


def tag(state: {p}State) -> dict[str, Any]:
    variables = prompt_variables(state)
    return {_dict_literal(tag_update, "    ")}


async def note(state: {p}State) -> dict[str, Any]:
    update: dict[str, Any] = {{"audit": []}}
    update["results"] = []
    return update


def discount(state: {p}Quote) -> dict[str, Any]:
    return {_dict_literal(discount_update, "    ")}


def retry(state: {p}Job) -> dict[str, Any]:
    if state.error is None:
        return {{}}
    return {{"attempts": state.attempts + 1, "error": None}}
'''


def _routing_module(d: Domain) -> str:
    p = d.prefix
    imports = [
        "from typing import Literal",
        "from langgraph.types import Send",
        f"from {d.module}.model_state import {p}Quote",
        f"from {d.module}.state import {p}State, {p}Task",
    ]
    return f'''"""Conditional edges of the {d.name} graphs."""

{_imports(imports)}

def fan_out(state: {p}State) -> list[Send]:
    """Map step: one "work" task per ticket tag."""
    sends = []
    for tag in state["ticket"]["tags"]:
        task: {p}Task = {{"ticket_id": state["ticket"]["ticket_id"], "item": tag}}
        sends.append(Send("work", task))
    return sends


def by_priority(state: {p}Quote) -> Literal["fast", "slow"]:
    return "fast" if state.priority == "high" else "slow"
'''


def _graph_module(d: Domain) -> str:
    p = d.prefix
    imports = [
        "from typing import Any",
        "from langgraph.checkpoint.memory import InMemorySaver",
        "from langgraph.graph import END, START, StateGraph",
        "from langgraph.types import Command",
        "from app.core.messages import ask",
        "from app.core.factories import empty_address",
        "from app.core.runtime import thread_config",
        f"from {d.module} import routing",
        f"from {d.module}.nodes import bookkeeping, intake, jobs, pricing, review",
        f"from {d.module}.dc_state import {p}Job",
        f"from {d.module}.model_state import {p}LineItem, {p}Quote",
        f"from {d.module}.state import {p}State, {p}Task",
    ]
    state_values = {
        "messages": "[ask(text)]",
        "ticket": '{"ticket_id": thread_id, "priority": "normal", "address": empty_address(), "tags": []}',
        "audit": "[]",
        "results": "[]",
    }
    if d.upstream is not None:
        state_values["upstream"] = "None"
    state_values.update(_values(d.state_fields))
    state_type = f"{p}State"
    start_payload = _dict_literal(state_values, "    ")
    if d.calls_upstream_graph and d.upstream is not None:
        finish_edges = (
            'builder.add_node("escalate", review.escalate)\n'
            'builder.add_edge("finish", "escalate")\n'
            'builder.add_edge("escalate", END)\n'
        )
    else:
        finish_edges = 'builder.add_edge("finish", END)\n'
    return f'''"""The {d.name} graphs: the main ticket graph, a pricing graph and a batch-job graph."""

{_imports(imports, valued=d.state_fields)}

builder = StateGraph({state_type})
builder.add_node("tag", bookkeeping.tag)
builder.add_node("note", bookkeeping.note)
builder.add_node("intake", intake.intake)
builder.add_node("enrich", intake.enrich)
builder.add_node("work", review.work, input_schema={p}Task)
builder.add_node("review", review.review, destinations=("finish", "intake"))
builder.add_node("finish", review.finish)
builder.add_edge(START, "intake")
builder.add_conditional_edges("intake", routing.fan_out, ["work"])
builder.add_edge("work", "enrich")
builder.add_edge("enrich", "review")
{finish_edges}graph = builder.compile(checkpointer=InMemorySaver())

quote_builder = StateGraph({p}Quote)
quote_builder.add_node("gate", pricing.gate, destinations=("price",))
quote_builder.add_node("price", pricing.price)
quote_builder.add_node("check", pricing.check)
quote_builder.add_node("discount", bookkeeping.discount)
quote_builder.add_edge(START, "gate")
quote_builder.add_conditional_edges("price", routing.by_priority, {{"fast": END, "slow": "check"}})
quote_builder.add_edge("check", "discount")
quote_builder.add_edge("discount", END)
quote_graph = quote_builder.compile()

job_builder = StateGraph({p}Job)
job_builder.add_node("plan", jobs.plan)
job_builder.add_node("run_steps", jobs.run_steps)
job_builder.add_node("retry", bookkeeping.retry)
job_builder.add_edge(START, "plan")
job_builder.add_edge("plan", "run_steps")
job_builder.add_edge("run_steps", "retry")
job_builder.add_edge("retry", END)
job_graph = job_builder.compile()


def start(thread_id: str, text: str) -> dict[str, Any]:
    payload: {state_type} = {start_payload}
    return graph.invoke(payload, thread_config(thread_id))


def resume(thread_id: str, approved: bool) -> dict[str, Any]:
    decision = "approve" if approved else "reject"
    return graph.invoke(Command(resume=decision), thread_config(thread_id))


def quote(skus: list[str]) -> dict[str, Any]:
    lines = [{p}LineItem(sku=sku, quantity=1, unit_cents=100) for sku in skus]
    return quote_graph.invoke({p}Quote(priority="high", lines=lines))


async def run_job(attempts: int) -> dict[str, Any]:
    return await job_graph.ainvoke({p}Job(attempts=attempts))
'''


def _workflow_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        "from typing import Any",
        "from langgraph.checkpoint.memory import InMemorySaver",
        "from langgraph.func import entrypoint, task",
        f"from {d.module}.state import {p}Ticket",
    ]
    return f'''"""Functional-API workflow of the {d.name} domain."""

{_imports(imports)}

@task
def load_items(ticket_id: str, limit: int) -> list[str]:
    return [f"{{ticket_id}}-{{index}}" for index in range(limit)]


@task
def score_items(items: list[str]) -> dict[str, int]:
    return {{item: len(item) for item in items}}


@entrypoint(checkpointer=InMemorySaver())
def triage(ticket: {p}Ticket, *, previous: Any = None) -> entrypoint.final[dict[str, int], {p}Ticket]:
    items = load_items(ticket["ticket_id"], len(ticket["tags"])).result()
    return entrypoint.final(value=score_items(items).result(), save=ticket)
{_helpers(rng, d.name)}'''


def _agent_module(d: Domain) -> str:
    p = d.prefix
    fields = d.ticket_fields
    imports = [
        "from typing import Any, Literal",
        "from langchain.agents import create_agent",
        "from langchain.agents.middleware import AgentMiddleware, AgentState, before_model",
        "from langgraph.graph import END, START, StateGraph",
        "from langgraph.typing import StateT",
        "from langgraph.runtime import Runtime",
        "from typing_extensions import NotRequired, TypedDict",
        f"from {d.module}.state import {p}State",
    ]
    agent_fields = "".join(f"    {f.name}: NotRequired[{f.type.annotation}]\n" for f in fields)
    return f'''"""A LangChain agent with middleware, and a graph built by the project's own graph class."""

{_imports(imports, annotated=fields)}

class {p}AgentState(AgentState[Any]):
    ticket_id: NotRequired[str]
{agent_fields}

class {p}NoteState(AgentState[Any]):
    notes: NotRequired[list[str]]


class {p}Notes(AgentMiddleware[AgentState[Any], None]):
    state_schema = {p}NoteState

    def before_model(self, state: AgentState[Any], runtime: Runtime[None]) -> dict[str, list[str]] | None:
        return {{"notes": []}}


@before_model(state_schema={p}AgentState)
def remember(state: {p}AgentState, runtime: Runtime[None]) -> dict[str, str] | None:
    return None


agent = create_agent("openai:gpt-4o", middleware=[{p}Notes()], state_schema={p}AgentState)


class {p}Graph(StateGraph[StateT]):
    """The project's own graph class."""


def new_graph(schema: type[StateT]) -> StateGraph[StateT]:
    return StateGraph(schema)


class {p}Hint(TypedDict):
    hint: str


def hint(state: {p}State) -> {p}Hint:
    return {{"hint": "fast" if state["approved"] else "slow"}}


def by_hint(state: {p}Hint) -> Literal["close", "__end__"]:
    return "close" if state["hint"] == "fast" else "__end__"


def close(state: {p}State) -> {p}Hint:
    return {{"hint": "closed"}}


traced = {p}Graph({p}State)
traced.add_node("hint", hint)
traced.add_node("close", close)
traced.add_edge(START, "hint")
traced.add_conditional_edges("hint", by_hint)
traced.add_edge("close", END)
hint_graph = new_graph({p}Hint)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, help="directory to write the app package into")
    parser.add_argument("--modules", type=int, default=500, help="minimum number of modules (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args()
    app = generate(args.outdir, args.modules, args.seed)
    print(
        f"wrote {app.module_count} modules to {app.package_dir} "
        f"({app.bad_field_count} deliberately checkpoint-unsafe state fields)"
    )


if __name__ == "__main__":
    main()
