"""Durable questions to a person: the records behind the built-in ``ask_person`` tool.

A question is a record of the execution store, keyed by turn and tool call (so a turn
resumed after a crash finds its question — and the answer, if one came meanwhile —
instead of asking again), with an index by id and one of open questions. A person
answers from any process (``toolang questions answer``, the console, the HTTP API, an
A2A reply); never a process a tool started (:meth:`QuestionBook.answer` refuses it, the
same rule as approvals). Every answer is sealed with the runtime's approval key
(:mod:`toolang_core.tools.approval_seal`): an answer written straight into the store by
someone without the key is ignored, the question reads as open, and
``question.answer_forged`` is logged.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
import cattrs
import structlog

from toolang_core.errors import ToolangError
from toolang_core.ids import new_id
from toolang_core.questions.answers import check_answer
from toolang_core.redaction import redact_text
from toolang_core.store.errors import RecordConflict
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.approval_seal import ApprovalKey, ApprovalKeyError, ApprovalKeyFile, when
from toolang_core.tools.approvals import refuse_tool_processes

log = structlog.get_logger("toolang.questions")

KIND = "toolang.question"
BY_ID_KIND = "toolang.question.id"
OPEN_KIND = "toolang.question.open"
"""Open questions only (key → id, turn): what lists and sweeps read, never the history."""
Status = Literal["open", "answered", "expired"]
_converter = cattrs.Converter()


class QuestionError(ToolangError):
    """A question is unknown, or no longer open."""

    exit_code = 6


@attrs.frozen
class Question:
    """One question a model asked a person and, once given, the answer."""

    id: str
    key: str
    turn_id: str
    call_id: str
    thread_id: str
    agent: str
    owner: str | None
    """Whose turn asked: only they (or the operator) see and answer it."""
    text: str
    created_at: float
    choices: tuple[str, ...] | None = None
    schema: dict[str, Any] | None = None
    expires_at: float | None = None
    status: Status = "open"
    answer: Any = None
    answered_at: float | None = None
    answered_by: str | None = None
    reason: str | None = None
    seal: str | None = None
    """The approval key's seal over the answer (``None`` while open)."""

    def sealed_fields(self) -> tuple[Any, ...]:
        """What the seal covers: the question, the call it is for, the answer."""
        return (
            "question",
            self.id,
            self.key,
            self.thread_id,
            self.text,
            self.status,
            self.answer,
            self.answered_by,
            when(self.answered_at),
            self.reason,
        )

    def reopened(self) -> Question:
        """This question with no answer on it."""
        return attrs.evolve(
            self, status="open", answer=None, answered_at=None, answered_by=None, reason=None
        )

    def to_json(self) -> dict[str, Any]:
        """The question as the CLI, the API and the console show it (text masked)."""
        from toolang_core.redaction import redact

        data: dict[str, Any] = _converter.unstructure(self)
        data.pop("seal", None)
        data.pop("key", None)
        data["text"] = redact_text(self.text)
        data["answer"] = redact(self.answer) if self.answer is not None else None
        return data


