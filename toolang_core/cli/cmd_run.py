"""``toolang run``: the long-lived runtime, in the foreground."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING, cast

import click

from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.logs import LogFormat


@click.command()
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Run only these turn sources (repeatable; default: [runtime] sources).",
)
@click.option("--no-sources", is_flag=True, help="Run no turn source (admit submitted work only).")
@click.option(
    "--until-idle",
    is_flag=True,
    help="Exit once nothing is running or waiting (for scripts and tests).",
)
@click.option(
    "--max-running",
    type=click.IntRange(min=1),
    default=None,
    help="Override [scheduler] max_running.",
)
@pass_state
def run(
    state: CliState,
    *,
    sources: tuple[str, ...],
    no_sources: bool,
    until_idle: bool,
    max_running: int | None,
) -> None:
    """Run the runtime: admit turns from the inbox until SIGINT or SIGTERM.

    On the first signal it stops admitting, gives running turns
    [runtime] shutdown_grace_seconds to finish and hands the rest back to the queue (a
    second signal skips the grace). Logs go to stderr; on a terminal a status line shows
    what is queued and running per group.
    """
    import attrs

    from toolang_core.logs import configure_logging

    config = state.config
    configure_logging(
        level=state.log_level or config.log.level,
        fmt=cast("LogFormat", state.log_format or config.log.format),
    )
    if max_running is not None:
        config = attrs.evolve(
            config, scheduler=attrs.evolve(config.scheduler, max_running=max_running)
        )
        state.config = config
    runtime = state.runtime
    chosen = () if no_sources else (sources or None)
    asyncio.run(_serve(runtime, chosen, until_idle))


async def _serve(runtime: object, sources: tuple[str, ...] | None, until_idle: bool) -> None:
    from toolang_core.runtime import Runtime

    assert isinstance(runtime, Runtime)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = {"count": 0}

    def on_signal() -> None:
        signals["count"] += 1
        runtime.stop_reason = "signal"  # what toolang_shutdown and runtime.stopped report
        if signals["count"] > 1 and runtime.scheduler is not None:  # skip the grace period
            for turn_id in list(runtime.scheduler.running):
                runtime.scheduler.cancel_task(turn_id, "shutdown")
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    status = asyncio.create_task(_status_line(runtime, stop)) if sys.stderr.isatty() else None
    try:
        # A one-shot `toolang chat`/`invoke` may hold the store for its one turn: wait.
        await runtime.serve(stop, sources=sources, until_idle=until_idle, lock_wait_seconds=30)
    finally:
        if status is not None:
            status.cancel()
            sys.stderr.write("\r\x1b[2K")


async def _status_line(runtime: object, stop: asyncio.Event) -> None:
    """Redraw one line on stderr: running/queued per group."""
    from toolang_core.runtime import Runtime

    assert isinstance(runtime, Runtime)
    while not stop.is_set():
        await asyncio.sleep(0.5)
        if runtime.store is None or runtime.scheduler is None:
            continue
        try:
            load = runtime.store.group_load()
        except Exception:  # the status line is a nicety; never let it break the run
            continue
        parts = [
            f"{group} {running}▶ {queued}⧗"
            for group, (running, queued) in sorted(load.items())
            if running or queued
        ]
        line = " | ".join(parts) or "idle"
        sys.stderr.write(f"\r\x1b[2K{line}  (admitted {runtime.scheduler.admitted})")
        sys.stderr.flush()
