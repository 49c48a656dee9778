"""Resolve ``provider/model-id`` names to models, one provider object per runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core.models.spec import model_spec_problem
from toolang_core.models.types import Model, ModelError

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime


class ModelResolver:
    """Builds each model provider once, on first use, and hands out its models."""

    def __init__(self, runtime: CoreRuntime) -> None:
        self.runtime = runtime
        self._providers: dict[str, Any] = {}

    def resolve(self, spec: str, *, wanted_by: str = "") -> Model:
        """The model named ``spec`` (``"provider"`` or ``"provider/model id"``).

        :raises ModelError: naming the provider, the installed ones and who asked.
        """
        provider_name, _, model_id = spec.partition("/")
        provider = self._providers.get(provider_name)
        if provider is None and (problem := model_spec_problem(spec)):
            raise ModelError(f"model {spec[:60]!r}: {problem}")
        if provider is None:
            registrations = self.runtime.components.of_kind("model")
            registration = registrations.get(provider_name)
            if registration is None:
                installed = ", ".join(sorted(registrations)) or "none"
                who = f" (asked for by {wanted_by})" if wanted_by else ""
                raise ModelError(
                    f"no model provider {provider_name!r} for model {spec!r}{who}; installed "
                    f"providers: {installed}. Install one (e.g. toolang-model-llm) or set "
                    "[models] default"
                )
            provider = registration.factory(self.runtime.plugin_context(registration.plugin))
            self._providers[provider_name] = provider
        model: Model = provider.model(model_id or None)
        return model
