"""The web console: server-rendered pages over the same objects as the JSON API.

Pages read through the API's own helpers (and so its owner rules); the little
JavaScript in ``static/console.js`` writes through the JSON API and watches turns over
its SSE stream. No build step: Jinja2 templates, one CSS file, one JS file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import jinja2
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from toolang_core import (
    ApprovalBook,
    NotThreadOwner,
    TaskRunError,
    TaskRunFilter,
    TaskRunNotFound,
    TurnFilter,
    TurnStatus,
    check_thread,
    redact,
    sandbox_warning,
    threads_seen_by,
)
from toolang_server import api_catalog
from toolang_server.api_turns import not_yours, sees_turn, turn_json
from toolang_server.console.listing import WINDOW, paged
from toolang_server.http import ApiError, Caller, caller_of, runtime_of, store_of, to_json

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime

HERE: Final = Path(__file__).parent
STATIC: Final = {"console.css": "text/css", "console.js": "text/javascript"}


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "—"


def _ago(ts: float | None) -> str:
    if not ts:
        return "—"
    seconds = time.time() - ts
    for limit, unit, size in ((60, "s", 1), (3600, "min", 60), (86400, "h", 3600)):
        if seconds < limit:
            return f"{seconds / size:.0f} {unit} ago"
    return f"{seconds / 86400:.1f} d ago"


def _short(text: Any, width: int = 80) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


ENV: Final = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.ChainableUndefined,
)


def _pretty(value: Any) -> str:
    """A value as indented JSON (a page's raw-JSON view)."""
    import json

    return json.dumps(to_json(value), indent=2, ensure_ascii=False, default=str)


ENV.filters.update(when=_when, ago=_ago, short=_short, pretty=_pretty)


def _pending_count(runtime: Runtime, caller: Caller) -> int:
    pending = ApprovalBook(store_of(runtime)).list("pending")
    return sum(1 for a in pending if sees_turn(runtime, caller, a.turn_id))


def _open_questions(runtime: Runtime, caller: Caller) -> int:
    from toolang_server.console.questions import open_count

    return open_count(runtime, caller)


def render(request: Request, template: str, section: str, title: str, **values: Any) -> Response:
    runtime, caller = runtime_of(request), caller_of(request)
    html = ENV.get_template(template).render(
        title=title,
        section=section,
        pending_approvals=_pending_count(runtime, caller),
        open_questions=_open_questions(runtime, caller),
        principal=caller.principal,
        sandbox_warning=sandbox_warning(runtime.config.tools),
        # What the store holds is masked already; what a page echoes (a search) may not be.
        **redact(values),
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


def _turns(runtime: Runtime, caller: Caller, **where: Any) -> list[Any]:
    return store_of(runtime).list_turns(TurnFilter(owner=caller.owner, **where))


async def status_page(request: Request) -> Response:
    """Console: the runtime's state, thread groups and recent turns."""
    runtime, caller = runtime_of(request), caller_of(request)
    return render(
        request,
        "status.html",
        "/",
        "Status",
        status=api_catalog.status_json(runtime),
        turns=_turns(runtime, caller, limit=10),
        refresh=5,
    )


async def chat_index(request: Request) -> Response:
    """Console: the threads, and a form to start a chat."""
    runtime, caller = runtime_of(request), caller_of(request)
    every = threads_seen_by(store_of(runtime), caller.owner, limit=WINDOW)
    threads, pager = paged(request, every, lambda t: (t.thread_id, t.thread_group))
    return render(request, "chat_index.html", "/chat", "Chat", threads=threads, pager=pager)


async def chat_new(request: Request) -> Response:
    """Console: start a chat on a new thread (web:<name>)."""
    name = request.query_params.get("name", "").strip() or time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:80]
    return RedirectResponse(f"/chat/web:{quote(safe)}", status_code=303)


async def chat_page(request: Request) -> Response:
    """Console: one thread as a conversation, answers streamed as they are produced."""
    runtime, caller = runtime_of(request), caller_of(request)
    thread_id = request.path_params["thread_id"]
    try:  # the read rule's refusal at once, not an empty thread whose form refuses
        check_thread(store_of(runtime), thread_id, caller.owner, reading=True)
    except NotThreadOwner as exc:
        raise not_yours(exc) from None
    from toolang_server.console.actions import waiting_for

    turns = list(reversed(_turns(runtime, caller, thread_id=thread_id, limit=50)))
    agents = [a["name"] for a in api_catalog.agent_rows(runtime) if a["status"] == "active"]
    return render(
        request,
        "chat.html",
        "/chat",
        thread_id,
        thread_id=thread_id,
        turns=turns,
        agents=agents,
        # The thread keeps talking to the agent it last asked.
        agent=next((t.agent for t in reversed(turns) if t.agent), ""),
        waiting={t.id: waiting_for(runtime, t.id) for t in turns if not t.status.is_terminal},
        raw=[turn_json(t, runtime) for t in turns],
    )


async def turns_page(request: Request) -> Response:
    """Console: turn requests, filtered by status and thread."""
    runtime, caller = runtime_of(request), caller_of(request)
    status = request.query_params.get("status") or None
    statuses = [s.value for s in TurnStatus]
    thread_id = request.query_params.get("thread_id") or None
    every = _turns(
        runtime,
        caller,
        status=(TurnStatus(status),) if status in statuses else (),
        thread_id=thread_id,
        limit=WINDOW,
    )
    turns, pager = paged(
        request, every, lambda t: (t.id, t.thread_id, t.input, t.output, t.error, t.agent)
    )
    return render(
        request,
        "turns.html",
        "/turns",
        "Turns",
        turns=turns,
        pager=pager,
        statuses=statuses,
        status=status,
        thread_id=thread_id,
    )


async def approvals_page(request: Request) -> Response:
    """Console: approval requests, with approve and deny buttons."""
    from toolang_server.api_work import _approval_json, _mine

    runtime, caller = runtime_of(request), caller_of(request)
    every = [
        _approval_json(a)
        for a in ApprovalBook(store_of(runtime)).list()
        if _mine(runtime, caller, a)
    ]
    pending = [a for a in every if a["status"] == "pending"]
    decided, pager = paged(
        request,
        sorted(
            (a for a in every if a["status"] != "pending"),
            key=lambda a: a["decided_at"] or a["created_at"],
            reverse=True,
        ),
        lambda a: (a["id"], a["tool"], a["status"], a["decided_by"], a["thread_id"], a["reason"]),
    )
    return render(
        request,
        "approvals.html",
        "/approvals",
        "Approvals",
        pending=pending,
        decided=decided,
        pager=pager,
        refresh=3,
    )


async def runs_page(request: Request) -> Response:
    """Console: task runs, newest first."""
    runtime, caller = runtime_of(request), caller_of(request)
    every = runtime.task_runs.list(TaskRunFilter(owner=caller.owner, limit=WINDOW))
    runs, pager = paged(
        request,
        every,
        lambda r: (r.id, r.task, r.summary, r.agent_name, r.owner, r.parent_thread_id),
    )
    return render(request, "runs.html", "/task-runs", "Task runs", runs=runs, pager=pager)


async def run_page(request: Request) -> Response:
    """Console: one task run with its transcript and a cancel button."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    try:
        run = runtime.task_runs.get(run_id, owner=caller.owner)
    except TaskRunNotFound:
        raise ApiError(404, f"no task run with id {run_id!r}", field="run_id") from None
    events: list[Any] = []
    note = ""
    try:
        events = list(runtime.task_runs.read_transcript(run_id, owner=caller.owner).events)
    except TaskRunError as exc:
        note = str(exc)
    return render(
        request,
        "run.html",
        "/task-runs",
        f"Task run {run.id[-8:]}",
        run=run,
        raw=run.to_json(),
        events=events,
        transcript_note=note,
        refresh=0 if run.status.is_terminal else 3,
    )


async def chores_page(request: Request) -> Response:
    """Console: chores, their schedules and latest turns."""
    chores = api_catalog.chores_of(runtime_of(request), caller_of(request))
    return render(request, "chores.html", "/chores", "Chores", chores=chores)


async def agents_page(request: Request) -> Response:
    """Console: agents, their health and tool assignment."""
    runtime = runtime_of(request)
    return render(
        request,
        "agents.html",
        "/agents",
        "Agents",
        agents=api_catalog.agent_rows(runtime),
        assignment=runtime.agents.assignment.to_json(),
    )


async def plugins_page(request: Request) -> Response:
    """Console: plugins and the hooks as registered."""
    runtime = runtime_of(request)
    rows = api_catalog.plugin_rows(runtime, request.app.state.routes)
    for row in rows:
        row["route_errors"] = [
            f.error for f in request.app.state.route_failures if f.plugin == row["name"]
        ]
    return render(
        request,
        "plugins.html",
        "/plugins",
        "Plugins",
        plugins=rows,
        families=api_catalog.hook_families(runtime),
    )


async def memory_page(request: Request) -> Response:
    """Console: search what an agent remembers."""
    from toolang_server.http import to_json

    runtime = runtime_of(request)
    q = request.query_params.get("q", "").strip()
    values: dict[str, Any] = {
        "q": q,
        "agent": request.query_params.get("agent", ""),
        "thread_id": request.query_params.get("thread_id", ""),
        "memory": runtime.config.memory.plugin or "off",
    }
    if q:
        try:
            values["result"] = to_json(
                await api_catalog.search_memory(
                    runtime,
                    caller_of(request),
                    q,
                    agent=values["agent"] or None,
                    thread_id=values["thread_id"] or None,
                )
            )
        except ApiError as exc:
            values["error"] = exc.message
    return render(request, "memory.html", "/memory", "Memory", **values)


async def static_file(request: Request) -> Response:
    """Console: its stylesheet and script."""
    name = request.path_params["name"]
    if name not in STATIC:
        raise ApiError(404, f"no static file {name!r}", field="name", expected=", ".join(STATIC))
    return FileResponse(HERE / "static" / name, media_type=STATIC[name])


def register(register_route: RegisterRoute) -> None:
    register_route("/", status_page)
    register_route("/chat", chat_index)
    register_route("/chat/new", chat_new)
    register_route("/chat/{thread_id:path}", chat_page)
    register_route("/turns", turns_page)
    register_route("/approvals", approvals_page)
    register_route("/task-runs", runs_page)
    register_route("/task-runs/{run_id}", run_page)
    register_route("/chores", chores_page)
    register_route("/agents", agents_page)
    register_route("/plugins", plugins_page)
    register_route("/memory", memory_page)
    register_route("/console/static/{name}", static_file, auth=False)
