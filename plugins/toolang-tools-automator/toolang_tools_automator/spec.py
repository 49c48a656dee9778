"""A workflow: a small YAML pipeline of steps, validated with line-numbered errors.

```yaml
description: Weekly report          # optional
steps:
  - id: gather                      # lowercase letters, digits, '_' (unique)
    agent: librarian                # an active agent
    instruction: Collect this week's notes.
  - id: draft
    agent: assistant
    instruction: Draft the report from the notes.
    depends_on: [gather]            # ids of earlier or later steps; no cycles
    allowed_tools: [fs_read]        # optional: narrows the agent's scope, never widens it
    timeout_seconds: 600            # optional
```

Every problem is collected (not just the first) as ``line N: steps[i].key: what is
wrong``; a workflow with any problem is not saved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    # PyYAML is imported where a workflow is parsed: registering the tools needs none.
    import yaml

STEP_ID = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
STEP_KEYS = ("id", "agent", "instruction", "depends_on", "allowed_tools", "timeout_seconds")
TOP_KEYS = ("description", "steps")
MAX_INSTRUCTION = 8_000


class WorkflowInvalid(ValueError):
    """The YAML is not a valid workflow; ``problems`` lists each one with its line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("yaml_content: invalid workflow: " + "; ".join(self.problems))


@attrs.frozen
class Step:
    id: str
    agent: str
    instruction: str
    depends_on: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    timeout_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        allowed = data.get("allowed_tools")
        return cls(
            id=data["id"],
            agent=data["agent"],
            instruction=data["instruction"],
            depends_on=tuple(data.get("depends_on") or ()),
            allowed_tools=None if allowed is None else tuple(allowed),
            timeout_seconds=data.get("timeout_seconds"),
        )


