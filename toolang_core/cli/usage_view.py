"""Token usage as ``toolang status`` shows it: today's (UTC) total, per owner, beside
the configured ``[limits]`` (docs/spend-limits.md)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs
import click

from toolang_core.spend import day_start
from toolang_core.store.usage import Usage, UsageFilter

if TYPE_CHECKING:
    from toolang_core.config.spend import LimitsConfig
    from toolang_core.store.protocol import ExecutionStore


@attrs.frozen
class UsageToday:
    """Today's usage: every owner's together and each one's (``""``: no owner)."""

    since: float
    total: Usage
    owners: dict[str, Usage]

    @classmethod
    def read(cls, store: ExecutionStore, *, now: float | None = None) -> UsageToday:
        since = day_start(time.time() if now is None else now)
        owners = store.usage_by_owner(UsageFilter(since=since))
        total = sum(owners.values(), Usage())
        return cls(since, total, owners)

    def to_json(self, limits: LimitsConfig) -> dict[str, Any]:
        return {
            "since": self.since,
            **self.total.to_json(),
            "owners": {owner: u.to_json() for owner, u in self.owners.items()},
            "limits": attrs.asdict(limits),
        }

    def show(self, limits: LimitsConfig) -> None:
        daily = limits.owner_daily_tokens
        of = f" of {daily} each" if daily is not None else ""
        click.echo(f"usage     today (UTC): {self.total.describe()}")
        for owner, used in self.owners.items():
            click.echo(
                f"  {owner or '(no owner)'}: {used.total} tokens{of}, "
                f"{used.model_calls} model call{'' if used.model_calls == 1 else 's'}"
            )
        per_turn = [
            f"{key} = {value}"
            for key, value in attrs.asdict(limits).items()
            if value is not None and key != "owner_daily_tokens"
        ]
        if per_turn:
            click.echo(f"limits    {', '.join(per_turn)}")
