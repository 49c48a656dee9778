"""AGENT.md: YAML front matter between ``---`` lines, then the instruction.

::

    ---
    name: code-reviewer          # required; equal to its directory's name
    description: Reviews code for quality and security
    prefixes: [review_*]         # tools it claims (see toolang_core.agents.partition)
    tools: [fs_read]             # tools it may also use without claiming them
    keywords: [review, code quality]
    capabilities: [code-review]
    model: llm/gpt-4o-mini
    fallback: [llm/claude-3.5-haiku]   # tried in order when model fails
    session_isolation: true
    status: active               # or disabled
    max_steps: 10
    max_delegation_rounds: 3
    context_tokens: 16000        # the prompt's token budget (see [agents])
    output_schema: schemas/review.json # a typed answer: a JSON Schema inline, or a file
    output_retries: 2                  # invalid answers sent back before invalid_output
    sandbox:                     # the programs its tools start (see [tools])
      network: allow
      allow_hosts: [pypi.org, files.pythonhosted.org]
      workdir: ../../workspaces/reviews   # relative to this file's directory
    ---
    You are a code review specialist. …

Every problem is an :class:`~toolang_core.AgentDiagnostic` with the file's path and the
line it is on. Errors (a missing or invalid key, broken YAML) keep the definition out;
warnings (an unknown key, an empty instruction) do not. Parsing needs PyYAML
(``pip install 'toolang-core[agentmd]'``), imported only when a file is parsed.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Final

from toolang_core.agents.partition import PatternError, canonical_pattern
from toolang_core.agents.types import (
    AgentDefinition,
    AgentDiagnostic,
    AgentLoad,
    DiagnosticLevel,
    SourceLabel,
)
from toolang_core.agents.validate import DefinitionError, check_name
from toolang_core.limits import AGENT_MD_MAX_CHARS

_LISTS: Final = ("prefixes", "tools", "keywords", "capabilities", "fallback")
_TEXTS: Final = ("description", "model")
_INTS: Final = {
    "max_steps": 1,
    "max_delegation_rounds": 0,
    "output_retries": 0,
    "context_tokens": 1,
}
KEYS: Final = (
    "name",
    *_TEXTS,
    *_LISTS,
    "session_isolation",
    "status",
    *_INTS,
    "sandbox",
    "output_schema",
)
"""Every key the front matter may have."""


class _Problems:
    def __init__(self, origin: str, lines: Mapping[str, int]) -> None:
        self.origin = origin
        self.lines = lines
        self.found: list[AgentDiagnostic] = []

    def add(self, level: DiagnosticLevel, message: str, key: str | None = None) -> None:
        line = self.lines.get(key, 1) if key else 1
        self.found.append(AgentDiagnostic(level, message, origin=self.origin, line=line))

    @property
    def failed(self) -> bool:
        return any(d.level == "error" for d in self.found)


def split_front_matter(text: str) -> tuple[str, str, int]:
    """``(front matter, body, line of the body's first line)``.

    :raises ValueError: when the text does not open and close a front matter block.
    """
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("AGENT.md must start with a '---' line opening the YAML front matter")
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise ValueError("the front matter opened on line 1 is never closed by a '---' line")


def parse_agent_md(
    text: str,
    *,
    origin: str,
    source: SourceLabel,
    expected_name: str | None = None,
) -> AgentLoad:
    """Parse one AGENT.md into at most one definition plus its diagnostics.

    ``expected_name`` (the directory's name) must equal the ``name`` key.
    """
    import yaml

    if len(text) > AGENT_MD_MAX_CHARS:  # it would be sent whole with every prompt
        message = (
            f"AGENT.md is {len(text):,} characters; expected at most {AGENT_MD_MAX_CHARS:,} "
            "(an instruction is part of every prompt of its agent)"
        )
        return AgentLoad(diagnostics=(AgentDiagnostic("error", message, origin, 1),))
    try:
        front, body, _ = split_front_matter(text)
    except ValueError as exc:
        return AgentLoad(diagnostics=(AgentDiagnostic("error", str(exc), origin, 1),))
    # Parsed once (what yaml.safe_load does, keeping the node for the keys' lines): the
    # pure-Python parser is most of the cost of reading an agent at start-up.
    loader = yaml.SafeLoader(front)
    try:
        node = loader.get_single_node()
        # Before constructing: a merge key ('<<') rewrites its mapping node's value.
        lines = {
            str(key.value): key.start_mark.line + 2
            for key, _ in (node.value if isinstance(node, yaml.MappingNode) else ())
        }
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1: 1-based, +1: the '---'
        reason = getattr(exc, "problem", None) or str(exc)
        return AgentLoad(
            diagnostics=(AgentDiagnostic("error", f"invalid YAML: {reason}", origin, line),)
        )
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        message = f"the front matter must be keys, found a {type(data).__name__}"
        return AgentLoad(diagnostics=(AgentDiagnostic("error", message, origin, 2),))
    problems = _Problems(origin, lines)
    fields = _fields(data, problems, expected_name)
    instruction = body.strip()
    if not problems.failed and not instruction:
        problems.add("warning", "no instruction after the front matter; a generic one is used")
    if problems.failed:
        return AgentLoad(diagnostics=tuple(problems.found))
    definition = AgentDefinition(instruction=instruction, source=source, origin=origin, **fields)
    return AgentLoad(definitions=(definition,), diagnostics=tuple(problems.found))


def _fields(
    data: Mapping[Any, Any], problems: _Problems, expected_name: str | None
) -> dict[str, Any]:
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(KEYS)}"
            problems.add("warning", f"unknown key {key!r} is ignored{hint}", str(key))
    fields: dict[str, Any] = {}
    _name(data, problems, expected_name, fields)
    _scope(data, problems, fields)
    _scalars(data, problems, fields)
    _sandbox(data, problems, fields)
    _output_schema(data, problems, fields)
    return fields


def _name(
    data: Mapping[Any, Any], problems: _Problems, expected: str | None, fields: dict[str, Any]
) -> None:
    name = data.get("name")
    if name is None:
        problems.add("error", "the front matter needs 'name:'")
        return
    try:
        fields["name"] = check_name(name)
    except DefinitionError as exc:
        problems.add("error", str(exc), "name")
        return
    if expected is not None and name != expected:
        problems.add("error", f"name {name!r} must equal its directory's name {expected!r}", "name")


def _scope(data: Mapping[Any, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    for key in _LISTS:
        if data.get(key) is not None:
            fields[key] = _strings(data[key], key, problems)
    for key in ("prefixes", "tools"):
        for pattern in fields.get(key) or ():
            _check(canonical_pattern, pattern, key, problems)
    if "*" in (fields.get("prefixes") or ()):
        problems.add(
            "error",
            "prefixes: '*' would claim every tool and hide unmatched ones; "
            "write tools: ['*'] to let the agent use every tool without claiming them",
            "prefixes",
        )


def _scalars(data: Mapping[Any, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    for key in _TEXTS:
        if data.get(key) is not None:
            fields[key] = _typed(data[key], str, "a string", key, problems)
    if "session_isolation" in data:
        fields["session_isolation"] = _typed(
            data["session_isolation"], bool, "true or false", "session_isolation", problems
        )
    if "status" in data:
        if data["status"] in ("active", "disabled"):
            fields["status"] = data["status"]
        else:
            problems.add(
                "error", f"status must be 'active' or 'disabled', got {data['status']!r}", "status"
            )
    for key, least in _INTS.items():
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            message = f"{key} must be an integer of at least {least}, got {value!r}"
            problems.add("error", message, key)
        else:
            fields[key] = value


def _sandbox(data: Mapping[Any, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    """``sandbox:`` — validated exactly like a ``[tools.agent.<name>]`` table (paths
    relative to the AGENT.md's directory, ``~`` and ``${ENV}`` expanded)."""
    value = data.get("sandbox")
    if value is None:
        return
    import os
    from pathlib import Path

    from toolang_core.config.converter import ConfigConverter
    from toolang_core.config.sandbox import SandboxOverride
    from toolang_core.errors import ConfigError

    converter = ConfigConverter(
        file=problems.origin, base_dir=Path(problems.origin).parent, env=os.environ
    )
    try:
        fields["sandbox"] = converter.structure(value, SandboxOverride, prefix=("sandbox",))
    except ConfigError as exc:
        for line in exc.problems:
            problems.add("error", line.removeprefix(f"{problems.origin}: "), "sandbox")


def _output_schema(data: Mapping[Any, Any], problems: _Problems, fields: dict[str, Any]) -> None:
    """``output_schema:`` — a JSON Schema inline, or the path of a .json file (relative
    to the AGENT.md's directory), checked now so a bad one never fails a turn."""
    value = data.get("output_schema")
    if value is None:
        return
    from pathlib import Path

    from toolang_core.tools.validate import SchemaError, load_schema

    try:
        fields["output_schema"] = load_schema(
            value, where="output_schema", base_dir=Path(problems.origin).parent
        )
    except SchemaError as exc:
        problems.add("error", str(exc), "output_schema")


def _typed(value: Any, kind: type, expected: str, key: str, problems: _Problems) -> Any:
    if not isinstance(value, kind):
        problems.add("error", f"{key} must be {expected}, got {value!r}", key)
    return value


def _strings(value: Any, key: str, problems: _Problems) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(
            "error",
            f"{key} must be a list of strings (write [a, b] or one '- a' line each), got {value!r}",
            key,
        )
        return ()
    return tuple(value)


def _check(check: Callable[[str], str], value: str, key: str, problems: _Problems) -> None:
    try:
        check(value)
    except PatternError as exc:
        problems.add("error", f"{key}: {exc}", key)
