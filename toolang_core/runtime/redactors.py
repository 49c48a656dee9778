"""The runtime's redaction policy, of the detectors its plugins registered (kind
``redactor``); see :mod:`toolang_core.redaction` for what a policy masks and when."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

import attrs
import structlog

from toolang_core.config.types import Secret
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


def known_secrets(*values: object) -> list[str]:
    """The revealed value of every :class:`~toolang_core.config.types.Secret` in
    ``values`` — the runtime's configuration and its plugins' settings: attrs
    instances, mappings and sequences are walked — long enough to be masked as known
    values (:data:`SETTING_SECRET_CHARS`). What a plugin's settings
    hold as secrets (the server's and A2A's tokens, a model's key, a DSN) is masked
    wherever it turns up in text: a tool's output, a turn's input."""
    return [v for v in _secrets(values, depth=0) if len(v) >= SETTING_SECRET_CHARS]


SETTING_SECRET_CHARS: Final = 12
"""A setting's secret shorter than this is not masked as a known value: settings type
header values ``Secret`` too (``X-Scope-OrgID = "tenant1"``), and masking such a word
everywhere would mask ordinary text; a key, a token or the operator's credential is
longer (the server's tokens are 16 characters at least)."""


def _secrets(value: object, *, depth: int) -> Iterator[str]:
    if depth > 8:  # settings are shallow; a deeper structure is not a setting's
        return
    if isinstance(value, Secret):
        yield value.reveal()
    elif attrs.has(type(value)):
        for field in attrs.fields(cast("type[attrs.AttrsInstance]", type(value))):
            yield from _secrets(getattr(value, field.name, None), depth=depth + 1)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _secrets(item, depth=depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _secrets(item, depth=depth + 1)


def operator_credential(path: Path) -> list[str]:
    """The operator's credential at ``path`` as a known secret (none when it is not
    there yet, or cannot be read: nothing to mask then)."""
    from toolang_core.credential import CredentialError, read_credential

    try:
        return [read_credential(path, action="mask the operator credential")]
    except CredentialError:
        return []
