#!/usr/bin/env python3
"""Instructions per tool call of the full chain, counted by valgrind's callgrind.

Wall-clock figures of ``bench/tool_chain.py`` move by 10-20 % on a shared, loaded
machine; the instructions executed per call do not (the same count to ~0.1 % whatever
the load), so a change to the chain's cost is measured here and its wall figures
quoted beside. The chain runs as in ``bench/tool_chain.py`` (every installed stage
plugin, a real SQLite store), warmed up with instrumentation off; only ``--calls``
calls are counted (``callgrind_control -i on`` / ``-i off`` around them)::

    python3 bench/tool_chain_instructions.py [--calls 2000] [--what chain|bare|impls]

``impls`` calls each stage plugin's implementations directly (the plugins' share of a
call, without the chain). Needs ``valgrind`` (Debian: ``apt-get install valgrind``);
about a minute. The last line is a JSON object. Compare two trees by running each
tree with its own interpreter: ``cd OTHER && .venv/bin/python
/path/to/bench/tool_chain_instructions.py --tree .`` (``--tree``: the checkout whose
``bench/tool_chain.py`` and ``toolang_core`` are measured; ``PYTHONHASHSEED=0`` is set).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAGE_HOOKS = (
    "toolang_filter_tool_call",
    "toolang_approve_tool_call",
    "toolang_filter_tool_result",
    "toolang_observe_tool_result",
    "toolang_save_knowledge",
    "toolang_publish_event",
)


def _wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.02)


def target(calls: int, signals: Path, what: str, tree: Path) -> None:
    """Under callgrind: warm up, write ``ready``, wait for ``go``, run, write ``done``,
    wait for ``end``."""
    sys.path.insert(0, str(tree / "bench"))
    sys.path.insert(0, str(tree))
    import tool_chain as tc

    from toolang_core import ToolCall, ToolCallContext, ToolResult
    from toolang_core.logs import configure_logging

    configure_logging(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        runtime, chain = tc.build(Path(tmp) / "full", stages=what != "bare")
        call = ToolCall(call_id="c1", name="echo_len", params={"text": "hello world"})
        ctx = ToolCallContext(
            call=call,
            turn_id="bench-turn",
            thread_id="bench:thread",
            run_id="bench-run",
            agent="assistant",
            runtime=runtime,
        )
        result = ToolResult(ok=True, output={"text": "hello world", "length": 11})
        kw = {"call": call, "ctx": ctx, "result": result}
        impls = [
            (impl.function, [kw[a] for a in impl.argnames])
            for hook in STAGE_HOOKS
            for impl in getattr(runtime.host.pm.hook, hook).get_hookimpls()
        ]

        async def run_impls(n: int) -> None:
            for _ in range(n):
                for function, args in impls:
                    answer = function(*args)
                    if hasattr(answer, "__await__"):
                        await answer

        async def go() -> None:
            await runtime.host.hooks.startup(runtime)
            await tc.time_chain(runtime, chain, 300)
            await run_impls(300)
            gc.collect()
            gc.freeze()
            (signals / "ready").write_text(str(os.getpid()))
            _wait_for(signals / "go")
            if what == "impls":
                await run_impls(calls)
            else:
                await tc.time_chain(runtime, chain, calls)
            (signals / "done").write_text("")
            _wait_for(signals / "end")
            await runtime.host.hooks.shutdown(runtime, "stop")

        asyncio.run(go())
        runtime.close_plugin_databases()
        assert runtime.store is not None
        runtime.store.close()


def count(calls: int, what: str, tree: Path) -> int:
    """Run :func:`target` under callgrind; instructions per call."""
    args = ["--calls", str(calls), "--what", what, "--tree", str(tree)]
    return callgrind_count(Path(__file__), args, calls)


def callgrind_count(script: Path, args: list[str], units: int) -> int:
    """Run ``script --target DIR *args`` under callgrind, counting only between its
    ``go`` and ``done`` signals (its target writes ``ready``, waits for ``go``, runs,
    writes ``done``, waits for ``end``); instructions per unit of work."""
    with tempfile.TemporaryDirectory() as tmp:
        signals = Path(tmp)
        out = signals / "cg.out"
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        command += [f"--callgrind-out-file={out}", sys.executable, str(script)]
        command += ["--target", str(signals), *args]
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        try:
            while not (signals / "ready").exists():
                if process.poll() is not None:
                    raise SystemExit(f"the target exited with {process.returncode}")
                time.sleep(0.2)

            def control(*args: str) -> None:
                command = ["callgrind_control", *args, str(process.pid)]
                subprocess.run(command, check=True, capture_output=True)

            control("-i", "on")
            (signals / "go").write_text("")
            _wait_for(signals / "done")
            control("-d")
            control("-i", "off")
            (signals / "end").write_text("")
            process.wait()
        finally:
            if process.poll() is None:
                process.kill()
        dumps = sorted(signals.glob("cg.out.*"))  # the dump taken right after the work
        for line in dumps[0].read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]) // units
    raise SystemExit("callgrind wrote no totals")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--what", choices=("chain", "bare", "impls"), default="chain")
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.target is not None:
        target(args.calls, args.target, args.what, args.tree.resolve())
        return
    per_call = count(args.calls, args.what, args.tree.resolve())
    print(f"{args.what}: {per_call} instructions per tool call ({args.calls} calls)")
    print(json.dumps({"what": args.what, "calls": args.calls, "instructions_per_call": per_call}))


if __name__ == "__main__":
    main()
