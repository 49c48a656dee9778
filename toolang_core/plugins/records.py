"""What the host knows about each plugin: where it came from and how loading went."""

from __future__ import annotations

import enum
from typing import Any

import attrs


class PluginStatus(enum.StrEnum):
    LOADED = "loaded"
    """An entry-point plugin that imported, registered and validated cleanly."""
    BUILTIN = "builtin"
    """A plugin shipped inside ``toolang_core`` and registered explicitly."""
    FAILED = "failed"
    """Import, registration, validation or a registration hook failed; unregistered."""
    DISABLED = "disabled"
    """Filtered out by an allow- or deny-list before it was imported."""
    DUPLICATE = "duplicate"
    """Another distribution already uses this entry-point name; never imported."""


@attrs.frozen
class PluginFailure:
    """Why a plugin failed: the stage, the hook when one was involved, and the error."""

    stage: str
    """``import``, ``register`` (pluggy refused it), ``validate`` (an unknown or
    misnamed hook) or ``collect`` (one of its registration hooks raised)."""
    message: str
    hook: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "hook": self.hook, "message": self.message}


@attrs.define
class PluginRecord:
    """One plugin as the host sees it. ``name`` is the entry-point name."""

    name: str
    status: PluginStatus
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    hooks: tuple[str, ...] = ()
    error: PluginFailure | None = None
    reason: str | None = None
    """For a disabled or duplicate plugin: why it was not imported."""
    warnings: list[str] = attrs.field(factory=list)
    """Problems that left the plugin working, e.g. one of its tools refused for a name
    clash."""

    def describe(self) -> str:
        """Name the plugin the way every message about it does."""
        where = []
        if self.distribution:
            dist = self.distribution + (f" {self.version}" if self.version else "")
            where.append(f"distribution {dist}")
        if self.entry_point:
            where.append(f"entry point {self.name} = {self.entry_point}")
        return f"plugin {self.name!r}" + (f" ({', '.join(where)})" if where else "")

    def failure_message(self) -> str:
        assert self.error is not None
        stage = {
            "import": "failed to import",
            "register": "was refused at registration",
            "validate": "failed validation",
            "collect": "raised while registering",
        }.get(self.error.stage, f"failed ({self.error.stage})")
        hook = f" in hook {self.error.hook}" if self.error.hook else ""
        return f"{self.describe()} {stage}{hook}: {self.error.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.entry_point,
            "hooks": list(self.hooks),
            "status": str(self.status),
            "reason": self.reason,
            "error": self.error.to_json() if self.error else None,
            "warnings": list(self.warnings),
        }
