"""What the tests of toolang-tools-mcp share: the real MCP servers of ``servers/`` and
a runtime configured to use them."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).parent / "servers"


def stdio_server(name: str, script: str, *args: str, extra: str = "") -> str:
    """A ``[plugins.tools-mcp.servers.<name>]`` section running ``servers/<script>``.

    The server runs in the tool sandbox; the servers write beside their first argument
    (the ledger), so that directory is one of its ``write_paths``."""
    argv = ", ".join(f'"{a}"' for a in (str(SERVERS / script), *args))
    writes = f'write_paths = ["{Path(args[0]).parent}"]\n' if args else ""
    return (
        f"[plugins.tools-mcp.servers.{name}]\n"
        f'command = "{sys.executable}"\nargs = [{argv}]\n{writes}{extra}\n'
    )


def server_pid(pid_file: Path) -> int:
    """The id, on this machine, of the server that wrote ``pid_file`` from its sandbox
    (where it has another id, in its own PID namespace): the process whose command line
    names the ledger beside the file and whose innermost id is the one written."""
    inner = pid_file.read_text().strip()
    ledger = str(pid_file.parent / "ledger").encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if ledger not in (entry / "cmdline").read_bytes().split(b"\0"):
                continue
            status = (entry / "status").read_text()
        except OSError:
            continue
        ids = [line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")]
        if ids and ids[0][-1] == inner:
            return int(entry.name)
    raise AssertionError(f"no server process wrote {pid_file} ({inner})")


def runtime_with(
    toolang_runtime: Any, toolang_home: Any, monkeypatch: Any, sections: str, **plugins: Any
) -> Any:
    """A runtime whose configuration holds ``sections``."""
    import toolang_tools_mcp

    config = '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n' + sections
    toolang_home.write_config(config)
    return toolang_runtime(config, plugins={"tools-mcp": toolang_tools_mcp, **plugins})


def wait_for(what: str, predicate: Any, timeout: float = 120) -> Any:
    """Poll ``predicate`` until it answers something true (a deadline, not a sleep)."""
    import time

    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.02)
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def offered_tools(runtime: Any) -> dict[str, Any]:
    """The runtime's tools once its plugins offered theirs: it serves (nothing) until
    idle and they are read when it has started, before its offers are withdrawn."""
    import asyncio

    seen: dict[str, Any] = {}
    started = lambda: seen.update(runtime.components.tools.current)  # noqa: E731
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=(), on_started=started))
    return seen


@contextlib.contextmanager
def serving(runtime: Any) -> Iterator[None]:
    """``runtime`` serving in a thread of its own (no turn sources) while the block
    runs; it has started (its plugins offered their tools) when the block begins."""
    import asyncio

    box: dict[str, Any] = {}
    started = threading.Event()

    async def serve() -> None:
        box["stop"], box["loop"] = asyncio.Event(), asyncio.get_running_loop()
        await runtime.serve(box["stop"], sources=(), on_started=started.set)

    thread = threading.Thread(target=lambda: box.update(done=asyncio.run(serve())))
    thread.start()
    try:
        wait_for("the runtime to start", lambda: started.is_set() or not thread.is_alive(), 600)
        assert started.is_set(), "the runtime stopped before it started serving"
        yield
    finally:
        if "loop" in box:
            box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join()


def finished(inbox: Any, turn_id: str) -> Any:
    """Wait (with a deadline) until turn ``turn_id`` ended; its request."""
    ended = ("completed", "failed", "canceled")
    return wait_for(f"turn {turn_id}", lambda: (r := inbox.get(turn_id)).status in ended and r, 600)
