"""Open the execution store a configuration names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from toolang_core.errors import ConfigError
from toolang_core.plugins.context import PluginContext

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.protocol import ExecutionStore


class StoreFactory(Protocol):
    """What ``toolang_register_stores`` registers: builds a store for a runtime."""

    def __call__(self, context: PluginContext, *, read_only: bool = False) -> ExecutionStore: ...


def open_store(
    config: ToolangConfig,
    host: PluginHost,
    *,
    read_only: bool = False,
    plugin_settings: Mapping[str, Any] | None = None,
) -> ExecutionStore:
    """Build the ``[store] backend`` store. Read-only opens never create or migrate.

    :raises ConfigError: when no installed plugin offers that backend.
    :raises StoreError: when the store cannot be opened (missing, corrupt, newer …).
    """
    stores = host.components.of_kind("store")
    registration = stores.get(config.store.backend)
    if registration is None:
        available = ", ".join(sorted(stores)) or "none"
        raise ConfigError(
            [
                f"{config.display_name}: store.backend: no installed plugin offers the store "
                f"backend {config.store.backend!r} (available: {available}); install it, e.g. "
                f"toolang-store-{config.store.backend}"
            ]
        )
    context = PluginContext(
        plugin_name=registration.plugin,
        config=config,
        settings=(plugin_settings or {}).get(registration.plugin),
    )
    factory = cast("StoreFactory", registration.factory)
    store = factory(context, read_only=read_only)
    # The key that seals approval decisions goes with the store (read on first use);
    # a writable open checks it is the store's key (made on a new store's first open),
    # and makes the operator's credential beside it when there is none.
    from toolang_core.credential import ensure_credential
    from toolang_core.tools.approval_seal import ApprovalKeyFile

    store.approval_key = ApprovalKeyFile(config.approval_key_path)  # type: ignore[attr-defined]
    if not read_only:
        try:
            ensure_credential(config.credential_path)
            check_approval_key(store)
        except BaseException:
            store.close()
            raise
    return store


def check_approval_key(store: ExecutionStore) -> None:
    """Make sure decisions on ``store`` can be told from forged ones: its approval key
    exists (made, mode 0600, when neither it nor the store's fingerprint does) and is
    the one the store has seen before.

    :raises ApprovalKeyError: the store's decisions are sealed with another key, or
        with one this runtime cannot find (another node's key file is missing here).
    """
    import time

    import structlog

    from toolang_core.tools.approval_seal import ensure_approval_key
    from toolang_core.tools.approvals import ApprovalBook

    source = store.approval_key  # type: ignore[attr-defined]
    key, first = ensure_approval_key(source, store, now=time.time())
    if first:
        adopted = ApprovalBook(store, key=key).adopt_history()
        structlog.get_logger("toolang.runtime").info(
            "approval.key_recorded", fingerprint=key.fingerprint, adopted_decisions=adopted
        )
