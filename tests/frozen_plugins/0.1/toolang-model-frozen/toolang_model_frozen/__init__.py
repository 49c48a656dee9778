"""toolang-model-frozen: a toolang model provider (a stand-in that echoes; put your model here).

Select it with ``[models] default = "frozen"`` (or ``"frozen/<model id>"``), or in an
agent's ``model:``. ``complete`` gets the whole request — messages, the tools the
agent may use — and answers with text or tool calls; ``stream`` yields text pieces
and then the whole response.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from toolang_core import RegisterFactory, hookimpl
from toolang_core.models import ModelRequest, ModelResponse

PROVIDER = "frozen"


class FrozenModel:
    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    async def complete(self, request: ModelRequest) -> ModelResponse:
        said = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        return ModelResponse(text=f"(frozen) {said.strip()}", model=self.model_id)

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        response = await self.complete(request)
        yield response.text
        yield response


class FrozenProvider:
    def model(self, model_id: str | None) -> FrozenModel:
        return FrozenModel(model_id or "echo")


@hookimpl
def toolang_register_models(register: RegisterFactory) -> None:
    register(PROVIDER, lambda context: FrozenProvider(), description="an echoing stand-in")
