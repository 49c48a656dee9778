"""``toolang agents``: the agents, sources and tool assignment the runtime really uses.

Every subcommand reads the same :class:`~toolang_core.agents.catalog.AgentCatalog` the
agent executor reads — the sources are loaded, merged and partitioned exactly as for
a turn — so nothing here is configuration echoed back.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import attrs
import click

from toolang_core.cli.output import echo_json, table
from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.agents.catalog import AgentCatalog
    from toolang_core.agents.types import AgentDefinition

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@click.group()
def agents() -> None:
    """Agents from every registry source, their health and their tools."""


def _health(catalog: AgentCatalog, definition: AgentDefinition) -> dict[str, Any]:
    health = catalog.registry.health.get(definition.name)
    if health is None:
        return {"state": "local", "detail": "", "checked_at": None}
    return attrs.asdict(health)


def _row(catalog: AgentCatalog, definition: AgentDefinition) -> dict[str, Any]:
    return {
        "name": definition.name,
        "source": definition.source,
        "status": definition.status,
        "idle": catalog.idle_reason(definition) if definition.status == "active" else None,
        "health": _health(catalog, definition),
        "origin": definition.origin,
        "description": definition.description,
        "skills": list(definition.skills),
    }


def _shadowed_rows(catalog: AgentCatalog) -> list[dict[str, Any]]:
    """A row per remote agent refused for a local agent's name (status ``shadowed``),
    after the local one: the name reaches the local agent, never the remote."""
    rows = []
    for hidden in catalog.registry.shadowed:
        health = hidden.health
        rows.append(
            {
                **_row(catalog, hidden.remote),
                "status": "shadowed",
                "health": attrs.asdict(health) if health else {"state": "-", "detail": ""},
                "shadowed_by": {"source": hidden.by.source, "origin": hidden.by.origin},
            }
        )
    return rows


def _not_loaded_rows(catalog: AgentCatalog) -> list[dict[str, Any]]:
    """A row per definition file that did not load (status ``not loaded``, ``error``
    saying why): a broken AGENT.md is marked in the list, not silently missing."""
    rows: list[dict[str, Any]] = []
    shadowed = {s.diagnostic for s in catalog.registry.shadowed}
    for problem in catalog.registry.errors:
        if problem in shadowed or not problem.origin:
            continue
        origin = PurePath(problem.origin)
        name = origin.parent.name if origin.name == "AGENT.md" else origin.name
        rows.append(
            {
                "name": name,
                "source": "-",
                "status": "not loaded",
                "idle": None,
                "health": {"state": "-", "detail": "", "checked_at": None},
                "origin": problem.origin,
                "description": "",
                "skills": [],
                "error": str(problem),
            }
        )
    return rows


def _status_text(row: dict[str, Any]) -> str:
    if row["status"] == "active" and row.get("idle"):
        return "idle"
    return str(row["status"])


def _fail_if_not_loaded(catalog: AgentCatalog) -> None:
    """Warn about each remote agent a local one shadows; exit 1 when a definition was not
    loaded (a file unreadable, invalid, refused), each on stderr with its file and error:
    what was printed is not every agent."""
    registry = catalog.registry
    for hidden in registry.shadowed:
        click.echo(f"warning: {hidden.message}", err=True)
    shadowed = {s.diagnostic for s in registry.shadowed}
    errors = [e for e in registry.errors if e not in shadowed]
    if not errors:
        return
    click.echo(f"error: {len(errors)} agent definition(s) not loaded:", err=True)
    for problem in errors:
        click.echo(f"  {problem}", err=True)
    click.get_current_context().exit(1)


@agents.command("list")
@_JSON
@pass_state
def list_agents(state: CliState, as_json: bool) -> None:
    """Every agent (active and disabled): name, source, status, health, origin, skills.
    A remote agent a local one shadows (same name) is listed as ``shadowed``; an
    active agent with nothing to act with (no installed tool in its scope) as ``idle``,
    with why (it is not offered to routing or delegation); a definition file that did
    not load as ``not loaded``, with its error.

    Exits 1 when a definition was not loaded, naming its file and the error."""
    catalog = state.runtime.agents
    rows = [_row(catalog, d) for d in catalog.registry.all()]
    for hidden in _shadowed_rows(catalog):  # right after the local agent of its name
        at = next((i for i, r in enumerate(rows) if r["name"] == hidden["name"]), len(rows))
        rows.insert(at + 1, hidden)
    rows.extend(_not_loaded_rows(catalog))
    if as_json:
        echo_json(rows)
    else:
        table(
            [
                [
                    r["name"],
                    r["source"],
                    _status_text(r),
                    r["health"]["state"],
                    r["origin"] or "-",
                    ", ".join(r["skills"]) or "-",
                ]
                for r in rows
            ],
            ["NAME", "SOURCE", "STATUS", "HEALTH", "ORIGIN", "SKILLS"],
        )
        for r in rows:
            if r.get("idle"):
                click.echo(f"{r['name']}: idle, not offered to routing or delegation: {r['idle']}")
            elif r["status"] == "not loaded":
                click.echo(f"{r['name']}: not loaded: {r['error']}")
    _fail_if_not_loaded(catalog)


@agents.command()
@_JSON
@pass_state
def status(state: CliState, as_json: bool) -> None:
    """Each source's counts and load problems; agents per source; unmatched tools.

    Exits 1 when a definition was not loaded, naming its file and the error."""
    catalog = state.runtime.agents
    registry = catalog.registry
    every = registry.all()
    active = sum(d.status == "active" for d in every)
    by_source = dict(Counter(d.source for d in every))
    idle = {
        d.name: reason for d in registry.active() if (reason := catalog.idle_reason(d)) is not None
    }
    not_loaded = len(_not_loaded_rows(catalog))
    report = {
        "sources": [
            {
                "name": r.name,
                "label": r.label,
                "plugin": r.plugin,
                "kept": list(r.kept),
                "rejected": r.rejected,
                "failed": r.failed,
            }
            for r in registry.reports
        ],
        "agents": {
            "active": active,
            "disabled": len(every) - active,
            "by_source": by_source,
            "idle": idle,
            "not_loaded": not_loaded,
        },
        "default": state.runtime.config.agents.default,
        "fallback_default": registry.fallback is not None,
        "unmatched_tools": list(catalog.assignment.unmatched),
        "problems": [
            {"level": d.level, "message": d.message, "origin": d.origin, "line": d.line}
            for d in registry.diagnostics
        ],
    }
    if as_json:
        echo_json(report)
        _fail_if_not_loaded(catalog)
        return
    click.echo("sources:")
    if not registry.reports:
        click.echo("  none installed (install toolang-agents-builtin, -embedded, -user, -remote)")
    for r in registry.reports:
        counts = f"{len(r.kept)} kept, {r.rejected} rejected" + (", FAILED" if r.failed else "")
        click.echo(f"  {r.label:<9} {r.name:<14} ({r.plugin})  {counts}")
    counts = ", ".join(f"{k} {v}" for k, v in by_source.items())
    partial = f"; PARTIAL: {not_loaded} definition(s) not loaded" if not_loaded else ""
    click.echo(f"agents: {active} active, {len(every) - active} disabled ({counts}){partial}")
    for name, reason in idle.items():
        click.echo(f"  idle {name}: {reason}")
    fallback = " (made from [agents]: no source defines it)" if registry.fallback else ""
    click.echo(f"default agent: {state.runtime.config.agents.default}{fallback}")
    unmatched = catalog.assignment.unmatched
    click.echo(f"unmatched tools: {', '.join(unmatched) if unmatched else 'none'}")
    click.echo("problems:" if registry.diagnostics else "problems: none")
    for d in registry.diagnostics:
        click.echo(f"  {d.level:<7} {d}")
    _fail_if_not_loaded(catalog)


@agents.command()
@_JSON
@pass_state
def tools(state: CliState, as_json: bool) -> None:
    """Each registered tool's owning agent (and the prefix that won), the agents
    granted it, each agent's scope, and the tools no agent owns."""
    assignment = state.runtime.agents.assignment
    if as_json:
        echo_json(assignment.to_json())
        return
    shown = assignment.to_json()["tools"]
    assert isinstance(shown, dict)
    rows = [
        [
            tool,
            entry["agent"] or "(unmatched)",
            entry["pattern"] or "-",
            ", ".join(entry["granted_to"]) or "-",
        ]
        for tool, entry in shown.items()
    ]
    if rows:
        table(rows, ["TOOL", "AGENT", "BY", "ALSO GRANTED TO"])
    else:
        click.echo("no tools registered")
    unmatched = assignment.unmatched
    click.echo(f"unmatched: {', '.join(unmatched) if unmatched else 'none'}")
    offering = state.runtime.hooks.implementations("toolang_offer_tools")
    if offering:  # their tools exist only while a runtime serves: not in this table
        click.echo(
            "also tools offered while a runtime serves (toolang_offer_tools), not listed "
            f"here: {', '.join(offering)} — see that plugin's own listing "
            "(e.g. `toolang mcp list`)"
        )


