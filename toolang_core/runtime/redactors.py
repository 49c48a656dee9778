"""The runtime's redaction policy, of the detectors its plugins registered (kind
``redactor``); see :mod:`toolang_core.redaction` for what a policy masks and when."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from toolang_core.redaction import Detector, RedactionPolicy

if TYPE_CHECKING:
    from toolang_core.plugins.components import Components
    from toolang_core.plugins.context import PluginContext

log = structlog.get_logger("toolang.runtime")


def build_redaction(
    components: Components, plugin_context: Callable[[str], PluginContext]
) -> RedactionPolicy:
    """A policy of every registered detector, each built by its factory with its
    plugin's context (``plugin_context``), labelled ``plugin:name``.

    A detector whose factory raises or returns no function is left out and logged
    with its plugin: the core's own rules still apply.
    """
    detectors: dict[str, Detector] = {}
    for name, registration in sorted(components.of_kind("redactor").items()):
        label = f"{registration.plugin}:{name}"
        try:
            detector = registration.factory(plugin_context(registration.plugin))
            if not callable(detector):
                raise TypeError(f"the factory returned {detector!r}, not a function")
        except Exception as exc:
            log.error("redaction.detector_failed", detector=label, error=str(exc))
            continue
        detectors[label] = detector
    return RedactionPolicy(detectors)
