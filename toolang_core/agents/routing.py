"""Routing: which agent should handle a request, from its keywords and capabilities.

A phrase (a keyword, or a capability such as ``code-review``) matches when its words
appear in the request next to each other and in order, case-insensitively; a word
also matches its plural (``file`` ~ ``files``). Each matching phrase scores its number
of words, so ``break down`` outweighs ``down``. The best score wins; ties go to the
higher-priority source, then to the name that sorts first. No match: no proposal,
and the router answers the request itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import attrs

from toolang_core.agents.types import AgentDefinition

_WORD: Final = re.compile(r"[^\W_]+")


@attrs.frozen
class RouteProposal:
    """A router's proposal: the agent, how strongly (higher is better) and why."""

    agent: str
    score: float
    reason: str = ""
    router: str = ""
    """The plugin that proposed it (filled in by the runtime)."""

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


def words(text: str) -> tuple[str, ...]:
    """The lowercase words of ``text`` (``code-review`` → ``code``, ``review``)."""
    return tuple(_WORD.findall(text.lower()))


def _same(word: str, phrase_word: str) -> bool:
    return word == phrase_word or word in (phrase_word + "s", phrase_word + "es")


def phrase_in(phrase: Sequence[str], text: Sequence[str]) -> bool:
    """Whether the words of ``phrase`` occur in ``text`` contiguously and in order."""
    size = len(phrase)
    if not size:
        return False
    return any(
        all(_same(text[start + i], phrase[i]) for i in range(size))
        for start in range(len(text) - size + 1)
    )


def score(request: str, agent: AgentDefinition) -> tuple[int, list[str]]:
    """``(score, matched phrases)`` of ``agent`` for ``request``."""
    text = words(request)
    matched = []
    total = 0
    for phrase in (*agent.keywords, *agent.capabilities, *agent.skills):
        phrase_words = words(phrase)
        if phrase_in(phrase_words, text) and phrase not in matched:
            matched.append(phrase)
            total += len(phrase_words)
    return total, matched


def propose(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    """The best-scoring agent for ``request`` among ``agents``, or ``None``."""
    scored = []
    for agent in agents:
        points, matched = score(request, agent)
        if points:
            scored.append((-points, agent.priority, agent.name, matched))
    if not scored:
        return None
    points, _, name, matched = min(scored)
    return RouteProposal(name, float(-points), f"matched {', '.join(map(repr, matched))}")
