"""What is served over A2A, checked: where it is served (a configured A2A that nothing
serves is a warning), every card valid (a2a-sdk's required fields) and, served on the
plugin's own port (``listen``) or with ``public_url`` set, answered at its address.
``toolang a2a check`` and ``toolang doctor`` (through ``toolang_doctor_checks``) both
report these findings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core import Runtime

AREA = "a2a"


def findings(runtime: Runtime) -> Iterator[tuple[str, str]]:
    """``(status, text)`` per finding; status ``ok``, ``info``, ``warn`` or ``fail``."""
    import httpx
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.utils.errors import A2AError
    from a2a.utils.proto_utils import validate_proto_required_fields

    from toolang_source_a2a import settings_of
    from toolang_source_a2a.cards import cards
    from toolang_source_a2a.standalone import configured, nobody_serves, serving

    settings = settings_of(runtime)
    where = serving(runtime)
    if where.by == "nobody":
        if configured(runtime):
            yield "warn", nobody_serves(runtime)
        else:
            yield "info", "not served (no [plugins.source-a2a] listen, no server serving routes)"
    elif where.by == "server":
        unused = f" (listen = {settings.listen!r} is not used)" if settings.listen else ""
        yield "ok", f"served by the {where.plugin} plugin at {where.url}/a2a/…{unused}"
    else:
        yield "ok", f"served on its own port at {where.url}/a2a/…"
    base = settings.public_url or (where.url if where.by == "listen" else "")
    try:
        served = cards(runtime, settings, base or "http://127.0.0.1")
    except LookupError as exc:
        yield "fail", f"[plugins.source-a2a] agents: {exc}"
        return
    for name, card in served.items():
        try:
            validate_proto_required_fields(card)
            yield "ok", f"card {name}: valid"
        except A2AError as exc:
            yield "fail", f"card {name}: {exc.message} {exc.data or ''}".strip()
        if not base:  # served by a server plugin, or by nobody: said above
            continue
        url = f"{base.rstrip('/')}/a2a/{name}/.well-known/agent-card.json"
        try:
            answer = httpx.get(url, timeout=5)
            answer.raise_for_status()
            same = answer.json().get("name") == agent_card_to_dict(card).get("name")
            yield ("ok" if same else "fail"), f"card {name}: served at {url}"
        except (httpx.HTTPError, ValueError) as exc:
            yield "fail", f"card {name}: not answered at {url}: {exc}"
