"""A deterministic embedding model for tests: words that mean the same thing (by a
small concept table) get the same direction, so a test can show an entry recalled by a
query that shares no word with it.

Each word of a text (lower-cased, stopwords dropped) stands for its concept —
:data:`CONCEPTS` maps ``automobile``, ``car`` and ``vehicle`` to ``vehicle`` — or else
for itself. Each concept of the table has a coordinate of its own; any other word is
hashed (blake2b, so the same on every run and machine) to one of the remaining
coordinates, with a sign; the sum is scaled to length 1. Two texts are as similar
(cosine) as the concepts they share; texts with none in common are near 0 (two other
words hashed alike aside: rare with the default 256 dimensions).

.. code-block:: python

    from toolang_core.testing.embeddings import ConceptEmbedder

    embedder = ConceptEmbedder()
    plugins = {"concepts": embedder.plugin()}  # embedding_model = "concepts"
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolang_core.markers import hookimpl

__all__ = ["CONCEPTS", "STOPWORDS", "ConceptEmbedder"]

CONCEPTS: Final[Mapping[str, str]] = {
    **dict.fromkeys(("car", "cars", "automobile", "automobiles", "vehicle", "auto"), "vehicle"),
    **dict.fromkeys(("doctor", "physician", "gp", "medic"), "doctor"),
    **dict.fromkeys(("cat", "cats", "feline", "kitten", "kitty"), "cat"),
    **dict.fromkeys(("dog", "dogs", "canine", "puppy", "hound"), "dog"),
    **dict.fromkeys(("wife", "husband", "spouse", "partner"), "spouse"),
    **dict.fromkeys(("peanut", "peanuts", "groundnut", "groundnuts"), "peanut"),
    **dict.fromkeys(("allergy", "allergic", "intolerant", "intolerance"), "allergy"),
    **dict.fromkeys(("parked", "park", "parking", "leave", "left"), "park"),
    **dict.fromkeys(("birthday", "born", "birth"), "birth"),
    **dict.fromkeys(("cellar", "basement"), "basement"),
}
"""Words that mean the same thing, by the concept they stand for."""

_STOPWORDS = (
    "a an and are as at be by did do does for from has have i in is it its my me of on or "
    "our so that the their there this to was we were what when where which who why will "
    "with you your"
)
STOPWORDS: Final = frozenset(_STOPWORDS.split())
_WORD: Final = re.compile(r"\w+")


class ConceptEmbedder:
    """A deterministic :class:`~toolang_core.models.EmbeddingModel` (see the module).

    ``embedded`` lists every text embedded, in order (a test can count the calls).
    """

    def __init__(self, dimensions: int = 256, concepts: Mapping[str, str] = CONCEPTS) -> None:
        self.concepts = dict(concepts)
        self._own = {c: n for n, c in enumerate(sorted(set(self.concepts.values())))}
        if dimensions < len(self._own) + 16:
            raise ValueError(
                f"dimensions: expected at least {len(self._own) + 16} (the table's "
                f"{len(self._own)} concepts and 16 for other words), found {dimensions}"
            )
        self._dimensions = dimensions
        self.embedded: list[str] = []
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text (all zeros for a text with no word but stopwords)."""
        with self._lock:
            self.embedded.extend(texts)
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self._dimensions
        for word in _WORD.findall(text.lower()):
            if word in STOPWORDS:
                continue
            concept = self.concepts.get(word)
            if concept is not None:
                vector[self._own[concept]] += 1.0
                continue
            digest = hashlib.blake2b(word.encode(), digest_size=8)
            value = int.from_bytes(digest.digest(), "big")
            others = self._dimensions - len(self._own)
            vector[len(self._own) + value % others] += 1.0 if value >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    def plugin(self, name: str = "concepts") -> object:
        """A plugin object offering this model as embedding model provider ``name``
        (every model id of it is this model)."""
        model = self

        class _Provider:
            def embedding_model(self, model_id: str | None) -> ConceptEmbedder:
                return model

        class _Plugin:
            @staticmethod
            @hookimpl
            def toolang_register_embedding_models(register: Any) -> None:
                register(
                    name,
                    lambda context: _Provider(),
                    description="a deterministic concept-table embedding model for tests",
                )

        return _Plugin()
