"""Compaction: the older turns of a thread that outgrew its token budget, folded into a
running summary written by a model.

The summary is a thread record (kind :data:`SUMMARY_KIND`, keyed by the thread id) in
the execution store — SQLite or PostgreSQL alike — holding its text (masked by the
runtime's redaction policy before it is stored) and how far it reaches: the last turn
(``through_seq``) and the time of the last task-run note (``through_at``) folded in.
A compaction is incremental: the model is given the summary so far and the turns that
just became too old — never the whole thread again — and answers with the new summary.
Each compaction is a ``compaction`` step of the turn that made it (``toolang turns
trace`` shows it); its model call is retried and falls back like any other
(:mod:`toolang_core.turn.model_retry`), and is spent like any other: its usage is stored
normalised in the step's ``tokens`` (summed per turn, thread, owner and budget by the
store) and counted against the turn's spend limits (:mod:`toolang_core.turn.usage`), which
are checked before each summarising call.

Durability: the record is written with the revision it was read at, after the model
answered, then the step is stored. A crash before the write leaves the old summary,
and the turn resumed — or the thread's next turn — compacts again; a crash after it
finds the new summary and has nothing left to compact. Compaction runs while the
prompt is built, before the model is asked anything, so it never repeats a tool call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.errors import ConfigError
from toolang_core.models.types import Message, ModelError, ModelRequest, ModelResponse
from toolang_core.spend import tokens_of
from toolang_core.store.errors import RecordConflict
from toolang_core.turn.context import Coverage, Entry
from toolang_core.turn.failure import TurnFailed
from toolang_core.turn.model_retry import Candidate, ModelAttempts, ModelCallFailed
from toolang_core.turn.tokens import BYTES_PER_TOKEN, MESSAGE_TOKENS

if TYPE_CHECKING:
    from toolang_core.config.model import AgentsConfig, ModelRetryConfig
    from toolang_core.execution.seam import TurnContext
    from toolang_core.models.resolve import ModelResolver
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.turn.tokens import TokenCounter
    from toolang_core.turn.usage import TurnSpend

__all__ = [
    "SUMMARY_KIND",
    "Compactor",
    "ModelCallFailed",
    "ThreadSummary",
    "check_summary_model",
]

SUMMARY_KIND: Final = "toolang.thread.summary"

INSTRUCTION: Final = (
    "You keep the running summary of a conversation between a user and an assistant. "
    "Rewrite the summary so far so that it also covers the part of the conversation "
    "that follows it. Keep every fact, name, number, date, decision, commitment and open "
    "question the assistant may need later; drop greetings and repetition. Write short "
    "plain sentences or bullet points, at most {words} words, and answer with the "
    "summary only."
)


@attrs.frozen
class ThreadSummary:
    """A thread's running summary as stored: its (masked) text, what it covers, how
    many turns and notes it folds in, who wrote it, and the record's revision."""

    text: str
    coverage: Coverage
    turns: int = 0
    notes: int = 0
    model: str = ""
    turn_id: str = ""
    revision: int = 0

    @classmethod
    def read(cls, store: ExecutionStore, thread_id: str) -> ThreadSummary | None:
        """The summary of ``thread_id``, if it has one."""
        record = store.get_record(SUMMARY_KIND, thread_id)
        if record is None:
            return None
        data = record.data
        return cls(
            text=str(data.get("text", "")),
            coverage=Coverage(int(data.get("through_seq", 0)), float(data.get("through_at", 0))),
            turns=int(data.get("turns", 0)),
            notes=int(data.get("notes", 0)),
            model=str(data.get("model", "")),
            turn_id=str(data.get("turn_id", "")),
            revision=record.revision,
        )

    def to_json(self) -> dict[str, Any]:
        """The record's data."""
        return {
            "text": self.text,
            "through_seq": self.coverage.seq,
            "through_at": self.coverage.at,
            "turns": self.turns,
            "notes": self.notes,
            "model": self.model,
            "turn_id": self.turn_id,
        }


