"""deploy/compose.yaml, the multi-node deployment docs/store-postgres.md describes:
PostgreSQL, three toolang nodes on one store, one public port in front of them. The
file is only parsed here (CI runs the same topology as processes: see
tests/integration/test_doors_across_nodes.py and the store-postgres nodes tests)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_compose_runs_three_nodes_on_one_store_behind_one_health_checked_port():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    nodes = {
        name: s for name, s in services.items() if s.get("command", [])[:2] == ["toolang", "run"]
    }
    assert sorted(nodes) == ["toolang-1", "toolang-2", "toolang-3"]

    # One store: PostgreSQL, healthy before the first node starts; every node the same
    # DSN, configuration and approval key, and a home of its own.
    (database,) = [s for s in services.values() if str(s.get("image", "")).startswith("postgres:")]
    assert "pg_isready" in database["healthcheck"]["test"]
    dsns = {node["environment"]["TOOLANG_PG_DSN"] for node in nodes.values()}
    assert len(dsns) == 1 and next(iter(dsns)).startswith("postgresql://")
    assert {tuple(v for v in n["volumes"] if "home" not in v) for n in nodes.values()} == {
        ("./toolang.toml:/etc/toolang/toolang.toml:ro", "approval-key:/var/lib/toolang-keys")
    }
    homes = {v for n in nodes.values() for v in n["volumes"] if "home" in v}
    assert len(homes) == 3
    assert nodes["toolang-1"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("toolang-2", "toolang-3"):  # after the node that makes the approval key
        assert nodes[name]["depends_on"]["toolang-1"]["condition"] == "service_healthy"

    # Every service is health-checked; the nodes on the server's /api/health.
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert all("/api/health" in " ".join(n["healthcheck"]["test"]) for n in nodes.values())

    # One public port, the balancer's, which waits for the three nodes.
    published = {name: s["ports"] for name, s in services.items() if s.get("ports")}
    assert list(published) == ["balancer"] and len(published["balancer"]) == 1
    assert set(services["balancer"]["depends_on"]) == set(nodes)
    upstream = (DEPLOY / "nginx.conf").read_text()
    assert sorted(re.findall(r"server (toolang-\d):8080", upstream)) == sorted(nodes)
    assert "proxy_buffering off" in upstream  # SSE streams pass as they come


def test_the_nodes_configuration_serves_the_store_and_the_api_to_the_balancer():
    config = tomllib.loads((DEPLOY / "toolang.toml").read_text())
    assert config["store"]["backend"] == "postgres"
    assert config["plugins"]["store-postgres"]["dsn"] == "${TOOLANG_PG_DSN}"
    server = config["plugins"]["server"]
    assert server["enabled"] and server["host"] == "0.0.0.0" and server["port"] == 8080
    assert server["tokens"]  # off loopback, the server requires tokens
    assert config["approvals"]["key_file"].startswith("/var/lib/toolang-keys/")
    from toolang_core import load_config  # and toolang reads it as it is

    env = {"TOOLANG_PG_DSN": "postgresql://toolang:pw@postgres/toolang", "TOOLANG_API_TOKEN": "t"}
    loaded = load_config(DEPLOY / "toolang.toml", env=env)
    assert (loaded.store.backend, str(loaded.home)) == ("postgres", "/var/lib/toolang")
