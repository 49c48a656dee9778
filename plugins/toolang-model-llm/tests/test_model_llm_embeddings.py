"""llm's embedding models as toolang embedding models (provider ``llm``), through a small
llm plugin registered for the test: no network, no weights."""

from __future__ import annotations

import llm
import pytest

import toolang_model_llm
from toolang_core.models import EmbeddingError


class LetterCounts(llm.EmbeddingModel):
    """A local llm embedding model: how often a text uses each of a, b and c."""

    model_id = "letter-counts"
    batch_size = 2

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed_batch(self, items):
        batch = list(items)
        self.batches.append(batch)
        for item in batch:
            yield [float(item.count(letter)) for letter in "abc"]


class Keyed(llm.EmbeddingModel):
    """A remote llm embedding model (it needs a key): a real model call."""

    model_id = "keyed-embed"
    needs_key = "keyed"

    def embed_batch(self, items):
        raise AssertionError("never called while real model calls are blocked")


@pytest.fixture
def letter_counts():
    model = LetterCounts()

    class Plugin:
        @staticmethod
        @llm.hookimpl
        def register_embedding_models(register):
            register(model, aliases=("letters",))
            register(Keyed())

    plugin = Plugin()
    llm.plugins.pm.register(plugin, name="toolang-test-letter-counts")
    yield model
    llm.plugins.pm.unregister(plugin)


def test_llm_embedding_models_are_offered_by_name_and_embed_in_batches(
    toolang_runtime, letter_counts
):
    runtime = toolang_runtime("", plugins={toolang_model_llm.NAME: toolang_model_llm})
    models = runtime.embedding_models
    assert "llm" in models.names()
    model = models.get("llm/letters", wanted_by="a test")
    assert models.get("llm/letters") is model  # one object per name
    assert model.embed(["abc", "aab", "ccc"]) == [[1, 1, 1], [2, 1, 0], [0, 0, 3]]
    assert letter_counts.batches == [["abc", "aab"], ["ccc"]]  # llm's batch_size
    assert model.dimensions == 3

    with pytest.raises(EmbeddingError, match=r"no embedding model 'nope'.*letter-counts"):
        models.get("llm/nope", wanted_by="[plugins.x] embedding_model")
    keyed = models.get("llm/keyed-embed")
    with pytest.raises(EmbeddingError, match="real model calls are blocked"):
        keyed.embed(["anything"])
    # Named offline, it is called (and fails as its library does, named).
    offline = toolang_runtime(
        '[plugins.model-llm]\noffline_models = ["keyed-embed"]\n',
        plugins={toolang_model_llm.NAME: toolang_model_llm},
    )
    with pytest.raises(EmbeddingError, match="llm embedding model 'keyed-embed' failed"):
        offline.embedding_models.get("llm/keyed-embed").embed(["anything"])
