"""The task book: tasks stored as records in the execution store."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Literal

import attrs
import cattrs

from toolang_core import ExecutionStore, Inbox, NewTurnRequest, UsageError

KIND = "source-task.task"
HANDED = "source-task.handed"
Status = Literal["todo", "doing", "done", "cancelled"]
STATUSES: tuple[str, ...] = ("todo", "doing", "done", "cancelled")
_REF = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_converter = cattrs.Converter()


@attrs.frozen
class Task:
    ref: str
    title: str
    body: str = ""
    status: Status = "todo"
    paused: bool = False
    requester: str = "owner"
    revision: int = 1
    created_at: float = 0.0
    updated_at: float = 0.0
    owner: str | None = None
    """Whose task it is: its turns run as this owner's (``None``: the operator's)."""
    agent: str | None = None
    """The agent that works on it (``None``: the default agent)."""
    due: float | None = None
    """Not handed to its agent before this time (epoch seconds; ``None``: at once)."""
    changed_by: str = ""
    """The key of the ``task_update`` call that made this revision (replays find it)."""

    @property
    def active(self) -> bool:
        return self.status in ("todo", "doing") and not self.paused

    @property
    def thread_id(self) -> str:
        return f"task:{self.ref}"

    def prompt(self) -> str:
        return f"Task {self.ref}: {self.title}\n\n{self.body}".rstrip()


def turn_id_of(task: Task) -> str:
    """The id of the turn that hands ``task``'s current revision over."""
    digest = hashlib.sha256(f"{task.ref}\0{task.revision}".encode()).hexdigest()
    return f"task-{digest[:32]}"


def check_ref(ref: str) -> str:
    if not _REF.match(ref):
        raise UsageError(
            f"task ref {ref!r}: use 1-64 lowercase letters, digits and '-' (starting with a "
            "letter or digit)"
        )
    return ref


class TaskBook:
    """Create, change and hand over tasks."""

    def __init__(self, store: ExecutionStore, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def get(self, ref: str) -> Task:
        record = self.store.get_record(KIND, ref)
        if record is None:
            raise UsageError(f"no task {ref!r} (see `toolang tasks list`)")
        return _converter.structure(dict(record.data), Task)

    def all(self) -> list[Task]:
        tasks = [_converter.structure(dict(r.data), Task) for r in self.store.list_records(KIND)]
        return sorted(tasks, key=lambda t: t.created_at)

    def add(
        self,
        title: str,
        *,
        body: str = "",
        ref: str | None = None,
        requester: str = "owner",
        owner: str | None = None,
        agent: str | None = None,
        due: float | None = None,
    ) -> Task:
        now = self.clock()
        task = Task(
            ref=check_ref(ref) if ref else secrets.token_hex(4),
            title=title,
            body=body,
            requester=requester,
            created_at=now,
            updated_at=now,
            owner=owner,
            agent=agent,
            due=due,
        )
        if self.store.get_record(KIND, task.ref) is not None:
            raise UsageError(f"task {task.ref!r} already exists")
        self.store.put_record(
            KIND, task.ref, _converter.unstructure(task), now=now, expect_revision=0
        )
        return task

    def change(self, ref: str, **changes: Any) -> Task:
        """Apply ``changes`` as a new revision (optimistic: a concurrent edit wins cleanly)."""
        record = self.store.get_record(KIND, ref)
        if record is None:
            raise UsageError(f"no task {ref!r} (see `toolang tasks list`)")
        current = _converter.structure(dict(record.data), Task)
        if "status" in changes and changes["status"] not in STATUSES:
            raise UsageError(f"status must be one of {', '.join(STATUSES)}")
        updated = attrs.evolve(
            current, **changes, revision=current.revision + 1, updated_at=self.clock()
        )
        self.store.put_record(
            KIND,
            ref,
            _converter.unstructure(updated),
            now=self.clock(),
            expect_revision=record.revision,
        )
        return updated

    def handed_revision(self, ref: str) -> int:
        record = self.store.get_record(HANDED, ref)
        return int(record.data["revision"]) if record else 0

    def mark_handed(self, task: Task) -> None:
        """Count ``task``'s revision as handed over: its own turn made the change (a
        status it reports), which is not work to hand back to it."""
        self.store.put_record(HANDED, task.ref, {"revision": task.revision}, now=self.clock())

    def submit_due(self, inbox: Inbox) -> list[str]:
        """Place a turn for every active task whose revision was not handed over yet.

        Each revision's turn has an id of its own (:func:`turn_id_of`): runtimes sharing
        one store that hand the same revision over at once, or a runtime killed after
        placing the turn and before counting it handed over, place it once — the store
        answers ``exists`` to the second submit (a task's tool would run twice otherwise)."""
        submitted = []
        for task in self.all():
            if not task.active or task.revision <= self.handed_revision(task.ref):
                continue
            inbox.submit(
                NewTurnRequest(
                    id=turn_id_of(task),
                    source="task",
                    thread_id=task.thread_id,
                    input=task.prompt(),
                    dedupe_key=task.ref,
                    sender=task.requester,
                    strategy="coalesce",
                    agent=task.agent,
                    owner=task.owner,
                    not_before=task.due,
                    meta={"task": {"ref": task.ref, "revision": task.revision}},
                )
            )
            self.store.put_record(HANDED, task.ref, {"revision": task.revision}, now=self.clock())
            submitted.append(task.ref)
        return submitted
