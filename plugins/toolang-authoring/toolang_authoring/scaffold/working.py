"""Templates for the families whose stub must *run*: a turn source, a memory, a model.

Each module does real, small work so the plugin behaves the moment it is installed —
the source places turns, the memory passes the memory conformance suite, the model
answers — and each test drives it through a real runtime with the shipped fixtures.
``string.Template`` text, like :mod:`toolang_authoring.scaffold.templates`.
"""

from __future__ import annotations

SOURCE_MODULE = '''\
"""${distribution}: a toolang turn source that places a turn at start, then on a timer.

Enable it with ``[runtime] sources = ["${ident}", …]`` (or leave ``sources`` unset: every
installed source runs). Its settings are ``[plugins.${entry_point}]``: ``input`` (what
the turn says), ``every_seconds`` (how often) and ``agent`` (who answers; unset: the
``[agents] default``). A source only *places* requests in the inbox; the scheduler runs
them. Replace the timer with your own event (a webhook, a queue, a file).
"""

from __future__ import annotations

import asyncio
import contextlib

import attrs

from toolang_core import (
    Inbox,
    NewTurnRequest,
    PluginContext,
    RegisterFactory,
    RegisterSettings,
    hookimpl,
)

SOURCE = "${ident}"


@attrs.frozen
class Settings:
    """[plugins.${entry_point}] in toolang.toml."""

    input: str = "Good morning! What is on today?"
    every_seconds: float = 3600.0
    agent: str | None = None


class ${class_name}Source:
    """Places one request per ``every_seconds`` slot, on thread ``${ident}:main``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        """Submit this slot's request, then wait for the next slot until ``stop``."""
        while True:
            self.submit_due(inbox)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.every_seconds)
            if stop.is_set():
                return

    def submit_due(self, inbox: Inbox) -> str:
        """Place the request of the current slot; return its id. The id is the slot's,
        so a restarted runtime (or a second one) never places the same turn twice."""
        slot = int(inbox.clock() // self.settings.every_seconds)
        request = NewTurnRequest(
            source=SOURCE,
            thread_id=f"{SOURCE}:main",
            input=self.settings.input,
            agent=self.settings.agent,
            id=f"{SOURCE}-{slot}",
        )
        return inbox.submit(request).id


def _source(context: PluginContext) -> ${class_name}Source:
    return ${class_name}Source(context.settings or Settings())


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_register_turn_sources(register: RegisterFactory) -> None:
    register(SOURCE, _source, description="a turn at start, then every every_seconds")
'''

SOURCE_TEST = '''\
"""The source through a real runtime: its run places a turn the runtime completes."""

import asyncio

from toolang_core import TurnFilter, TurnStatus

import ${package} as plugin

CONFIG = """
[runtime]
executor = "echo"  # answers with the input: the test is about the source, not a model

[plugins.${entry_point}]
input = "time for the daily summary"
"""


def run_once(runtime):
    """Run the source with ``stop`` already set: it places its request and returns."""
    source = runtime.turn_sources(["${ident}"])["${ident}"]
    stop = asyncio.Event()
    stop.set()
    asyncio.run(source.run(runtime.open_inbox(), stop))


def test_a_run_places_a_turn_the_runtime_completes(toolang_runtime):
    runtime = toolang_runtime(CONFIG, plugins={"${entry_point}": plugin})
    run_once(runtime)
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    (turn,) = runtime.open_store().list_turns(TurnFilter(source="${ident}"))
    assert (turn.status, turn.thread_id) == (TurnStatus.COMPLETED, "${ident}:main")
    assert turn.output == "time for the daily summary"


def test_a_second_run_in_the_same_slot_places_nothing_new(toolang_runtime):
    runtime = toolang_runtime(CONFIG, plugins={"${entry_point}": plugin})
    run_once(runtime)
    run_once(runtime)
    assert len(runtime.open_store().list_turns(TurnFilter(source="${ident}"))) == 1
'''

