"""Typed answers: a turn whose final answer must be JSON matching a JSON Schema.

The schema comes from the request (its ``meta["output_schema"]``: ``toolang chat
--schema``, the API's ``output_schema``, an A2A DataPart) or else from the agent
(AGENT.md ``output_schema:``). The loop (:mod:`toolang_core.turn.loop`) sends it with
every model call (:attr:`~toolang_core.models.ModelRequest.output_schema`, for models
with native structured output) and in the prompt (for every other model), parses the
final answer as JSON and validates it with the project's validator
(:mod:`toolang_core.tools.validate`). An invalid answer goes back to the model with the
errors, up to ``output_retries`` times; then the turn fails with outcome
``invalid_output``. Each check is an ``output_check`` step of the turn.

The stored output of a typed turn is the answer's JSON text (as the model wrote it,
less surrounding spaces and a ```json fence); :func:`output_value` gives the doors (``toolang
chat --json``, the API, A2A) the value itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from toolang_core.models.types import Message
from toolang_core.store.types import TurnStatus
from toolang_core.tools.validate import ParamsValidator, SchemaError

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.store.types import TurnRequest

OUTPUT_SCHEMA: Final = "output_schema"
"""The turn request ``meta`` key of a per-request schema (a JSON object)."""
INVALID_OUTPUT: Final = "invalid_output"
"""The outcome of a turn whose answer never matched its schema."""
STEP_KIND: Final = "output_check"
RETRY_PREFIX: Final = "Your answer was not accepted: "
"""How the message sending an invalid answer back starts (a scripted model in the test
kit counts past it: it is the runtime's, not the person's)."""
MAX_CACHED: Final = 64
"""Request schemas kept compiled (by their JSON text); past it they are compiled anew."""

_FENCED = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(.*)\n```$", re.DOTALL)


@attrs.frozen
class OutputSpec:
    """What one turn's final answer must be: JSON matching ``schema``; an invalid answer
    is sent back to the model up to ``retries`` times. ``origin`` says whose schema it
    is, for messages (``agent 'triage'``, ``the request``)."""

    schema: Mapping[str, Any] = attrs.field(hash=False)
    retries: int
    origin: str

    @property
    def attempts(self) -> int:
        return 1 + self.retries


def spec_for(turn: TurnRequest, agent: AgentDefinition, default_retries: int) -> OutputSpec | None:
    """The typed-answer rule of ``turn`` as ``agent`` answers it: the request's schema
    wins over the agent's; ``None`` when neither asks for one. The request's schema was
    checked at the door (the inbox refuses a bad one)."""
    retries = agent.output_retries if agent.output_retries is not None else default_retries
    requested = turn.meta.get(OUTPUT_SCHEMA)
    if isinstance(requested, Mapping):
        return OutputSpec(requested, retries, "the request")
    if agent.output_schema is not None:
        return OutputSpec(agent.output_schema, retries, f"agent {agent.name!r}")
    return None


def schema_note(schema: Mapping[str, Any]) -> str:
    """What the prompt says about the answer's form (for models without native
    structured output; the others get the schema with the call too)."""
    text = json.dumps(schema, ensure_ascii=False, sort_keys=True)
    return (
        "Your final answer must be only a JSON value (no prose, no code fence) that "
        f"matches this JSON Schema: {text}"
    )


@attrs.frozen
class Checked:
    """One answer checked: its JSON text as stored (``None`` when invalid) and what is
    wrong with it (``None`` when valid)."""

    json_text: str | None
    problem: str | None


class OutputChecker:
    """Parses and validates answers; keeps each schema compiled (a runtime has one)."""

    def __init__(self, validator: ParamsValidator | None = None) -> None:
        self.validator = validator or ParamsValidator()
        # A request's schema arrives as a new dict each turn: the same text is the same
        # object here, so the validator compiles it once.
        self._by_text: dict[str, Mapping[str, Any]] = {}
        self._seen: dict[int, Mapping[str, Any]] = {}  # by id: found without the text

    def check(self, spec: OutputSpec, text: str) -> Checked:
        """``text`` against ``spec``: parsed as JSON (a fenced ```json block is
        accepted), then validated.

        :raises SchemaError: when ``spec.schema`` itself cannot be compiled."""
        body = text.strip()
        fenced = _FENCED.match(body)
        if fenced:
            body = fenced.group(1).strip()
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            return Checked(
                None, f"the answer is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            )
        try:
            problem = self.validator.problem(self._same(spec.schema), value, subject="answer")
        except Exception as exc:  # a schema that never passed a door's check (a raw store write)
            raise SchemaError(
                f"the output schema of {spec.origin} is not a valid JSON Schema: {exc}"
            ) from None
        if problem is not None:
            return Checked(None, problem)
        return Checked(body, None)  # as the model wrote it, less a fence and spaces

    def _same(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        if self._seen.get(id(schema)) is schema:  # an agent's schema: the same object
            return schema
        key = json.dumps(schema, sort_keys=True, default=str)
        known = self._by_text.get(key)
        if known is None:
            if len(self._by_text) >= MAX_CACHED:
                self._by_text.clear()
            known = self._by_text[key] = schema
        if len(self._seen) >= MAX_CACHED:
            self._seen.clear()
        self._seen[id(known)] = known
        return known


def retry_message(spec: OutputSpec, problem: str, attempt: int) -> Message:
    """What the model reads after an invalid answer (``attempt`` of ``spec.attempts``)."""
    left = spec.attempts - attempt
    return Message(
        role="user",
        content=(
            f"{RETRY_PREFIX}{problem}. Answer again with only a JSON value "
            f"matching the JSON Schema given ({left} attempt{'s' if left != 1 else ''} left)."
        ),
    )


def failure_message(spec: OutputSpec, problems: list[str]) -> str:
    """The error of a turn whose every answer was invalid, naming each attempt's problem."""
    each = "; ".join(f"attempt {n}: {p}" for n, p in enumerate(problems, 1))
    return (
        f"the answer did not match the output schema of {spec.origin} after "
        f"{len(problems)} attempt{'s' if len(problems) != 1 else ''} ({each})"
    )


class AgentLookup(Protocol):
    """What :func:`output_value` needs of the agent registry (``runtime.agents``)."""

    def agent(self, name: str | None) -> AgentDefinition: ...


def is_typed(turn: TurnRequest, agents: AgentLookup | None = None) -> bool:
    """Whether ``turn`` asked for a typed answer: its request carries a schema, or (with
    ``agents``) the agent it names — the default one if none — has one."""
    if isinstance(turn.meta.get(OUTPUT_SCHEMA), Mapping):
        return True
    if agents is None:
        return False
    try:
        return agents.agent(turn.agent).output_schema is not None
    except Exception:  # an agent gone since: its answer is shown as it was stored
        return False


def output_value(turn: TurnRequest, agents: AgentLookup | None = None) -> Any:
    """The output of ``turn`` as a door returns it: the JSON value of a completed typed
    answer, else the stored text (``None`` when there is none)."""
    if turn.status is not TurnStatus.COMPLETED or turn.output is None:
        return turn.output
    if not is_typed(turn, agents):
        return turn.output
    try:
        return json.loads(turn.output)
    except json.JSONDecodeError:  # e.g. masked on the way in: the text as stored
        return turn.output
