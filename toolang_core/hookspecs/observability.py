"""Observability hooks: watch turns as they run, and report health to ``toolang doctor``.

The turn hooks are called on every turn's own path, synchronously and never awaited,
so a tracer or a metrics plugin can open and close spans at the right moments. Each
implementation is isolated: one that raises is logged (``hook.failed``) and the turn
goes on. The runtime asks whether anyone implements them once per run: with no
implementation they cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, COLLECT, MERGE, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.doctor.check import DoctorCheck
    from toolang_core.execution.seam import StageDone
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import StepRecord, TurnRequest


@calling_rule(BROADCAST, awaited=False)
@hookspec
def toolang_turn_started(turn: TurnRequest, runtime: RuntimeView) -> None:
    """A turn was admitted and is about to run.

    Called in the turn's own task right before its executor starts, with the turn as
    claimed (``status`` running, ``started_at`` set, ``attempt``). Return ``None``; keep
    it quick and never block — it runs on every turn's path.
    """


@calling_rule(BROADCAST, awaited=False)
@hookspec
def toolang_turn_step(step: StepRecord, runtime: RuntimeView) -> None:
    """A step of a running turn was stored: memory recall, prompt build, model call,
    tool call, transfer, … with its data as stored (masked by the redaction policy).

    Called right after the store took the finished step (a tool call: its result, not
    the intent stored before it ran); a turn's final steps (stored with its
    terminal state) are passed when its task ends, before ``toolang_turn_finished``.
    Return ``None``; never block.
    """


@calling_rule(BROADCAST, awaited=False)
@hookspec
def toolang_turn_finished(
    turn: TurnRequest, stages: Sequence[StageDone], runtime: RuntimeView
) -> None:
    """A turn's task ended: its outcome is decided and its post-turn stages ran.

    ``turn`` carries the outcome (``status``, ``outcome``, ``error``, ``finished_at``);
    ``stages`` lists what the post-turn stages did, in order (empty when there was
    nothing to do after the turn). Called once for every turn ``toolang_turn_started``
    was called for — also when this runtime gave the turn up without an outcome: then
    ``turn.outcome`` is ``released`` (handed back to the queue at shutdown) or
    ``lease_lost`` (another runtime took it over). Return ``None``; never block.
    """


@calling_rule(MERGE, awaited=False)
@hookspec
def toolang_outbound_headers(
    turn: TurnRequest, key: str, runtime: RuntimeView
) -> Mapping[str, str] | None:
    """Headers a running turn should send with a call it makes to another service.

    Called by the core right before each model call of a turn (``key`` is that call's
    step key, as in ``ModelRequest.key``); every plugin's headers are merged (a later
    plugin's header replaces an earlier one's) and reach the model provider as
    ``ModelRequest.headers``, which a provider calling out over HTTP — the ``a2a``
    provider of remote agents — sends. A tracer returns the W3C ``traceparent`` (and
    ``tracestate``) so the remote side continues the turn's trace. Return a mapping of
    header names to values, or ``None``; never block.
    """


@calling_rule(COLLECT)
@hookspec
def toolang_doctor_checks(runtime: RuntimeView) -> Iterable[DoctorCheck] | None:
    """Report on this plugin's health for ``toolang doctor``.

    Called once per ``toolang doctor`` with a configured runtime that is not serving
    (its store is not open; open it read-only with ``runtime.open_store(read_only=True)``
    if you need it). Return :class:`~toolang_core.DoctorCheck` findings (``area``,
    ``status`` ``ok|info|warn|fail``, ``summary``, ``details``) or ``None``. A plugin
    that raises is reported as a failed check naming it.
    """
