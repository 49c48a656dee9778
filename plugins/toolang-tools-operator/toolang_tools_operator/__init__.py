"""toolang-tools-operator: shell and file tools confined to a workspace."""

from __future__ import annotations

from pathlib import Path

import attrs

from toolang_core import DEFAULT_ENV_ALLOW, RegisterSettings, RegisterTool, Tool, hookimpl

NAME = "tools-operator"


@attrs.frozen
class OperatorSettings:
    """``[plugins.tools-operator]``.

    ``env_allow`` names the runtime's environment variables ``exec_run`` passes on
    (``*`` is a wildcard; default: PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR …);
    ``env_set`` sets variables explicitly. Everything else — API keys included — stays
    out, and the marker ``TOOLANG_TOOL_CALL`` is always added. ``kill_grace_seconds`` is
    how long a stopped command gets between SIGTERM and SIGKILL.
    """

    workspace: Path | None = None
    exec_timeout_seconds: float = 30.0
    max_output_chars: int = 20_000
    shell: str = "/bin/sh"
    env_allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    env_set: dict[str, str] = attrs.field(factory=dict)
    kill_grace_seconds: float = 1.0


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(OperatorSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_operator import tools

    register(Tool.from_function(tools.exec_run))
    for function in (tools.fs_read, tools.fs_write, tools.fs_list, tools.fs_search):
        register(Tool.from_function(function))
