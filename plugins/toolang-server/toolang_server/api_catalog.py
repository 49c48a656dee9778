"""What the runtime is made of and how it is doing: status, health, agents, plugins,
hooks, memory search."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import (
    FAMILIES,
    NotThreadOwner,
    Schedule,
    TurnFilter,
    __version__,
    check_thread,
)
from toolang_server import models
from toolang_server.api_turns import not_yours
from toolang_server.http import (
    ApiError,
    Caller,
    caller_of,
    ok,
    runtime_of,
    store_of,
)
from toolang_server.openapi import operation
from toolang_server.schema import parse_query

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute, Runtime


@operation(responses={200: models.Health, 503: models.Health}, errors=())
async def health(request: Request) -> Response:
    """Liveness: 200 while the runtime admits work (no token needed)."""
    runtime = runtime_of(request)
    return ok(
        {"ok": runtime.admitting, "run_id": runtime.run_id}, 200 if runtime.admitting else 503
    )


def status_json(runtime: Runtime) -> dict[str, Any]:
    store = runtime.inbox.store if runtime.inbox is not None else None
    load = store.group_load() if store is not None else {}
    scheduler = runtime.scheduler
    return {
        "version": __version__,
        "run_id": runtime.run_id,
        "admitting": runtime.admitting,
        "store": store.location if store is not None else None,
        "admitted": scheduler.admitted if scheduler is not None else 0,
        "max_running": runtime.config.scheduler.max_running,
        "groups": [
            {
                "group": group,
                "running": load.get(group, (0, 0))[0],
                "queued": load.get(group, (0, 0))[1],
                "max_running": runtime.policy.group(group).max_running,
            }
            for group in sorted(set(runtime.policy.groups) | set(load))
        ],
        "plugins": len(runtime.plugins.active_names),
        "plugin_failures": [r.name for r in runtime.plugins.failures],
        "memory": runtime.config.memory.plugin or "off",
        "time": time.time(),
    }


@operation(responses={200: dict[str, Any]}, errors=())
async def status(request: Request) -> Response:
    """The runtime: run, store, admission, queue depth per thread group."""
    return ok(status_json(runtime_of(request)))


def agent_rows(runtime: Runtime) -> list[dict[str, Any]]:
    catalog = runtime.agents
    rows = []
    for definition in catalog.registry.all():
        health = catalog.registry.health.get(definition.name)
        rows.append(
            {
                "name": definition.name,
                "source": definition.source,
                "status": definition.status,
                "description": definition.description,
                "model": definition.model,
                "health": attrs.asdict(health) if health is not None else {"state": "local"},
                "tools": sorted(catalog.assignment.scope(definition.name)),
            }
        )
    return rows


@operation(responses={200: list[dict[str, Any]]}, errors=())
async def agents(request: Request) -> Response:
    """Every agent with its source, status, health and the tools in its scope."""
    return ok(agent_rows(runtime_of(request)))


@operation(responses={200: dict[str, Any]}, errors=())
async def agent_tools(request: Request) -> Response:
    """Tool assignment: each tool's owning agent, grants, and the unmatched tools."""
    return ok(runtime_of(request).agents.assignment.to_json())


def plugin_rows(runtime: Runtime, routes: Any = ()) -> list[dict[str, Any]]:
    """Every plugin (active ones first) with what it provides, its routes included."""
    plugins, components = runtime.plugins, runtime.components
    active = set(plugins.active_names)
    rows = []
    for record in sorted(plugins.records, key=lambda r: (r.name not in active, r.name)):
        row = record.to_json()
        row["provides"] = components.provided_by(record.name)
        mine = sorted({r.path for r in routes if r.plugin == record.name})
        if mine:
            row["provides"]["routes"] = mine
        rows.append(row)
    return rows


@operation(responses={200: list[dict[str, Any]]}, errors=())
async def plugins(request: Request) -> Response:
    """Every plugin: distribution, version, hooks, status, error, what it provides."""
    rows = plugin_rows(runtime_of(request), request.app.state.routes)
    failed = request.app.state.route_failures
    for row in rows:
        mine = [f.error for f in failed if f.plugin == row["name"]]
        if mine:
            row["route_errors"] = mine
    return ok(rows)


def hook_families(runtime: Runtime) -> list[dict[str, Any]]:
    facade = runtime.plugins
    families = []
    for family in FAMILIES:
        if family.key == "tool-hooks":
            entries: list[dict[str, Any]] = [
                {"stage": stage, "hook": hook, "plugins": impls}
                for stage, hook, impls in facade.chain()
            ]
            seen = {e["hook"] for e in entries}
            entries += [
                {"hook": h, "plugins": facade.implementations(h)}
                for h in family.hook_names
                if h not in seen
            ]
        else:
            entries = [{"hook": h, "plugins": facade.implementations(h)} for h in family.hook_names]
        families.append({"family": family.key, "title": family.title, "hooks": entries})
    return families


