"""Capability escalation: ``request_tool`` asks for a tool the agent's role allows but
this turn was not given, and a person (or the approval policy) grants it for the turn.

An agent's tools in a turn may be narrower than its role's maximum scope (its share of
the tool assignment): spawn-time ``allowed_tools``, a ``toolang_build_agent`` plugin.
Such a turn is offered ``request_tool(name, reason)`` (and only such a turn: one with
something to ask for). The rules, each enforced here in code and tested:

- The *ceiling* of a turn is its role's maximum scope, narrowed by a
  ``toolang_build_agent`` plugin's tools (a tenant's limit is not the agent's to lift)
  and by its parent's tools: a task run or teammate spawned with ``allowed_tools``
  records the spawning turn's usable tools (``meta.tool_ceiling``), so a child never
  gains what its parent lacks, however deep.
- Asking for a tool outside the ceiling (or one the turn already has, or no tool) is
  refused at once by the agent loop, with the reason and the tools it may ask for; no
  approval is requested (stage ``scope`` in the call's chain record).
- Inside the ceiling the call passes the tool-hook chain like any call: the approval
  gate decides (``request_tool`` is in its default ``require`` list: a person is asked,
  in ``toolang approvals``, the console and the API; a policy may grant it with
  ``auto_approve = ["request_tool"]``). Only a *grant* widens the turn: a gate that
  abstains, or no gate installed, leaves the call refused — nobody granted it.
- Granted, the tool is usable for the rest of this turn: the loop's speaker gains it
  (its spec and its scope), and a turn resumed after a crash gains it again from the
  recorded result. The next turn starts from the narrowed set again; ``ask_agent``'s
  nested loop and a transferred turn never inherit it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.models.types import ToolSpec
from toolang_core.tools.types import ToolCallContext, ToolResult

if TYPE_CHECKING:
    from toolang_core.tools.chain import StageRecord
    from toolang_core.turn.speaker import Speaker

REQUEST_TOOL: Final = "request_tool"
CEILING_META: Final = "tool_ceiling"
"""Turn-request meta: the tools a spawned child may at most escalate to (its parent's)."""


def request_tool(name: str, reason: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Ask for a tool your role allows but this turn was not given. A person (or the
    approval policy) decides; granted, the tool is yours for the rest of this turn.

    :param name: the tool, exactly as named in this tool's list of tools you may ask for
    :param reason: why you need it, for the person who decides
    """
    # Runs only after the approval gate let it through; the loop checked the name
    # before the chain and widens the turn from this result (escalation.granted).
    return {"granted": name.strip(), "for": "the rest of this turn", "reason": reason}


@attrs.frozen
class Escalation:
    """What one turn's agent may ask for: ``agent`` answering, up to ``ceiling``."""

    agent: str
    ceiling: frozenset[str]

    def askable(self, speaker: Speaker) -> list[str]:
        """The tools ``speaker`` may still ask for, sorted."""
        return sorted(self.ceiling - speaker.allowed - {REQUEST_TOOL})

    def refusal(self, speaker: Speaker, params: Mapping[str, Any]) -> ToolResult | None:
        """Why a ``request_tool`` call is refused before the chain (``None``: it goes on)."""
        if speaker.agent.name != self.agent:
            return None  # another agent answers now (a transfer): the chain refuses it
        name = str(params.get("name", "")).strip()
        askable = self.askable(speaker)
        shown = ", ".join(askable) or "none"
        if name in speaker.allowed:
            why = f"tool {name!r} is already yours in this turn; call it"
        elif name not in self.ceiling:
            why = (
                f"tool {name!r} is outside agent {self.agent!r}'s maximum scope for this "
                f"turn (its role's tools, as far as its parent has them); it cannot be "
                f"granted. Tools you may ask for: {shown}"
            )
        else:
            return None
        return ToolResult(ok=False, error=why, error_type="not_allowed")


def ceiling_for(
    scope: frozenset[str], meta: Mapping[str, Any], built: frozenset[str] | None
) -> frozenset[str]:
    """The turn's ceiling: the role's ``scope``, narrowed by a build plugin's ``built``
    tools and by the parent's tools recorded in ``meta`` (:data:`CEILING_META`)."""
    ceiling = scope if built is None else scope & built
    inherited = meta.get(CEILING_META)
    if isinstance(inherited, list | tuple):
        ceiling &= frozenset(str(t) for t in inherited)
    return ceiling


def offer(speaker: Speaker, escalation: Escalation, registered: Mapping[str, Any]) -> Speaker:
    """``speaker`` with ``request_tool`` among its tools, when it has something to ask
    for and the tool is registered; else ``speaker`` as it is."""
    known = registered.get(REQUEST_TOOL)
    askable = escalation.askable(speaker)
    if known is None or not askable or REQUEST_TOOL in speaker.allowed:
        return speaker
    spec = ToolSpec(
        REQUEST_TOOL,
        f"{known.tool.description} Tools you may ask for: {', '.join(askable)}.",
        known.tool.parameters,
    )
    return attrs.evolve(
        speaker, specs=(*speaker.specs, spec), allowed=speaker.allowed | {REQUEST_TOOL}
    )


class Offers:
    """What each speaker may ask for and the speaker offered ``request_tool``
    (:func:`ceiling_for`, :func:`offer`), worked out once per speaker, parent ceiling
    (``meta``) and build plugin's tools while the tool assignment stands — speakers are
    cached the same way, and most turns repeat an earlier one's. At most ``most`` kept."""

    def __init__(self, most: int) -> None:
        self._most = most
        self._known: dict[
            tuple[int, tuple[str, ...] | None, frozenset[str] | None],
            tuple[Speaker, object, tuple[Speaker, Escalation]],
        ] = {}

    def of(
        self,
        speaker: Speaker,
        meta: Mapping[str, Any],
        built: frozenset[str] | None,
        *,
        assignment: object,
        scope: Callable[[], frozenset[str]],
        registered: Mapping[str, Any],
    ) -> tuple[Speaker, Escalation]:
        """``speaker`` (offered ``request_tool`` when it has something to ask for) and
        its :class:`Escalation`; ``assignment`` is the tool assignment in force,
        ``scope()`` the agent's role scope under it, ``registered`` the tools."""
        inherited = meta.get(CEILING_META)
        key = (
            id(speaker),  # the speaker is held below: its id is not reused meanwhile
            tuple(map(str, inherited)) if isinstance(inherited, list | tuple) else None,
            built,
        )
        known = self._known.get(key)
        if known is not None and known[0] is speaker and known[1] is assignment:
            return known[2]
        escalating = Escalation(speaker.agent.name, ceiling_for(scope(), meta, built))
        worked_out = offer(speaker, escalating, registered), escalating
        if len(self._known) >= self._most:
            self._known.clear()
        self._known[key] = (speaker, assignment, worked_out)
        return worked_out


def unapproved(tool: str, result: ToolResult, stages: Iterable[StageRecord]) -> ToolResult:
    """``result`` of a call of ``tool`` that ran; for ``request_tool`` an error unless the
    approval gate *granted* it (a gate that abstained, or none, grants nothing)."""
    if (
        tool != REQUEST_TOOL
        or not result.ok
        or any(s.stage == "ApprovalGate" and s.verdict == "granted" for s in stages)
    ):
        return result
    return ToolResult(
        ok=False,
        error=(
            "request_tool needs a grant from the approval gate and none was given (no "
            "approval gate installed, or its policy neither asks nor approves "
            "request_tool); nothing was granted"
        ),
        error_type="denied",
    )


def granted(
    speaker: Speaker,
    escalation: Escalation | None,
    result: ToolResult,
    registered: Mapping[str, Any],
) -> Speaker:
    """``speaker`` with the tool a granted ``request_tool`` names (inside the ceiling
    and registered); else ``speaker`` as it is."""
    output = result.output
    if escalation is None or not result.ok or not isinstance(output, dict):
        return speaker
    name = str(output.get("granted", ""))
    known = registered.get(name)
    if name not in escalation.ceiling or name in speaker.allowed or known is None:
        return speaker
    spec = ToolSpec(name, known.tool.description, known.tool.parameters)
    widened = attrs.evolve(speaker, specs=(*speaker.specs, spec), allowed=speaker.allowed | {name})
    if not escalation.askable(widened):  # nothing left to ask for
        widened = attrs.evolve(
            widened,
            specs=tuple(s for s in widened.specs if s.name != REQUEST_TOOL),
            allowed=widened.allowed - {REQUEST_TOOL},
        )
    return widened
