"""Runtimes for this plugin's tests: the test kit's delegation runtimes
(:mod:`toolang_core.testing.delegation`) with this plugin registered."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import toolang_agent_pool
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast
from toolang_core.testing.delegation import make_runtime

POOL_PLUGIN = ("agent-pool", toolang_agent_pool)


def pool_runtime(
    tmp_path: Path,
    cast: Cast | None = None,
    *,
    plugins: Iterable[tuple[str, object]] = (),
    **kw: Any,
) -> Runtime:
    """A delegation runtime (its default agents unless ``agents=``) with this plugin."""
    return make_runtime(tmp_path, cast, plugins=[POOL_PLUGIN, *plugins], **kw)
