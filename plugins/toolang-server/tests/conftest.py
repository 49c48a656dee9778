from __future__ import annotations

import pytest
from server_helpers import TOKEN_CONFIG, TOKENS, install_test_plugin, start_server


@pytest.fixture
def live_server(toolang_home, toolang_distribution):
    """``start(extra_config="", env=None)`` → a running server (stopped after the test)."""
    install_test_plugin(toolang_distribution)
    started = []

    def start(extra_config: str = "", env=None):
        server = start_server(
            toolang_home.path, toolang_distribution.root, extra_config=extra_config, env=env
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def token_server(live_server):
    """A server with two owners, alice and bob (bob's token from the environment)."""
    return live_server(TOKEN_CONFIG, env={"BOB_TOKEN": TOKENS["bob"]})


@pytest.fixture
def open_server(live_server):
    """A loopback server without tokens: every caller is the local operator."""
    return live_server()
