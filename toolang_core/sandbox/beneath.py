"""Opening a path beneath a directory, without a window between check and use.

For a tool that reads or writes files under a root a model names paths in (a
workspace, a documents or an ingest directory). Checking a path (``Path.resolve()``,
then "is it inside?") and opening it by name afterwards leaves a window: a program in
the sandbox can swap a checked name for a symbolic link to anything the runtime's
account can read (its credential, another owner's files) between the two, and the
runtime opens what the link names. Here the path is walked one name at a time from an
open descriptor of the root, each name opened relative to its directory's descriptor
and never followed by the kernel (``O_NOFOLLOW``); ``..`` goes back to a descriptor
held already, never above the root; a symbolic link is read and its target walked the
same way (an absolute target only when it lies under the root). Whatever is swapped
meanwhile, what is opened was reached through the root's own directories.
:func:`files_beneath` lists a directory's files the same way.

(Linux's ``openat2(RESOLVE_BENEATH)`` does this in the kernel; Python's ``os`` does not
offer it, and the libraries that do need a C library Debian does not ship.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from pathlib import Path

MAX_LINKS = 40
"""Symbolic links followed in one path at most (as the kernel's own limit)."""


class OutsideRoot(PermissionError):
    """A path resolves outside its root (``..``, an absolute path, a symlink)."""


def open_beneath(
    root: Path,
    path: str,
    flags: int,
    mode: int = 0o666,
    *,
    make_dirs: bool = False,
    what: str = "its root",
    configured: Path | None = None,
) -> int:
    """A descriptor of ``path`` (relative to ``root``, or absolute inside it) opened
    with ``flags`` beneath ``root`` (an absolute, resolved directory), symbolic links
    followed only while they stay beneath it; ``make_dirs`` creates missing
    directories on the way. ``what`` names the root in messages. Add ``O_NONBLOCK``
    to read what may not be a regular file (a pipe would block the open), then
    :func:`regular_file`.

    ``configured``: the root as the operator wrote it (absolute), when that is a
    symbolic link to ``root`` or passes through one: an absolute path (or a link's
    absolute target) under it is the same path under ``root``. Only its words are
    compared; what follows them is walked from ``root``'s descriptor all the same.

    :raises OutsideRoot: the path, or a link on it, leads out of ``root``.
    :raises OSError: as ``os.open`` (missing, not a directory, …), naming ``path``.
    """
    roots = (root,) if configured is None or configured == root else (root, configured)
    names = _names(roots, path, lexical=True, what=what)
    held = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    links = 0
    try:
        while names:
            name = names.popleft()
            if name == "..":
                if len(held) == 1:
                    raise _outside(path, what)
                os.close(held.pop())
                continue
            opened = _open(
                name, held[-1], flags, mode, last=not names, make_dirs=make_dirs, path=path
            )
            if opened is not None and not names:
                return opened
            if opened is not None:
                held.append(opened)
                continue
            links += 1  # a link (or one a moment ago): walk what it names in its place
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, f"too many symbolic links: {path!r}")
            target = _link(name, held[-1])
            if target is None:  # not a link any more: the name again, as it is now
                names.appendleft(name)
                continue
            if os.path.isabs(target):
                for fd in held[1:]:
                    os.close(fd)
                del held[1:]
            names.extendleft(reversed(_names(roots, target, original=path, what=what)))
        return os.dup(held[-1])  # the path names the root itself (or a directory)
    finally:
        for fd in held:
            os.close(fd)


def _open(
    name: str, parent: int, flags: int, mode: int, *, last: bool, make_dirs: bool, path: str
) -> int | None:
    """``name`` in the directory ``parent`` opened, never followed: with ``flags``
    when ``last``, else as a directory; ``None`` when it is (or was) a link.

    :raises OSError: naming ``path``."""
    try:
        if last:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
        return _directory(name, parent, make_dirs=make_dirs)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _link(name, parent)):
            return None
        raise type(exc)(exc.errno, f"{exc.strerror}: {path!r}") from None


def files_beneath(base: int) -> list[str]:
    """The paths, relative to the directory ``base`` (a descriptor), of everything
    under it that is not a directory (files, links, pipes: open each with
    :func:`open_beneath`), walked by descriptors: each directory opened beneath its
    parent without following a link and without blocking (a pipe swapped in for a
    directory is not a directory, and is skipped). Depth first: one descriptor is
    open per level of the directory being read, however wide the tree.

    :raises OSError: the process ran out of descriptors (``EMFILE``, ``ENFILE``).
    """
    found: list[str] = []
    first = os.dup(base)
    stack: list[tuple[int, Iterator[tuple[str, bool]], str]] = []
    try:
        stack.append((first, iter(_listing(first)), ""))
    except OSError:
        os.close(first)
        raise
    try:
        while stack:
            fd, names, prefix = stack[-1]
            entry = next(names, None)
            if entry is None:
                os.close(fd)
                stack.pop()
                continue
            name, is_directory = entry
            if not is_directory:
                found.append(prefix + name)
                continue
            try:
                child = os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE):
                    raise
                continue  # swapped meanwhile: not a directory under base
            try:
                stack.append((child, iter(_listing(child)), f"{prefix}{name}/"))
            except OSError:
                os.close(child)  # gone meanwhile
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return found


def _listing(fd: int) -> list[tuple[str, bool]]:
    """The names in the directory ``fd``, each with whether it is a directory (not
    following links); read at once, so the listing holds no descriptor."""
    with os.scandir(fd) as entries:
        return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]


_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def relative_name(root: Path, fd: int, fallback: str) -> str:
    """Where the open ``fd`` is, relative to ``root`` (``fallback`` when the system
    cannot tell)."""
    try:
        return str(Path(os.readlink(f"/proc/self/fd/{fd}")).relative_to(root))
    except (OSError, ValueError):
        return fallback


def regular_file(fd: int, path: str) -> None:
    """:raises IsADirectoryError, OSError: ``fd`` is not a regular file (a directory,
    a pipe that would block the read forever, a device)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"is a directory: {path!r}")
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"not a regular file: {path!r}")


def _names(
    roots: tuple[Path, ...],
    path: str,
    *,
    what: str,
    original: str | None = None,
    lexical: bool = False,
) -> deque[str]:
    """The names to walk for ``path``: relative to the root (a link's target: to its
    directory); an absolute one must start with one of ``roots`` (the root as
    resolved, then as configured).
    ``lexical``: a path whose words alone lead out (``a/../..``) is refused at once."""
    if os.path.isabs(path):
        parts = Path(os.path.normpath(path)).parts
        for root in roots:
            if parts[: len(root.parts)] == root.parts:
                parts = parts[len(root.parts) :]
                break
        else:
            raise _outside(original or path, what)
    else:
        normal = os.path.normpath(path)
        if lexical and (normal == ".." or normal.startswith("../")):
            raise _outside(original or path, what)
        parts = tuple(path.split("/"))
    return deque(name for name in parts if name not in ("", "."))


def _directory(name: str, parent: int, *, make_dirs: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not make_dirs:
            raise
    # made meanwhile (or a link made meanwhile: the open below refuses it)
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, dir_fd=parent)
    return os.open(name, flags, dir_fd=parent)


def _link(name: str, parent: int) -> str | None:
    """What the link ``name`` in ``parent`` names (``None``: not a link, or gone)."""
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError:
        return None


def _outside(path: str, what: str) -> OutsideRoot:
    return OutsideRoot(f"{path!r} is outside {what}; use a path inside it")
