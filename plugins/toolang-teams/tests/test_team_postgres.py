"""On a PostgreSQL store a team is one team for every node: formed on one node, read,
changed and disbanded from another (two runtimes, two homes, one server)."""

from __future__ import annotations

import asyncio
import shutil

import attrs
from teams_helpers import TEAM_AGENTS, coordinator

import toolang_agent_pool
import toolang_store_postgres
import toolang_teams
from toolang_core import Runtime
from toolang_core.testing.delegation import Agents, Tools
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_teams.coordinator import FormRequest, TeamCoordinator
from toolang_teams.types import Strategy, TeamStatus, TeamTask


def node(tmp_path, name: str, config: str) -> Runtime:
    home = ToolangHome(tmp_path / f"node-{name}")
    (home.path / ".toolang").mkdir(parents=True, exist_ok=True)
    key = tmp_path / "node-a" / ".toolang" / "approval.key"
    if name != "a" and key.exists():  # every node of a store shares its approval key
        shutil.copy(key, home.path / ".toolang" / "approval.key")
    home.write_config(config)
    env = {"HOME": str(home.path)}
    plugins = {
        "store-postgres": toolang_store_postgres,
        "teams": toolang_teams,
        "agent-pool": toolang_agent_pool,
        "tools": Tools(),
        "agents": Agents(*TEAM_AGENTS),
    }
    return Runtime.with_plugins(home.load(env), plugins.items(), env=env)


def test_a_team_formed_on_one_node_is_the_same_team_on_another(tmp_path, toolang_pg_config):
    a = node(tmp_path, "a", toolang_pg_config)

    async def form() -> str:
        async with coordinator(a) as teams:
            team = await teams.form(
                FormRequest(
                    owner="alice",
                    parent_thread_id="cli:alice",
                    goal="survey the coast",
                    leader="lead",
                    capability="survey",
                    workers=2,
                    reviewer="critic",
                )
            )
            return team.id

    team_id = asyncio.run(form())
    b = node(tmp_path, "b", toolang_pg_config)

    async def on_b() -> None:
        c = node(tmp_path, "c", toolang_pg_config)
        async with coordinator(b) as teams, coordinator(c) as other:
            team = teams.get(team_id, owner="alice")
            assert team.status is TeamStatus.ACTIVE
            assert [t.id for t in teams.list_teams(owner="alice")] == [team_id]
            assert teams.list_teams(owner="bob") == []

            # Two nodes change the team at once: compare-and-set loses neither's change.
            def add_tasks(coordinator: TeamCoordinator, prefix: str) -> None:
                for i in range(5):
                    done = TeamTask(f"{prefix}{i}", "t", "completed", Strategy.MAJORITY_VOTE)
                    coordinator.update(
                        team_id, lambda t, done=done: attrs.evolve(t, tasks=(*t.tasks, done))
                    )

            await asyncio.gather(
                asyncio.to_thread(add_tasks, teams, "b"), asyncio.to_thread(add_tasks, other, "c")
            )
            assert len(other.get(team_id, owner="alice").tasks) == 10

            worker = team.active()[1].name
            team, joined = await teams.swap(team, worker, "left on node b")
            assert joined is not None  # w3, the spare the pool had
            await teams.disband(team_id, owner="alice", reason="done on node b")

    asyncio.run(on_b())

    async def back_on_a() -> None:  # node A started again (a runtime serves once)
        async with coordinator(node(tmp_path, "a", toolang_pg_config)) as teams:
            team = teams.get(team_id, owner="alice")
            assert team.status is TeamStatus.DISBANDED
            assert team.disbanded_reason == "done on node b"
            assert len(team.tasks) == 10
            assert "left on node b" in {m.left_reason for m in team.members}

    asyncio.run(back_on_a())
