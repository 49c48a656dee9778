"""A user AGENT.md asking for typed answers: ``output_schema:`` inline or as a file
beside it; a bad one keeps the agent out with its file, line and key — at load and at
``toolang doctor`` — and never fails a turn later."""

from __future__ import annotations

import json
import textwrap

import toolang_agents_user

SCHEMA = {"type": "object", "required": ["verdict"]}


def write(root, name, front):
    path = root / name / "AGENT.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\n{textwrap.dedent(front)}---\nYou judge.\n")
    return path


def test_a_schema_file_beside_the_agent_md_is_read(toolang_runtime, toolang_home):
    agents = toolang_home.path / "agents"
    write(agents, "judge", "output_schema: verdict.json\noutput_retries: 1\n")
    (agents / "judge" / "verdict.json").write_text(json.dumps(SCHEMA))
    runtime = toolang_runtime("", plugins={"agents-user": toolang_agents_user})
    judge = runtime.agents.registry.get("judge")
    assert (judge.output_schema, judge.output_retries) == (SCHEMA, 1)


def test_doctor_names_the_file_line_and_key_of_a_bad_schema(toolang_cli, toolang_home):
    agents = toolang_home.path / "agents"
    missing = write(agents, "judge", "description: x\noutput_schema: verdict.json\n")
    wrong = write(agents, "critic", "output_schema:\n  type: strng\n")
    doctor = toolang_cli("doctor")
    assert doctor.returncode == 1
    shown = " ".join(doctor.stdout.split())
    expected = agents / "judge" / "verdict.json"
    assert f"{missing}:4: output_schema: schema file '{expected}' does not exist" in shown
    assert f"{wrong}:3: output_schema: not a valid JSON Schema" in shown
    assert "Traceback" not in doctor.stderr
