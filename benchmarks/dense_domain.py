"""A LangGraph domain, the unit both the dense and the realistic layouts are made of: the
:class:`Domain` record, how one is drawn (:func:`new_domain`), and the writers of its state modules
(``state``, ``model_state``, ``dc_state``) and node modules (``nodes/intake``, ``nodes/review``,
``nodes/pricing``, ``nodes/jobs``, ``nodes/bookkeeping``). dense_app.py writes the rest of a domain
and puts the dense layout together.
"""

from __future__ import annotations

import dataclasses
import random

from gen_common import (
    PACKAGE,
    Field,
    FieldMaker,
    dict_literal,
    field_default,
    field_values,
    helper_functions,
    import_block,
    pick_fields,
)

DOMAIN_WORDS = "billing support orders search shipping returns catalog pricing loyalty fraud onboarding reviews".split()


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


def new_domain(index: int, rng: random.Random, maker: FieldMaker, domains: list[Domain]) -> Domain:
    word = DOMAIN_WORDS[index % len(DOMAIN_WORDS)]
    return Domain(
        name=f"{word}_{index:03d}",
        prefix=f"{word.capitalize()}{index:03d}",
        upstream=rng.choice(domains) if domains else None,
        calls_upstream_graph=rng.random() < 0.5,
        state_fields=maker.fields(rng.randint(4, 8)),
        ticket_fields=maker.fields(rng.randint(0, 2)),
        model_fields=maker.fields(rng.randint(3, 6)),
        job_fields=maker.fields(rng.randint(2, 5)),
    )


# --- a domain's state and node modules ------------------------------------------------------------


def state_module(d: Domain) -> str:
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

{import_block(imports, annotated=d.state_fields + d.ticket_fields)}

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


def model_state_module(d: Domain) -> str:
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
    fields = "".join(f"    {f.name}: {f.type.annotation} = {field_default(f, True)}\n" for f in d.model_fields)
    update_fields = "".join(f"    {f.name}: {f.type.annotation}\n" for f in d.model_fields)
    return f'''"""Pydantic state of the {d.name} pricing graph."""

{import_block(imports, annotated=d.model_fields, valued=d.model_fields)}

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


def dc_state_module(d: Domain) -> str:
    p = d.prefix
    imports = [
        "from dataclasses import dataclass, field",
        "from typing import Optional",
        "from typing_extensions import TypedDict",
    ]
    fields = "".join(f"    {f.name}: {f.type.annotation} = {field_default(f, False)}\n" for f in d.job_fields)
    update_fields = "".join(f"    {f.name}: {f.type.annotation}\n" for f in d.job_fields)
    return f'''"""Dataclass state of the {d.name} batch-job graph."""

{import_block(imports, annotated=d.job_fields, valued=d.job_fields)}

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


def intake_module(d: Domain, rng: random.Random) -> str:
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
    intake_fields = pick_fields(d.state_fields, rng, 2)
    enrich_fields = pick_fields(d.state_fields, rng, 1)
    intake_update = {
        "messages": '[reply(f"Received: {text}")]',
        "audit": '[audit_entry("intake", state["ticket"]["ticket_id"])]',
        **field_values(intake_fields),
    }
    enrich_update = {"results": "[summary]", **field_values(enrich_fields)}
    return f'''"""Nodes that take {d.name} tickets in."""

{import_block(imports, valued=intake_fields + enrich_fields)}

def summarize(tags: list[str]) -> str:
    return ", ".join(sorted(set(tags)))


def intake(state: {p}State) -> {p}Update:
    text = last_text(state["messages"])
    return {dict_literal(intake_update, "    ")}


async def enrich(state: {p}State) -> {p}Update:
    summary = {summarizer}(state["ticket"]["tags"])
    return {dict_literal(enrich_update, "    ")}
{helper_functions(rng, d.name)}'''


