"""The built-in plugin ``route-keywords``: routes by keywords and capabilities.

Registered by every host (like the SQLite store). Its scores are the number of
matched words (see :mod:`toolang_core.agents.routing`); a router plugin that is
surer of itself outbids it with a higher score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolang_core.markers import hookimpl

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition


@hookimpl(trylast=True)
def toolang_route(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    from toolang_core.agents.routing import propose

    return propose(request, agents)