def _sandbox_text(overrides: dict[str, Any]) -> str:
    def text(value: Any) -> str:
        return ", ".join(map(str, value)) if isinstance(value, tuple | list) else str(value)

    return "; ".join(f"{key} {text(value)}" for key, value in overrides.items())


@agents.command()
@click.argument("name")
@_JSON
@pass_state
def show(state: CliState, name: str, as_json: bool) -> None:
    """One agent in full: definition, health, the tools it may use, its problems."""
    from toolang_core.errors import UsageError

    catalog = state.runtime.agents
    definition = catalog.registry.get(name)
    if definition is None:
        known = ", ".join(d.name for d in catalog.registry.all()) or "none"
        raise UsageError(f"no agent {name!r} (agents: {known})")
    shown = {
        **attrs.asdict(definition),
        "health": _health(catalog, definition),
        "tools_in_scope": sorted(catalog.assignment.scope(name)),
        "tools_owned": list(catalog.assignment.owned_by(name)),
        "problems": [
            str(d)
            for d in catalog.registry.diagnostics
            if d.origin and d.origin == definition.origin
        ],
    }
    if as_json:
        echo_json(shown)
        return
    for key in ("name", "description", "source", "origin", "status", "model"):
        click.echo(f"{key + ':':<24}{shown[key] if shown[key] not in (None, '') else '-'}")
    click.echo(f"{'health:':<24}{shown['health']['state']} {shown['health']['detail']}".rstrip())
    for key in ("prefixes", "tools", "keywords", "capabilities", "skills"):
        click.echo(f"{key + ':':<24}{', '.join(shown[key]) or '-'}")
    for key in ("session_isolation", "max_steps", "max_delegation_rounds", "context_tokens"):
        value = shown[key]
        click.echo(f"{key + ':':<24}{'-' if value is None else str(value).lower()}")
    sandbox = {k: v for k, v in (shown["sandbox"] or {}).items() if v is not None}
    click.echo(f"{'sandbox:':<24}{_sandbox_text(sandbox) or '-'}")
    click.echo(f"{'tools in scope:':<24}{', '.join(shown['tools_in_scope']) or '-'}")
    for problem in shown["problems"]:
        click.echo(f"problem: {problem}")
    click.echo("instruction:")
    click.echo(definition.instruction or f"(none: the generic 'You are the agent {name}.')")


