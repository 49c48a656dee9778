"""The vault's redaction detector: every secret the vault holds, masked wherever the
runtime stores or shows text — in every process that makes a runtime (``toolang
submit`` writing a message that repeats a secret, too), not only the one serving.

Lazy: the vault's database is read, and its secrets decrypted, when the first text
long enough to hold one is masked, and only when the database exists. What a running
runtime adds afterwards (``secrets_set``, ``secrets_get``) reaches its policy through
``RedactionPolicy.mask_values``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from toolang_core import MASK
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.settings import NAME, VaultSettings

if TYPE_CHECKING:
    from toolang_core import PluginContext

log = structlog.get_logger(__name__)
SHORTEST_SECRET = 8
"""``secrets_set``'s shortest value: no shorter text can hold one."""


def known_secrets(context: PluginContext) -> Callable[[str], str]:
    """The detector for ``context``'s runtime (see the module)."""
    path = Path(context.home) / "plugins" / f"{NAME}.db"
    settings = context.settings or VaultSettings()
    pattern: re.Pattern[str] | None = None
    loaded = False

    def detect(text: str) -> str:
        nonlocal pattern, loaded
        if len(text) < SHORTEST_SECRET:
            return text
        if not loaded:
            pattern = _pattern(_read(context, settings, path))
            loaded = True  # two threads may both read: either result is right
        return text if pattern is None else pattern.sub(MASK, text)

    return detect


def _pattern(values: list[str]) -> re.Pattern[str] | None:
    if not values:
        return None
    return re.compile("|".join(re.escape(v) for v in sorted(set(values), key=len, reverse=True)))


def _read(context: PluginContext, settings: VaultSettings, path: Path) -> list[str]:
    """Every secret in the vault at ``path``, decrypted; none when there is no vault or
    no usable key (logged: the tools report it in full)."""
    if not path.exists():
        return []
    from toolang_tools_vault.keys import load_key
    from toolang_tools_vault.vault import Vault

    try:
        key = load_key(context.config, settings)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10.0)
    except (VaultError, sqlite3.Error) as exc:
        log.warning("vault.redactor_unavailable", plugin=NAME, error=str(exc))
        return []
    try:
        from sqlite_utils import Database

        vault = Vault(Database(conn), key, check_only=True)
        return [s.decode("utf-8") for s in vault.every_secret()]
    except (VaultError, sqlite3.Error) as exc:
        log.warning("vault.redactor_unavailable", plugin=NAME, error=str(exc))
        return []
    finally:
        conn.close()
