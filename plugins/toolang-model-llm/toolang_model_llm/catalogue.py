"""llm's models by id and alias, read once per provider, off the event loop.

Reading the catalogue imports ``llm`` and every llm plugin and calls their
``register_models`` hooks — some of which ask a local server for its models (Ollama) —
so it happens in a worker thread, once, and is kept for the provider's lifetime
(a newly installed llm plugin is seen after a restart).
"""

from __future__ import annotations

import difflib
import threading
from typing import Any

import attrs

from toolang_core.models import ModelNotFound

# llm keeps its plugin manager in module globals and marks its plugins loaded before
# loading them, so two threads reading catalogues at once could see a half-loaded
# set. One lock for the process, because what it guards is process-wide.
_LLM_LOADING = threading.Lock()

# llm-echo's models answer from the prompt alone; they never touch the network.
_OFFLINE_PLUGIN_MODULES = frozenset({"llm_echo"})


@attrs.frozen
class Entry:
    """One llm model: its sync and async objects (either may be missing)."""

    model_id: str
    sync: Any = None
    async_: Any = None

    @property
    def any(self) -> Any:
        return self.async_ if self.async_ is not None else self.sync

    @property
    def offline(self) -> bool:
        module = type(self.any).__module__.partition(".")[0]
        return module in _OFFLINE_PLUGIN_MODULES


@attrs.frozen
class Catalogue:
    """Every llm model under each of its names, and llm's default model id."""

    entries: dict[str, Entry]
    default_id: str

    @classmethod
    def load(cls) -> Catalogue:
        """Read llm's models (blocking: call it in a worker thread)."""
        import llm

        # get_default_model has no annotations; through Any the call type-checks whether
        # or not llm's own hints are installed.
        default_model: Any = llm.get_default_model
        with _LLM_LOADING:
            registered = llm.get_models_with_aliases()
            default_id: str = default_model()
        entries: dict[str, Entry] = {}
        for found in registered:
            main = found.model or found.async_model
            entry = Entry(main.model_id, found.model, found.async_model)
            for name in (main.model_id, *found.aliases):
                entries.setdefault(name, entry)
        return cls(entries, default_id)

    def get(self, model_id: str | None) -> Entry:
        """The model named ``model_id`` (``None``: llm's default model).

        :raises ModelError: naming the id and some that exist.
        """
        wanted = model_id or self.default_id
        entry = self.entries.get(wanted)
        if entry is None:
            what = (
                f"llm has no model {wanted!r}"
                if model_id
                else f"llm's default model {wanted!r} (`llm models default`) is not installed"
            )
            raise ModelNotFound(
                f"{what}; it has: {self.suggestions(wanted)}. `llm models` lists them all; "
                "install an llm plugin (llm-anthropic, llm-gemini, llm-ollama, …) for more"
            )
        return entry

    def suggestions(self, wanted: str, count: int = 8) -> str:
        """Up to ``count`` model ids: the closest to ``wanted`` first."""
        ids = sorted({entry.model_id for entry in self.entries.values()})
        close = difflib.get_close_matches(wanted, ids, n=count, cutoff=0.5)
        picked = [*close, *(i for i in ids if i not in close)][:count]
        more = len(ids) - len(picked)
        return ", ".join(picked) + (f" and {more} more" if more > 0 else "") if ids else "none"
