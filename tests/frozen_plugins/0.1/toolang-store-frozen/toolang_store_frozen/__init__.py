"""toolang-store-frozen: a toolang store plugin."""

from __future__ import annotations

from toolang_core import PluginContext, RegisterFactory, hookimpl


class Store:
    """Replace with the real component; the factory below builds one per runtime."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context


@hookimpl
def toolang_register_stores(register: RegisterFactory) -> None:
    register("frozen", Store, description="A store component.")
