"""The operator's tools. Each takes the call's ``context`` to find the workspace."""

from __future__ import annotations

import re
from typing import Any

from toolang_core import ToolCallContext, run_tool_process, tool_process_env
from toolang_tools_operator.workspace import inside, settings_of, workspace_of


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters cut]"


async def exec_run(
    command: str,
    cwd: str = ".",
    timeout_seconds: float | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Run a shell command in the workspace and return its exit code and output.

    :param command: the command line, run by the shell
    :param cwd: the working directory, relative to the workspace
    :param timeout_seconds: kill the command after this long (default: the plugin's setting)
    """
    settings = settings_of(context)
    directory = inside(context, cwd)
    if not directory.is_dir():
        raise NotADirectoryError(f"{cwd!r} is not a directory in the workspace")
    limit = timeout_seconds or float(getattr(settings, "exec_timeout_seconds", 30.0))
    cap = int(getattr(settings, "max_output_chars", 20_000))
    env = tool_process_env(
        context,
        allow=getattr(settings, "env_allow", ()),
        extra=getattr(settings, "env_set", None),
    )
    # In the OS sandbox, the workspace its one writable place; a canceled turn or the
    # time limit stops the command and everything it started, never only the shell.
    ran = await run_tool_process(
        [str(getattr(settings, "shell", "/bin/sh")), "-c", command],
        context=context,
        cwd=directory,
        workdir=workspace_of(context),
        env=env,
        timeout_seconds=limit,
        kill_grace_seconds=float(getattr(settings, "kill_grace_seconds", 1.0)),
    )
    return {
        "exit_code": ran.exit_code,
        "stdout": _cap(ran.stdout, cap),
        "stderr": _cap(ran.stderr, cap),
        "timed_out": ran.timed_out,
    }


def fs_read(
    path: str, offset: int = 0, limit: int | None = None, context: ToolCallContext | None = None
) -> str:
    """Read a text file of the workspace.

    :param path: the file, relative to the workspace
    :param offset: first character to return
    :param limit: how many characters at most (default: the plugin's output cap)
    """
    cap = int(getattr(settings_of(context), "max_output_chars", 20_000))
    text = inside(context, path).read_text(encoding="utf-8", errors="replace")
    end = offset + (limit if limit is not None else cap)
    return _cap(text[offset:end], cap)


def fs_write(
    path: str, text: str, append: bool = False, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Write a text file in the workspace (directories are created).

    :param path: the file, relative to the workspace
    :param text: the content
    :param append: add to the end instead of replacing
    """
    target = inside(context, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    inside(context, str(target.parent.relative_to(workspace_of(context))))  # no escape via dirs
    with target.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(text)
    return {"path": str(target.relative_to(workspace_of(context))), "bytes": len(text.encode())}


def fs_list(path: str = ".", context: ToolCallContext | None = None) -> list[dict[str, Any]]:
    """List a directory of the workspace.

    :param path: the directory, relative to the workspace
    """
    directory = inside(context, path)
    entries = []
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        kind = "dir" if entry.is_dir() else "file" if entry.is_file() else "other"
        size = entry.stat().st_size if kind == "file" else None
        entries.append({"name": entry.name, "type": kind, "size": size})
    return entries


def fs_search(
    pattern: str,
    path: str = ".",
    glob: str = "*",
    max_results: int = 100,
    context: ToolCallContext | None = None,
) -> list[dict[str, Any]]:
    """Search files of the workspace for a regular expression.

    :param pattern: a Python regular expression
    :param path: where to search, relative to the workspace
    :param glob: which file names to look in (e.g. "*.py")
    :param max_results: stop after this many matching lines
    """
    regex = re.compile(pattern)
    root = workspace_of(context)
    base = inside(context, path)
    found: list[dict[str, Any]] = []
    for file in sorted(base.rglob(glob)):
        if not file.is_file() or (file.resolve() != root and root not in file.resolve().parents):
            continue  # skip links that lead out of the workspace
        try:
            lines = file.read_text(encoding="utf-8", errors="strict").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                found.append(
                    {"path": str(file.relative_to(root)), "line": number, "text": line[:300]}
                )
                if len(found) >= max_results:
                    return found
    return found