class QuestionBook:
    """Questions in ``store``. Asking and reading open questions need no key; answering,
    expiring and reading an answer do (:class:`ApprovalKeyError` without one)."""

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
        self._reported: set[tuple[str, str | None]] = set()

    def _key(self) -> ApprovalKey:
        source = self._key_source
        if source is None:
            raise ApprovalKeyError(
                f"the store {getattr(self.store, 'location', '')!r} was opened without an "
                "approval key, so answers can be neither sealed nor checked: open it with "
                "Runtime.open_store(), or pass QuestionBook(store, key=...)"
            )
        return source if isinstance(source, ApprovalKey) else source.load()

    def _checked(self, question: Question) -> Question:
        """``question`` if open or sealed by our key; else, as forged, open."""
        if question.status == "open" or self._key().verify(question.sealed_fields(), question.seal):
            return question
        if (question.id, question.seal) not in self._reported:
            self._reported.add((question.id, question.seal))
            log.warning(
                "question.answer_forged",
                question=question.id,
                turn=question.turn_id,
                claimed_by=redact_text(str(question.answered_by)),
                note="its seal does not check with the approval key: ignored, still open",
            )
        return question.reopened()

    def _load(self, key: str) -> tuple[Question, int] | None:
        record = self.store.get_record(KIND, key)
        if record is None:
            return None
        question = _converter.structure(dict(record.data), Question)
        return self._checked(question), record.revision

    def _save(self, question: Question, revision: int) -> Question:
        if question.status != "open":
            question = attrs.evolve(question, seal=self._key().seal(question.sealed_fields()))
        self.store.put_record(
            KIND,
            question.key,
            _converter.unstructure(question),
            now=self.clock(),
            expect_revision=revision,
        )
        return question

    def for_call(self, turn_id: str, call_id: str) -> Question | None:
        """The question asked by this tool call of this turn, if any."""
        found = self._load(f"{turn_id}:{call_id}")
        return found[0] if found else None

    def ask(
        self,
        *,
        turn_id: str,
        call_id: str,
        thread_id: str,
        agent: str,
        owner: str | None,
        text: str,
        choices: tuple[str, ...] | None = None,
        schema: Mapping[str, Any] | None = None,
        timeout_seconds: float | None = None,
    ) -> Question:
        """A new open question for this call (or the one it asked before a restart)."""
        key = f"{turn_id}:{call_id}"
        existing = self._load(key)
        if existing is not None:
            return existing[0]
        now = self.clock()
        question = Question(
            id=new_id("q"),
            key=key,
            turn_id=turn_id,
            call_id=call_id,
            thread_id=thread_id,
            agent=agent,
            owner=owner,
            text=text,
            created_at=now,
            choices=choices,
            schema=dict(schema) if schema is not None else None,
            expires_at=None if timeout_seconds is None else now + timeout_seconds,
        )
        try:
            self._save(question, 0)
        except RecordConflict:  # asked concurrently: take the one that won
            won = self._load(key)
            assert won is not None
            return won[0]
        self.store.put_record(BY_ID_KIND, question.id, {"key": key}, now=now)
        self.store.put_record(OPEN_KIND, key, {"id": question.id, "turn_id": turn_id}, now=now)
        return question

    def get(self, question_id: str) -> Question:
        """:raises QuestionError: for an unknown id."""
        index = self.store.get_record(BY_ID_KIND, question_id)
        found = self._load(str(index.data["key"])) if index is not None else None
        if found is None:
            raise QuestionError(f"no question {question_id!r} (see `toolang questions list`)")
        return found[0]

    def list(self, status: Status | None = "open") -> builtins.list[Question]:
        """Questions, oldest first: the open ones (default), of one status, or all."""
        if status == "open":
            keys = [str(r.key) for r in self.store.list_records(OPEN_KIND)]
            found = [self._load(k) for k in keys]
            questions = [f[0] for f in found if f is not None]
        else:
            questions = [
                self._checked(_converter.structure(dict(r.data), Question))
                for r in self.store.list_records(KIND)
            ]
        if status is not None:
            questions = [q for q in questions if q.status == status]
        return sorted(questions, key=lambda q: q.created_at)

    def for_turn(self, turn_id: str) -> Question | None:
        """The open question ``turn_id`` waits on, if any."""
        for record in self.store.list_records(OPEN_KIND):
            if record.data.get("turn_id") == turn_id:
                found = self._load(str(record.key))
                if found is not None and found[0].status == "open":
                    return found[0]
        return None

    def answer(self, question_id: str, text: str, *, by: str) -> Question:
        """Record ``text`` as the answer, checked against the question's choices or
        schema. ``by`` names who answered, as the door that checked them says
        (``cli:<os user>``, ``console:<owner>``, ``token:<owner>``, ``a2a:<owner>``).

        :raises DecisionFromTool: when called from a process a tool started.
        :raises AnswerRefused: when the answer does not fit (the question stays open).
        :raises ApprovalKeyError: when there is no key to seal the answer.
        :raises QuestionError: when the question is unknown, answered, expired, or its
            turn has ended.
        """
        refuse_tool_processes(f"answer question {question_id}")
        self._key()  # no key, no answer: before anything is written
        found = self._load(self.get(question_id).key)
        assert found is not None
        current, revision = found
        if current.status != "open":
            raise QuestionError(f"question {current.id} was already {current.status}")
        value = check_answer(text, current.choices, current.schema)
        turn = self.store.get(current.turn_id)
        if turn is None or turn.status.is_terminal:
            ended = turn.status.value if turn is not None else "gone"
            self.expire(current, reason=f"its turn ended ({ended}) before anyone answered")
            raise QuestionError(
                f"question {current.id}: turn {current.turn_id} already ended ({ended}); "
                "nothing waits for this answer any more"
            )
        answered = attrs.evolve(
            current, status="answered", answer=value, answered_at=self.clock(), answered_by=by
        )
        try:
            saved = self._save(answered, revision)
        except RecordConflict:
            raise QuestionError(f"question {current.id} was answered meanwhile") from None
        self.store.delete_record(OPEN_KIND, saved.key)
        return saved

    def expire(self, question: Question, *, reason: str = "nobody answered in time") -> Question:
        """Mark an open question expired (no-op when it was answered meanwhile)."""
        found = self._load(question.key)
        if found is None or found[0].status != "open":
            return found[0] if found else question
        expired = attrs.evolve(found[0], status="expired", answered_at=self.clock(), reason=reason)
        try:
            saved = self._save(expired, found[1])
        except RecordConflict:
            refreshed = self._load(question.key)
            assert refreshed is not None
            return refreshed[0]
        self.store.delete_record(OPEN_KIND, saved.key)
        return saved

    def expire_ended(self) -> builtins.list[Question]:
        """Expire every open question whose turn has ended (or is gone), e.g. canceled
        while no runtime watched it; return what it expired. Called after each
        heartbeat, like the approvals' sweep."""
        expired = []
        for record in self.store.list_records(OPEN_KIND):
            found = self._load(str(record.key))
            if found is None or found[0].status != "open":
                self.store.delete_record(OPEN_KIND, record.key)
                continue
            turn = self.store.get(found[0].turn_id)
            if turn is None or turn.status.is_terminal:
                ended = turn.status.value if turn is not None else "gone"
                expired.append(self.expire(found[0], reason=f"its turn ended ({ended})"))
        return expired

    async def wait(self, question: Question, *, poll_seconds: float = 0.2) -> Question:
        """Wait until ``question`` is answered or expires; return its final state."""
        while True:
            found = self._load(question.key)
            current = found[0] if found else question
            if current.status != "open":
                return current
            if current.expires_at is not None and self.clock() >= current.expires_at:
                return self.expire(current)
            await asyncio.sleep(poll_seconds)
