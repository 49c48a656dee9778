"""Model hooks: the language models that answer turns, and the embedding models that
turn text into vectors (semantic search)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_models(register: RegisterFactory) -> None:
    """Offer model providers.

    Call ``register(name, factory)`` once per provider. Agents name a model as
    ``"<provider>"`` or ``"<provider>/<model id>"``; the runtime calls the provider's
    ``factory(context)`` the first time it is needed. Registration must stay cheap:
    import SDKs inside the factory, not here. Return nothing.
    """


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_embedding_models(register: RegisterFactory) -> None:
    """Offer embedding model providers.

    Call ``register(name, factory)`` once per provider. A plugin that needs one (e.g. a
    memory plugin's semantic recall) names it as ``"<provider>"`` or
    ``"<provider>/<model id>"`` and gets it from the runtime's ``embedding_models``
    service (:class:`toolang_core.models.EmbeddingModels`); the provider's
    ``factory(context)`` is called the first time one is asked for and returns a
    :class:`toolang_core.models.EmbeddingProvider`. Registration must stay cheap:
    import SDKs inside the factory, not here. Return nothing.
    """
