"""The built-in plugin ``route-keywords``: routes by keywords and capabilities.

Registered by every host (like the SQLite store). Its scores are the number of
matched words (see :mod:`toolang_core.agents.routing`); a router plugin that is
surer of itself outbids it with a higher score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from toolang_core.markers import hookimpl

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition

Propose = Callable[[str, Sequence["AgentDefinition"]], "RouteProposal | None"]


def _first_propose(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    # The routing module is imported on the first route, not with the built-in plugins
    # (a command that never routes does not pay ~1 ms for it), and then called directly:
    # an import statement per turn costs ~0.45 us.
    global _propose  # noqa: PLW0603 - the module is bound once, on first use
    from toolang_core.agents.routing import propose

    _propose = propose
    return propose(request, agents)


_propose: Propose = _first_propose


@hookimpl(trylast=True)
def toolang_route(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    return _propose(request, agents)
