"""SQL (through ``sqlglot``) and a few NoSQL calls: what destroys data wholesale.

``approve``: DROP of a table, database or schema, TRUNCATE, DELETE or UPDATE without a
WHERE clause (or with one that is always true: ``WHERE 1=1``), ALTER TABLE … DROP.
``block``: granting superuser or every privilege with the right to grant them on.
Comments and string literals are no statements: ``SELECT 'drop table x'`` passes.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from typing import Any, Final

from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

SQL_HINTS: Final = re.compile(
    r"drop|truncate|delete|update|grant|alter|superuser|create\s+(role|user)", re.I
)
_NOSQL: Final = re.compile(
    r"\.drop(Database)?\(\s*\)|\.(deleteMany|remove)\(\s*\{\s*\}\s*\)|^\s*(FLUSHALL|FLUSHDB)\b",
    re.I | re.M,
)
_PRIVILEGED: Final = re.compile(
    r"\bsuperuser\b|\ball\s+(privileges\s+)?on\s+\*\.\*|with\s+grant\s+option.*|\bcreaterole\b",
    re.I,
)

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # it warns about what it cannot parse


def judge_sql(text: str) -> Finding | None:
    """The finding about SQL ``text``, or ``None``."""
    if not SQL_HINTS.search(text):
        return None
    return _judge(text)


@functools.lru_cache(maxsize=1024)
def _judge(text: str) -> Finding | None:
    import sqlglot
    from sqlglot import exp

    try:
        statements = sqlglot.parse(text, error_level=sqlglot.ErrorLevel.IGNORE)
    except Exception:  # sqlglot raises on some input even when told to ignore errors
        statements = []
    if not statements:
        return _judge_nosql_or_words(text)
    for statement in statements:
        if statement is None:
            continue
        found = _statement(statement, exp)
        if found is not None:
            return found
    return None


def _statement(statement: Any, exp: Any) -> Finding | None:
    for names, judge in _STATEMENTS:
        if isinstance(statement, tuple(getattr(exp, name) for name in names)):
            return judge(statement, exp)
    return None


def _drop(statement: Any, exp: Any) -> Finding | None:
    kind = str(statement.args.get("kind") or "").upper()
    names = [t.sql().lower() for t in statement.find_all(exp.Table)]
    # Scratch tables (tmp_…, temp_…) are made to be dropped.
    scratch = names and all(re.match(r"^(\w+\.)?(tmp|temp|scratch)_", n) for n in names)
    dropped = kind in ("TABLE", "DATABASE", "SCHEMA", "VIEW", "MATERIALIZED VIEW", "")
    if dropped and not statement.args.get("temporary") and not scratch:
        return approve("destructive-sql", f"drops a {kind.lower() or 'table'}")
    return None


def _truncate(statement: Any, exp: Any) -> Finding | None:
    return approve("destructive-sql", "truncates a table")


def _every_row(statement: Any, exp: Any) -> Finding | None:
    where = statement.args.get("where")
    verb = "deletes" if isinstance(statement, exp.Delete) else "updates"
    if where is None:
        return approve("destructive-sql", f"{verb} every row (no WHERE clause)")
    if _always_true(where.this, exp):
        return approve("destructive-sql", f"{verb} every row (WHERE is always true)")
    return None


def _alter(statement: Any, exp: Any) -> Finding | None:
    if any(isinstance(action, exp.Drop) for action in statement.args.get("actions") or ()):
        return approve("destructive-sql", "drops a column or constraint")
    return None


def _grant(statement: Any, exp: Any) -> Finding | None:
    text = statement.sql() if isinstance(statement, exp.Grant) else str(statement)
    return _privileges(text)


_STATEMENTS: Final[tuple[tuple[tuple[str, ...], Callable[[Any, Any], Finding | None]], ...]] = (
    (("Drop",), _drop),
    (("TruncateTable",), _truncate),
    (("Delete", "Update"), _every_row),
    (("Alter",), _alter),
    (("Command", "Grant"), _grant),
)
"""What each kind of statement (sqlglot's expression classes, by name: sqlglot is
imported on the first statement judged) is judged by, in the order they are tried."""


def _always_true(condition: Any, exp: Any) -> bool:
    if isinstance(condition, exp.Boolean):
        return bool(condition.this)
    if isinstance(condition, exp.Literal):
        return condition.this not in ("0", "")
    if isinstance(condition, exp.EQ):
        left, right = condition.this, condition.expression
        return isinstance(left, exp.Literal) and left == right
    if isinstance(condition, exp.Paren):
        return _always_true(condition.this, exp)
    return False


def _privileges(text: str) -> Finding | None:
    if re.match(r"\s*(grant|alter|create)\b", text, re.I) and _PRIVILEGED.search(text):
        return block("sql-privilege", "grants superuser or every privilege")
    return None


def _judge_nosql_or_words(text: str) -> Finding | None:
    found = judge_nosql(text)
    if found is not None:
        return found
    return _privileges(text)


def judge_nosql(text: str) -> Finding | None:
    """MongoDB and Redis calls that empty a database or collection."""
    if _NOSQL.search(text):
        return approve("destructive-sql", "drops or empties a database or collection")
    return None
