"""A cached list of every command and its one-line help, so ``toolang --help`` stays fast.

Listing the commands means asking every plugin (``toolang_register_commands``), which
imports every plugin and most of toolang. The list only changes when what is installed
or configured changes, so it is cached under a key made of exactly that: toolang's
version, the interpreter, the ``toolang`` entry points of the installed distributions
(names, values, versions), the plugin environment variables and the bytes of every
configuration file that could apply. A different key is a miss; the commands are then
listed the slow way and the cache written again. A cache that cannot be read or written
is ignored — it only ever saves time.

Beside the listing, which plugin adds each command (``owners-*.json``,
:func:`owners_key`): ``toolang chat`` then asks only toolang-source-chat for its
commands (see :class:`toolang_core.cli.group.ToolangGroup`).

The cache lives in ``$TOOLANG_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolang``, else
``~/.cache/toolang``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core.plugins.records import PluginRecord

ENV_CACHE_DIR = "TOOLANG_CACHE_DIR"
_ENV_KEYS = ("TOOLANG_LOAD_PLUGINS", "TOOLANG_DISABLE_PLUGINS", "TOOLANG_STRICT_PLUGINS")

Listing = dict[str, tuple[str, bool]]
"""Command name → (its ``short_help`` if it has one, else its ``help``; whether that text
was a ``short_help``). Hidden commands are left out."""


def cache_dir(env: Mapping[str, str]) -> Path:
    if env.get(ENV_CACHE_DIR):
        return Path(env[ENV_CACHE_DIR])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "toolang"
    return Path.home() / ".cache" / "toolang"


def listing_key(version: str, config_path: Path | None, env: Mapping[str, str]) -> str:
    """What the listing depends on, hashed (see the module docstring)."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode())

    add(version, sys.executable, sys.version)
    for ep in sorted(entry_points(group="toolang"), key=lambda e: (e.name, e.value)):
        metadata = ep.dist.metadata if ep.dist else None  # parsed once, not per field
        add(
            ep.name,
            ep.value,
            metadata["Name"] if metadata is not None else "",
            metadata["Version"] if metadata is not None else "",
        )
    _add_settings(add, config_path, env)
    return digest.hexdigest()[:32]


def _add_settings(
    add: Callable[..., None], config_path: Path | None, env: Mapping[str, str]
) -> None:
    """The plugin environment variables, and the bytes of every configuration file that
    could apply."""
    for key in _ENV_KEYS:
        add(key, env.get(key))
    # Whichever of these wins (see config.loader.find_config), its bytes are in the key.
    candidates = [config_path, Path(env["TOOLANG_CONFIG"]) if env.get("TOOLANG_CONFIG") else None]
    candidates.append(Path.cwd() / "toolang.toml")
    for path in candidates:
        if path is None:
            continue
        try:
            add(str(path), path.read_bytes())
        except OSError:
            add(str(path), None)


def owners_key(
    version: str, plugins: Iterable[PluginRecord], config_path: Path | None, env: Mapping[str, str]
) -> str:
    """What the plugin owning each command depends on, hashed: the listing's key, made
    from the ``plugins`` a host already found (their names, statuses, entry points,
    distributions and versions) instead of reading every distribution's metadata again."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode())

    add("owners", version, sys.executable, sys.version)
    for record in sorted(plugins, key=lambda r: (r.name, r.entry_point or "")):
        add(record.name, record.status.value, record.entry_point, record.distribution)
        add(record.version)
    _add_settings(add, config_path, env)
    return digest.hexdigest()[:32]


def read_owners(env: Mapping[str, str], key: str) -> dict[str, str] | None:
    """Command name → the plugin that adds it, as cached under ``key`` (None: a miss)."""
    try:
        data = json.loads((cache_dir(env) / f"owners-{key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        return None
    return {str(name): plugin for name, plugin in data.items()}


def write_owners(env: Mapping[str, str], key: str, owners: Mapping[str, str]) -> None:
    _write(env, "owners", key, dict(owners))


def read_listing(env: Mapping[str, str], key: str) -> Listing | None:
    try:
        data = json.loads((cache_dir(env) / f"commands-{key}.json").read_text())
        return {name: (str(text), bool(hidden)) for name, (text, hidden) in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def write_listing(env: Mapping[str, str], key: str, listing: Listing) -> None:
    _write(env, "commands", key, listing)


def _write(env: Mapping[str, str], kind: str, key: str, data: object) -> None:
    """Write ``data`` as the one cached ``kind`` file (the others of its kind go)."""
    directory = cache_dir(env)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob(f"{kind}-*.json"):  # one file per kind is enough
            stale.unlink(missing_ok=True)
        temporary = directory / f".{kind}-{key}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(data))
        temporary.replace(directory / f"{kind}-{key}.json")
    except OSError:
        return
