"""The operator's credential: how a door knows a *person* is acting, not a process.

Only people decide approvals (DESIGN §12), and "this machine" is not a person: any
process on it — a program a tool started included — can open a loopback port or run
``toolang``. The credential is a random secret in the runtime's home
(``<home>/credential``, mode 0600, made by ``toolang init`` or the first ``toolang
run``). Reading it proves being the account that runs the runtime, outside any tool's
sandbox (the sandbox hides the home). The CLI reads it before recording a decision
(:func:`cli_principal`); the HTTP server accepts it as a bearer token for the operator
and signs the console's one-time sign-in links with it.
"""

from __future__ import annotations

import getpass
import os
import secrets
from pathlib import Path
from typing import ClassVar, Final

from toolang_core.errors import ToolangError

MIN_LENGTH: Final = 32


class CredentialError(ToolangError):
    """The operator's credential cannot be used here: missing, unreadable, malformed, or
    asked for by a process a tool started. Nothing was changed."""

    exit_code: ClassVar[int] = 6


def ensure_credential(path: Path) -> Path:
    """Create the credential at ``path`` (mode 0600) unless it exists; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return path


def read_credential(path: Path, *, action: str) -> str:
    """The credential at ``path``, for ``action`` (worded for the refusal).

    :raises CredentialError: when the file is missing, unreadable or malformed.
    """
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise CredentialError(
            f"refused to {action}: no operator credential at {path} (`toolang init` or the "
            "first `toolang run` in this home makes it); only the person running the "
            "runtime may do this. Nothing was changed"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CredentialError(
            f"refused to {action}: cannot read the operator credential {path} ({reason}); "
            "only the account that runs the runtime may do this, and never from inside a "
            "tool's sandbox. Nothing was changed"
        ) from None
    if len(text) < MIN_LENGTH or not text.isascii() or any(c.isspace() for c in text):
        raise CredentialError(
            f"refused to {action}: {path} is not an operator credential (expected one line "
            f"of at least {MIN_LENGTH} characters; delete it and run `toolang init "
            "--exist-ok` for a new one). Nothing was changed"
        )
    return text


def os_user() -> str:
    """The name of the account this process runs as."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"


def cli_principal(path: Path, *, action: str) -> str:
    """Who acts from this terminal — ``cli:<os user>`` — once the process has shown it
    is a person's: not started by a tool, and able to read the credential at ``path``.

    :raises DecisionFromTool: when a tool started this process (or an ancestor).
    :raises CredentialError: when the credential cannot be read.
    """
    from toolang_core.tools.approvals import refuse_tool_processes

    refuse_tool_processes(action)
    read_credential(path, action=action)
    return f"cli:{os_user()}"
