"""The checks every agent definition passes, whatever its source."""

from __future__ import annotations

import re
from typing import Final, get_args

import attrs

from toolang_core.agents.partition import PatternError, canonical_pattern
from toolang_core.agents.types import AgentDefinition, AgentDiagnostic, AgentStatus
from toolang_core.models.spec import model_spec_problem

NAME: Final = re.compile(r"[a-z][a-z0-9_-]{0,63}")
NAME_RULE: Final = "lowercase letters, digits, '-' or '_', starting with a letter (at most 64)"


class DefinitionError(ValueError):
    """A definition cannot be used; the message says which field and why."""


def check_name(name: object) -> str:
    """:raises DefinitionError: when ``name`` is not a valid agent name."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise DefinitionError(f"agent name {name!r} must be {NAME_RULE}")
    return name


def checked(definition: AgentDefinition) -> AgentDefinition:
    """``definition`` with its tool patterns in canonical form (``fs_`` → ``fs_*``).

    :raises DefinitionError: for a bad name, status, pattern or limit.
    """
    check_name(definition.name)
    if definition.status not in get_args(AgentStatus):
        raise DefinitionError(
            f"status {definition.status!r} must be one of: {', '.join(get_args(AgentStatus))}"
        )
    try:
        prefixes = tuple(dict.fromkeys(canonical_pattern(p) for p in definition.prefixes))
        tools = tuple(dict.fromkeys(canonical_pattern(p) for p in definition.tools))
    except PatternError as exc:
        raise DefinitionError(str(exc)) from None
    if "*" in prefixes:
        raise DefinitionError(
            "prefixes: '*' would claim every tool and hide unmatched ones; "
            "write tools: ['*'] to let the agent use every tool without claiming them"
        )
    if definition.model is not None:
        problem = model_spec_problem(definition.model)
        if problem:
            raise DefinitionError(f"model: {problem}")
    for index, spec in enumerate(definition.fallback or ()):
        problem = model_spec_problem(spec)
        if problem:
            raise DefinitionError(f"fallback[{index}]: {problem}")
    for field in ("max_steps", "max_delegation_rounds", "context_tokens"):
        value = getattr(definition, field)
        least = 0 if field == "max_delegation_rounds" else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise DefinitionError(f"{field} must be an integer, got {value!r}")
        if value is not None and value < least:
            raise DefinitionError(f"{field} must be at least {least}, got {value}")
    return attrs.evolve(definition, prefixes=prefixes, tools=tools)


def problem(definition: AgentDefinition, error: DefinitionError) -> AgentDiagnostic:
    where = definition.origin or f"{definition.source} source"
    return AgentDiagnostic("error", f"agent {definition.name!r} not loaded: {error}", origin=where)
