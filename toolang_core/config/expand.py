"""Expansion of ``~`` and ``${ENV}`` in configuration values."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UnsetVariableError(ValueError):
    """A ``${NAME}`` reference names a variable that is not set and has no default."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
        )


def expand_env(value: str, env: Mapping[str, str]) -> str:
    """Replace ``${NAME}`` and ``${NAME:-default}`` with values from ``env``.

    :raises UnsetVariableError: for a variable that is unset and has no default.
    """

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise UnsetVariableError(name)

    return _VAR.sub(substitute, value)


def expand_path(value: str, env: Mapping[str, str], base_dir: Path) -> Path:
    """Expand variables and ``~``, and make a relative path relative to ``base_dir``."""
    expanded = expand_env(value, env)
    if expanded == "~" or expanded.startswith("~/"):
        home = env.get("HOME") or str(Path.home())
        expanded = home + expanded[1:]
    path = Path(expanded)
    return path if path.is_absolute() else base_dir / path
