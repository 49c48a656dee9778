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
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.approval_seal import ApprovalKey, ApprovalKeyFile, same_stored, when
from toolang_core.tools.approvals import refuse_tool_processes
from toolang_core.tools.decision_book import DecisionBook

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
    request_seal: str | None = None
    """The approval key's seal over the question, made with it (``None``: asked by a
    version before questions were sealed; such a question cannot be answered)."""

    def sealed_fields(self) -> tuple[Any, ...]:
        """What the seal covers: the question, the call it is for, the answer (and the
        question's own seal, when it has one)."""
        fields: tuple[Any, ...] = (
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
        if self.request_seal is not None:
            fields += (["request", self.request_seal],)
        return fields

    def request_fields(self) -> tuple[Any, ...]:
        """What the request seal covers: what is asked, whose, and by which call."""
        return (
            "question-request",
            self.id,
            self.key,
            self.turn_id,
            self.call_id,
            self.thread_id,
            self.agent,
            self.owner,
            self.text,
            None if self.choices is None else list(self.choices),
            self.schema,
            when(self.created_at),
            when(self.expires_at),
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
        data.pop("request_seal", None)
        data.pop("key", None)
        data["text"] = redact_text(self.text)
        data["answer"] = redact(self.answer) if self.answer is not None else None
        return data


class QuestionBook(DecisionBook[Question]):
    """Questions in ``store``. Every use needs the approval key
    (:class:`ApprovalKeyError` without one): a question is sealed when it is asked, and
    a question or answer whose seal does not check does not count."""

    _record_type = Question
    _kind = KIND
    _by_id_kind = BY_ID_KIND
    _waiting_kind = OPEN_KIND
    _waiting = "open"
    _noun = "question"
    _decided = "answered"
    _decision_noun = "answer"
    _decided_at = "answered_at"
    _error = QuestionError
    _expired_reason = "nobody answered in time"
    _unknown = "no question {id!r} (see `toolang questions list`)"

    def __init__(
        self,
        store: ExecutionStore,
        *,
        key: ApprovalKey | ApprovalKeyFile | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(store, key=key, clock=clock)

    def _undecided(self, record: Question) -> Question:
        return record.reopened()

    def _report_unsealed(self, record: Question) -> None:
        log.warning(
            "question.request_forged",
            question=record.id,
            turn=record.turn_id,
            note="its request seal does not check with the approval key: read as expired",
        )

    def _report_forged(self, record: Question) -> None:
        log.warning(
            "question.answer_forged",
            question=record.id,
            turn=record.turn_id,
            claimed_by=redact_text(str(record.answered_by)),
            note="its seal does not check with the approval key: ignored, still open",
        )

    def for_call(self, turn_id: str, call_id: str) -> Question | None:
        """The question asked by this tool call of this turn, if any."""
        return self._for_call(turn_id, call_id)

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
            found = existing[0]
            asked = (text, None if choices is None else list(choices), schema)
            if same_stored((found.text, found.choices, found.schema), asked):
                return found
            # the call asks something else than its question (changed in the store
            # since): that question's answer is no answer to this one
            return self._unsealed(attrs.evolve(found, id=""))
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
        return self._add(question, now)

    def get(self, question_id: str) -> Question:
        """:raises QuestionError: for an unknown id."""
        return self._get(question_id)

    def list(self, status: Status | None = "open") -> builtins.list[Question]:
        """Questions, oldest first: the open ones (default), of one status, or all."""
        if status == "open":
            keys = [str(r.key) for r in self.store.list_records(OPEN_KIND)]
            found = [self._load(k) for k in keys]
            questions = [f[0] for f in found if f is not None]
        else:
            questions = [
                self._in_place(str(r.key), _converter.structure(dict(r.data), Question))
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
                # (the index is no proof: the question itself must be this turn's)
                if found is not None and found[0].status == "open" and found[0].turn_id == turn_id:
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
        return self._decide(
            question_id,
            lambda current: {
                "status": "answered",
                "answer": check_answer(text, current.choices, current.schema),
                "answered_by": by,
            },
        )

    def expire(self, question: Question, *, reason: str = "nobody answered in time") -> Question:
        """Mark an open question expired (no-op when it was answered meanwhile)."""
        return self._expire(question, reason)

    def expire_ended(self) -> builtins.list[Question]:
        """Expire every open question whose turn has ended (or is gone), e.g. canceled
        while no runtime watched it; return what it expired. Called after each
        heartbeat, like the approvals' sweep."""
        return self._expire_ended()

    async def wait(self, question: Question, *, poll_seconds: float = 0.2) -> Question:
        """Wait until ``question`` is answered or expires; return its final state."""
        return await self._wait(question, poll_seconds)
