"""Guarded migrations: the one procedure every schema of toolang is upgraded by.

The SQLite store, plugins' SQLite databases (:mod:`toolang_core.store.plugin_db`) and
the PostgreSQL store (``toolang-store-postgres``) each keep an ordered list of named
migrations and a ledger of the ones applied. Opening one of them:

1. reads what the ledger holds, without changing anything; a migration there that the
   code does not know means a newer version wrote it, and it is refused untouched
   (:func:`pending_migrations`);
2. applies what is pending only when the caller may migrate (never for a read-only
   open), inside one transaction that checks again what is pending — processes opening
   it at the same moment wait for each other and the last finds nothing left to do —
   rolled back whole, with an error naming the migration that failed
   (:func:`migrate_guarded`).

A backend supplies the parts that are its own: how to read the ledger, how to open the
transaction, how to apply one migration and which exceptions its database raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

from toolang_core.store.errors import StoreCorrupt, StoreNeedsMigration, StoreSchemaTooNew


def pending_migrations(
    known: Sequence[str], applied: Iterable[str], *, where: str, migration_set: str, upgrade: str
) -> list[str]:
    """The migrations of ``known`` not in ``applied``, in order.

    ``where`` names the database in messages, ``upgrade`` what to upgrade to read it
    (e.g. ``"toolang-core"``).

    :raises StoreSchemaTooNew: ``applied`` has a migration ``known`` does not (a newer
        version wrote the database; it is left untouched).
    """
    done = list(applied)
    unknown = [name for name in done if name not in known]
    if unknown:
        raise StoreSchemaTooNew(
            f"{where} was written by a newer version: it has migration(s) "
            f"{', '.join(unknown)} of set {migration_set!r} that this code does not know "
            f"(it knows {_up_to(known)}); upgrade {upgrade} (nothing was changed)"
        )
    return [name for name in known if name not in done]


def _up_to(known: Sequence[str]) -> str:
    return f"migrations up to {known[-1]!r}" if known else "no migration"


def migrate_guarded(
    *,
    where: str,
    migration_set: str,
    pending: Callable[[], list[str]],
    migrate: bool,
    transaction: Callable[[], AbstractContextManager[object]],
    apply: Callable[[str], None],
    errors: tuple[type[Exception], ...],
    known: Sequence[str] = (),
) -> list[str]:
    """Apply the migrations ``pending()`` names, if any and if ``migrate`` allows it.

    ``pending`` is called once before and once inside ``transaction()``, which the
    backend makes exclusive among the processes that migrate (``BEGIN IMMEDIATE``, an
    advisory lock) and which rolls back when its block raises. ``apply(name)`` applies
    one migration; an exception of ``errors`` from it is reported as the failure of
    that migration. Returns the names applied (empty: nothing was pending). ``known``,
    every migration of the set, tells a database none was applied to (an empty file)
    from an older one in what a read-only open says.

    :raises StoreNeedsMigration: migrations are pending and ``migrate`` is false (a
        read-only open never migrates).
    :raises StoreCorrupt: a migration failed; the whole transaction was rolled back.
    """
    names = pending()
    if not names:
        return []
    if not migrate and known and names == list(known):
        raise StoreNeedsMigration(
            f"{where} has no {migration_set!r} schema yet (an empty or new database); "
            "read-only commands never create one — start `toolang run` to create it"
        )
    if not migrate:
        raise StoreNeedsMigration(
            f"{where} uses an older schema: set {migration_set!r} has pending migration(s) "
            f"{', '.join(names)}; read-only commands never migrate — start `toolang run` "
            "to upgrade it"
        )
    current = names[0]
    applied: list[str] = []
    try:
        with transaction():
            for current in pending():
                apply(current)
                applied.append(current)
    except errors as exc:
        raise StoreCorrupt(
            f"{where}: migration {current!r} of set {migration_set!r} failed ({exc}); "
            "the migration was rolled back and nothing was changed"
        ) from None
    return applied
