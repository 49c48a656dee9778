"""What every ontologist tool needs: its runtime, the caller's owner, the database, and
the replay of a writing call made again."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from toolang_core import Tool, tool_owner, tool_runtime
from toolang_tools_ontologist.settings import NAME, OntologistSettings

if TYPE_CHECKING:
    from sqlite_utils import Database

    from toolang_core import RuntimeView, ToolCallContext

T = TypeVar("T")


class OntologyError(ValueError):
    """An ontologist tool cannot do what it was asked; the message names the parameter
    and what was expected. Nothing was changed."""


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    return tool_runtime(context, OntologyError)


def settings_of(runtime: RuntimeView) -> OntologistSettings:
    return runtime.settings_for(NAME, OntologistSettings)


def owner_of(context: ToolCallContext | None) -> str:
    """Whose ontology the call works on: the owner of the turn it belongs to."""
    return tool_owner(context, OntologyError)


_LOCKS = threading.Lock()


def _lock(runtime: RuntimeView) -> threading.Lock:
    with _LOCKS:
        return runtime.plugin_state(f"{NAME}:lock", threading.Lock)


@contextmanager
def own_database(runtime: RuntimeView) -> Iterator[Database]:
    """This plugin's database (``<home>/plugins/tools-ontologist.db``), one caller at a
    time: tools run in worker threads and share the runtime's one connection."""
    from toolang_tools_ontologist.schema import MIGRATIONS

    with _lock(runtime):
        yield runtime.plugin_database(NAME, MIGRATIONS)


def once(
    context: ToolCallContext, tool: str, db: Database, owner: str, work: Callable[[], T]
) -> T | Any:
    """``work()``'s answer, recorded under the call's idempotency key in the same
    transaction as what it wrote; the call made again (a resumed turn) gets the
    recorded answer and writes nothing. Run it inside ``db.atomic()``."""
    key = context.idempotency_key
    if key is None:
        return work()
    found = db.execute(
        "SELECT answer FROM calls WHERE owner = ? AND call_key = ?", [owner, key]
    ).fetchone()
    if found is not None:
        return json.loads(found[0])
    answer = work()
    db.execute(
        "INSERT INTO calls (owner, call_key, tool, answer) VALUES (?, ?, ?, ?)",
        [owner, key, tool, json.dumps(answer)],
    )
    return answer


def constrained(
    function: Callable[..., Any], *, idempotent: bool, **properties: Mapping[str, Any]
) -> Tool:
    """``Tool.from_function(function)`` with extra JSON Schema keywords per parameter."""
    return Tool.from_function(function, idempotent=idempotent).constrain(**properties)
