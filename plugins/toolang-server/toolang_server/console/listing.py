"""Console: search and paging over a list page (turns, threads, task runs, approvals,
questions).

A page reads the newest :data:`WINDOW` objects its owner may see, keeps those whose
text matches ``q`` (every word, case-folded, anywhere in the fields the page names),
and shows page ``page`` of :data:`PAGE_SIZE`. The pager's links keep the page's other
query parameters (its filters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlencode

import attrs

if TYPE_CHECKING:
    from starlette.requests import Request

T = TypeVar("T")

PAGE_SIZE: Final = 25
WINDOW: Final = 1000
"""How many of the newest objects a search or the pages reach back over."""


@attrs.frozen
class Pager:
    """One page of a searched list, and the links to its neighbours."""

    q: str
    page: int
    pages: int
    total: int
    previous: str | None
    next: str | None


def _page_number(request: Request) -> int:
    try:
        return max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        return 1


def _link(request: Request, page: int) -> str:
    params = {k: v for k, v in request.query_params.items() if k != "page" and v}
    if page > 1:
        params["page"] = str(page)
    return f"{request.url.path}?{urlencode(params)}" if params else request.url.path


def matches(q: str, fields: Iterable[Any]) -> bool:
    """Whether every word of ``q`` occurs (case-folded) in one of ``fields``."""
    text = " ".join(str(f) for f in fields if f is not None).casefold()
    return all(word in text for word in q.casefold().split())


def paged(
    request: Request, items: Sequence[T], text_of: Callable[[T], Iterable[Any]]
) -> tuple[list[T], Pager]:
    """The request's page of ``items`` (newest first) that match its ``q``."""
    q = request.query_params.get("q", "").strip()
    found = [item for item in items if matches(q, text_of(item))] if q else list(items)
    pages = max(1, -(-len(found) // PAGE_SIZE))
    page = min(_page_number(request), pages)
    start = (page - 1) * PAGE_SIZE
    pager = Pager(
        q=q,
        page=page,
        pages=pages,
        total=len(found),
        previous=_link(request, page - 1) if page > 1 else None,
        next=_link(request, page + 1) if page < pages else None,
    )
    return found[start : start + PAGE_SIZE], pager
