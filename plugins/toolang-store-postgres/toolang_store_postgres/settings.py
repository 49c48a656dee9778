"""``[plugins.store-postgres]``: where the shared store lives, and DSNs shown safely."""

from __future__ import annotations

import re
from typing import Final

import attrs
from psycopg.conninfo import conninfo_to_dict

from toolang_core import MASK, ConfigError, Secret, ToolangConfig, redact_text

NAME: Final = "store-postgres"
SCHEMA_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def _schema_name(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not SCHEMA_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a schema name toolang accepts: lower-case letters, digits "
            "and '_', starting with a letter or '_', at most 40 characters"
        )


def _positive(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value <= 0:
        raise ValueError(f"expected a number above 0, got {value!r}")


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
    schema: str = attrs.field(default="toolang", validator=_schema_name)
    pool_size: int = attrs.field(default=4, validator=attrs.validators.ge(1))
    connect_timeout: float = attrs.field(default=10.0, validator=_positive)


def require_dsn(settings: PostgresSettings | None, config: ToolangConfig) -> str:
    """The DSN to connect with. :raises ConfigError: naming the key when it is unset."""
    dsn = settings.dsn.reveal() if settings and settings.dsn else ""
    if not dsn.strip():
        raise ConfigError(
            [
                f"{config.display_name}: plugins.{NAME}.dsn: missing; [store] backend = "
                '"postgres" needs a PostgreSQL connection string, e.g. '
                'dsn = "${TOOLANG_PG_DSN}" or "postgresql://user@host:5432/toolang"'
            ]
        )
    return dsn


def describe_dsn(dsn: str, schema: str) -> str:
    """``postgresql://user:********@host:port/db#schema``: where the store is, never
    its password (the DSN may be a URL or ``key=value`` pairs)."""
    try:
        params = conninfo_to_dict(dsn)
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
        password = str(conninfo_to_dict(dsn).get("password") or "")
    except Exception:
        password = ""
    if password:
        text = text.replace(password, MASK)
    return redact_text(text)
