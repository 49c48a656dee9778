"""Tool partitioning: which agent owns each tool, and what each agent may use.

The rules, each tested:

- A tool pattern is a tool name prefix. ``fs_*`` and ``fs_`` are the same pattern
  (definitions keep it as ``fs_*``); ``*`` anywhere but at the end, ``?`` and ``[``
  are refused; ``*`` alone is every tool (a grant only: claiming it is refused).
  A pattern is a *prefix*: ``save_knowledge`` also matches ``save_knowledge_v2``.
- ``prefixes`` claim tools. Every tool goes to exactly one agent: the one whose
  matching prefix is longest; on equal length the agent of the higher-priority source
  (builtin before embedded before user before remote), then the agent whose name sorts
  first. Disabled agents claim nothing.
- A tool no prefix claims goes to the agent its plugin *declared* (``Tool(owner=…)``)
  when that agent is active: a deployer's prefix claim (an AGENT.md) beats the
  plugin's wish.
- A tool still unowned goes to the *fallback* agent when one is given (``[agents]
  unmatched_tools = "default"``: the ``[agents] default`` agent); otherwise it is
  *unmatched* — only agents granted it can use it.
- ``tools`` grant tools without claiming them: an agent may use the tools it owns plus
  the tools its grants match (``*`` alone grants every tool). A grant never takes a
  tool away from its owner and never makes a tool matched.
- :func:`narrow_tools` applies spawn-time ``allowed_tools``: the result is the
  intersection with the agent's scope; asking for a tool outside it is an error.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Final, Literal

import attrs

from toolang_core.agents.types import AgentDefinition

_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]*")
EVERY_TOOL: Final = "*"
"""The pattern that matches every tool."""


class PatternError(ValueError):
    """A tool pattern is not a name prefix with an optional trailing ``*``."""


class ToolScopeError(ValueError):
    """Spawn-time ``allowed_tools`` asked for tools outside the agent's scope."""


def normalise_pattern(pattern: str) -> str:
    """``"fs_*"`` and ``"fs_"`` → ``"fs_"``; ``"*"`` → ``""`` (every tool).

    :raises PatternError: naming the pattern and what a pattern may be.
    """
    if not isinstance(pattern, str):
        raise PatternError(f"tool pattern {pattern!r} is not a string")
    text = pattern.strip()
    prefix = text[:-1] if text.endswith("*") else text
    if not text or not _PATTERN.fullmatch(prefix):
        raise PatternError(
            f"tool pattern {pattern!r} must be a tool name or prefix (letters, digits, "
            "'_' or '-'), optionally ending in '*'"
        )
    return prefix


def display_pattern(prefix: str) -> str:
    """How a normalised pattern is shown: always as a glob (``fs_*``, ``*``)."""
    return prefix + "*"


def canonical_pattern(pattern: str) -> str:
    """The one spelling of a pattern that definitions keep: ``fs_`` → ``fs_*``.

    :raises PatternError: as :func:`normalise_pattern`.
    """
    return display_pattern(normalise_pattern(pattern))


def matches(prefix: str, tool: str) -> bool:
    return tool.startswith(prefix)


ClaimKind = Literal["prefix", "owner", "fallback"]
"""How an agent came to own a tool: its prefix, the tool's declared owner, the rule."""


@attrs.frozen
class Claim:
    """Why a tool belongs to its owner: the agent and its winning prefix, or
    (``via`` ``owner``/``fallback``, ``prefix`` empty) the tool's declared owner or the
    ``[agents] unmatched_tools`` rule."""

    agent: str
    prefix: str
    via: ClaimKind = "prefix"

    @property
    def pattern(self) -> str:
        """How the claim is shown: ``fs_*``, ``owner=`` or ``unmatched_tools``."""
        if self.via == "owner":
            return "owner="
        if self.via == "fallback":
            return "unmatched_tools"
        return display_pattern(self.prefix)


