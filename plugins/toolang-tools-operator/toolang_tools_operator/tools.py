"""The operator's tools. Each takes the call's ``context`` to find the workspace."""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import Any

from toolang_core import (
    OutsideRoot,
    ToolCallContext,
    files_beneath,
    open_beneath as open_under,
    regular_file,
    relative_name,
    run_tool_process,
    tool_process_env,
)
from toolang_tools_operator.workspace import OutsideWorkspace, inside, settings_of, workspace_of

READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK  # a pipe planted by a program never blocks a read


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
    text = _read(workspace_of(context), path)
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
    root = workspace_of(context)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | (os.O_APPEND if append else 0)
    fd = open_beneath(root, path, flags, make_dirs=True)
    with os.fdopen(fd, "a" if append else "w", encoding="utf-8") as handle:
        regular_file(fd, path)
        if not append:
            os.ftruncate(fd, 0)  # only once it is known to be a file of the workspace
        handle.write(text)
        written = relative_name(root, fd, path)
    return {"path": written, "bytes": len(text.encode())}


def fs_list(path: str = ".", context: ToolCallContext | None = None) -> list[dict[str, Any]]:
    """List a directory of the workspace.

    :param path: the directory, relative to the workspace
    """
    fd = open_beneath(workspace_of(context), path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(fd) as found:
            listed = sorted(found, key=lambda e: e.name)
            entries = []
            for entry in listed:  # a link is shown as one, not followed (it may lead out)
                kind = (
                    "link"
                    if entry.is_symlink()
                    else "dir"
                    if entry.is_dir(follow_symlinks=False)
                    else "file"
                    if entry.is_file(follow_symlinks=False)
                    else "other"
                )
                size = entry.stat(follow_symlinks=False).st_size if kind == "file" else None
                entries.append({"name": entry.name, "type": kind, "size": size})
    finally:
        os.close(fd)
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
    base = open_beneath(root, path, os.O_RDONLY | os.O_DIRECTORY)
    where = relative_name(root, base, path)
    found: list[dict[str, Any]] = []
    try:
        names = sorted(_files(base, glob))
    finally:
        os.close(base)
    for name in names:
        shown = str(PurePosixPath(where, name)) if where != "." else name
        try:  # a link is followed only while it stays in the workspace
            lines = _read(root, shown, errors="strict").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                found.append({"path": shown, "line": number, "text": line[:300]})
                if len(found) >= max_results:
                    return found
    return found


def open_beneath(root: Any, path: str, flags: int, *, make_dirs: bool = False) -> int:
    """:func:`toolang_core.open_beneath` in the workspace ``root``.

    :raises OutsideWorkspace: the path leads out of it."""
    try:
        return open_under(root, path, flags, make_dirs=make_dirs, what="the workspace")
    except OutsideRoot as exc:
        raise OutsideWorkspace(str(exc)) from None


def _read(root: Any, path: str, *, errors: str = "replace") -> str:
    """The text of the workspace's file ``path``, opened beneath ``root``."""
    fd = open_beneath(root, path, READ_FLAGS)
    try:  # before fdopen: it refuses a directory naming the descriptor, left open
        regular_file(fd, path)
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8", errors=errors)


def _files(base: int, glob: str) -> list[str]:
    """The files and links under the directory ``base`` (a descriptor,
    :func:`toolang_core.files_beneath`) whose path relative to it matches ``glob`` as
    ``Path.rglob`` matches (at any depth; ``**`` any number of directories)."""
    wanted = _glob_regex(glob)
    return [rel for rel in files_beneath(base) if wanted.fullmatch(rel)]


def _glob_regex(glob: str) -> re.Pattern[str]:
    """``glob`` as ``Path.rglob`` matches a path relative to where it searches: its
    last names at any depth; ``*``, ``?`` and ``[…]`` within one name; ``**`` any
    number of directories (a ``**`` at the end names directories: no file matches)."""
    parts = [p for p in glob.split("/") if p not in ("", ".")] or ["*"]
    if parts[-1] == "**":
        return re.compile(r"(?!)")
    pieces = []
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        pieces.append(r"(?:[^/]+/)*" if part == "**" else _name_regex(part) + ("" if last else "/"))
    return re.compile(r"(?:[^/]+/)*" + "".join(pieces))


def _name_regex(part: str) -> str:
    """One name of a glob, as ``fnmatch`` reads it, never across a ``/``."""
    out, n = [], 0
    while n < len(part):
        char = part[n]
        n += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := part.find("]", n + 1 if part[n : n + 1] in "!]" else n)) > 0:
            inside = part[n:end].replace("\\", "\\\\")
            out.append("(?!/)[" + ("^" + inside[1:] if inside.startswith("!") else inside) + "]")
            n = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)
