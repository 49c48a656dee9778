"""The workflow parser, property-based: any acyclic pipeline parses and orders its steps
after their dependencies; any cycle is refused with the line of a step on it."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from toolang_tools_automator.spec import WorkflowInvalid, parse_workflow


def no_problem(agent, allowed):
    return None


def render(deps: list[list[int]]) -> str:
    lines = ["steps:"]
    for index, depends in enumerate(deps):
        lines += [f"  - id: s{index}", "    agent: a", f"    instruction: do {index}"]
        if depends:
            lines.append(f"    depends_on: [{', '.join(f's{d}' for d in depends)}]")
    return "\n".join(lines) + "\n"


@st.composite
def dags(draw):
    size = draw(st.integers(1, 12))
    return [
        sorted(draw(st.sets(st.integers(0, index - 1), max_size=3))) if index else []
        for index in range(size)
    ]


@settings(max_examples=60, deadline=None)
@given(dags(), st.randoms())
def test_an_acyclic_pipeline_parses_and_orders_each_step_after_its_dependencies(deps, rnd):
    order = list(range(len(deps)))
    rnd.shuffle(order)  # declaration order need not be dependency order
    renamed = {old: new for new, old in enumerate(order)}
    shuffled = [[renamed[d] for d in deps[old]] for old in order]
    workflow = parse_workflow(render(shuffled), max_steps=50, check_agent=no_problem)
    position = {step_id: n for n, step_id in enumerate(workflow.order())}
    assert len(position) == len(deps)
    for step in workflow.steps:
        assert all(position[d] < position[step.id] for d in step.depends_on)


@settings(max_examples=60, deadline=None)
@given(dags(), st.data())
def test_a_cycle_is_refused_naming_it_at_the_line_of_one_of_its_steps(deps, data):
    if len(deps) < 2:
        deps = [[], [0]]
    # Close a cycle: an early step depends on a later one that (transitively) needs it.
    last = data.draw(st.integers(1, len(deps) - 1))
    deps[last] = sorted({*deps[last], last - 1})
    deps[last - 1] = sorted({*deps[last - 1], last})
    try:
        parse_workflow(render(deps), max_steps=50, check_agent=no_problem)
    except WorkflowInvalid as exc:
        cycle = [p for p in exc.problems if "form a cycle" in p]
        assert len(cycle) == 1
        line, names = re.match(r"line (\d+): .*\((.*)\)", cycle[0]).groups()
        first = names.split(" -> ")[0]
        assert render(deps).splitlines()[int(line) - 1] == f"  - id: {first}"
    else:
        raise AssertionError("a cyclic workflow was accepted")