MEMORY_MODULE = '''\
"""${distribution}: a toolang memory plugin that keeps entries in one JSON file.

A starting point that passes toolang's memory conformance suite
(tests/test_${package}.py). Entries live in ``[plugins.${entry_point}] path``
(default ``.toolang/${ident}-memory.json`` beside toolang.toml), guarded by a lock
file so threads and processes share them; recall matches the query's words as
substrings of the text, ignoring case and Unicode form. Select it with
``[memory] plugin = "${ident}"``. Replace the file with your store and keep the suite
passing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from toolang_core import PluginContext, RegisterFactory, RegisterSettings, hookimpl
from toolang_core.memory import (
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
    Provenance,
)

PROVIDER = "${ident}"
Row = dict[str, Any]


@attrs.frozen
class Settings:
    """[plugins.${entry_point}] in toolang.toml."""

    path: str = ".toolang/${ident}-memory.json"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _words(text: str) -> set[str]:
    found = re.findall(r"\\w+|\\S", _fold(text))
    return {w for w in found if w[0].isalnum() or ord(w[0]) > 0x2000}


def _item(row: Row, score: float) -> MemoryItem:
    return MemoryItem(
        id=str(row["id"]),
        text=row["text"],
        score=score,
        key=row["key"],
        kind=row["kind"],
        meta=row["meta"],
        provenance=Provenance(
            agent_id=row["agent"],
            thread_id=row["thread"],
            turn_id=row["turn"],
            origin=row["origin"],
            created_at=row["created"],
            updated_at=row["updated"],
            owner=row["owner"],
        ),
    )


class ${class_name}Memory:
    """Every method is synchronous: the runtime calls them in worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_error: tuple[str, float] | None = None

    @contextlib.contextmanager
    def _rows(self, *, write: bool) -> Iterator[dict[str, Any]]:
        """The file's content under its lock (exclusive to write), saved if ``write``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            try:
                data = (
                    json.loads(self.path.read_text("utf-8"))
                    if self.path.exists()
                    else {"next_id": 1, "rows": []}
                )
                yield data
                if write:
                    temporary = self.path.with_suffix(".tmp")
                    temporary.write_text(json.dumps(data), "utf-8")
                    os.replace(temporary, self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @staticmethod
    def _live(rows: list[Row], agent: str, thread: str | None, owner: str | None) -> list[Row]:
        now = time.time()
        return [
            r
            for r in rows
            if r["agent"] == agent
            and r["owner"] == owner
            and (thread is None or r["thread"] == thread)
            and (r["expires"] is None or r["expires"] > now)
        ]

    def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        words = _words(request.query_text)
        with self._rows(write=False) as data:
            rows = self._live(data["rows"], request.agent_id, request.thread_id, request.owner)
        scored = []
        for row in rows:
            text = _fold(row["text"])
            hits = [w for w in words if w in text]
            if hits:
                scored.append((len(hits) + 0.01 * sum(text.count(w) for w in hits), row))
        scored.sort(key=lambda pair: -pair[0])
        items: list[MemoryItem] = []
        chars = 0
        for score, row in scored:
            if len(items) == request.limits.max_items:
                break
            if chars + len(row["text"]) <= request.limits.max_chars:
                items.append(_item(row, score))
                chars += len(row["text"])
        return MemoryRecallResult(items=tuple(items), provider=PROVIDER)

    def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        try:
            with self._rows(write=True) as data:
                for entry in batch.entries:
                    self._upsert(data, batch, entry, time.time())
        except OSError as exc:
            self.last_error = (f"{type(exc).__name__}: {exc}", time.time())
            raise
        return MemoryWriteResult(written=len(batch.entries), provider=PROVIDER)

    @staticmethod
    def _upsert(data: dict[str, Any], batch: MemoryWriteBatch, entry: Any, now: float) -> None:
        def same(r: Row) -> bool:
            return (r["agent"], r["owner"], r["key"]) == (batch.agent_id, batch.owner, entry.key)

        old = next((r for r in data["rows"] if entry.key and same(r)), None)
        if old is not None:
            data["rows"].remove(old)
        else:
            data["next_id"] += 1
        data["rows"].append(
            {
                "id": old["id"] if old else data["next_id"] - 1,
                "agent": batch.agent_id,
                "owner": batch.owner,
                "text": entry.text,
                "key": entry.key,
                "kind": entry.kind,
                "meta": dict(entry.meta),
                "thread": batch.thread_id,
                "turn": batch.turn_id,
                "origin": batch.origin,
                "created": old["created"] if old else now,
                "updated": now,
                "expires": None if entry.ttl_seconds is None else now + entry.ttl_seconds,
            }
        )

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        def doomed(r: Row) -> bool:
            if (r["agent"], r["owner"]) != (request.agent_id, request.owner):
                return False
            if request.keys:
                return r["key"] in request.keys
            return (
                (request.thread_id is None or r["thread"] == request.thread_id)
                and (request.kind is None or r["kind"] == request.kind)
                and (request.before is None or r["created"] < request.before)
            )

        with self._rows(write=True) as data:
            kept = [r for r in data["rows"] if not doomed(r)]
            forgotten = len(data["rows"]) - len(kept)
            data["rows"] = kept
        return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        with self._rows(write=False) as data:
            rows = self._live(data["rows"], request.agent_id, request.thread_id, request.owner)
        rows.sort(key=lambda r: (-r["updated"], -r["id"]))
        return tuple(_item(r, 0.0) for r in rows[: request.limit])

    def health(self) -> MemoryHealth:
        with self._rows(write=False) as data:
            entries = len(data["rows"])
        error, at = self.last_error or (None, None)
        return MemoryHealth(
            status="ok", provider=PROVIDER, entries=entries, last_error=error, last_error_at=at
        )

    def close(self) -> None:
        """Nothing to close: every call opens and closes the file."""


def _memory(context: PluginContext) -> ${class_name}Memory:
    path = Path((context.settings or Settings()).path).expanduser()
    return ${class_name}Memory(path if path.is_absolute() else context.config.base_dir / path)


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_register_memory(register: RegisterFactory) -> None:
    register(PROVIDER, _memory, description="entries in a JSON file")
'''

