"""``toolang memory search|list|forget|stats``: the configured memory plugin, by hand.

Every command works on one agent's memory (``--agent``, default ``[agents] default``)
through the same service the runtime uses — the same scoping, limits and timeouts.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli.output import echo_json, short, table, when
from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.memory.service import MemoryService
    from toolang_core.memory.types import MemoryItem


def _memory(state: CliState) -> MemoryService:
    from toolang_core.errors import UsageError

    memory = state.runtime.memory
    if memory is None:
        raise UsageError(
            f"memory is off in {state.config.display_name}: set [memory] plugin (e.g. "
            '"sqlite" with toolang-memory-sqlite installed)'
        )
    return memory


def _run(memory: MemoryService, work: Any) -> Any:
    from toolang_core.errors import ToolangError
    from toolang_core.memory.service import MemoryUnavailable

    async def call() -> Any:
        try:
            return await work
        except MemoryUnavailable as exc:
            raise ToolangError(str(exc)) from None

    try:
        return asyncio.run(call())
    finally:
        memory.close()


def _agent(state: CliState, agent: str | None) -> str:
    return agent or state.config.agents.default


def _items(items: tuple[MemoryItem, ...], as_json: bool) -> None:
    if as_json:
        echo_json(list(items))
        return
    if not items:
        click.echo("nothing found")
        return
    table(
        [
            [
                i.id,
                i.key or "-",
                i.kind,
                f"{i.score:.3f}",
                i.provenance.thread_id or "-",
                when(i.provenance.updated_at or i.provenance.created_at),
                short(i.text, 60),
            ]
            for i in items
        ],
        ["id", "key", "kind", "score", "thread", "updated", "text"],
    )


@click.group()
def memory() -> None:
    """The memory plugin: search, browse, forget, and its health."""


@memory.command("search")
@click.argument("query")
@click.option(
    "--owner",
    default=None,
    help="Whose memory: an owner's (as their turns were submitted); default: the operator's.",
)
@click.option("--agent", default=None, help="Whose memory (default: [agents] default).")
@click.option("--thread", "thread_id", default=None, help="Only this thread's entries.")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def memory_search(
    state: CliState,
    *,
    query: str,
    owner: str | None,
    agent: str | None,
    thread_id: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """What an agent remembers about QUERY, best first."""
    from toolang_core.memory.types import MemoryLimits

    service = _memory(state)
    limits = MemoryLimits(max_items=limit, max_chars=max(service.config.max_chars, 100_000))
    result = _run(
        service,
        service.search(
            _agent(state, agent),
            query,
            thread_id=thread_id,
            limits=limits,
            origin="cli",
            owner=owner,
        ),
    )
    if as_json:
        echo_json(result)
        return
    for fact in result.facts:
        click.echo(f"fact: {fact.text}")
    _items(result.items, False)


@memory.command("list")
@click.option(
    "--owner",
    default=None,
    help="Whose memory: an owner's (as their turns were submitted); default: the operator's.",
)
@click.option("--agent", default=None, help="Whose memory (default: [agents] default).")
@click.option("--thread", "thread_id", default=None)
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def memory_list(
    state: CliState,
    *,
    owner: str | None,
    agent: str | None,
    thread_id: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """An agent's entries, newest first."""
    from toolang_core.memory.types import MemoryListRequest

    service = _memory(state)
    request = MemoryListRequest(
        agent_id=_agent(state, agent), thread_id=thread_id, limit=limit, owner=owner
    )
    _items(_run(service, service.list_entries(request)), as_json)


@memory.command("forget")
@click.option(
    "--owner",
    default=None,
    help="Whose memory: an owner's (as their turns were submitted); default: the operator's.",
)
@click.option("--agent", default=None, help="Whose memory (default: [agents] default).")
@click.option("--key", "keys", multiple=True, help="Forget the entry saved under KEY.")
@click.option("--thread", "thread_id", default=None, help="Forget this thread's entries.")
@click.option("--kind", default=None, help="Forget entries of this kind (note, fact, …).")
@click.option("--all", "everything", is_flag=True, help="Forget everything of the agent.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def memory_forget(
    state: CliState,
    *,
    owner: str | None,
    agent: str | None,
    keys: tuple[str, ...],
    thread_id: str | None,
    kind: str | None,
    everything: bool,
    yes: bool,
) -> None:
    """Delete an agent's entries: by --key, or by --thread / --kind, or --all."""
    from toolang_core.errors import UsageError
    from toolang_core.memory.types import MemoryForget

    name = _agent(state, agent)
    if keys and (thread_id or kind or everything):
        raise UsageError("give either --key, or --thread / --kind / --all")
    if not keys and not (thread_id or kind or everything):
        raise UsageError("say what to forget: --key K, --thread T, --kind K, or --all")
    if everything and not yes:
        click.confirm(f"forget everything agent {name!r} remembers?", abort=True, err=True)
    service = _memory(state)
    forgotten = _run(
        service,
        service.forget(
            MemoryForget(agent_id=name, keys=keys, thread_id=thread_id, kind=kind, owner=owner)
        ),
    )
    click.echo(f"forgot {forgotten} entr{'y' if forgotten == 1 else 'ies'} of agent {name!r}")


@memory.command("stats")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def memory_stats(state: CliState, as_json: bool) -> None:
    """The memory plugin's health: status, entries, size, last error."""
    service = _memory(state)
    health = _run(service, service.health())
    if as_json:
        echo_json(health)
        return
    rows = [
        ("plugin", service.name),
        ("provider", health.provider),
        ("status", health.status),
        ("entries", "-" if health.entries is None else str(health.entries)),
        ("size", "-" if health.size_bytes is None else f"{health.size_bytes:,} bytes"),
        ("detail", health.detail or "-"),
        (
            "last error",
            f"{health.last_error} ({when(health.last_error_at)})" if health.last_error else "-",
        ),
    ]
    for name, value in rows:
        click.echo(f"{name:<11}{value}")
    if health.status == "down":
        raise SystemExit(1)
