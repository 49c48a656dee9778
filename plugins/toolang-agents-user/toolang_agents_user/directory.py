"""Reading an agents directory: one subdirectory per agent, each with an AGENT.md.

Every file is parsed on its own: a file that cannot be read or parsed is reported with
its path (and line) and the other agents still load. A missing directory is not an
error — there are simply no user agents, and the diagnostic (``info``) says where
toolang looked. A subdirectory without AGENT.md is skipped (it may hold only a
``will.md`` for toolang-source-will).
"""

from __future__ import annotations

import os
from pathlib import Path

from toolang_core import AgentDefinition, AgentDiagnostic, AgentLoad, parse_agent_md

FILE_NAME = "AGENT.md"


def load_directory(directory: Path, *, configured: bool) -> AgentLoad:
    """Every agent under ``directory``; ``configured``: named by ``[agents] dir``."""
    where = "[agents] dir" if configured else "the default agents directory ([agents] dir)"
    if not directory.exists():
        return AgentLoad(
            diagnostics=(
                AgentDiagnostic(
                    "info",
                    f"{where} does not exist: no user agents",
                    origin=str(directory),
                ),
            )
        )
    if not directory.is_dir():
        return AgentLoad(
            diagnostics=(
                AgentDiagnostic("error", f"{where} is not a directory", origin=str(directory)),
            )
        )
    definitions: list[AgentDefinition] = []
    diagnostics: list[AgentDiagnostic] = []
    for sub in sorted(directory.iterdir()):
        if not sub.is_dir() or sub.name.startswith("."):
            continue
        path = sub / FILE_NAME
        if not (path.exists() or path.is_symlink()):  # a directory, a broken link: read below
            misnamed = [p.name for p in sub.iterdir() if p.name.lower() == FILE_NAME.lower()]
            if misnamed:
                message = f"found {misnamed[0]}; the file must be named {FILE_NAME}"
                diagnostics.append(AgentDiagnostic("warning", message, origin=str(sub)))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            if path.is_symlink():
                reason += f" (a link to {os.readlink(path)})"
            message = f"cannot be read: {reason}"
            diagnostics.append(AgentDiagnostic("error", message, origin=str(path)))
            continue
        loaded = parse_agent_md(text, origin=str(path), source="user", expected_name=sub.name)
        definitions.extend(loaded.definitions)
        diagnostics.extend(loaded.diagnostics)
    return AgentLoad(definitions=definitions, diagnostics=diagnostics)
