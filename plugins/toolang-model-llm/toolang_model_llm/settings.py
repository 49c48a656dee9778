"""``[plugins.model-llm]``: per-model options and key names, and offline models."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class LlmSettings:
    """``[plugins.model-llm]``.

    ``options``: per llm model id (as agents name it), the options passed to every
    prompt — the ones ``llm models --options`` lists, e.g. ``temperature``.
    ``keys``: per llm model id, the name of the ``llm keys`` entry to use instead of the
    model's own (``llm keys set <name>``).
    ``offline_models``: llm model ids that make no network call, so they may run while
    real model calls are blocked (in test suites). llm-echo's models always may.
    """

    options: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    keys: dict[str, str] = attrs.field(factory=dict)
    offline_models: tuple[str, ...] = ()
