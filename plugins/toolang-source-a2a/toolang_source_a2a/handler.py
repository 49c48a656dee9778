"""The A2A request handler over the execution store: every answer is read from, and
every request written to, the store — so any process serving the store answers."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from toolang_core import (
    NewTurnRequest,
    NotThreadOwner,
    SubmitRejected,
    TurnFilter,
    TurnRequest,
    TurnSignals,
    UsageError,
    check_thread,
    may_see,
    new_id,
    trace_context_meta,
    trace_context_of,
    with_attachments,
)
from toolang_source_a2a import questions
from toolang_source_a2a.files import split_parts, take_files
from toolang_source_a2a.restarts import META_KEY, not_resumed
from toolang_source_a2a.tasks import (
    FINAL,
    SCHEMA_MEDIA_TYPE,
    SCHEMA_META_KEY,
    TASK_RUN_FLAG,
    THREAD_PREFIX,
    a2a_context,
    artifact_of,
    status_of,
    task_of,
    turn_id_for,
)

if TYPE_CHECKING:
    from toolang_core import Follow, Inbox, Runtime
    from toolang_source_a2a.settings import A2ASettings

_CONTEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,119}$")


def caller_of(context: ServerCallContext) -> str:
    return str(context.state["a2a_caller"])


def trace_meta_of(context: ServerCallContext) -> dict[str, Any]:
    """The caller's W3C trace context (``traceparent``/``tracestate`` headers), as the
    turn request's metadata entry: a tracer parents the turn's span from it."""
    return trace_context_meta(context.state.get("headers") or {})


class StoreRequestHandler(RequestHandler):
    """A2A methods for one runtime; the agent and caller come in the call context."""

    def __init__(self, runtime: Runtime, settings: A2ASettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self._inbox: Inbox | None = None

    @property
    def inbox(self) -> Inbox:
        # The serving runtime's inbox shares its store connection and wakes its
        # scheduler at once; a runtime that only serves routes opens its own.
        serving = getattr(self.runtime, "inbox", None)
        if serving is not None:
            return serving  # type: ignore[no-any-return]
        if self._inbox is None:
            self._inbox = self.runtime.open_inbox()
        return self._inbox

    def _own_turn(self, task_id: str, context: ServerCallContext) -> TurnRequest:
        """The caller's turn ``task_id``; another caller's is as unknown as a missing one."""
        turn = self.inbox.store.get(task_id) if task_id else None
        if turn is None or not may_see(turn.owner, caller_of(context)) or a2a_context(turn) is None:
            raise TaskNotFoundError(message=f"Task not found: {task_id!r}")
        return turn

    # -- sending ---------------------------------------------------------------------

    async def _submit(self, params: SendMessageRequest, context: ServerCallContext) -> TurnRequest:
        message = params.message
        caller = caller_of(context)
        if not message.message_id:
            raise InvalidParamsError(message="message.messageId is required")
        typed = output_schema_of(message)
        text, files = _text_and_files(message)
        if message.task_id:
            earlier = self._own_turn(message.task_id, context)
            thread = earlier.thread_id
            if message.context_id and THREAD_PREFIX + message.context_id != thread:
                raise InvalidParamsError(
                    message=f"contextId {message.context_id!r} is not task {earlier.id!r}'s"
                )
            if questions.open_question(self.inbox.store, earlier) is not None:
                return await self._answer(earlier, text, caller)
        else:
            ctx = message.context_id or new_id()
            if not _CONTEXT.match(ctx):
                raise InvalidParamsError(
                    message="contextId: letters, digits, '_', '.', ':' and '-' (at most 120)"
                )
            thread = THREAD_PREFIX + ctx
        task_run = _wants_task_run(message)
        if task_run or files:
            # The one owner rule, before a task run is spawned from the context, or the
            # files are taken (a plain submit is refused by the store itself).
            self._check_thread(thread, caller)
        turn_id = turn_id_for(caller, message.message_id)
        # the caller does not follow the task across a restart of this runtime
        once = {META_KEY: False} if not_resumed(message) else {}
        if task_run:
            if typed:
                raise InvalidParamsError(
                    message="an answer schema is for chat turns: work handed over as a task "
                    f"run ({TASK_RUN_FLAG}) answers in text"
                )
            if files:
                raise ContentTypeNotSupportedError(
                    message="work handed over as a task run takes text parts only"
                )
            return await self._spawn(thread, text, turn_id, message.message_id, context, once=once)
        agent = str(context.state["a2a_agent"])
        refs = take_files(self.runtime, self.inbox.store, files, owner=caller, agent=agent)
        try:
            self.inbox.submit(
                NewTurnRequest(
                    source="chat",
                    thread_id=thread,
                    input=text,
                    sender=caller,
                    owner=caller,
                    channel="a2a",
                    agent=agent,
                    meta=with_attachments(
                        {
                            "a2a_message_id": message.message_id,
                            **trace_meta_of(context),
                            **once,
                            **typed,
                        },
                        refs,
                    ),
                    id=turn_id,
                )
            )
        except (NotThreadOwner, UsageError) as exc:  # UsageError: a field the inbox refused
            raise InvalidParamsError(message=str(exc)) from None
        except SubmitRejected as exc:
            raise InvalidParamsError(message=f"not accepted: {exc}") from None
        return self.inbox.get(turn_id)

    def _check_thread(self, thread: str, caller: str) -> None:
        """:raises InvalidParamsError: ``thread`` is another owner's."""
        try:
            check_thread(self.inbox.store, thread, caller)
        except NotThreadOwner as exc:
            raise InvalidParamsError(message=str(exc)) from None

    async def _answer(self, turn: TurnRequest, text: str, caller: str) -> TurnRequest:
        """The caller's reply to a task waiting on a question is the answer: recorded,
        then the turn, once it took it (or ``wait_seconds`` passed)."""
        waiting = questions.open_question(self.inbox.store, turn)
        assert waiting is not None
        answered = questions.answer(self.inbox.store, waiting, text, caller)
        await questions.moved_on(
            self.inbox.store,
            answered,
            poll_seconds=self.settings.poll_seconds,
            timeout=self.settings.wait_seconds,
        )
        return self.inbox.get(turn.id)

    async def _spawn(
        self,
        thread: str,
        text: str,
        run_id: str,
        message_id: str,
        context: ServerCallContext,
        *,
        once: dict[str, bool],
    ) -> TurnRequest:
        """Handed-over work asking for durable tracking: a task run of the caller."""
        from toolang_core import SpawnRequest, TaskRunError, TaskRunExists

        caller = caller_of(context)
        try:
            await self.runtime.task_runs.spawn(
                SpawnRequest(
                    owner=caller,
                    parent_thread_id=thread,
                    task=text,
                    agent_name=str(context.state["a2a_agent"]),
                    sender=caller,
                    spawn_reason="handed over over A2A",
                    metadata={
                        "a2a_message_id": message_id,
                        "a2a_context": thread.removeprefix(THREAD_PREFIX),
                        # the caller's W3C trace context: the run continues its trace
                        **trace_context_of(context.state.get("headers") or {}),
                        **{key: "false" for key in once},
                    },
                    id=run_id,
                )
            )
        except TaskRunExists:
            pass  # the same message again: the same run
        except (TaskRunError, RuntimeError) as exc:
            raise InvalidParamsError(message=f"not accepted as a task run: {exc}") from None
        return self.inbox.get(run_id)

    async def _settle(self, turn: TurnRequest, timeout: float) -> TurnRequest:
        """Wait until the turn is final for the caller (or ``timeout`` passes)."""
        deadline = time.monotonic() + timeout
        # Its end, even in another runtime of a shared store, wakes the wait early.
        with TurnSignals.of(self.runtime).follow(turn.id) as follow:
            while not is_final(turn) and time.monotonic() < deadline:
                await follow.wait(self.settings.poll_seconds)
                turn = self.inbox.get(turn.id)
        return turn

    def _task(self, turn: TurnRequest, *, history: bool = True) -> Task:
        """``turn`` as a task; one waiting on a question shows it as its status text."""
        waiting = questions.open_question(self.inbox.store, turn)
        asked = questions.asking(waiting) if waiting is not None else None
        task = task_of(turn, history=history, agents=self.runtime.agents, question=asked)
        if waiting is not None:
            questions.describe(task, waiting)
        return task

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        turn = await self._submit(params, context)
        if not params.configuration.return_immediately:
            turn = await self._settle(turn, self.settings.wait_seconds)
        return self._task(turn)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        turn = await self._submit(params, context)
        async for event in self._follow(turn):
            yield event

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        turn = self._own_turn(params.id, context)
        if turn.status.is_terminal:
            raise UnsupportedOperationError(message=f"task {turn.id!r} is already final")
        async for event in self._follow(turn):
            yield event

    async def _follow(self, turn: TurnRequest) -> AsyncGenerator[Any]:
        """The task, then a status update at every change, the answer, the end."""
        yield self._task(turn)
        last = status_of(turn).state
        with TurnSignals.of(self.runtime).follow(turn.id) as follow:
            async for event in self._changes(turn, last, follow):
                yield event

    async def _changes(self, turn: TurnRequest, last: Any, follow: Follow) -> AsyncGenerator[Any]:
        while True:
            if is_final(turn):
                artifact = artifact_of(turn, self.runtime.agents)
                if artifact is not None:
                    yield TaskArtifactUpdateEvent(
                        task_id=turn.id,
                        context_id=self._task(turn, history=False).context_id,
                        artifact=artifact,
                        last_chunk=True,
                    )
                yield self._update(turn)
                return
            await follow.wait(self.settings.poll_seconds)
            turn = self.inbox.get(turn.id)
            state = status_of(turn).state
            if state != last and not is_final(turn):
                yield self._update(turn)
            last = state

    def _update(self, turn: TurnRequest) -> TaskStatusUpdateEvent:
        task = self._task(turn, history=False)
        return TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )

    # -- tasks -----------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        return self._task(self._own_turn(params.id, context))

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        turn = self._own_turn(params.id, context)
        if turn.status.is_terminal:
            raise TaskNotCancelableError(message=f"task {turn.id!r} is already {turn.status.value}")
        self.inbox.cancel(turn.id, reason=f"canceled over A2A by {caller_of(context)}")
        # A running turn stops at its next step; give it a moment so the answer is final.
        settled = await self._settle(self.inbox.get(turn.id), min(5.0, self.settings.wait_seconds))
        return self._task(settled)

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        limit = params.page_size or 50
        if not 1 <= limit <= 100:
            raise InvalidParamsError(message="pageSize: expected 1 to 100")
        turns = self.inbox.store.list_turns(
            TurnFilter(
                thread_id=THREAD_PREFIX + params.context_id if params.context_id else None,
                owner=caller_of(context),
                limit=limit,
            )
        )
        tasks = [self._task(t) for t in turns if a2a_context(t) is not None]
        return ListTasksResponse(tasks=tasks, page_size=limit, total_size=len(tasks))

    # -- not offered -----------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError


