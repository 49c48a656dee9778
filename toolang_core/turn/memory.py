"""Memory in an agent turn: recall before the prompt, what to remember after it.

The recall is a step of the turn (``memory_recall``) stored under an idempotency key,
so a turn resumed after a crash replays what was recalled instead of asking again —
its prompt stays the same. A recall that fails or times out marks the turn degraded;
it never fails it. The runtime renders recalled memory into the prompt itself
(:func:`render`); the plugin only returns data.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.memory.service import MemoryService, agent_uri
from toolang_core.memory.types import MemoryEntry, MemoryRecallRequest, MemoryWriteBatch
from toolang_core.redaction import (
    MaskedMap,
    RedactionPolicy,
    composed_text,
    current,
    known_clean,
)
from toolang_core.store.json_text import dumps

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.execution.seam import TurnContext
    from toolang_core.memory.types import MemoryItem, MemoryRecallResult
    from toolang_core.runtime_view import RuntimeView

ITEM_CHARS = 600


@attrs.frozen
class Recalled:
    """What the prompt gets from memory (``lines``) and what the traces say about it."""

    lines: tuple[str, ...] = ()
    trace: dict[str, Any] = attrs.field(factory=dict)
    degraded: bool = False
    summary: MaskedMap | None = None
    """The trace without its rendered lines as the recall's step stores it (masked and
    encoded once): what the prompt build's step and the prompt trace carry."""

    @classmethod
    def off(cls) -> Recalled:
        return cls(trace={"plugin": None, "status": "off"})


def render(result: MemoryRecallResult) -> tuple[str, ...]:
    """Recalled memory as prompt lines: facts, then items (best first), then summaries.

    An item's line is made of its text on one line and its key, and the runtime's words:
    remembered as clean when both are (:func:`~toolang_core.redaction.composed_text`) —
    an exchange this runtime remembered lately is, in that form (:func:`exchange_batch`)
    — so the recall's step does not run the detectors over it again."""
    lines = [fact.text for fact in result.facts]
    for item in result.items:
        made = (item.key, item.text, item.provenance.created_at)
        line = _LINES.get(made)
        if line is None or not known_clean(line):
            line = _line(item)
            _LINES[made] = line
            if len(_LINES) > _LINES_KEPT:
                del _LINES[next(iter(_LINES))]
        lines.append(line)
    lines.extend(f"earlier: {summary.text}" for summary in result.summaries)
    return tuple(lines)


_LINES: dict[tuple[str | None, str, float], str] = {}
"""Item lines made lately, by what they are made of: the same entries are recalled turn
after turn. One is used again only while the policy remembers it as clean (checked
under the detectors installed now); any other is made, and checked, again."""
_LINES_KEPT = 2_048


def _line(item: MemoryItem) -> str:
    text = " ".join(item.text.split())
    if len(text) > ITEM_CHARS:
        text = text[: ITEM_CHARS - 1] + "…"
    saved = _day(int(item.provenance.created_at))
    label = f"{item.key}: " if item.key else ""
    return composed_text(f"{label}{text} (remembered {saved})", (label, text))


@functools.lru_cache(maxsize=4096)
def _day(created_at: int) -> str:
    """The local day of a time (whole seconds: ``localtime`` drops the fraction); the
    same entries are recalled turn after turn."""
    return time.strftime("%Y-%m-%d", time.localtime(created_at))


async def recall_for_turn(
    ctx: TurnContext, memory: MemoryService | None, agent: AgentDefinition
) -> Recalled:
    """Recall (or replay a recall) for the turn's input and record the step."""
    if memory is None:
        return Recalled.off()
    turn = ctx.turn
    key = f"{turn.id}:memory_recall"
    done = ctx.find_step(key)
    if done is not None:
        data = dict(done.data)
        return Recalled(tuple(data.get("rendered", ())), data, bool(data.get("degraded")))
    request = MemoryRecallRequest(
        agent_uri=agent_uri(agent.name),
        agent_id=agent.name,
        query_text=turn.input,
        thread_id=turn.thread_id if memory.config.thread_only else None,
        turn_id=turn.id,
        origin=turn.source,
        sender=turn.sender,
        execution_strategy="prompt",
        limits=memory.limits,
        owner=turn.owner,
    )
    started = ctx.clock()
    result, outcome = await memory.recall(request)
    lines = render(result) if result is not None else ()
    summary = outcome.to_json()
    if result is not None:
        summary["provider"] = result.provider
        summary["items"] = [
            {"id": i.id, "score": round(i.score, 4), "key": i.key, "kind": i.kind}
            for i in result.items
        ]
    # masked as the step's own data would be: by the runtime's policy (the context's)
    runtime: RuntimeView | None = ctx.runtime
    policy = runtime.redaction if runtime is not None else current()
    data, masked = _step_data(policy, summary, lines)
    ctx.defer_step(
        "memory_recall",
        data=data,
        status="completed" if outcome.ok else "failed",
        error=outcome.error,
        started_at=started,
        idempotency_key=key,
    )
    return Recalled(lines, data, outcome.degraded, masked)


def _step_data(
    policy: RedactionPolicy, summary: dict[str, Any], lines: tuple[str, ...]
) -> tuple[MaskedMap, MaskedMap]:
    """The recall's step data — ``summary`` and the ``rendered`` lines — and the summary
    alone (what the prompt build's step and the prompt trace store again), each masked
    by ``policy`` and encoded once. A step keeps a masked map as it is and
    stores its JSON: neither the lines nor the summary is walked or encoded again (the
    lines, remembered as clean by :func:`render`, are a cache lookup each)."""
    masked = policy.value(summary)
    encoded = dumps(masked)
    rendered = policy.value(list(lines))
    step = MaskedMap(
        {**masked, "rendered": rendered}, f'{encoded[:-1]},"rendered":{dumps(rendered)}}}'
    )
    return step, MaskedMap(masked, encoded)


def exchange_batch(
    memory: MemoryService | None, ctx: TurnContext, agent: AgentDefinition, answer: str
) -> MemoryWriteBatch | None:
    """The completed exchange to remember (``None`` when memory is off or not saving)."""
    if memory is None or ctx.turn.source not in memory.config.save_turns:
        return None
    turn = ctx.turn
    sender = turn.sender or "user"
    text = f"{sender}: {turn.input}\n{agent.name}: {answer}"
    # Masked at rest by the memory service; its parts were checked already (the input
    # in the model call's step, the answer with the turn's output): not scanned whole.
    parts = (sender, turn.input, agent.name, answer)
    text = composed_text(text, parts)
    if all(" ".join(part.split()) == part for part in parts):
        # Its one-line form, as render() shows it when recalled, is made of the same
        # parts (each already on one line): clean too.
        composed_text(" ".join(text.split()), parts)
    return MemoryWriteBatch(
        agent_uri=agent_uri(agent.name),
        agent_id=agent.name,
        entries=(MemoryEntry(text=text, kind="exchange"),),
        thread_id=turn.thread_id,
        turn_id=turn.id,
        origin="turn",
        owner=turn.owner,
    )
