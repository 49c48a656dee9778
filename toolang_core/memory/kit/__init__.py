"""What a memory plugin shares with the built-in ones: the namespace for memory plugin
authors.

An ordinary plugin or tool needs only :mod:`toolang_core.memory` (the contract). A
plugin that *implements* that contract — a ``toolang_register_memory`` plugin such as
toolang-memory-sqlite or toolang-memory-postgres — may also import the pieces here,
which both built-in memory plugins use so that they find, rank, count and report alike
(docs/hooks/memory.md, "Writing a memory plugin"); the SQL, the full-text index and
its query syntax stay the plugin's own:

- **text** — a query's terms (:func:`query_terms`, :func:`terms`, :data:`Term`,
  :data:`STOPWORDS`) and the text to index (:func:`spelled_out`): scripts without spaces
  cut into characters, symbols spelled as words, NFKC-folded;
- **ranking** — full-text relevance blended with recency and uses (:func:`blend`), then
  the request's limits (:func:`within_limits`, :class:`Ranked`, :func:`clip`);
- **recall** — one recall from query to result (:class:`Recalling`: its terms,
  diagnostics and result) and its ranking as the settings say (:func:`rank`);
- **uses** — uses counted in memory and written behind (:class:`PendingUses`, with
  ``taken`` and ``write_last``), what they are worth in ranking (:func:`usages`) and
  items carrying them (:func:`with_uses`, :func:`with_pending`, :func:`merged`);
- **failures** — database errors turned into the plugin's own, remembered for health
  (:class:`Failures`, its ``guard``, ``health`` and ``down``;
  :func:`health_after_pruning`, a plugin's whole ``health``);
- **settings** — the keys every built-in memory plugin has (:class:`RankingSettings`,
  for a plugin's settings class to subclass) and validators naming the key
  (:func:`at_least`, :func:`fraction`);
- **entries** — a batch's entries checked before anything is written (:func:`checked`);
  rows read back as items (:func:`item`, :data:`ITEM_COLUMNS`): a recall's
  (:func:`ranked_items`, :func:`read_chars`) and a listing's (:func:`list_statement`,
  :func:`listed`); pruning in batches (:func:`prune_all`); a forget request's filter
  (:func:`filter_clauses`, :func:`key_chunks`).

These names follow the plugins' needs and may change more often than the contract.
"""

from toolang_core.memory.kit.entries import (
    ITEM_COLUMNS,
    KEYS_PER_STATEMENT,
    Row,
    checked,
    filter_clauses,
    item,
    key_chunks,
    list_statement,
    listed,
    prune_all,
    ranked_items,
    read_chars,
)
from toolang_core.memory.kit.failures import (
    DEGRADED_FOR_SECONDS,
    Failures,
    Guard,
    Guarded,
    health_after_pruning,
)
from toolang_core.memory.kit.ranking import (
    DAY,
    ELLIPSIS,
    MIN_CLIP_CHARS,
    Candidate,
    Ranked,
    blend,
    clip,
    within_limits,
)
from toolang_core.memory.kit.recall import Recalling, rank
from toolang_core.memory.kit.settings import RankingSettings, at_least, fraction
from toolang_core.memory.kit.text import (
    IGNORED,
    SEGMENTED_RANGES,
    STOPWORDS,
    Term,
    query_terms,
    spelled_out,
    terms,
)
from toolang_core.memory.kit.uses import (
    PendingUses,
    Use,
    merged,
    usages,
    with_pending,
    with_uses,
)

__all__ = [
    "DAY",
    "DEGRADED_FOR_SECONDS",
    "ELLIPSIS",
    "IGNORED",
    "ITEM_COLUMNS",
    "KEYS_PER_STATEMENT",
    "MIN_CLIP_CHARS",
    "SEGMENTED_RANGES",
    "STOPWORDS",
    "Candidate",
    "Failures",
    "Guard",
    "Guarded",
    "PendingUses",
    "Ranked",
    "RankingSettings",
    "Recalling",
    "Row",
    "Term",
    "Use",
    "at_least",
    "blend",
    "checked",
    "clip",
    "filter_clauses",
    "fraction",
    "health_after_pruning",
    "item",
    "key_chunks",
    "list_statement",
    "listed",
    "merged",
    "prune_all",
    "query_terms",
    "rank",
    "ranked_items",
    "read_chars",
    "spelled_out",
    "terms",
    "usages",
    "with_pending",
    "with_uses",
    "within_limits",
]
