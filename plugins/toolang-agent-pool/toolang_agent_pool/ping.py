"""Scheduled pings of remote agents: the pool's heartbeat beyond the card fetch at load.

A remote agent's source reads its card when the registry loads (start-up, every CLI
command); a long-lived runtime would otherwise never notice it going away, or coming
back, between calls. At the serving runtime's upkeep this plugin asks the
``toolang_ping_agents`` plugins (through the core's hooks) about every active remote
agent at most every ``ping_seconds`` and stores each answer in the pool
(:meth:`StoredPool.beat`), where every runtime on the store sees it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from toolang_agent_pool.pool import StoredPool
    from toolang_core import AgentHealth, RuntimeView

log = structlog.get_logger("toolang.pool")


class PingSchedule:
    """When the remote agents of one runtime were last pinged. The registry's card
    fetch at load counts as the first ping: the next is due ``every`` seconds after
    the schedule is made."""

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.last = clock()

    def due(self) -> bool:
        """Whether a ping is due now (``every`` 0 or less: never)."""
        return self.every > 0 and self.clock() - self.last >= self.every

    async def run(self, runtime: RuntimeView, pool: StoredPool) -> dict[str, AgentHealth]:
        """Ping every active remote agent if due (the ``toolang_ping_agents`` plugins,
        called by the core's hooks the pool was given); store and return what was
        found (``{}`` when not due or there is no remote agent).

        :raises ValueError: when ``pool`` was made without the core's hooks."""
        if pool.hooks is None:
            raise ValueError("pinging needs a runtime's pool (made with the core's hooks)")
        if not self.due():
            return {}
        self.last = self.clock()
        remote = [d for d in runtime.agents.registry.active() if d.source == "remote"]
        if not remote:
            return {}
        found = await asyncio.to_thread(pool.hooks.ping_agents, remote, runtime)
        known = {d.name for d in remote}
        for name, health in found.items():
            if name not in known:  # a plugin answering for an agent it was not asked about
                continue
            before = pool.stats(name).heartbeat
            pool.beat(name, health)
            if before != health.state:
                log.info("pool.heartbeat", agent=name, state=health.state, detail=health.detail)
        return {name: h for name, h in found.items() if name in known}
