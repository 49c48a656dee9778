"""Starting Chromium: the executable the settings name, checked, and (with ``sandbox``)
the script that starts it inside the OS sandbox, for Playwright to launch.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from toolang_tools_navigator.errors import NavigatorError

if TYPE_CHECKING:
    from toolang_core import ToolCallContext
    from toolang_tools_navigator.settings import NavigatorSettings


def chromium_of(settings: NavigatorSettings) -> Path:
    """The Chromium executable ``settings`` name.

    :raises NavigatorError: it is not installed there (what to install or set)."""
    path = settings.executable_path
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise NavigatorError(
            f"Chromium is not installed at {path}: install Debian's package "
            "(apt-get install chromium) or set [plugins.tools-navigator] executable_path"
        )
    return path


def sandboxed(
    chromium: Path, jail: Path, files: Path | None, context: ToolCallContext | None
) -> tuple[Path, dict[str, str | float | bool]]:
    """A script starting ``chromium`` inside bubblewrap, for Playwright to launch, and
    its environment; both live in ``jail``, the browser's own directory.

    The sandbox is a tool program's (:func:`toolang_core.sandbox_argv`, for the tool
    call ``context``): the runtime's home, config, store, approval key, working
    directories and the user's secrets hidden, the root read-only, a private ``/tmp``,
    ``/dev`` and ``/proc``; its one writable place a private profile directory in
    ``jail`` (removed when the browser stops); ``files`` (the allow-list's files_dir)
    shown read-only. It keeps the host's network: the allow-list is enforced by the
    routing (:meth:`~toolang_tools_navigator.session.Session.route`). bubblewrap passes
    on the descriptors 3 and 4 Playwright talks over.

    :raises NavigatorError: the sandbox cannot be made here.
    """
    from toolang_core import SandboxError, sandbox_argv

    profile = jail / "profile"
    profile.mkdir(mode=0o700, exist_ok=True)
    shown = [files] if files is not None and files.is_dir() else []
    try:
        argv = sandbox_argv(
            context,
            [str(chromium)],
            workdir=profile,
            read_only=shown,
            share_network=True,
        )
    except SandboxError as exc:
        raise NavigatorError(
            f"cannot start Chromium in the sandbox: {exc} (or set "
            "[plugins.tools-navigator] sandbox = false to run it unconfined)"
        ) from exc
    wrapper = jail / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(argv)} "$@"\n')
    wrapper.chmod(0o700)
    env: dict[str, str | float | bool] = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(profile),
        "TMPDIR": "/tmp",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    return wrapper, env
