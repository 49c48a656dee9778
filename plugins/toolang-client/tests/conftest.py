"""A real ``toolang run`` with toolang-server for the client to talk to: the server's
own test kit (its scripted model, approval gate and tools), shared from its tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# One kit for both distributions' tests: the server's helpers start the process.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "toolang-server" / "tests"))

from server_helpers import TOKEN_CONFIG, TOKENS, install_test_plugin, start_server


@pytest.fixture
def served(toolang_home, toolang_distribution):
    """A running server with two owners, alice and bob (stopped after the test)."""
    install_test_plugin(toolang_distribution)
    server = start_server(
        toolang_home.path,
        toolang_distribution.root,
        extra_config=TOKEN_CONFIG,
        env={"BOB_TOKEN": TOKENS["bob"]},
    )
    yield server
    server.stop()