MEMORY_TEST = '''\
"""The memory contract, checked by toolang's conformance suite, and the plugin in a runtime."""

import asyncio
import contextlib

import pytest
from toolang_core.memory import MemoryEntry, MemoryWriteBatch
from toolang_core.testing.memory_conformance import MemoryConformance

import ${package} as plugin


class TestConformance(MemoryConformance):
    @pytest.fixture
    def toolang_memory_factory(self, tmp_path):
        return lambda: plugin.${class_name}Memory(tmp_path / "memory.json")

    @contextlib.contextmanager
    def failing(self, memory):
        # A directory where the next write puts its temporary file: the write fails.
        blocker = memory.path.with_suffix(".tmp")
        blocker.mkdir(parents=True)
        try:
            yield
        finally:
            blocker.rmdir()


def test_the_runtime_remembers_through_it(toolang_runtime):
    runtime = toolang_runtime(
        '[memory]\\nplugin = "${ident}"\\n', plugins={"${entry_point}": plugin}
    )
    batch = MemoryWriteBatch(
        agent_uri="toolang://test/agents/assistant",
        agent_id="assistant",
        entries=(MemoryEntry("the quokka likes figs", key="quokka"),),
    )
    memory = runtime.memory.plugin
    assert memory.remember(batch).written == 1
    assert (runtime.config.base_dir / ".toolang" / "${ident}-memory.json").is_file()
    health = asyncio.run(runtime.memory.health())
    assert (health.status, health.entries) == ("ok", 1)
'''

MODEL_MODULE = '''\
"""${distribution}: a toolang model provider (a stand-in that echoes; put your model here).

Select it with ``[models] default = "${ident}"`` (or ``"${ident}/<model id>"``), or in an
agent's ``model:``. ``complete`` gets the whole request — messages, the tools the
agent may use — and answers with text or tool calls; ``stream`` yields text pieces
and then the whole response.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from toolang_core import RegisterFactory, hookimpl
from toolang_core.models import ModelRequest, ModelResponse

PROVIDER = "${ident}"


class ${class_name}Model:
    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    async def complete(self, request: ModelRequest) -> ModelResponse:
        said = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        return ModelResponse(text=f"(${ident}) {said.strip()}", model=self.model_id)

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        response = await self.complete(request)
        yield response.text
        yield response


class ${class_name}Provider:
    def model(self, model_id: str | None) -> ${class_name}Model:
        return ${class_name}Model(model_id or "echo")


@hookimpl
def toolang_register_models(register: RegisterFactory) -> None:
    register(PROVIDER, lambda context: ${class_name}Provider(), description="an echoing stand-in")
'''

MODEL_TEST = '''\
"""The model answers a real turn of the runtime."""

import asyncio

from toolang_core import NewTurnRequest, TurnStatus

import ${package} as plugin


def test_it_answers_a_turn(toolang_runtime):
    runtime = toolang_runtime(
        '[models]\\ndefault = "${ident}"\\n', plugins={"${entry_point}": plugin}
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="t1", input="hello")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    turn = inbox.get(turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "(${ident}) hello")
'''
