"""BrowserRecovery: the post-execute hook that recovers a failed browser call once.

It is a result filter (``toolang_filter_tool_result``, the chain's post-execute stage
that may replace a result before the trace and the model see it). When a browser tool
failed because of the browser — an element gone, a crashed page, a timeout, a browser
that went away — it puts the thread's browser back in shape (re-observes the page,
reopens a crashed page, reloads, or restarts the browser) and runs the call once more.
A call is retried at most once: the retry's result is final, and a refusal (the
allow-list, a bad name, no page opened) is never retried. What it did is in the result
the trace records (``recovery``), and the chain's stage record names the plugin.

:func:`recover` is the hook's side (on the event loop); :func:`restore` is what it runs
on the browser's worker thread.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from toolang_core import ToolResult
from toolang_tools_navigator.errors import NavigatorError
from toolang_tools_navigator.scripts import REF_ATTRIBUTE
from toolang_tools_navigator.session import FINGERPRINT

if TYPE_CHECKING:
    from toolang_core import ToolCall, ToolCallContext
    from toolang_tools_navigator.browser import BrowserHost
    from toolang_tools_navigator.session import Key

log = structlog.get_logger(__name__)

NOT_RECOVERED = frozenset({"NavigatorError", "NavigationRefused", "invalid_params"})
"""Errors that say what was asked cannot be done: retrying cannot change them."""


async def recover(call: ToolCall, result: ToolResult, ctx: ToolCallContext) -> ToolResult | None:
    """A replacement for a failed browser call's ``result`` after one recovery and one
    retry, or ``None`` (not a browser call, it succeeded, or it is not recoverable)."""
    from toolang_tools_navigator.settings import NAME, NavigatorSettings
    from toolang_tools_navigator.tools import FUNCTIONS, host_of, key_of

    function = FUNCTIONS.get(call.name)
    if function is None or call.name == "browser_close" or result.ok or result.refusal:
        return None
    if result.error_type in NOT_RECOVERED or ctx.turn is None or ctx.runtime is None:
        return None
    if not ctx.runtime.settings_for(NAME, NavigatorSettings).recovery:
        return None
    host, key = host_of(ctx.runtime), key_of(ctx)
    started = time.perf_counter()
    params: dict[str, Any] = dict(call.params)
    try:
        action, params = await host.run(restore, host, key, call.name, params)
    except Exception as exc:
        note = {"failed": result.error, "action": "none possible", "why": str(exc)}
        log.info("navigator.recovery_failed", tool=call.name, error=str(exc))
        return attrs.evolve(
            result,
            error=f"{result.error} (BrowserRecovery could not recover: {exc})",
            output={"recovery": note},
        )
    note = {"failed": result.error, "action": action}
    log.info("navigator.recovered", tool=call.name, action=action)
    try:
        output = await function(**params, context=attrs.evolve(ctx, call=call))
    except Exception as exc:  # the retry's failure is final: no second retry
        note["retry"] = "failed"
        return ToolResult(
            ok=False,
            error=(
                f"{exc} (after BrowserRecovery — {action} — and one retry; the first "
                f"failure: {result.error})"
            ),
            error_type=type(exc).__name__,
            output={"recovery": note},
            duration_ms=result.duration_ms + (time.perf_counter() - started) * 1000,
        )
    note["retry"] = "ok"
    return ToolResult(
        ok=True,
        output={**output, "recovery": note} if isinstance(output, dict) else output,
        duration_ms=result.duration_ms + (time.perf_counter() - started) * 1000,
    )


def restore(
    host: BrowserHost, key: Key, tool: str, params: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Put the thread's browser back in a state the call can be retried in (on the
    browser's worker thread); what was done and the parameters to retry with. Raises
    when nothing can be done."""
    session = host.session_of(key)
    if session is None:
        raise NavigatorError("no page is open in this thread: call browser_open first")
    if not host.browser_running():
        last = session.last_url
        fresh = host.session(key, create=True)
        fresh.last_url = last
        reopened = fresh.new_page()
        if last:
            reopened.goto(last, wait_until="load")
        return (
            f"the browser had gone: restarted it and reopened {last or 'a blank page'}",
            params,
        )
    page = session.page
    if page is None or page.is_closed() or session.crashed:
        if page is not None and not page.is_closed():
            try:
                page.close()
            except Exception as exc:  # a crashed page may not close cleanly
                log.info("navigator.crashed_page_close_failed", error=str(exc))
        page = session.new_page()
        if session.last_url:
            page.goto(session.last_url, wait_until="load")
        session.seen.clear()
        return f"the page had crashed: reopened {session.last_url or 'a blank page'}", params
    ref = params.get("ref")
    if isinstance(ref, str) and page.locator(f'[{REF_ATTRIBUTE}="{ref}"]').count() == 0:
        known = session.seen.get(ref)
        observed = host.observe(key)["elements"]
        match = [
            e["ref"]
            for e in observed
            if known is not None and {k: e.get(k) for k in FINGERPRINT} == known
        ]
        if len(match) != 1:
            raise NavigatorError(
                f"re-observed the page: no single element like {ref} is on it now "
                f"({len(observed)} elements; call browser_observe)"
            )
        return f"re-observed the page: {ref} is now {match[0]}", {**params, "ref": match[0]}
    page.reload(wait_until="load")
    return f"reloaded {page.url}", params
