"""The executors a ``[runtime] executor`` name selects.

The seam itself (:class:`TurnExecutor`, :class:`TurnContext`, :class:`TurnOutcome`,
:class:`LeaseLost`) lives in :mod:`toolang_core.execution.seam`, below both the runtime
and the agent turn; it is re-exported here for the older import path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from toolang_core.errors import ConfigError
from toolang_core.execution.seam import (
    EchoExecutor,
    LeaseLost,
    TurnContext,
    TurnExecutor,
    TurnOutcome,
)

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime

__all__ = [
    "EXECUTORS",
    "EchoExecutor",
    "LeaseLost",
    "TurnContext",
    "TurnExecutor",
    "TurnOutcome",
    "executor_for",
]


def _agent_executor(runtime: CoreRuntime) -> TurnExecutor:
    from toolang_core.turn.agent import AgentExecutor

    return AgentExecutor(runtime)


EXECUTORS: dict[str, Callable[[CoreRuntime], TurnExecutor]] = {
    "agent": _agent_executor,
    "echo": lambda runtime: EchoExecutor(),
}
"""Built-in executors by ``[runtime] executor`` name; each gets the runtime."""


def executor_for(runtime: CoreRuntime) -> TurnExecutor:
    """The executor ``runtime``'s ``[runtime] executor`` names, built for it.

    :raises ConfigError: naming the unknown executor and the available ones.
    """
    name = runtime.config.runtime.executor
    factory = EXECUTORS.get(name)
    if factory is None:
        raise ConfigError(
            [
                f"{runtime.config.display_name}: runtime.executor: unknown executor {name!r} "
                f"(available: {', '.join(sorted(EXECUTORS))})"
            ]
        )
    return factory(runtime)
