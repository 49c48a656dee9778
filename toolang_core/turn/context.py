"""A prompt's thread history chosen by a token budget (``[agents] context_tokens``).

With a budget, the prompt as a turn starts — the system message (instruction, context,
notes, recalled memory, the thread's summary), the thread's recent turns and the new
input — is kept within ``context_tokens`` (:mod:`toolang_core.turn.tokens` counts).
The recent turns are the newest ones that fit, each whole, oldest first, with the
task-run notes merged into the thread placed among them by time. When older turns do
not fit any more they are compacted into the thread's running summary
(:mod:`toolang_core.turn.compaction`), leaving the recent turns only
:data:`KEEP_SHARE` of the room they may fill (and of ``history_turns``, when that is
set) — so the next turns fit without compacting again — and the summary at most a
:data:`SUMMARY_SHARE`-th of the budget. Recalled
memory stays its own section, chosen by the memory plugin.

The budget bounds the prompt as the turn starts; the tool calls and results of the turn
itself add to it as the turn goes on (``max_steps`` bounds those). A system message and
input that alone exceed the budget are sent anyway, with no history (the trace says
``over_budget``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.models.types import Message
from toolang_core.store.forks import thread_history
from toolang_core.taskruns.merge import notes_of
from toolang_core.turn.prompt import SUMMARY_HEADING, exchange

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnContext
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest
    from toolang_core.turn.compaction import Compactor, ThreadSummary
    from toolang_core.turn.tokens import TokenCounter

KEEP_SHARE: Final = 0.5
"""After a compaction the recent turns fill at most this share of their room."""
SUMMARY_SHARE: Final = 4
"""The summary is at most ``context_tokens // SUMMARY_SHARE`` tokens."""
PAGE: Final = 200
"""Turns read from the store at a time, newest first, down to the summary's end."""


@attrs.frozen
class Coverage:
    """How far a thread's summary reaches: its turns up to ``seq``, and the task-run
    notes that finished up to ``at`` (``0``: nothing yet)."""

    seq: int = 0
    at: float = 0.0


@attrs.frozen
class Entry:
    """One piece of a thread's history: an earlier turn's exchange (``seq`` is the
    turn's), or a task-run note (``seq`` ``None``), with its time and token count."""

    at: float
    seq: int | None
    messages: tuple[Message, ...]
    tokens: int


def entries_since(
    store: ExecutionStore, turn: TurnRequest, coverage: Coverage, counter: TokenCounter
) -> list[Entry]:
    """The entries of ``turn``'s thread before it that ``coverage`` leaves out, oldest
    first (read newest first, a page at a time, down to the summary's end)."""
    found: list[Entry] = []
    before = turn.seq
    while True:
        page = thread_history(store, turn.thread_id, before_seq=before, limit=PAGE)
        for past in page:
            if past.seq <= coverage.seq:
                break
            said = tuple(exchange(past))
            if said:
                found.append(Entry(past.created_at, past.seq, said, counter.messages(said)))
        else:
            if len(page) == PAGE:
                before = page[-1].seq
                continue
        break
    for note in notes_of(store, turn.thread_id):
        if note.finished_at > coverage.at:
            said = (Message(role="assistant", content=note.text()),)
            found.append(Entry(note.finished_at, None, said, counter.messages(said)))
    found.sort(key=lambda e: (e.at, e.seq if e.seq is not None else 0))
    return found


def fit(entries: Sequence[Entry], room: int, max_turns: int | None) -> int:
    """Where the newest entries that fit in ``room`` tokens (and, with ``max_turns``,
    hold at most that many turns) begin: ``entries[fit(...):]`` is what is kept."""
    used = turns = 0
    start = len(entries)
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.seq is not None and max_turns is not None and turns >= max_turns:
            break
        if used + entry.tokens > room:
            break
        used += entry.tokens
        turns += entry.seq is not None
        start = index
    return start


def summary_tokens(counter: TokenCounter, summary: ThreadSummary | None) -> int:
    """What a summary adds to the system message (its heading and the blank line)."""
    if summary is None or not summary.text:
        return 0
    return counter.text(SUMMARY_HEADING + summary.text) + 1


@attrs.frozen
class FittedPrompt:
    """The prompt's system message (with the summary) and history within the budget,
    what the prompt-build step says about it, and whether a compaction failed."""

    system: Message
    history: list[Message]
    trace: dict[str, Any]
    degraded: bool = False


async def fit_prompt(
    ctx: TurnContext,
    *,
    budget: int,
    max_turns: int | None,
    counter: TokenCounter,
    system: Callable[[str | None], Message],
    user: Message,
    compactor: Compactor,
) -> FittedPrompt:
    """The history of ``ctx``'s turn within ``budget`` tokens, compacting older turns
    if they do not fit. ``system(summary)`` builds the system message around a summary.

    A compaction whose model fails leaves the summary as it was: the turn goes on with
    the recent turns that fit beside it (the others wait for the next compaction) and
    is marked degraded.
    """
    from toolang_core.turn.compaction import ModelCallFailed, ThreadSummary

    store, turn = ctx.store, ctx.turn
    summary = ThreadSummary.read(store, turn.thread_id)
    entries = entries_since(store, turn, summary.coverage if summary else Coverage(), counter)
    base = counter.message(system(None)) + counter.message(user)
    start = fit(entries, budget - base - summary_tokens(counter, summary), max_turns)
    trace: dict[str, Any] = {"budget": budget, "counted_by": counter.by}
    degraded = False
    if start > 0:  # older turns do not fit: fold them into the summary
        reserve = budget // SUMMARY_SHARE
        fewer = None if max_turns is None else math.ceil(max_turns * KEEP_SHARE)
        keep = fit(entries, int((budget - base - reserve) * KEEP_SHARE), fewer)
        try:
            done = await compactor.compact(
                ctx,
                summary,
                entries[:keep],
                max_tokens=max(0, min(reserve, budget - base)),
                budget=budget,
            )
        except ModelCallFailed as exc:
            degraded = True
            trace["compaction_failed"] = str(exc)
            trace["left_out"] = start
        else:
            summary = done.summary
            trace["compactions"] = done.calls
            entries = [e for e in entries if not _covered(e, summary.coverage)]
            start = fit(entries, budget - base - summary_tokens(counter, summary), max_turns)
    kept = list(entries[start:])
    message = system(summary.text if summary is not None and summary.text else None)
    fixed = counter.message(message) + counter.message(user)
    total = fixed + sum(e.tokens for e in kept)
    while kept and total > budget:  # counted in parts above; the whole decides
        total -= kept.pop(0).tokens
    trace.update(
        prompt_tokens=total,
        history_turns=sum(e.seq is not None for e in kept),
        summary=None
        if summary is None or not summary.text
        else {
            "revision": summary.revision,
            "through_seq": summary.coverage.seq,
            "turns": summary.turns,
            "tokens": summary_tokens(counter, summary),
        },
    )
    if total > budget:
        trace["over_budget"] = True
    history = [m for e in kept for m in e.messages]
    return FittedPrompt(message, history, trace, degraded)


def _covered(entry: Entry, coverage: Coverage) -> bool:
    if entry.seq is not None:
        return entry.seq <= coverage.seq
    return entry.at <= coverage.at
