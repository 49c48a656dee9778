"""What approvals and questions share: a person's decision, kept as a sealed record.

An approval request (:mod:`toolang_core.tools.approvals`) and a question to a person
(:mod:`toolang_core.questions.book`) are the same kind of thing: a record of the
execution store, keyed by turn and tool call, with an index by id and one of records
still waiting, that a person decides once — from a process no tool started — and whose
decision is sealed with the runtime's approval key
(:mod:`toolang_core.tools.approval_seal`). A decision whose seal does not check was
written by someone without the key: it is ignored (the record reads as waiting) and
reported. A waiting record whose turn ends, or whose time runs out, expires.

The request is sealed too, when it is made (``request_seal``, over what it asks and
for which call, as stored): a request changed in the store afterwards — to show a
person ``ls`` for a call of ``rm -rf ~`` — or made by a version before requests were
sealed reads as expired (:data:`UNSEALED_REASON`), so nobody can decide it and the call
it was made for does not run. A decision's seal covers the request's seal.

:class:`DecisionBook` holds that logic once; each book says its record type, its record
kinds and its words (``approval``/``decided``/``decision`` …) as class attributes.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

import attrs
import cattrs

from toolang_core.errors import ToolangError
from toolang_core.store.errors import RecordConflict
from toolang_core.store.json_text import dumps
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.approval_seal import ApprovalKey, ApprovalKeyError, ApprovalKeyFile

_converter = cattrs.Converter()

R = TypeVar("R", bound="DecisionRecord")

UNSEALED_REASON = (
    "its request does not check with the approval key (changed in the store after it "
    "was made, or made by a version before requests were sealed); nobody can decide it"
)
"""Why a waiting record whose request seal does not check reads as expired."""


class DecisionRecord(Protocol):
    """What a record a person decides offers the book that keeps it (an attrs class)."""

    @property
    def id(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def seal(self) -> str | None: ...
    @property
    def request_seal(self) -> str | None: ...
    @property
    def expires_at(self) -> float | None: ...

    def sealed_fields(self) -> tuple[Any, ...]:
        """What the seal covers."""
        ...

    def request_fields(self) -> tuple[Any, ...]:
        """What the request seal covers: what is asked, and for which call."""
        ...


def _evolve(record: R, **changes: Any) -> R:
    """``attrs.evolve`` for a record type the type checker knows only by its protocol."""
    evolved: R = attrs.evolve(cast(Any, record), **changes)
    return evolved


class DecisionBook(Generic[R]):
    """Create, find, decide, expire and await one kind of sealed decision record.

    ``key`` seals and checks decisions: by default the approval key the store was
    opened with (:attr:`~toolang_core.store.base.StoreBase.approval_key`). Every use
    needs it (:class:`ApprovalKeyError` without one): a request is sealed when it is
    made and checked whenever it is read."""

    _record_type: ClassVar[type[Any]]
    _kind: ClassVar[str]
    _by_id_kind: ClassVar[str]
    _waiting_kind: ClassVar[str]
    """Waiting records only (key → id, turn): what sweeps read, never the history."""
    _waiting: ClassVar[str]
    """The status of a record nobody decided yet (``pending``, ``open``)."""
    _noun: ClassVar[str]
    """The record as messages name it (``approval``, ``question``)."""
    _decided: ClassVar[str]
    """What a person did to it (``decided``, ``answered``)."""
    _decision_noun: ClassVar[str]
    """What a person gives (``decision``, ``answer``)."""
    _decided_at: ClassVar[str]
    """The record's field for when it was decided (``decided_at``, ``answered_at``)."""
    _error: ClassVar[type[ToolangError]]
    _expired_reason: ClassVar[str]
    """Why a record expired when its time ran out."""
    _unknown: ClassVar[str]
    """The message for an unknown id, with ``{id!r}`` in it."""

    def __init__(
        self,
        store: ExecutionStore,
        *,
        key: ApprovalKey | ApprovalKeyFile | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.clock = clock
        self._key_source = key if key is not None else getattr(store, "approval_key", None)
        self._reported: set[tuple[str, str, str | None]] = set()
        """Forged records already logged by this book (a wait reads one every poll)."""

    def _key(self) -> ApprovalKey:
        source = self._key_source
        if source is None:
            raise ApprovalKeyError(
                f"the store {getattr(self.store, 'location', '')!r} was opened without an "
                f"approval key, so {self._decision_noun}s can be neither sealed nor checked: open "
                f"it with Runtime.open_store(), or pass {type(self).__name__}(store, key=...)"
            )
        return source if isinstance(source, ApprovalKey) else source.load()

    def _undecided(self, record: R) -> R:
        """``record`` with no decision on it."""
        raise NotImplementedError

    def _report_forged(self, record: R) -> None:
        """Log a record whose decision's seal does not check (once per book)."""
        raise NotImplementedError

    def _report_unsealed(self, record: R) -> None:
        """Log a waiting record whose request seal does not check (once per book)."""
        raise NotImplementedError

    def _checked(self, record: R) -> R:
        """``record`` as it counts: a decision sealed by our key over a request sealed
        by it (or made before requests were sealed) stands; a forged one is undone; a
        waiting request whose own seal does not check reads as expired."""
        key = self._key()
        if record.status != self._waiting:
            if key.verify(record.sealed_fields(), record.seal) and (
                record.request_seal is None or self._request_holds(record, key)
            ):
                return record
            record = self._forged(record)
        if self._request_holds(record, key):
            return record
        return self._unsealed(record)

    @staticmethod
    def _request_holds(record: R, key: ApprovalKey) -> bool:
        return record.request_seal is not None and key.verify(
            record.request_fields(), record.request_seal
        )

    def _unsealed(self, record: R) -> R:
        """``record``, whose request does not check, as expired (logged once)."""
        reported = ("request", record.id, record.request_seal)
        if reported not in self._reported:
            self._reported.add(reported)
            self._report_unsealed(record)
        return _evolve(self._undecided(record), status="expired", reason=UNSEALED_REASON)

    def _forged(self, record: R) -> R:
        """``record``, whose decision does not count, undecided (logged once)."""
        reported = ("decision", record.id, record.seal)
        if reported not in self._reported:
            self._reported.add(reported)
            self._report_forged(record)
        return self._undecided(record)

    def _structure(self, data: Any) -> R:
        structured: R = _converter.structure(dict(data), self._record_type)
        return structured

    def _load(self, key: str) -> tuple[R, int] | None:
        record = self.store.get_record(self._kind, key)
        if record is None:
            return None
        return self._in_place(key, self._structure(record.data)), record.revision

    def _in_place(self, key: str, found: R) -> R:
        """``found``, stored under ``key``, as it counts there: a record of another
        request copied here is no request of this place — it reads as expired, under
        this place's key and no id (so that nothing waits on, or decides, the original
        through it)."""
        if found.key != key:
            return self._unsealed(_evolve(found, key=key, id=""))
        return self._checked(found)

    def _stored(self, record: R) -> R:
        """``record`` as the store gives it back: sealed so (and read back), since the
        store writes a NUL out as \\x00 (toolang_core.store.json_text), which would not
        check with a seal of the NUL."""
        return self._structure(json.loads(dumps(_converter.unstructure(record))))

    def _save(self, record: R, revision: int) -> R:
        record = self._stored(record)
        if record.status != self._waiting:
            record = _evolve(record, seal=self._key().seal(record.sealed_fields()))
        self.store.put_record(
            self._kind,
            record.key,
            _converter.unstructure(record),
            now=self.clock(),
            expect_revision=revision,
        )
        return record

    def _for_call(self, turn_id: str, call_id: str) -> R | None:
        """The record made for this tool call of this turn, if any."""
        found = self._load(f"{turn_id}:{call_id}")
        return found[0] if found else None

    def _add(self, record: R, now: float) -> R:
        """Store a new waiting ``record``, its request sealed (or take the one a
        concurrent caller stored). The id's index is written first: a crash between
        the two leaves an index to nothing (no one has that id), never a record its id
        cannot find."""
        record = self._stored(record)
        record = _evolve(record, request_seal=self._key().seal(record.request_fields()))
        self.store.put_record(self._by_id_kind, record.id, {"key": record.key}, now=now)
        try:
            saved = self._save(record, 0)
        except RecordConflict:  # created concurrently: take the one that won
            won = self._load(record.key)
            assert won is not None
            return won[0]
        self.store.put_record(
            self._waiting_kind, record.key, {"id": record.id, "turn_id": record.turn_id}, now=now
        )
        return saved

    def _get(self, record_id: str) -> R:
        """:raises: the book's error for an unknown id."""
        index = self.store.get_record(self._by_id_kind, record_id)
        found = self._load(str(index.data["key"])) if index is not None else None
        if found is None or found[0].id != record_id:  # (an index pointed elsewhere)
            raise self._error(self._unknown.format(id=record_id))
        return found[0]

    def _decide(self, record_id: str, decide: Callable[[R], Mapping[str, Any]]) -> R:
        """Record the decision ``decide`` makes of the waiting record ``record_id``: the
        fields it sets (the time it was made is added).

        ``decide`` is called before the record's turn is checked (it may refuse the
        decision: the record stays waiting). The caller has refused tool processes.

        :raises ApprovalKeyError: when there is no approval key to seal the decision.
        :raises: the book's error when the record is unknown, no longer waiting, its
            turn has ended, or it was decided meanwhile.
        """
        self._key()  # no key, no decision: before anything is written
        found = self._load(self._get(record_id).key)
        assert found is not None
        current, revision = found
        if current.status != self._waiting:
            raise self._error(f"{self._noun} {current.id} was already {current.status}")
        changes = decide(current)
        turn = self.store.get(current.turn_id)
        if turn is None or turn.status.is_terminal:
            ended = turn.status.value if turn is not None else "gone"
            self._expire(current, f"its turn ended ({ended}) before anyone {self._decided}")
            raise self._error(
                f"{self._noun} {current.id}: turn {current.turn_id} already ended ({ended}); "
                f"nothing waits for this {self._decision_noun} any more"
            )
        decided = _evolve(current, **changes, **{self._decided_at: self.clock()})
        try:
            saved = self._save(decided, revision)
        except RecordConflict:
            raise self._error(f"{self._noun} {current.id} was {self._decided} meanwhile") from None
        self.store.delete_record(self._waiting_kind, saved.key)
        return saved

    def _expire(self, record: R, reason: str) -> R:
        """Mark a waiting record expired (no-op when it was decided meanwhile)."""
        found = self._load(record.key)
        if found is None or found[0].status != self._waiting:
            return found[0] if found else record
        expired = _evolve(
            found[0], status="expired", reason=reason, **{self._decided_at: self.clock()}
        )
        try:
            saved = self._save(expired, found[1])
        except RecordConflict:
            refreshed = self._load(record.key)
            assert refreshed is not None
            return refreshed[0]
        self.store.delete_record(self._waiting_kind, saved.key)
        return saved

    def _expire_ended(self) -> builtins.list[R]:
        """Expire every waiting record whose turn has ended (or is gone) — turns that
        ended while no runtime watched them, e.g. canceled while their runtime was down.
        Called at start-up and after each heartbeat; return what it expired."""
        expired = []
        for record in self.store.list_records(self._waiting_kind):
            found = self._load(str(record.key))
            if found is None or found[0].status != self._waiting:
                self.store.delete_record(self._waiting_kind, record.key)
                continue
            turn = self.store.get(found[0].turn_id)
            if turn is None or turn.status.is_terminal:
                ended = turn.status.value if turn is not None else "gone"
                expired.append(self._expire(found[0], f"its turn ended ({ended})"))
        return expired

    async def _wait(self, record: R, poll_seconds: float) -> R:
        """Wait until ``record`` is decided or expires; return its final state."""
        while True:
            found = self._load(record.key)
            current = found[0] if found else record
            if current.id != record.id:  # another request in its place: not this one's
                return self._unsealed(record)
            if current.status != self._waiting:
                return current
            if current.expires_at is not None and self.clock() >= current.expires_at:
                return self._expire(current, self._expired_reason)
            await asyncio.sleep(poll_seconds)
