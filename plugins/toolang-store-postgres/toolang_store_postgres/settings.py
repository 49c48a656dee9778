"""``[plugins.store-postgres]``: where the shared store lives, and DSNs shown safely."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core import MASK, ConfigError, Secret, redact_text

if TYPE_CHECKING:
    from toolang_core import ToolangConfig

NAME: Final = "store-postgres"


def _parse(dsn: str) -> dict[str, Any]:
    # Imported here: every toolang command loads this module, few open the store.
    from psycopg.conninfo import conninfo_to_dict

    return conninfo_to_dict(dsn)


SCHEMA_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")


@attrs.frozen
class PostgresSettings:
    """``[plugins.store-postgres]``, read when ``[store] backend = "postgres"``.

    ``dsn`` is a libpq connection string or URL (``${ENV}`` is expanded, so
    ``dsn = "${TOOLANG_PG_DSN}"`` keeps the password out of the file). ``schema`` holds
    every table: several deployments may share one database under different schemas.
    ``pool_size`` bounds the connections one process opens for queries (plus one
    listening for wake-ups and, in a runtime, one showing it is alive).
    """

    dsn: Secret | None = None
    schema: str = "toolang"
    pool_size: int = 4
    connect_timeout: float = 10.0


def check(settings: PostgresSettings, config: ToolangConfig) -> str:
    """The DSN to connect with, once every key is usable.

    :raises ConfigError: naming ``plugins.store-postgres.<key>`` for each problem.
    """
    problems: list[tuple[str, str]] = []
    dsn = settings.dsn.reveal() if settings.dsn else ""
    if not dsn.strip():
        problems.append(
            (
                "dsn",
                'missing; [store] backend = "postgres" needs a PostgreSQL connection string, '
                'e.g. dsn = "${TOOLANG_PG_DSN}" or "postgresql://user@host:5432/toolang"',
            )
        )
    else:
        try:
            _parse(dsn)
        except Exception:  # the driver's message may quote the DSN: never show it
            problems.append(("dsn", "not a PostgreSQL connection string or URL"))
    if not SCHEMA_NAME.fullmatch(settings.schema):
        problems.append(
            (
                "schema",
                f"{settings.schema!r} is not a schema name toolang accepts: lower-case "
                "letters, digits and '_', starting with a letter or '_', at most 40 characters",
            )
        )
    if settings.pool_size < 1:
        problems.append(("pool_size", f"expected an integer >= 1, found {settings.pool_size}"))
    if settings.connect_timeout <= 0:
        problems.append(
            ("connect_timeout", f"expected a number > 0, found {settings.connect_timeout}")
        )
    if problems:
        raise ConfigError(
            [f"{config.display_name}: plugins.{NAME}.{key}: {why}" for key, why in problems]
        )
    return dsn


def describe_dsn(dsn: str, schema: str) -> str:
    """``postgresql://user:********@host:port/db#schema``: where the store is, never
    its password (the DSN may be a URL or ``key=value`` pairs)."""
    try:
        params = _parse(dsn)
    except Exception:  # not parseable: show nothing of it rather than risk a secret
        return f"postgresql://(unparseable DSN)#{schema}"
    user = str(params.get("user") or "")
    password = f":{MASK}" if params.get("password") else ""
    credentials = f"{user}{password}@" if user or password else ""
    host = str(params.get("host") or params.get("hostaddr") or "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    dbname = str(params.get("dbname") or user or "")
    return f"postgresql://{credentials}{host}{port}/{dbname}#{schema}"


def mask_secrets(text: str, dsn: str) -> str:
    """``text`` (e.g. a driver's error message) with the DSN's password masked."""
    try:
        password = str(_parse(dsn).get("password") or "")
    except Exception:
        password = ""
    if password:
        text = text.replace(password, MASK)
    return redact_text(text)