def summary_request(
    previous: str | None, entries: Sequence[Entry], words: int
) -> tuple[Message, ...]:
    """What the summarising model is asked: the summary so far and the turns to add."""
    said = []
    for entry in entries:
        for message in entry.messages:
            said.append(f"{message.role}: {message.content}")
    text = (
        "Summary so far:\n"
        + (previous or "(none yet)")
        + "\n\nConversation to add, oldest first:\n"
        + "\n".join(said)
    )
    return (
        Message(role="system", content=INSTRUCTION.format(words=words)),
        Message(role="user", content=text),
    )


def chunks(entries: Sequence[Entry], limit: int) -> Iterator[list[Entry]]:
    """``entries`` in order, in runs of at most ``limit`` tokens (an entry larger than
    that alone, clipped to about ``limit`` tokens): one summarising call each, so no
    call is sent more than its model may read, however long the thread already is."""
    run: list[Entry] = []
    used = 0
    for each in entries:
        entry = _clipped(each, limit) if each.tokens > limit else each
        if run and used + entry.tokens > limit:
            yield run
            run, used = [], 0
        run.append(entry)
        used += entry.tokens
    if run:
        yield run


def _clipped(entry: Entry, limit: int) -> Entry:
    share = max(1, limit * BYTES_PER_TOKEN // max(1, len(entry.messages)))
    messages = tuple(
        attrs.evolve(m, content=m.content[:share] + " …") if len(m.content) > share else m
        for m in entry.messages
    )
    return attrs.evolve(entry, messages=messages, tokens=limit)


@attrs.define
class Compacted:
    """What one compaction did: the summary now, the summarising calls made, and
    whether the text had to be cut to fit."""

    summary: ThreadSummary
    calls: int = 0
    cut: bool = False


class Compactor:
    """Folds entries into a thread's summary with ``candidates`` (the summary model,
    or the agent's model and its fallbacks), masking the text with ``mask``; each call
    is counted in ``spend`` (the turn's), when given."""

    def __init__(
        self,
        *,
        candidates: tuple[Candidate, ...],
        retry: ModelRetryConfig,
        mask: Callable[[str], str],
        counter: TokenCounter,
        agent: str,
        spend: TurnSpend | None = None,
    ) -> None:
        self.candidates = candidates
        self.retry = retry
        self.mask = mask
        self.counter = counter
        self.agent = agent
        self.spend = spend

    async def compact(
        self,
        ctx: TurnContext,
        previous: ThreadSummary | None,
        entries: Sequence[Entry],
        *,
        max_tokens: int,
        budget: int,
    ) -> Compacted:
        """Fold ``entries`` (oldest first, none covered by ``previous``) into the
        thread's summary of at most ``max_tokens``, store it, and record a
        ``compaction`` step per summarising call — the entries split so that a call's
        prompt stays within ``budget`` tokens (a single entry larger than that is
        clipped), so more than one call when there is much to fold. Each call's result
        is stored before the next call: a long thread's first compaction keeps what it
        did if it stops halfway.

        :raises ModelCallFailed: when the model(s) failed; what was stored stays.
        :raises TurnFailed: when a spend limit of the turn is reached before a call
            (outcome ``usage_limit`` or ``budget_exceeded``); what was stored stays.
        """
        done = Compacted(previous or ThreadSummary("", Coverage()))
        words = max(10, max_tokens * 3 // 4)
        # What each call sends besides the entries: the instruction, the headings and
        # the summary so far (as it is now; a later call's may be longer, up to
        # max_tokens — the calls of a long backlog's first compaction only).
        frame = self.counter.text(INSTRUCTION) + 4 * MESSAGE_TOKENS
        frame += self.counter.text(done.summary.text)
        for run in chunks(entries, max(max_tokens, budget - frame, 1)):
            stop = self.spend.check() if self.spend is not None else None
            if stop is not None:
                raise TurnFailed(stop.message, stop.outcome)
            started = ctx.clock()
            before = done.summary
            key = f"{ctx.turn.id}:compaction:{before.revision + 1}"
            messages = summary_request(before.text or None, run, words)
            request = ModelRequest(messages=messages, key=key)

            async def call(candidate: Candidate, request: ModelRequest = request) -> ModelResponse:
                asked = attrs.evolve(request, model_id=candidate.name.partition("/")[2] or None)
                response: ModelResponse = await candidate.model.complete(asked)
                return response

            attempts = ModelAttempts(
                ctx,
                key=key,
                config=self.retry,
                candidates=self.candidates,
                call=call,
                data={"purpose": "compaction", "agent": self.agent},
            )
            answered, response = await attempts.run()
            tokens = tokens_of(response.usage) if response.usage else {}
            if self.spend is not None:
                self.spend.add(tokens)
            text, cut = self._fitted(self.mask(response.text.strip()), max_tokens)
            turns = [e for e in run if e.seq is not None]
            notes = len(run) - len(turns)
            summary = ThreadSummary(
                text=text,
                coverage=Coverage(
                    max([before.coverage.seq, *(e.seq for e in turns if e.seq is not None)]),
                    max(before.coverage.at, run[-1].at),
                ),
                turns=before.turns + len(turns),
                notes=before.notes + notes,
                model=answered.name,
                turn_id=ctx.turn.id,
            )
            try:
                record = ctx.store.put_record(
                    SUMMARY_KIND,
                    ctx.turn.thread_id,
                    summary.to_json(),
                    now=ctx.clock(),
                    expect_revision=before.revision,
                )
            except RecordConflict:
                # Someone else compacted this thread meanwhile (a runtime that lost
                # this turn's lease): theirs stands, and this turn uses it.
                current = ThreadSummary.read(ctx.store, ctx.turn.thread_id)
                if current is None:
                    raise
                done.summary = current
                return done
            done.summary = attrs.evolve(summary, revision=record.revision)
            done.calls += 1
            done.cut = done.cut or cut
            data: dict[str, Any] = {
                "model": answered.name,
                "agent": self.agent,
                "summarised_turns": len(turns),
                "summarised_notes": notes,
                "through_seq": summary.coverage.seq,
                "turns_in_summary": summary.turns,
                "previous_summary": bool(before.text),
                "summary_tokens": self.counter.text(text),
                "cut": cut,
                "revision": record.revision,
                "usage": dict(response.usage),
                "summary": text,
            }
            if tokens:
                data["tokens"] = tokens  # normalised: what the store sums
            ctx.record_step("compaction", started_at=started, idempotency_key=key, data=data)
        return done

    def _fitted(self, text: str, max_tokens: int) -> tuple[str, bool]:
        """``text``, cut at a word to at most ``max_tokens`` if it is longer."""
        if self.counter.text(text) <= max_tokens:
            return text, False
        words = text.split(" ")
        low, high = 0, len(words)
        while low < high:  # the most words that fit
            middle = (low + high + 1) // 2
            if self.counter.text(" ".join(words[:middle]) + " …") <= max_tokens:
                low = middle
            else:
                high = middle - 1
        return (" ".join(words[:low]) + " …") if low else "", True


def check_summary_model(resolver: ModelResolver, agents: AgentsConfig) -> None:
    """``[agents] summary_model``, if set, has a provider that gives it (the runtime
    checks this when it starts; ``toolang doctor`` too).

    :raises ConfigError: naming the key, the model and why it cannot be had.
    """
    spec = agents.summary_model
    if spec is None:
        return
    try:
        resolver.resolve(spec, wanted_by="[agents] summary_model")
    except ModelError as exc:
        raise ConfigError([f"[agents] summary_model = {spec!r}: {exc}"]) from None
