"""User AGENT.md files: loading, isolation of bad files, path expansion, precedence."""

from __future__ import annotations

import json
import textwrap

import pytest

import toolang_agents_user
from toolang_core import AgentDefinition, AgentLoad, hookimpl

GOOD = """\
---
name: {name}
description: A {name}.
keywords: [translate, into french]
---
You translate.
"""


def write(root, name, text):
    path = root / name / "AGENT.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


class Roles:
    """A stand-in builtin source with one role, 'operator'."""

    @staticmethod
    @hookimpl
    def toolang_agent_sources():
        class Source:
            label = "builtin"
            name = "roles"

            def load(self, context):
                return AgentLoad(definitions=(AgentDefinition(name="operator"),))

        return Source()


@pytest.fixture
def agents_dir(toolang_home):
    return toolang_home.path / "agents"


@pytest.fixture
def registry(toolang_runtime):
    def make(config="", env=None, **plugins):
        named = {"agents-user": toolang_agents_user, **plugins}
        return toolang_runtime(config, plugins=named, env=env).agents.registry

    return make


def test_each_subdirectory_with_an_agent_md_is_an_agent(registry, agents_dir):
    path = write(agents_dir, "translator", GOOD.format(name="translator"))
    (agents_dir / "planner").mkdir()  # only a will.md, say: skipped
    (agents_dir / "planner" / "will.md").write_text("---\ninterval: 60\n---\n")
    loaded = registry().get("translator")
    assert (loaded.source, loaded.origin, loaded.instruction) == (
        "user",
        str(path),
        "You translate.",
    )
    assert loaded.keywords == ("translate", "into french")
    assert registry().diagnostics == ()


def test_a_malformed_file_is_reported_with_path_line_and_reason_and_others_load(
    registry, agents_dir
):
    write(agents_dir, "alpha", GOOD.format(name="alpha"))
    bad = write(agents_dir, "broken", "---\nname: broken\nkeywords: [unclosed\n---\nBody.\n")
    write(agents_dir, "zulu", GOOD.format(name="zulu"))
    loaded = registry()
    assert {d.name for d in loaded.all()} >= {"alpha", "zulu"}
    assert loaded.get("broken") is None
    (error,) = loaded.errors
    assert (error.origin, error.line) == (str(bad), 3)
    assert str(error).startswith(f"{bad}:3: invalid YAML:")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("---\ndescription: no name\n---\nBody.\n", 1, "the front matter needs 'name:'"),
        ("---\nname: other\n---\nBody.\n", 2, "must equal its directory's name 'agent'"),
        ("---\nname: agent\nprefixes: fs_\n---\nBody.\n", 3, "prefixes must be a list"),
        ("---\nname: agent\nprefixes: ['f?s']\n---\nBody.\n", 3, "tool pattern 'f?s'"),
        ("---\nname: agent\nprefixes: ['*']\n---\nBody.\n", 3, "would claim every tool"),
        ("---\nname: agent\nstatus: draft\n---\nBody.\n", 3, "status must be"),
        ("---\nname: agent\nsession_isolation: yes please\n---\nB.\n", 3, "true or false"),
        ("name: agent\n", 1, "must start with a '---' line"),
        ("---\nname: agent\nBody.\n", 1, "never closed"),
    ],
)
def test_each_kind_of_mistake_names_its_line_and_what_was_expected(
    registry, agents_dir, text, line, reason
):
    path = write(agents_dir, "agent", text)
    (error,) = registry().errors
    assert (error.origin, error.line) == (str(path), line)
    assert reason in error.message


def test_an_unknown_key_warns_with_a_suggestion_and_the_agent_still_loads(registry, agents_dir):
    path = write(agents_dir, "agent", "---\nname: agent\nkeyword: [x]\n---\nBody.\n")
    loaded = registry()
    assert loaded.get("agent") is not None
    (warning,) = loaded.diagnostics
    assert (warning.level, warning.line) == ("warning", 3)
    assert str(warning) == f"{path}:3: unknown key 'keyword' is ignored (did you mean 'keywords'?)"


def test_a_file_that_is_not_text_is_reported_and_the_others_load(registry, agents_dir):
    write(agents_dir, "good", GOOD.format(name="good"))
    binary = agents_dir / "binary" / "AGENT.md"
    binary.parent.mkdir()
    binary.write_bytes(b"\xff\xfe\x00garbage")
    loaded = registry()
    assert loaded.get("good") is not None
    (error,) = loaded.errors
    assert error.origin == str(binary)
    assert "cannot be read" in error.message


def test_tilde_in_the_agents_dir_expands_to_home(registry, toolang_home):
    write(toolang_home.path / "mine", "helper", GOOD.format(name="helper"))
    loaded = registry('[agents]\ndir = "~/mine"\n', env={"HOME": str(toolang_home.path)})
    assert loaded.get("helper").origin == str(toolang_home.path / "mine" / "helper" / "AGENT.md")


def test_environment_variables_in_the_agents_dir_expand(registry, tmp_path):
    write(tmp_path / "elsewhere", "helper", GOOD.format(name="helper"))
    env = {"HOME": str(tmp_path), "AGENTS_HOME": str(tmp_path / "elsewhere")}
    loaded = registry('[agents]\ndir = "${AGENTS_HOME}"\n', env=env)
    assert loaded.get("helper") is not None


