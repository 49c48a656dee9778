"""The workspace: every path a tool touches must resolve inside it.

It is the call's working directory as the core decides it
(:func:`toolang_core.tool_workdir`): ``[plugins.tools-operator] workspace`` — or
``[tools] workdir``, or the agent's or tool's own — for the operator's work, and a
directory of its own under ``owners/`` for each owner's, so one owner's calls never
read or write another's files. ``exec_run``'s programs see the same directory as their
one writable place in the sandbox.
"""

from __future__ import annotations

from pathlib import Path

from toolang_core import OutsideRoot, ToolCallContext, tool_workdir


class OutsideWorkspace(OutsideRoot):
    """A path resolves outside the workspace (``..``, an absolute path, a symlink)."""


__all__ = ["OutsideWorkspace", "inside", "settings_of", "workspace_of"]


def settings_of(context: ToolCallContext | None) -> object:
    from toolang_tools_operator import OperatorSettings

    runtime = context.runtime if context is not None else None
    found = runtime.settings.get("tools-operator") if runtime is not None else None
    return found or OperatorSettings()


def workspace_of(context: ToolCallContext | None) -> Path:
    """The call's workspace (created if missing; see the module docstring)."""
    return tool_workdir(context, getattr(settings_of(context), "workspace", None)).resolve()


def inside(context: ToolCallContext | None, path: str) -> Path:
    """``path`` resolved inside the workspace (symbolic links followed), as it is now:
    what reads or writes files opens them with :func:`toolang_core.open_beneath` instead
    (a name checked here can be swapped before it is used).

    :raises OutsideWorkspace: when it would leave the workspace.
    """
    root = workspace_of(context)
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise OutsideWorkspace(f"{path!r} is outside the workspace; use a path inside it")
    return target
