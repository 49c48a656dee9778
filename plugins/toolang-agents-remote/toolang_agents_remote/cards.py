"""Discovering remote agents: every endpoint's A2A agent card, fetched concurrently.

Health is what the fetch found: ``ok`` or ``unreachable``. So that an agent does not
vanish from the registry while its endpoint is down, every card read is remembered
(:class:`CardCache`, one JSON file per endpoint under ``<home>/agents-remote/cards``):
a known agent whose endpoint does not answer stays listed, ``unreachable``, with the
reason and when it was last seen. An endpoint that never answered is reported as an
error (no agent is known for it yet).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from toolang_core import (
    AgentDefinition,
    AgentDiagnostic,
    AgentHealth,
    AgentLoad,
    redact_text,
)

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard

_NOT_NAME = re.compile(r"[^a-z0-9_-]+")


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an A2A endpoint, or ``None`` when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError as exc:
        return f"expected an http:// or https:// URL, found {redact_text(url)!r} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"expected an http:// or https:// URL with a host, found {redact_text(url)!r}"
    return None


def agent_name(card_name: str) -> str:
    """A registry name for a card's name: ``"Echo Agent"`` → ``"echo-agent"``."""
    slug = _NOT_NAME.sub("-", card_name.lower()).strip("-_")
    slug = re.sub(r"^[^a-z]+", "", slug)[:64].rstrip("-_")
    return slug or "remote-agent"


@attrs.frozen
class KnownCard:
    """What toolang keeps of an agent card: enough to list and route to the agent."""

    url: str
    card_name: str
    description: str = ""
    skills: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    seen_at: float = 0.0

    @classmethod
    def from_card(cls, url: str, card: AgentCard, seen_at: float) -> KnownCard:
        skills = list(card.skills)
        return cls(
            url=url,
            card_name=card.name,
            description=card.description,
            skills=tuple(s.name or s.id for s in skills),
            keywords=tuple(dict.fromkeys(tag for s in skills for tag in s.tags)),
            capabilities=tuple(s.id for s in skills if s.id),
            seen_at=seen_at,
        )

    def definition(self) -> AgentDefinition:
        name = agent_name(self.card_name)
        about = self.description
        if name != self.card_name:  # keep the card's own name visible
            about = f"{self.card_name}: {about}" if about else self.card_name
        return AgentDefinition(
            name=name,
            description=about,
            skills=self.skills,
            keywords=self.keywords,
            capabilities=self.capabilities,
            source="remote",
            origin=self.url,
            # The "model" of a remote agent is the A2A call itself (calls.py): every
            # delegation path reaches it through the ordinary agent loop.
            model=f"a2a/{self.url}",
        )


class CardCache:
    """The last card read from each endpoint, as JSON files in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, url: str) -> Path:
        return self.directory / (hashlib.sha256(url.encode()).hexdigest()[:24] + ".json")

    def save(self, known: KnownCard) -> None:
        """:raises OSError: when the directory cannot be written."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(known.url)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(attrs.asdict(known)), encoding="utf-8")
        os.replace(partial, path)

    def get(self, url: str) -> KnownCard | None:
        """The card remembered for ``url``; ``None`` when none (or it is unreadable)."""
        try:
            data: dict[str, Any] = json.loads(self._path(url).read_text(encoding="utf-8"))
            fields = {f.name for f in attrs.fields(KnownCard)}
            known = KnownCard(**{k: v for k, v in data.items() if k in fields})
        except (OSError, ValueError, TypeError):
            return None
        return attrs.evolve(
            known,
            skills=tuple(known.skills),
            keywords=tuple(known.keywords),
            capabilities=tuple(known.capabilities),
        )


async def _fetch(url: str, timeout: float) -> AgentCard:
    import httpx
    from a2a.client.card_resolver import A2ACardResolver

    async with httpx.AsyncClient(timeout=timeout) as client:
        return await A2ACardResolver(client, url).get_agent_card()


def fetch_cards(urls: Sequence[str], timeout: float) -> list[AgentCard | BaseException]:
    """Every endpoint's card (or the error it gave), fetched concurrently.

    Runs on its own event loop in a worker thread, so it works the same whether the
    caller is inside an event loop (a running runtime) or not (a CLI command).
    """

    async def every() -> list[AgentCard | BaseException]:
        return await asyncio.gather(*(_fetch(u, timeout) for u in urls), return_exceptions=True)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(every())).result()


def discover(
    urls: Sequence[str],
    *,
    timeout: float,
    cache: CardCache,
    clock: Callable[[], float] = time.time,
) -> AgentLoad:
    """One definition per endpoint whose card is known, with its health now."""
    definitions: list[AgentDefinition] = []
    diagnostics: list[AgentDiagnostic] = []
    health: dict[str, AgentHealth] = {}
    now = clock()
    for url, outcome in zip(urls, fetch_cards(urls, timeout), strict=True):
        if isinstance(outcome, BaseException):
            reason = str(outcome) or type(outcome).__name__
            known = cache.get(url)
            if known is None:
                diagnostics.append(
                    AgentDiagnostic("error", f"no agent card, none known: {reason}", origin=url)
                )
                continue
            seen = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(known.seen_at))
            state = AgentHealth("unreachable", f"{reason} (card last read {seen})", now)
        else:
            known = KnownCard.from_card(url, outcome, now)
            state = AgentHealth("ok", f"card read from {url}", now)
            try:
                cache.save(known)
            except OSError as exc:
                diagnostics.append(
                    AgentDiagnostic("warning", f"cannot remember the card: {exc}", origin=url)
                )
        definition = known.definition()
        definitions.append(definition)
        health[definition.name] = state
    return AgentLoad(definitions=definitions, diagnostics=diagnostics, health=health)


def ping(
    definitions: Sequence[AgentDefinition],
    *,
    timeout: float,
    clock: Callable[[], float] = time.time,
) -> dict[str, AgentHealth]:
    """Each remote agent's health now: its card read again from its endpoint (its
    ``origin``), concurrently — ``ok``, or ``unreachable`` with the reason."""
    urls = [d.origin for d in definitions]
    now = clock()
    found: dict[str, AgentHealth] = {}
    for definition, outcome in zip(definitions, fetch_cards(urls, timeout), strict=True):
        if isinstance(outcome, BaseException):
            reason = redact_text(str(outcome) or type(outcome).__name__)
            found[definition.name] = AgentHealth("unreachable", f"ping: {reason}", now)
        else:
            found[definition.name] = AgentHealth("ok", f"card read from {definition.origin}", now)
    return found