def test_a_missing_agents_dir_is_fine_and_says_where_it_looked(registry, toolang_home):
    loaded = registry('[agents]\ndir = "nowhere"\n')
    assert [d.source for d in loaded.all()] == ["builtin"]  # just the [agents] default
    (note,) = loaded.diagnostics
    assert note.level == "info"
    nowhere = toolang_home.path / "nowhere"
    assert str(note) == f"{nowhere}: [agents] dir does not exist: no user agents"


def test_a_built_in_name_is_rejected_naming_the_file(registry, agents_dir):
    path = write(agents_dir, "operator", GOOD.format(name="operator"))
    loaded = registry(roles=Roles())
    assert loaded.get("operator").source == "builtin"
    (error,) = loaded.errors
    assert str(error) == (
        f"{path}: agent name 'operator' is reserved by a built-in agent; rename this definition"
    )


def test_a_disabled_agent_is_listed_but_not_active(registry, agents_dir):
    write(agents_dir, "resting", "---\nname: resting\nstatus: disabled\n---\nZz.\n")
    loaded = registry()
    assert loaded.get("resting").status == "disabled"
    assert "resting" not in {d.name for d in loaded.active()}


def test_agents_status_reports_the_broken_file_and_doctor_fails(toolang_cli, agents_dir):
    write(agents_dir, "fine", GOOD.format(name="fine"))
    bad = write(agents_dir, "broken", "---\nname: broken\nstatus: [\n---\n")
    status = toolang_cli("agents", "status", "--json")
    assert status.returncode == 1, status.stderr  # a definition was not loaded
    assert f"{bad}:3: invalid YAML" in status.stderr
    report = json.loads(status.stdout)
    user = next(s for s in report["sources"] if s["label"] == "user")
    assert (user["kept"], user["rejected"]) == (["fine"], 0)
    assert any(p["origin"] == str(bad) and p["line"] == 3 for p in report["problems"])
    doctor = toolang_cli("doctor")
    assert doctor.returncode == 1
    assert f"{bad}:3: invalid YAML" in doctor.stdout
    # doctor reports it; its log says it once, not once per check that needs a runtime
    assert doctor.stderr.count(f"{bad}:3: invalid YAML") == 1, doctor.stderr


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda p: p.write_bytes(b"---\nname: bad\n---\nHello \xff\n"), "can't decode byte 0xff"),
        (lambda p: p.mkdir(), "cannot be read: Is a directory"),
        (lambda p: p.symlink_to(p.parent / "gone.md"), "No such file or directory (a link to "),
    ],
    ids=["not-utf-8", "a-directory", "a-broken-link"],
)
def test_an_unreadable_agent_md_fails_agents_status_and_list_naming_it(
    toolang_cli, agents_dir, make, error
):
    write(agents_dir, "fine", GOOD.format(name="fine"))
    path = agents_dir / "bad" / "AGENT.md"
    path.parent.mkdir(parents=True)
    make(path)
    for command in (("agents", "status"), ("agents", "list"), ("agents", "list", "--json")):
        result = toolang_cli(*command)
        assert result.returncode == 1, (command, result.stderr)
        assert f"  {path}: cannot be read: " in result.stderr, command
        assert error in result.stderr, command
        if command[1] == "list":
            assert "fine" in result.stdout  # what did load is still listed


def test_agents_list_marks_an_unreadable_agent_md_and_status_says_its_counts_are_partial(
    toolang_cli, agents_dir
):
    """Lango: "Invalid present user AGENT.md files fail visibly with the affected path
    instead of silently disappearing from the list"."""
    write(agents_dir, "fine", GOOD.format(name="fine"))
    path = agents_dir / "bad" / "AGENT.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\nname: bad\n---\nHello \xff\n")
    listed = toolang_cli("agents", "list", "--json")
    assert listed.returncode == 1
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["fine"]["status"] == "active"
    marked = rows["bad"]
    assert (marked["status"], marked["origin"]) == ("not loaded", str(path))
    assert marked["error"].startswith(f"{path}: cannot be read: ")
    text = toolang_cli("agents", "list")
    assert text.returncode == 1
    assert f"bad: not loaded: {path}: cannot be read: " in text.stdout
    status = toolang_cli("agents", "status")
    assert status.returncode == 1
    assert "PARTIAL: 1 definition(s) not loaded" in status.stdout
    assert json.loads(toolang_cli("agents", "status", "--json").stdout)["agents"]["not_loaded"] == 1


def test_asking_for_an_agent_whose_file_did_not_load_says_why(toolang_runtime, agents_dir):
    bad = write(agents_dir, "weather", "---\nname: weather\nstatus: [\n---\n")
    write(agents_dir, "fine", GOOD.format(name="fine"))
    agents = toolang_runtime(plugins={"agents-user": toolang_agents_user}).agents
    with pytest.raises(LookupError) as raised:
        agents.agent("weather")
    assert "agent 'weather' is unknown (agents: assistant, fine)" in str(raised.value)
    assert f"; {bad}:3: invalid YAML" in str(raised.value)
    with pytest.raises(LookupError) as other:
        agents.agent("fin")  # no file of its own: the broken one is not blamed
    assert "invalid YAML" not in str(other.value)


def test_doctor_says_a_missing_agents_dir_is_fine(toolang_cli, toolang_home):
    result = toolang_cli("doctor")
    assert result.returncode == 0, result.stdout
    missing = toolang_home.path / "agents"
    assert f"{missing}: the default agents directory ([agents] dir) does not exist" in result.stdout