def review_module(d: Domain, rng: random.Random) -> str:
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
    approve_fields = pick_fields(d.state_fields, rng, 1)
    approve_update = {"approved": "True", **field_values(approve_fields)}
    return f'''"""Human review of {d.name} tickets, and the workers they fan out to."""

{import_block(imports, valued=approve_fields)}

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
            update={dict_literal(approve_update, "            ")},
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
{escalate}{helper_functions(rng, d.name)}'''


def pricing_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        "from typing import Literal",
        "from langgraph.types import Command",
        "from app.core.messages import reply",
        f"from {d.module}.model_state import {p}LineItem, {p}Quote, {p}QuoteUpdate",
    ]
    price_fields = pick_fields(d.model_fields, rng, 2)
    price_update = {"total_cents": "total", **field_values(price_fields)}
    return f'''"""Nodes of the {d.name} pricing graph (pydantic state)."""

{import_block(imports, valued=price_fields)}

def gate(state: {p}Quote) -> Command[Literal["price", "__end__"]]:
    if not state.lines:
        return Command(update={{"messages": [reply("Nothing to price")]}}, goto="__end__")
    return Command(goto="price")


def price(state: {p}Quote) -> {p}QuoteUpdate:
    total = sum(line["quantity"] * line["unit_cents"] for line in state.lines)
    return {dict_literal(price_update, "    ")}


async def check(state: {p}Quote) -> {p}QuoteUpdate:
    extra = {p}LineItem(sku="fee", quantity=1, unit_cents=len(state.lines))
    return {{"lines": [*state.lines, extra]}}
{helper_functions(rng, d.name)}'''


def jobs_module(d: Domain, rng: random.Random) -> str:
    p = d.prefix
    imports = [
        f"from {d.module}.dc_state import {p}Job, {p}JobUpdate, {p}Step",
    ]
    run_fields = pick_fields(d.job_fields, rng, 1)
    run_update = {"attempts": "state.attempts + 1", **field_values(run_fields)}
    return f'''"""Nodes of the {d.name} batch-job graph (dataclass state)."""

{import_block(imports, valued=run_fields)}

def plan(state: {p}Job) -> {p}JobUpdate:
    steps = [{p}Step(name=f"step-{{index}}", done=False) for index in range(3)]
    return {{"steps": steps}}


async def run_steps(state: {p}Job) -> {p}JobUpdate:
    for step in state.steps:
        step["done"] = True
    return {dict_literal(run_update, "    ")}
{helper_functions(rng, d.name)}'''


def bookkeeping_module(d: Domain, rng: random.Random) -> str:
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
    tag_fields = pick_fields(d.state_fields, rng, 1)
    discount_fields = pick_fields(d.model_fields, rng, 1)
    tag_update = {
        "messages": '[ask(variables["question"])]',
        "ticket": 'state["ticket"]',
        **field_values(tag_fields),
    }
    discount_update = {"total_cents": "max(0, state.total_cents - 100)", **field_values(discount_fields)}
    return f'''"""Nodes of the {d.name} graphs that return plain dicts."""

{import_block(imports, valued=tag_fields + discount_fields)}

def prompt_variables(state: {p}State) -> dict[str, Any]:
    """What the tagging prompt is formatted with: no state update."""
    return {{"question": last_text(state["messages"]), "tags": ", ".join(state["ticket"]["tags"])}}


def tag(state: {p}State) -> dict[str, Any]:
    variables = prompt_variables(state)
    return {dict_literal(tag_update, "    ")}


async def note(state: {p}State) -> dict[str, Any]:
    update: dict[str, Any] = {{"audit": []}}
    update["results"] = []
    return update


def discount(state: {p}Quote) -> dict[str, Any]:
    return {dict_literal(discount_update, "    ")}


def retry(state: {p}Job) -> dict[str, Any]:
    if state.error is None:
        return {{}}
    return {{"attempts": state.attempts + 1, "error": None}}
'''