def is_final(turn: TurnRequest) -> bool:
    return status_of(turn).state in FINAL


def _text_and_files(message: Message) -> tuple[str, list[Any]]:
    """The message's text parts joined, and its file parts.

    :raises InvalidParamsError: when there is no text (see also :func:`split_parts`)."""
    texts, files = split_parts(message.parts)
    text = "\n".join(texts).strip()
    if not text:
        raise InvalidParamsError(message="message.parts must hold some text")
    return text, files


def output_schema_of(message: Message) -> dict[str, Any]:
    """The turn request metadata asking for a typed answer: the JSON Schema in a data
    part of media type :data:`SCHEMA_MEDIA_TYPE`, or in the message metadata's
    :data:`SCHEMA_META_KEY`; none when the message has neither.

    :raises InvalidParamsError: when it is not a usable JSON Schema (nothing stored)."""
    from a2a.helpers.proto_helpers import get_data_parts

    from toolang_core import OUTPUT_SCHEMA, SchemaError, check_schema

    schema_parts = [
        part
        for part in message.parts
        if part.WhichOneof("content") == "data" and part.media_type == SCHEMA_MEDIA_TYPE
    ]
    found: list[tuple[str, Any]] = [
        (f"the data part of media type {SCHEMA_MEDIA_TYPE}", data)
        for data in get_data_parts(schema_parts)
    ]
    fields = message.metadata.fields
    if SCHEMA_META_KEY in fields:
        found.append((f"metadata.{SCHEMA_META_KEY}", _value_of(fields[SCHEMA_META_KEY])))
    if not found:
        return {}
    if len(found) > 1:
        raise InvalidParamsError(message="give the answer's JSON Schema once")
    where, schema = found[0]
    try:
        return {OUTPUT_SCHEMA: check_schema(schema, where=where)}
    except SchemaError as exc:
        raise InvalidParamsError(message=str(exc)) from None


def _value_of(value: Any) -> Any:
    """A ``google.protobuf.Value`` (message metadata) as plain JSON data."""
    from a2a.helpers.proto_helpers import get_data_parts
    from a2a.types.a2a_pb2 import Part

    return get_data_parts([Part(data=value)])[0]


def _wants_task_run(message: Message) -> bool:
    fields = message.metadata.fields
    return TASK_RUN_FLAG in fields and fields[TASK_RUN_FLAG].bool_value