@attrs.frozen
class ToolAssignment:
    """The result of partitioning: owners, unmatched tools and every agent's scope.

    ``owners`` maps each matched tool to its :class:`Claim`; ``scopes`` maps every
    agent given to :func:`assign_tools` to the sorted tools it may use; ``granted``
    maps a tool to the agents that may use it through a grant (not owning it).
    """

    owners: Mapping[str, Claim]
    unmatched: tuple[str, ...]
    scopes: Mapping[str, tuple[str, ...]]
    granted: Mapping[str, tuple[str, ...]]

    def scope(self, agent: str) -> frozenset[str]:
        """The tools ``agent`` may use (empty for an agent that was not partitioned)."""
        return frozenset(self.scopes.get(agent, ()))

    def owned_by(self, agent: str) -> tuple[str, ...]:
        return tuple(sorted(t for t, claim in self.owners.items() if claim.agent == agent))

    def to_json(self) -> dict[str, object]:
        """The shape ``toolang agents tools --json`` prints."""
        tools = sorted({*self.owners, *self.unmatched})
        return {
            "tools": {
                tool: {
                    "agent": self.owners[tool].agent if tool in self.owners else None,
                    "pattern": self.owners[tool].pattern if tool in self.owners else None,
                    "via": self.owners[tool].via if tool in self.owners else None,
                    "granted_to": list(self.granted.get(tool, ())),
                }
                for tool in tools
            },
            "agents": {name: list(tools) for name, tools in self.scopes.items()},
            "unmatched": list(self.unmatched),
        }


def assign_tools(
    tools: Collection[str],
    agents: Sequence[AgentDefinition],
    *,
    declared: Mapping[str, str] | None = None,
    fallback: str | None = None,
) -> ToolAssignment:
    """Partition ``tools`` among the active ``agents`` (patterns already valid).

    ``declared`` maps a tool to the agent its plugin says should own it; ``fallback``
    is the agent that owns whatever is left (``None``: leave it unmatched). Either is
    used only when it names an active agent.

    :raises PatternError: for a pattern that is not valid (the registry refuses those
        definitions first, so this only happens to hand-made definitions).
    """
    active = [a for a in agents if a.status == "active"]
    names = {a.name for a in active}
    wished = {t: a for t, a in (declared or {}).items() if a in names}
    claims = {a.name: [normalise_pattern(p) for p in a.prefixes] for a in active}
    grants = {a.name: [normalise_pattern(p) for p in a.tools] for a in active}
    rank = {a.name: (a.priority, a.name) for a in active}
    owners: dict[str, Claim] = {}
    unmatched: list[str] = []
    for tool in sorted(tools):
        candidates = [
            (-len(prefix), rank[name], Claim(name, prefix))
            for name, prefixes in claims.items()
            for prefix in prefixes
            if matches(prefix, tool)
        ]
        if candidates:
            owners[tool] = min(candidates, key=lambda c: (c[0], c[1]))[2]
        elif tool in wished:
            owners[tool] = Claim(wished[tool], "", "owner")
        elif fallback is not None and fallback in names:
            owners[tool] = Claim(fallback, "", "fallback")
        else:
            unmatched.append(tool)
    scopes: dict[str, tuple[str, ...]] = {}
    granted: dict[str, list[str]] = {}
    for agent in active:
        owned = {t for t, claim in owners.items() if claim.agent == agent.name}
        extra = {
            t for t in tools if t not in owned and any(matches(p, t) for p in grants[agent.name])
        }
        for tool in extra:
            granted.setdefault(tool, []).append(agent.name)
        scopes[agent.name] = tuple(sorted(owned | extra))
    return ToolAssignment(
        owners=owners,
        unmatched=tuple(unmatched),
        scopes=scopes,
        granted={t: tuple(sorted(names)) for t, names in sorted(granted.items())},
    )


def narrow_tools(
    scope: Collection[str], allowed_tools: Iterable[str] | None, *, agent: str
) -> frozenset[str]:
    """Spawn-time narrowing: ``allowed_tools`` ∩ ``scope``, never wider than ``scope``.

    ``allowed_tools`` holds tool names or patterns (``fs_*``); ``None`` keeps the whole
    scope. Each entry must name a tool in the scope (a pattern: match at least one).

    :raises ToolScopeError: naming the entries outside ``agent``'s scope.
    :raises PatternError: for an entry that is not a tool name or pattern.
    """
    if allowed_tools is None:
        return frozenset(scope)
    wanted: set[str] = set()
    outside: list[str] = []
    for entry in allowed_tools:
        prefix = normalise_pattern(entry)
        exact = not entry.strip().endswith("*")
        found = {t for t in scope if (t == prefix if exact else matches(prefix, t))}
        if not found:
            outside.append(entry)
        wanted |= found
    if outside:
        shown = ", ".join(sorted(scope)) or "no tools"
        raise ToolScopeError(
            f"allowed_tools asks for {', '.join(map(repr, outside))} outside agent "
            f"{agent!r}'s scope ({shown}); allowed_tools can only narrow an agent's scope"
        )
    return frozenset(wanted)
