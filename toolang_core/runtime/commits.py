"""The scheduler's commit path: turns' terminal states, committed in batches.

A turn's task hands in its terminal state (:class:`~toolang_core.store.types.Finish`)
instead of writing it; the scheduler's loop commits everything handed in since its last
pass in one ``finish_many`` transaction. A turn with post-turn stages waits for its
commit (:meth:`TurnCommits.commit`); any other turn's task ends at once
(:meth:`TurnCommits.hand_in`) and its slot stays taken until the commit frees it.
Records nobody waits for (what ran after each turn) are handed in too
(:meth:`TurnCommits.later`) and written by the same pass, in one transaction — or, when
no terminal state is handed in yet and other turns are still running, held for a later
pass's (``hold_records``): turns ending one by one (each as its memory write comes
back) would otherwise cost a transaction of its own for each one's record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.store.errors import StoreError
from toolang_core.store.json_text import check
from toolang_core.store.types import Finish, RecordWrite, TurnRequest

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnOutcome
    from toolang_core.redaction import RedactionPolicy
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.scheduler")

HOLD_SECONDS: Final = 1.0
"""Records are held for a later commit (``hold_records``) at most this long after the
first of them was handed in..."""
HOLD_MOST: Final = 256
"""...and while fewer than this many wait."""


class TurnCommits:
    """The terminal states handed in and not yet committed, for one scheduler."""

    def __init__(
        self,
        store: ExecutionStore,
        *,
        run_id: str,
        clock: Callable[[], float],
        free: Callable[[str], None],
        wake: asyncio.Event,
        turns: Mapping[str, TurnRequest],
        redaction: RedactionPolicy,
        committed: Callable[[Sequence[str]], None] | None = None,
    ) -> None:
        """``free(turn_id)`` releases an ended turn's slot once its state is committed;
        ``wake`` is set when something was handed in; ``turns`` (the scheduler's running
        turns, read only) names a turn's thread in the log; ``redaction`` (the runtime's
        policy) masks the outputs and errors stored; ``committed(turn_ids)`` is told of
        the turns each commit recorded (their doors are woken)."""
        self.store = store
        self._committed = committed
        self.redaction = redaction
        self.run_id = run_id
        self.clock = clock
        self._free = free
        self._wake = wake
        self._turns = turns
        self._finishing: list[tuple[Finish, asyncio.Future[bool] | None]] = []
        self._records: list[RecordWrite] = []
        self._records_since = 0.0
        """When the first of ``_records`` was handed in."""
        self.uncommitted: set[str] = set()
        """Turns whose task ended with their terminal state handed in, not yet committed:
        they keep their slot (and stay running) until the commit."""
        self._turn_log = log.bind()
        """Bound once: the module's lazy logger binds anew on every call."""

    def finish(
        self, turn: TurnRequest, outcome: TurnOutcome, records: tuple[RecordWrite, ...] = ()
    ) -> Finish:
        """The terminal state to record for ``turn`` (output and error redacted), with
        ``records`` to write in the same transaction if it is recorded."""
        redact_text = self.redaction.text
        return Finish(
            turn.id,
            self.run_id,
            turn.attempt,
            outcome.status,
            self.clock(),
            None if outcome.output is None else redact_text(outcome.output),
            outcome.outcome,
            None if outcome.error is None else redact_text(outcome.error),
            outcome.steps,
            records,
        )

    def hand_in(self, finish: Finish) -> None:
        """Queue ``finish`` for the next commit without waiting for it: the turn's slot
        stays taken until the commit frees it."""
        self.uncommitted.add(finish.turn_id)
        self._finishing.append((finish, None))
        self._wake.set()

    async def commit(self, finish: Finish) -> bool:
        """Hand the terminal state to the loop and wait until it is committed; whether it
        was recorded (``False``: fenced, another runtime owns the turn now)."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._finishing.append((finish, future))
        self._wake.set()
        return await future

    def later(
        self,
        kind: str,
        key: str,
        data: dict[str, Any],
        *,
        foreign: Sequence[object] | None = None,
    ) -> None:
        """Write the record ``kind/key`` (whatever its revision) with the next commit
        pass; a record that cannot be written is logged, not retried (for records that
        are a nicety: what ran after a turn).

        ``data`` is checked to encode as JSON here: it may ride in the transaction of
        turns' terminal states. ``foreign``: the parts of ``data`` a plugin handed in,
        when the caller built the rest of strings, numbers, flags, lists and dicts of
        its own; only they are checked (an encoding costs ~4 us a record)."""
        try:
            if foreign is None or foreign:  # nothing foreign: nothing to encode (~0.7 us)
                check(data if foreign is None else foreign)  # as the store writes it
        except (TypeError, ValueError) as exc:
            log.warning("record.write_failed", kind=kind, key=key, error=describe_exception(exc))
            return
        if not self._records:
            self._records_since = self.clock()
        self._records.append((kind, key, data))
        self._wake.set()

    def record(self, *, hold_records: bool = False) -> None:
        """Commit the terminal states handed in since the last call and the records
        handed in (:meth:`later`), in one transaction (the records in one of their own
        when no state is to be committed — unless ``hold_records``: the caller expects
        a terminal state soon, they wait for its commit, at most :data:`HOLD_SECONDS`
        and :data:`HOLD_MOST` records).

        A fenced result (another runtime owns the turn now) is logged here, whether or
        not the turn's task is still waiting for it: a lost lease may have canceled it.

        :raises StoreError: when the store is unreachable; the batch is kept and
            committed by a later call (the turns keep their leases meanwhile).
        """
        if self._finishing:
            self._record_finishing()
        if self._records and not (hold_records and self._holding()):
            self._write_records()

    def _holding(self) -> bool:
        """Whether the records handed in may wait for a later commit still."""
        return len(self._records) < HOLD_MOST and self.clock() - self._records_since < HOLD_SECONDS

    def _write_records(self) -> None:
        batch, self._records = self._records, []
        try:
            self.store.put_records(batch, now=self.clock())
        except Exception:
            for kind, key, data in batch:  # one that cannot be stored must not lose the rest
                try:
                    self.store.put_record(kind, key, data, now=self.clock())
                except Exception as exc:
                    log.warning(
                        "record.write_failed", kind=kind, key=key, error=describe_exception(exc)
                    )

    def _record_finishing(self) -> None:
        batch, self._finishing = self._finishing, []
        items = [item for item, _ in batch]
        # The records handed in ride with the first finish: one commit for all. Its
        # records are written only if it is recorded; if it is fenced, they are written
        # on their own below.
        carried, self._records = tuple(self._records), []
        if carried:
            items[0] = attrs.evolve(items[0], records=(*items[0].records, *carried))
        try:
            results = self.store.finish_many(items)
        except StoreError:
            self._finishing[:0] = batch
            self._records[:0] = carried
            raise
        except Exception as exc:
            self._records[:0] = carried
            self._refused(batch, exc)
            return
        if carried and results[:1] != [True]:  # fenced (or no answer): on their own
            self._records[:0] = carried
        if self._committed is not None:
            try:
                done = zip(items, results, strict=False)
                self._committed([item.turn_id for item, ok in done if ok])
            except Exception as exc:  # waking doors must never fail a commit
                log.warning("turn.signal_failed", error=describe_exception(exc))
        try:
            for (item, future), recorded in zip(batch, results, strict=True):
                if not recorded:
                    log.warning(
                        "turn.fenced",
                        turn=item.turn_id,
                        attempt=item.attempt,
                        reason="another runtime owns this turn now; its outcome was discarded",
                    )
                if future is None:  # its task has ended: the commit frees its slot
                    if recorded:
                        self.log_finished(item)
                    self.uncommitted.discard(item.turn_id)
                    self._free(item.turn_id)  # this pass admits into it next: no wake-up
                elif not future.done():
                    future.set_result(recorded)
        except Exception as exc:  # e.g. a store answering for fewer turns than it was given
            log.error("turn.finish_results_unreadable", error=describe_exception(exc))
            self._fail_batch(batch, exc, logged=True)

    def _refused(
        self, batch: list[tuple[Finish, asyncio.Future[bool] | None]], exc: Exception
    ) -> None:
        """After the store refused ``batch`` with ``exc``, not a :class:`StoreError`.
        A value it cannot write (``TypeError``, ``ValueError``): each finish is
        committed on its own, without the records handed in (they may be what was
        refused: :meth:`_write_records` writes them one by one if need be), so the one
        refused fails alone, not the turns it was committed with. Anything else (a
        statement timed out) fails the batch, not retried here turn by turn.

        :raises StoreError: as :meth:`record` (what was not committed is kept)."""
        alone = len(batch) == 1 and not self._records
        if not isinstance(exc, TypeError | ValueError) or alone:
            self._fail_batch(batch, exc)
            return
        rest = list(batch)
        held, self._records = self._records, []
        try:
            while rest:
                self._finishing = [rest.pop(0)]
                try:
                    self._record_finishing()
                except StoreError:
                    self._finishing.extend(rest)  # the call put its own finish back first
                    raise
        finally:
            self._records[:0] = held

    def record_or_drop(self) -> None:
        """:meth:`record`, at shutdown: a store that cannot be reached fails the batch
        (their leases expire and other runtimes recover those turns)."""
        try:
            self.record()
        except StoreError as exc:
            log.error("turn.finish_failed", error=describe_exception(exc))
            batch, self._finishing = self._finishing, []
            self._fail_batch(batch, exc)

    def log_finished(self, item: Finish) -> None:
        turn = self._turns.get(item.turn_id)
        self._turn_log.info(
            "turn.finished",
            turn=item.turn_id,
            thread=turn.thread_id if turn is not None else None,
            status=item.status._value_,
            output=(item.output or item.error or "")[:80],
        )

    def _fail_batch(
        self,
        batch: list[tuple[Finish, asyncio.Future[bool] | None]],
        exc: BaseException,
        *,
        logged: bool = False,
    ) -> None:
        """Free the slots of the batch's ended turns and fail the waiting ones; their
        leases expire and recovery requeues what was not recorded."""
        for item, future in batch:
            if future is None:
                if item.turn_id not in self.uncommitted:
                    continue  # dealt with before the failure
                if not logged:
                    log.error(
                        "turn.finish_failed", turn=item.turn_id, error=describe_exception(exc)
                    )
                self.uncommitted.discard(item.turn_id)
                self._free(item.turn_id)
            elif not future.done():
                future.set_exception(exc)
