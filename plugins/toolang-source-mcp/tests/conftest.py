"""The kit (a scripted echo model) installed once per session as a real distribution."""

from __future__ import annotations

from pathlib import Path

import pytest
from source_mcp_kit import install_kit


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("site")
    install_kit(path)
    return path
