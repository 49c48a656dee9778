"""From text to what the ``tsvector`` indexes, and from a query to a ``tsquery`` that
cannot fail.

The tokens are :mod:`toolang_core.memory.kit`'s (memory-sqlite's too), so both plugins
find the same entries for the same words: scripts written without spaces cut into one
token per character (a run of them in a query is a *phrase*, ``<->``, so ``喫茶店``
finds exactly that sequence), emoji and other symbols as word tokens (``sym127829`` for
🍕), compatibility forms folded (NFKC).

PostgreSQL's parser reads ASCII text well; other text is handed to it as those tokens
separated by spaces (:func:`index_text`), so a server initialised without a locale
(which takes every non-ASCII character for a letter) splits it the same way.

A query never reaches ``to_tsquery`` as syntax: every token is quoted (tokens hold only
letters, digits and marks — no quote can occur), joined with ``|``.
"""

from __future__ import annotations

from toolang_core.memory.kit import Term, query_terms, terms

__all__ = ["Term", "index_text", "query_terms", "tsquery_text"]


def index_text(text: str) -> str | None:
    """What the ``tsvector`` is made of for ``text``: ``None`` for ASCII text (the
    entry's own text is indexed), else its tokens separated by spaces."""
    if text.isascii():
        return None
    return " ".join(" ".join(term) for term in terms(text))


def tsquery_text(chosen: list[Term]) -> str:
    """``to_tsquery`` input matching any of ``chosen`` (empty string for no terms): each
    token quoted, a phrase's tokens joined with ``<->``, the terms with ``|``."""
    return " | ".join("(" + " <-> ".join(f"'{token}'" for token in term) + ")" for term in chosen)
