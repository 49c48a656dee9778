"""The HTTP endpoint's MCP server: a build that fails is tried again by the next
request, and one whose session manager cannot start fails instead of leaving every
request waiting. The runtime and the SDK are real; the failure is injected where the
endpoint imports the SDK, or in the session manager's start."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
import structlog

import toolang_source_mcp
from toolang_core import Runtime
from toolang_source_mcp import routes


def _endpoint(toolang_runtime: Callable[..., Runtime]) -> Any:
    runtime = toolang_runtime(plugins={"source-mcp": toolang_source_mcp})
    return routes.endpoint_of(runtime)


def test_a_failed_build_is_tried_again_by_the_next_request(
    toolang_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = [ImportError("the disk went away")]

    def import_module(name: str) -> Any:
        if failures:
            raise failures.pop()
        return importlib.import_module(name)

    monkeypatch.setattr(routes, "importlib", SimpleNamespace(import_module=import_module))
    endpoint = _endpoint(toolang_runtime)

    async def run() -> None:
        with structlog.testing.capture_logs() as logs:
            with pytest.raises(ImportError, match="the disk went away"):
                await endpoint.started()
            manager = await endpoint.started()
            assert await endpoint.started() is manager  # built once, then kept
            await endpoint.stop()
        events = [(e["event"], e.get("on"), e.get("error")) for e in logs]
        assert events == [
            ("mcp.endpoint.failed", None, "ImportError: the disk went away"),
            ("mcp.endpoint.ready", "first_use", None),
        ]

    asyncio.run(run())


def test_a_session_manager_that_cannot_start_fails_the_build(
    toolang_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    def refuse(self: Any) -> Any:
        raise RuntimeError("no task group today")

    monkeypatch.setattr(StreamableHTTPSessionManager, "run", refuse)
    endpoint = _endpoint(toolang_runtime)

    async def run() -> None:
        with pytest.raises(RuntimeError, match="no task group today"):
            await asyncio.wait_for(endpoint.started(), 60)
        await endpoint.stop()

    asyncio.run(run())


def test_a_request_after_the_endpoint_stopped_builds_nothing(
    toolang_runtime: Callable[..., Runtime],
) -> None:
    endpoint = _endpoint(toolang_runtime)

    async def run() -> None:
        await endpoint.stop()
        with structlog.testing.capture_logs() as logs, pytest.raises(routes.EndpointStopped):
            await endpoint.started()
        assert logs == []

    asyncio.run(run())


def test_a_build_a_stop_cancelled_is_no_answer_for_later_requests(
    toolang_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = _endpoint(toolang_runtime)

    async def run() -> None:
        first = endpoint.start("startup")
        await asyncio.sleep(0)
        first.cancel()  # as stop() does to a build under way
        with pytest.raises(asyncio.CancelledError):
            await first
        manager = await endpoint.started()  # built anew, not the cancelled one
        assert manager is await endpoint.started()
        await endpoint.stop()

    asyncio.run(run())
