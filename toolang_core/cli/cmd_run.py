"""``toolang run``: the long-lived runtime, in the foreground."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, cast

import click

from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from typing import TextIO

    from toolang_core.cli.status_line import StatusLine
    from toolang_core.config.model import ToolangConfig
    from toolang_core.logs import LogFormat


STORE_WAIT_SECONDS = 30.0
"""How long ``toolang run`` waits by default for a runtime holding the store: a one-shot
``toolang chat``/``invoke`` holds it for its one turn."""


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
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=STORE_WAIT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another runtime holding the store to stop (0: fail at once).",
)
@pass_state
def run(
    state: CliState,
    *,
    sources: tuple[str, ...],
    no_sources: bool,
    until_idle: bool,
    max_running: int | None,
    wait_seconds: float = STORE_WAIT_SECONDS,
) -> None:
    """Run the runtime: admit turns from the inbox until SIGINT or SIGTERM.

    On the first signal it stops admitting, gives running turns
    [runtime] shutdown_grace_seconds to finish and hands the rest back to the queue (a
    second signal ends the grace at once; a turn waiting for an approval is handed back
    at once, its request still pending). Logs go to stderr; on a terminal a status line
    shows what is queued and running per group.
    """
    import attrs

    from toolang_core.cli.status_line import StatusLine
    from toolang_core.logs import configure_logging

    config = state.config
    # On a terminal a status line shares stderr with the logs: log through it, so a log
    # line never lands on top of the status line.
    line = StatusLine(sys.stderr) if sys.stderr.isatty() else None
    configure_logging(
        level=state.log_level or config.log.level,
        fmt=cast("LogFormat", state.log_format or config.log.format),
        stream=cast("TextIO", line) if line is not None else None,
    )
    if max_running is not None:
        config = attrs.evolve(
            config, scheduler=attrs.evolve(config.scheduler, max_running=max_running)
        )
        state.config = config
    runtime = state.runtime
    chosen = () if no_sources else (sources or None)
    _say_sandbox(config, json_log=(state.log_format or config.log.format) == "json")
    if line is not None:  # a person is watching: say how to talk to it
        from toolang_core.cli.hints import path_hint

        how = path_hint()
        first = f"`{how}`, then " if how else ""
        click.echo(
            f"Ctrl-C stops the runtime. From another terminal in this directory: "
            f'{first}`toolang chat "hello"`',
            err=True,
        )
    asyncio.run(_serve(runtime, chosen, until_idle, line, wait_seconds))


def _say_sandbox(config: ToolangConfig, *, json_log: bool) -> None:
    """The start-up line about tools' sandbox, in red, when it is off or missing (never
    a silent fallback); nothing when programs run sandboxed. With JSON logs it is a
    ``runtime.sandbox_warning`` event: every line on stderr stays JSON."""
    from toolang_core.sandbox.support import sandbox_warning

    warning = sandbox_warning(config.tools)
    if warning is None:
        return
    if json_log:
        import structlog

        structlog.get_logger("toolang.runtime").warning("runtime.sandbox_warning", detail=warning)
    else:
        click.secho(f"WARNING: {warning}", fg="red", err=True)


THREADS_WAIT_SECONDS = 1.0


def freeze_heap() -> None:
    """Move what start-up built out of the garbage collector's view (``gc.freeze``).

    Plugins, settings and registries live as long as the runtime: frozen, every later
    collection stays short — a hot path like the tool-call chain pays a third less. The
    process's choice, so ``toolang run`` makes it (through ``Runtime.serve``'s
    ``on_started``), not the library: a program embedding a runtime keeps its heap.
    From then on the collector runs at its usual pace again (the CLI slowed it for the
    start-up: :mod:`toolang_core.cli.collector`)."""
    from toolang_core.cli.collector import collect_as_usual

    gc.collect()
    gc.freeze()
    collect_as_usual()


"""After the runtime stopped, how long tool threads still running may take to end before
the process exits without them (a fifth of it after a second signal)."""


async def _serve(
    runtime: object,
    sources: tuple[str, ...] | None,
    until_idle: bool,
    line: StatusLine | None,
    wait_seconds: float,
) -> None:
    import structlog

    from toolang_core.runtime import Runtime

    assert isinstance(runtime, Runtime)
    log = structlog.get_logger("toolang.runtime")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = {"count": 0}

    def on_signal(sig: signal.Signals) -> None:
        signals["count"] += 1
        runtime.stop_reason = "signal"  # what toolang_shutdown and runtime.stopped report
        scheduler = runtime.scheduler
        running = len(scheduler.running) if scheduler is not None else 0
        if signals["count"] == 1:
            log.info(
                "runtime.stopping",
                signal=sig.name,
                running=running,
                grace_seconds=runtime.config.runtime.shutdown_grace_seconds,
            )
        else:
            log.warning(
                "runtime.stopping_now",
                signal=sig.name,
                running=running,
                detail="second signal: no more waiting for running turns; they go back "
                "to the queue now",
            )
            if scheduler is not None:
                scheduler.end_grace()
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)
    status = asyncio.create_task(_status_line(runtime, stop, line)) if line is not None else None
    try:
        # A one-shot `toolang chat`/`invoke` may hold the store for its one turn: wait.
        await runtime.serve(
            stop,
            sources=sources,
            until_idle=until_idle,
            lock_wait_seconds=wait_seconds,
            on_started=freeze_heap,
        )
    finally:
        gc.unfreeze()  # what this run froze may be collected again
        if status is not None and line is not None:
            status.cancel()
            line.clear()
    hurry = signals["count"] > 1
    await _leave_tool_threads(log, wait=THREADS_WAIT_SECONDS / (5 if hurry else 1))


async def _leave_tool_threads(log: Any, *, wait: float) -> None:
    """End the process now if tool threads outlive the runtime.

    A blocking tool runs in a worker thread that cancelling its turn cannot stop, and
    ``asyncio.run`` (then the interpreter) would wait for it however long it takes —
    the grace period and a second signal would bound nothing. The store is closed and
    the turn handed back by now; its call has an intent and no result, so it is *in
    doubt* when the turn resumes and is not run again unless the tool is idempotent.
    """
    closing = asyncio.ensure_future(asyncio.get_running_loop().shutdown_default_executor())
    done, _ = await asyncio.wait({closing}, timeout=wait)
    if done:
        return
    log.warning(
        "runtime.tool_threads_left",
        detail="tool calls still running in threads are left unfinished; their turns were "
        "handed back and the calls are in doubt when they resume",
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


async def _status_line(runtime: object, stop: asyncio.Event, line: StatusLine) -> None:
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
        text = " | ".join(parts) or "idle"
        line.show(f"{text}  (admitted {runtime.scheduler.admitted})")
