"""Helpers for this plugin's tests: a memory plugin, a tool, exporters that fail, and
real agent turns in a real runtime."""

from __future__ import annotations

import threading
import time

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.memory import (
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryRecallResult,
    MemoryWriteResult,
    Provenance,
)
from toolang_core.testing.runtimes import serve_until_idle

SECRET = "sk-proj-Zq8v3LmN0pR5tW7yB2dF4hJ6"
EMAIL = "ada.lovelace@example.org"


def lookup(term: str, token: str = "") -> str:
    """Look a term up (the scripted model calls it).

    :param term: what to look up
    :param token: a credential the tool would use
    """
    return f"found {term} for {EMAIL}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(lookup, blocking=False))


class Shelf:
    """A memory plugin keeping entries in a list; recall returns what shares a word."""

    def __init__(self):
        self.entries: list[str] = []

    async def recall(self, request):
        words = set(request.query_text.lower().split())
        now = time.time()
        items = tuple(
            MemoryItem(
                id=str(i),
                text=text,
                score=1.0,
                provenance=Provenance(request.agent_id, None, None, "test", now, now),
            )
            for i, text in enumerate(self.entries)
            if words & set(text.lower().split())
        )
        return MemoryRecallResult(items=items, provider="shelf")

    async def remember(self, batch):
        self.entries.extend(entry.text for entry in batch.entries)
        return MemoryWriteResult(written=len(batch.entries), provider="shelf")

    async def forget(self, request):
        return MemoryForgetResult(forgotten=0, provider="shelf")

    async def list_entries(self, request):
        return ()

    async def health(self):
        return MemoryHealth(status="ok", provider="shelf")

    def close(self):
        pass


class ShelfPlugin:
    def __init__(self, shelf: Shelf):
        self.shelf = shelf

    @hookimpl
    def toolang_register_memory(self, register):
        register("shelf", lambda context: self.shelf)


class RaisingExporter(SpanExporter):
    """An exporter whose every export raises (a collector library gone wrong)."""

    def __init__(self):
        self.calls = 0

    def export(self, spans):
        self.calls += 1
        raise ConnectionError("collector refused the batch")

    def shutdown(self):
        pass


class HangingExporter(SpanExporter):
    """An exporter whose export blocks until the test releases it."""

    def __init__(self):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def export(self, spans):
        self.entered.set()
        self.release.wait(60)
        self.returned.set()
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass


def submit(runtime, text="go", thread="cli:t", source="chat"):
    inbox = runtime.open_inbox()
    return inbox, inbox.submit(NewTurnRequest(source=source, thread_id=thread, input=text)).id


serve = serve_until_idle


def run_turn(runtime, text="go", thread="cli:t"):
    """Submit one chat turn, serve until idle (shutdown included); return the turn."""
    inbox, turn_id = submit(runtime, text, thread)
    serve(runtime)
    return inbox.get(turn_id)


def by_name(spans):
    return {span.name: span for span in spans}


def children(spans, parent):
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


class Agents:
    """An agent source with two agents, so the delegation tools are offered."""

    label = "builtin"
    name = "otel-test-agents"

    @hookimpl
    def toolang_agent_sources(self):
        return self

    def load(self, context):
        from toolang_core import AgentDefinition, AgentLoad

        return AgentLoad(
            definitions=[
                AgentDefinition(name="assistant", tools=("*",), description="delegates"),
                AgentDefinition(name="helper", prefixes=("lookup",), description="helps"),
            ]
        )
