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


class PhraseIndex:
    """The phrases of a set of agents, by the forms of their first word, for :func:`propose`.

    A phrase is filed under each word a request may hold for its first word (the word,
    its plural in ``s`` and in ``es``; see :func:`_same`), so matching a request costs
    one look-up per word of the request, not one scan of every phrase of every agent:
    routing stays cheap however many agents and keywords there are.
    """

    __slots__ = ("agents", "by_first_word")

    def __init__(self, agents: Sequence[AgentDefinition]) -> None:
        self.agents = tuple(agents)
        self.by_first_word: dict[str, list[tuple[int, int, tuple[str, ...], str]]] = {}
        for number, agent in enumerate(self.agents):
            phrases = (*agent.keywords, *agent.capabilities, *agent.skills)
            for position, phrase in enumerate(phrases):
                phrase_words = words(phrase)
                if phrase_words:
                    entry = (number, position, phrase_words, phrase)
                    first = phrase_words[0]
                    for form in (first, first + "s", first + "es"):
                        self.by_first_word.setdefault(form, []).append(entry)

    def matches(self, request: str) -> dict[int, list[tuple[int, tuple[str, ...], str]]]:
        """Per agent number, the phrases of that agent found in ``request``."""
        text = words(request)
        found: dict[int, list[tuple[int, tuple[str, ...], str]]] = {}
        filed = self.by_first_word.get
        for start, word in enumerate(text):
            for number, position, phrase_words, phrase in filed(word, ()):
                end = start + len(phrase_words)  # the first word matched by its filing
                if end <= len(text) and all(
                    _same(text[start + i], w) for i, w in enumerate(phrase_words[1:], 1)
                ):
                    found.setdefault(number, []).append((position, phrase_words, phrase))
        return found


_INDEX_CACHE: dict[tuple[int, ...], PhraseIndex] = {}
_INDEX_CACHE_SIZE: Final = 16


def _index_of(agents: Sequence[AgentDefinition]) -> PhraseIndex:
    last = _LAST_INDEX[0]
    if last is not None and last.agents is agents:  # the same tuple again (the catalog's)
        return last
    # Agent definitions are frozen; the same objects (a registry's) come back turn after
    # turn, so their identities key the index. The cached index holds them, which keeps
    # the identities from being reused while the entry lives.
    key = tuple(map(id, agents))
    index = _INDEX_CACHE.get(key)
    if index is None:
        if len(_INDEX_CACHE) >= _INDEX_CACHE_SIZE:
            _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
        index = _INDEX_CACHE[key] = PhraseIndex(agents)
    _LAST_INDEX[0] = index
    return index


_LAST_INDEX: list[PhraseIndex | None] = [None]


def propose(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    """The best-scoring agent for ``request`` among ``agents``, or ``None``.

    The same result as scoring every agent with :func:`score`, found through a
    :class:`PhraseIndex` of the agents' phrases."""
    index = _index_of(agents)
    scored = []
    for number, found in index.matches(request).items():
        agent = index.agents[number]
        matched: list[str] = []
        points = 0
        for _, phrase_words, phrase in sorted(found, key=lambda f: f[0]):
            if phrase not in matched:
                matched.append(phrase)
                points += len(phrase_words)
        scored.append((-points, agent.priority, agent.name, matched))
    if not scored:
        return None
    points, _, name, matched = min(scored)
    return RouteProposal(name, float(-points), f"matched {', '.join(map(repr, matched))}")


def reroute_hint(agent: str, why: str = "") -> str:
    """What the delegating model is told when specialist ``agent`` failed or refused
    (``why``, when not said already) after the hand-off: name it, so the next step picks
    another specialist or answers directly instead of repeating the same hand-off."""
    reason = " ".join(why.split())[:300]
    return (
        f"Reroute: specialist {agent!r} failed{f' ({reason})' if reason else ''}. Try a "
        f"different specialist or answer directly; do not hand this to {agent!r} again."
    )
