"""toolang-tools-operator: shell and file tools confined to a workspace."""

from __future__ import annotations

from pathlib import Path

import attrs

from toolang_core import RegisterSettings, RegisterTool, Tool, hookimpl

NAME = "tools-operator"


@attrs.frozen
class OperatorSettings:
    """``[plugins.tools-operator]``."""

    workspace: Path | None = None
    exec_timeout_seconds: float = 30.0
    max_output_chars: int = 20_000
    shell: str = "/bin/sh"


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(OperatorSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_operator import tools

    register(Tool.from_function(tools.exec_run))
    for function in (tools.fs_read, tools.fs_write, tools.fs_list, tools.fs_search):
        register(Tool.from_function(function))