@operation(responses={200: list[dict[str, Any]]}, errors=())
async def hooks(request: Request) -> Response:
    """Each hook family and the plugins this run calls for it, in call order (chain in order).

    The tool-call chain is listed in its fixed order, stage by stage. A hook a plugin
    named inactive for the run (``toolang_inactive_hooks``) is not listed for it."""
    return ok(hook_families(runtime_of(request)))


async def search_memory(
    runtime: Runtime,
    caller: Caller,
    query: str,
    *,
    agent: str | None = None,
    thread_id: str | None = None,
    limit: int = 10,
) -> Any:
    """What ``agent`` remembers for the caller about ``query``: the caller's own memory
    (of ``thread_id`` only, when given — one of the caller's threads).

    :raises ApiError: no query, memory off, another owner's thread, a failing plugin."""
    from toolang_core.memory import MemoryLimits

    if not query:
        raise ApiError(400, "q is required", field="q", expected="a non-empty search text")
    memory = runtime.memory
    if memory is None:
        raise ApiError(
            409,
            "memory is off: set [memory] plugin in toolang.toml",
            field="q",
            expected="a runtime with a memory plugin",
        )
    if thread_id is not None:
        try:  # a search reads the thread: the operator may, an owner only its own
            check_thread(store_of(runtime), thread_id, caller.owner, reading=True)
        except NotThreadOwner as exc:
            raise not_yours(exc) from None
    limits = MemoryLimits(max_items=limit, max_chars=max(memory.config.max_chars, 100_000))
    try:
        # Memory belongs to an owner: the caller's own entries, never another's (the
        # operator, ``None``, searches the operator's).
        return await memory.search(
            agent or runtime.config.agents.default,
            query,
            thread_id=thread_id,
            limits=limits,
            origin="http",
            owner=caller.owner,
        )
    except Exception as exc:
        raise ApiError(
            503, f"memory search failed: {exc}", field="q", expected="a healthy memory plugin"
        ) from None


@operation(query=models.MemoryQuery, responses={200: dict[str, Any]}, errors=(400, 404, 409, 503))
async def memory_search(request: Request) -> Response:
    """What an agent remembers about q (agent, thread_id, limit)."""
    query = parse_query(models.MemoryQuery, {"q": "", **request.query_params})
    result = await search_memory(
        runtime_of(request),
        caller_of(request),
        query.q.strip(),
        agent=query.agent or None,
        thread_id=query.thread_id or None,
        limit=query.limit,
    )
    return ok(result)


def chores_of(runtime: Runtime, caller: Caller) -> list[dict[str, Any]]:
    """The declared chores (``[plugins.source-chore] chores``, read from that plugin's
    validated settings) with their next occurrence and their thread's latest turn."""
    settings = runtime.settings.get("source-chore")
    now = time.time()
    out = []
    for chore in getattr(settings, "chores", ()):
        try:
            upcoming = Schedule(chore.schedule, now).next_after(now)
        except ValueError:
            upcoming = None
        last = store_of(runtime).list_turns(
            TurnFilter(thread_id=f"chore:{chore.key}", owner=caller.owner, limit=1)
        )
        out.append(
            {
                "key": chore.key,
                "schedule": chore.schedule,
                "input": chore.input,
                "agent": chore.agent,
                "paused": chore.paused,
                "next": upcoming,
                "last": last[0] if last else None,
            }
        )
    return out


@operation(responses={200: list[dict[str, Any]]}, errors=())
async def chores(request: Request) -> Response:
    """Declared chores: schedule, next occurrence, latest turn on their thread."""
    found = chores_of(runtime_of(request), caller_of(request))
    for chore in found:
        last = chore["last"]
        chore["last"] = (
            None
            if last is None
            else {"turn_id": last.id, "status": last.status.value, "created_at": last.created_at}
        )
    return ok(found)


def register(register_route: RegisterRoute) -> None:
    register_route("/api/health", health, auth=False)
    register_route("/api/status", status)
    register_route("/api/agents", agents)
    register_route("/api/agents/tools", agent_tools)
    register_route("/api/plugins", plugins)
    register_route("/api/hooks", hooks)
    register_route("/api/memory/search", memory_search)
    register_route("/api/chores", chores)