@attrs.frozen
class Workflow:
    description: str
    steps: tuple[Step, ...]

    def order(self) -> list[str]:
        """Step ids in a dependency order (ties in declaration order)."""
        done: list[str] = []
        left = list(self.steps)
        while left:
            ready = [s for s in left if set(s.depends_on) <= set(done)]
            done += [s.id for s in ready]
            left = [s for s in left if s.id not in done]
        return done


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _mapping(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    return {str(k.value): (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _scalar(node: yaml.Node) -> Any:
    import yaml

    return yaml.safe_load(yaml.serialize(node))


class Problems(list[str]):
    """Problems found so far, each ``line N: <where>: <what>``."""

    def add(self, node: yaml.Node, text: str) -> None:
        self.append(f"line {_line(node)}: {text}")


AgentCheck = Callable[[str, tuple[str, ...] | None], str | None]


def parse_workflow(text: str, *, max_steps: int, check_agent: AgentCheck) -> Workflow:
    """The workflow ``text`` describes. ``check_agent(name, allowed_tools)`` returns a
    problem (unknown agent, tools outside its scope) or ``None``.

    :raises WorkflowInvalid: listing every problem with its line.
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", exc)
        raise WorkflowInvalid([f"{where}not valid YAML: {problem}"]) from None
    top = _mapping(root) if root is not None else None
    if top is None:
        raise WorkflowInvalid(["line 1: expected a mapping with `steps:` (a list of steps)"])
    problems = Problems()
    for key, (knode, _) in top.items():
        if key not in TOP_KEYS:
            problems.add(knode, f"unknown key {key!r} (expected {', '.join(TOP_KEYS)})")
    description = ""
    if "description" in top:
        description = _scalar(top["description"][1])
        if not isinstance(description, str):
            problems.add(top["description"][1], "description: expected text")
    if "steps" not in top:
        raise WorkflowInvalid([*problems, "line 1: steps: missing (a list of steps)"])
    steps_node = top["steps"][1]
    if not isinstance(steps_node, yaml.SequenceNode) or not steps_node.value:
        problems.add(steps_node, "steps: expected a non-empty list")
        raise WorkflowInvalid(problems)
    if len(steps_node.value) > max_steps:
        problems.add(steps_node, f"steps: {len(steps_node.value)}, at most {max_steps} allowed")
        raise WorkflowInvalid(problems)
    steps = _steps(steps_node.value, problems, check_agent)
    if problems:
        raise WorkflowInvalid(problems)
    return Workflow(str(description), tuple(steps))


def _steps(nodes: Sequence[yaml.Node], problems: Problems, check_agent: AgentCheck) -> list[Step]:
    steps: list[Step] = []
    first: dict[str, yaml.Node] = {}
    for index, node in enumerate(nodes):
        step = _step(node, f"steps[{index}]", problems, check_agent)
        if step is None:
            continue
        if step.id in first:
            problems.add(
                node,
                f"steps[{index}].id: {step.id!r} is used twice "
                f"(first at line {_line(first[step.id])})",
            )
            continue
        first[step.id] = node
        steps.append(step)
    for index, step in enumerate(steps):
        for dep in step.depends_on:
            if dep == step.id:
                problems.add(first[step.id], f"steps[{index}].depends_on: depends on itself")
            elif dep not in first:
                known = ", ".join(first)
                problems.add(
                    first[step.id], f"steps[{index}].depends_on: no step {dep!r} ({known})"
                )
    cycle = _cycle(steps)
    if cycle:
        problems.add(
            first[cycle[0]],
            f"depends_on: the steps form a cycle ({' -> '.join(cycle)}); "
            "a workflow must be acyclic",
        )
    return steps


def _text_fields(
    node: yaml.Node, fields: dict[str, tuple[yaml.Node, yaml.Node]], where: str, problems: Problems
) -> dict[str, str]:
    values: dict[str, str] = {}
    for key in ("id", "agent", "instruction"):
        if key not in fields:
            problems.add(node, f"{where}.{key}: missing")
            continue
        value = _scalar(fields[key][1])
        if not isinstance(value, str) or not value.strip():
            problems.add(fields[key][1], f"{where}.{key}: expected non-empty text")
            continue
        values[key] = value.strip()
    if "id" in values and not STEP_ID.match(values["id"]):
        problems.add(
            fields["id"][1],
            f"{where}.id: {values['id']!r} must be lowercase letters, digits and '_', "
            "starting with a letter (at most 32)",
        )
    if len(values.get("instruction", "")) > MAX_INSTRUCTION:
        problems.add(
            fields["instruction"][1], f"{where}.instruction: over {MAX_INSTRUCTION} characters"
        )
    return values


def _list_fields(
    fields: dict[str, tuple[yaml.Node, yaml.Node]], where: str, problems: Problems
) -> dict[str, tuple[str, ...] | None]:
    lists: dict[str, tuple[str, ...] | None] = {"depends_on": (), "allowed_tools": None}
    for key in lists:
        if key in fields:
            value = _scalar(fields[key][1])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                problems.add(fields[key][1], f"{where}.{key}: expected a list of names")
            else:
                lists[key] = tuple(value)
    return lists


def _step(node: yaml.Node, where: str, problems: Problems, check_agent: AgentCheck) -> Step | None:
    fields = _mapping(node)
    if fields is None:
        problems.add(node, f"{where}: expected a mapping (id, agent, instruction, …)")
        return None
    before = len(problems)
    for key, (knode, _) in fields.items():
        if key not in STEP_KEYS:
            problems.add(knode, f"{where}: unknown key {key!r} (expected {', '.join(STEP_KEYS)})")
    values = _text_fields(node, fields, where, problems)
    lists = _list_fields(fields, where, problems)
    timeout = None
    if "timeout_seconds" in fields:
        timeout = _scalar(fields["timeout_seconds"][1])
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            timeout = -1
        if not 0 < timeout <= 86_400:
            problems.add(
                fields["timeout_seconds"][1],
                f"{where}.timeout_seconds: expected seconds, 0 < s <= 86400",
            )
    if "agent" in values:
        problem = check_agent(values["agent"], lists["allowed_tools"])
        if problem:
            problems.add(fields["agent"][1], f"{where}.agent: {problem}")
    if len(problems) > before or len(values) < 3:
        return None
    return Step(
        values["id"],
        values["agent"],
        values["instruction"],
        lists["depends_on"] or (),
        lists["allowed_tools"],
        float(timeout) if timeout is not None else None,
    )


def _cycle(steps: Sequence[Step]) -> list[str]:
    """One cycle among the steps' dependencies (``[a, b, a]``), or ``[]``."""
    deps = {s.id: [d for d in s.depends_on if d != s.id] for s in steps}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in deps.get(node, ()):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep in deps and dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for step in steps:
        if step.id not in state:
            found = visit(step.id)
            if found:
                return found
    return []
