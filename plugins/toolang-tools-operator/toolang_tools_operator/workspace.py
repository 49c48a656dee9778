"""The workspace: every path a tool touches must resolve inside it."""

from __future__ import annotations

from pathlib import Path

from toolang_core import ToolCallContext


class OutsideWorkspace(PermissionError):
    """A path resolves outside the workspace (``..``, an absolute path, a symlink)."""


def settings_of(context: ToolCallContext | None) -> object:
    from toolang_tools_operator import OperatorSettings

    runtime = context.runtime if context is not None else None
    found = runtime.settings.get("tools-operator") if runtime is not None else None
    return found or OperatorSettings()


def workspace_of(context: ToolCallContext | None) -> Path:
    settings = settings_of(context)
    root = getattr(settings, "workspace", None)
    if root is None:
        runtime = context.runtime if context is not None else None
        root = (runtime.config.base_dir if runtime is not None else Path.cwd()) / "workspace"
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def inside(context: ToolCallContext | None, path: str) -> Path:
    """``path`` resolved inside the workspace (symbolic links followed).

    :raises OutsideWorkspace: when it would leave the workspace.
    """
    root = workspace_of(context)
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise OutsideWorkspace(f"{path!r} is outside the workspace; use a path inside it")
    return target
