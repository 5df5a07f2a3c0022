"""Findings, grouped by problem: one problem in 4,000 threads is one entry, with its counts and the
first example threads. A ``Tally`` holds what a part of the store gave; tallies of consecutive
parts merge in order, so ``--jobs N`` gives exactly what one process gives. Its size depends on the
number of distinct problems, never on the number of threads.

A problem is one root cause: a place of the state (a channel whose value does not fit), or a class
(a stored class that no longer imports, lost a field, or a field a class declares), which is one
problem wherever it is stored, listed with each place it was found at. A thread is a thread id:
its subgraphs' namespaces are audited as checkpoints of their own, but counted with it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mypy_lgstate.runtime.audit.wording import KINDS


class Finding(NamedTuple):
    kind: str
    channel: str
    pattern: str  # the path, the same in every thread: ["order"]["items"][].sku
    message: str
    # Where the class that declares the place is defined (file relative to the current
    # directory, line), when its source is known: SARIF locates the problem there.
    source: tuple[str, int] | None = None
    # A problem of a class, not of the place (its message after the path, which is the same at
    # every place the class is stored): "" for a problem of the place.
    cause: str = ""

    def key(self) -> tuple[str, str, str, str]:
        if self.cause:
            return (self.kind, "", "", self.cause)
        return (self.kind, self.channel, self.pattern, self.message)

    def place(self) -> tuple[str, str]:
        return (self.channel, self.pattern)


def of_class(finding: Finding) -> Finding:
    """``finding`` as a problem of the class that declares its place (its message starts with the
    path)."""
    assert finding.message.startswith(finding.pattern), finding
    return finding._replace(cause=finding.message[len(finding.pattern):])


class Example(NamedTuple):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    path: str  # exact: ["order"]["items"][2].sku


class Problem:
    __slots__ = ("finding", "places", "threads", "findings", "examples")

    def __init__(self, finding: Finding) -> None:
        self.finding = finding  # the first found: its message names the first place
        self.places: list[tuple[str, str]] = [finding.place()]  # (channel, pattern), as found
        self.threads = 0
        self.findings = 0
        self.examples: list[Example] = []

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.finding, self.places, self.threads, self.findings, self.examples)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.finding, self.places, self.threads, self.findings, self.examples = state

    def add_place(self, place: tuple[str, str]) -> None:
        if place not in self.places:
            self.places.append(place)


class Tally:
    def __init__(self, examples: int) -> None:
        self.limit = examples  # example threads kept per problem
        self.threads = 0  # threads audited (thread ids)
        self.namespaces = 0  # their checkpoint namespaces (a subgraph's are its own)
        self.checkpoints = 0
        self.skipped = 0  # checkpoints of a subgraph no --graph has
        self.affected = 0  # threads with at least one finding
        self.problems: dict[tuple[str, str, str, str], Problem] = {}
        self.kinds: dict[str, list[int]] = {}  # kind -> [threads, findings]
        self.channels: dict[str, list[int]] = {}

    def add(self, finding: Finding, example: Example, seen: set[Any]) -> None:
        """``seen``: what the thread of ``example`` has shown so far (one set per thread), so
        that each count of threads counts a thread once."""
        key = finding.key()
        problem = self.problems.get(key)
        if problem is None:
            problem = self.problems[key] = Problem(finding)
        problem.add_place(finding.place())
        problem.findings += 1
        if not seen:
            self.affected += 1
        for counts, item in ((self.kinds, finding.kind), (self.channels, finding.channel)):
            pair = counts.setdefault(item, [0, 0])
            pair[1] += 1
            if (counts is self.kinds, item) not in seen:
                seen.add((counts is self.kinds, item))
                pair[0] += 1
        if key not in seen:
            seen.add(key)
            problem.threads += 1
            if len(problem.examples) < self.limit:  # one per thread: its first (latest) checkpoint
                problem.examples.append(example)

    def merge(self, other: Tally) -> None:
        """Add ``other``, a tally of the threads that come after this one's."""
        self.threads += other.threads
        self.namespaces += other.namespaces
        self.checkpoints += other.checkpoints
        self.skipped += other.skipped
        self.affected += other.affected
        for key, theirs in other.problems.items():
            mine = self.problems.get(key)
            if mine is None:
                self.problems[key] = theirs
                continue
            for place in theirs.places:
                mine.add_place(place)
            mine.threads += theirs.threads
            mine.findings += theirs.findings
            room = self.limit - len(mine.examples)
            if room > 0:
                mine.examples.extend(theirs.examples[:room])
        for mine_counts, their_counts in ((self.kinds, other.kinds), (self.channels, other.channels)):
            for item, (threads, findings) in their_counts.items():
                pair = mine_counts.setdefault(item, [0, 0])
                pair[0] += threads
                pair[1] += findings

    def sorted_problems(self) -> list[Problem]:
        """Most threads first; then by kind, channel and path, so that the order never depends on
        which thread came first."""
        order = {kind: i for i, kind in enumerate(KINDS)}
        return sorted(
            self.problems.values(),
            key=lambda p: (
                -p.threads, order.get(p.finding.kind, len(order)), p.finding.channel,
                p.finding.pattern, p.finding.message,
            ),
        )