@agents.command()
@click.option("--capability", default=None, help="Rank the agents advertising it (selector).")
@click.option("-n", "count", type=int, default=3, show_default=True, help="How many to select.")
@_JSON
@pass_state
def pool(state: CliState, capability: str | None, count: int, as_json: bool) -> None:
    """The agent pool: health, latency, success rate, trust and price of every agent
    (from the execution store); with --capability, what the selector would pick.
    Reading it changes nothing (this command's own card reads are not heartbeats):
    every node on one store prints the same pool. It comes with toolang-agent-pool."""
    from toolang_core.agents.pool import NoRecordsYet
    from toolang_core.store.errors import StoreMissing

    store, missing = None, ""
    try:
        store = state.open_store(read_only=True)
    except StoreMissing as exc:  # nothing has run yet: every agent is there, never called
        missing = str(exc)
    try:
        records = store or NoRecordsYet(missing)
        agent_pool = state.runtime.agents.pool(records)  # PoolNotInstalled: which to install
        # by name whichever plugin provides the pool: two nodes print the same text
        members = [m.to_json() for m in sorted(agent_pool.members(), key=lambda m: m.name)]
        selection = agent_pool.select(capability, count).to_json() if capability else None
    finally:
        if store is not None:
            store.close()
    if as_json:
        echo_json({"members": members, **({"selection": selection} if selection else {})})
        return
    table(
        [
            [
                m["name"],
                m["health"],
                f"{m['avg_latency_ms']:.0f}",
                f"{m['success_rate']:.2f}",
                str(m["total_calls"]),
                f"{m['trust']:.3f}",
                f"{m['price_per_call']:g} {m['currency']}".strip(),
                ", ".join(m["capabilities"]) or "-",
            ]
            for m in members
        ],
        ["AGENT", "HEALTH", "LATENCY_MS", "SUCCESS", "CALLS", "TRUST", "PRICE", "CAPABILITIES"],
    )
    if selection:
        chosen = ", ".join(f"{c['name']} ({c['score']})" for c in selection["chosen"]) or "none"
        click.echo(f"\nselect({capability!r}, {count}): {chosen}")
        for excluded in selection["excluded"]:
            click.echo(f"  excluded {excluded['name']}: {excluded['reason']}")
