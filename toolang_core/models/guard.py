"""A switch that blocks real (paid, networked) model calls, e.g. in test suites.

Model plugins that reach a real service call :func:`check_real_calls_allowed` before
each request. ``TOOLANG_ALLOW_MODEL_REQUESTS=0`` blocks them; toolang's pytest plugin
sets it for every test session unless the ini option ``toolang_block_model_requests``
is ``false``.
"""

from __future__ import annotations

import os

from toolang_core.models.types import ModelError

ENV = "TOOLANG_ALLOW_MODEL_REQUESTS"


def real_calls_allowed() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def check_real_calls_allowed(what: str) -> None:
    """:raises ModelError: when real model calls are blocked."""
    if not real_calls_allowed():
        raise ModelError(
            f"{what}: real model calls are blocked ({ENV}=0, set by toolang's pytest plugin); "
            "use the scripted model, or set toolang_block_model_requests = false"
        )
