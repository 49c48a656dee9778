"""Prices from ``[plugins.agent-pool]``, payment terms by trust, and the two hooks a
plugin uses: ``toolang_agree_payment`` (acts on the terms) and ``toolang_score_agent``
(replaces the selector's score)."""

from __future__ import annotations

import asyncio

import attrs
from teams_helpers import (
    LEAD,
    SPARE,
    W1,
    W2,
    W3,
    Agents,
    Recorder,
    Tools,
    coordinator,
    make_config,
    trust,
)

import toolang_agent_pool
from toolang_core import hookimpl
from toolang_core.config.model import PluginsConfig
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import text
from toolang_teams.coordinator import FormRequest


class Payments:
    def __init__(self) -> None:
        self.agreed: list[tuple[str, object]] = []

    @hookimpl
    def toolang_agree_payment(self, team_id, terms):
        self.agreed.append((team_id, terms))


class PreferW4:
    @hookimpl
    def toolang_score_agent(self, member, capability):
        return 10.0 if member.name == "w4" else None


def make(tmp_path, *plugins):
    settings = {"agent-pool": {"prices": {"w2": 0.5, "w3": 0.5}, "currency": "EUR"}}
    config = attrs.evolve(make_config(tmp_path), plugins=PluginsConfig(settings=settings))
    cast = Cast(**{n: (lambda r: text("ok")) for n in ("w1", "w2", "w3", "w4")})
    recorder = Recorder()
    chosen = [
        ("scripted", cast.model.plugin()),
        ("tools", Tools()),
        ("agents", Agents(LEAD, W1, W2, W3, SPARE)),
        ("agent-pool", toolang_agent_pool),
        ("recorder", recorder),
        *plugins,
    ]
    return Runtime.with_plugins(config, chosen, env={}), recorder


def form(workers: int = 3) -> FormRequest:
    return FormRequest(
        owner="ada",
        parent_thread_id="chat:1",
        goal="g",
        leader="lead",
        capability="survey",
        workers=workers,
        max_uses=5,
        valid_seconds=3600,
        id="team-1",
    )


def test_terms_are_free_postpay_or_prepay_by_price_and_trust_and_a_plugin_sees_them(tmp_path):
    payments = Payments()
    runtime, recorder = make(tmp_path, ("payments", payments))
    for name, successes in (("w1", 8), ("w2", 8), ("w3", 1)):
        trust(runtime, name, successes=successes)

    async def scenario():
        async with coordinator(runtime) as teams:
            return await teams.form(form())

    team = asyncio.run(scenario())
    terms = {t.member: t for t in team.payments}
    assert (terms["w1"].mode, terms["w1"].price_per_use) == ("free", 0.0)
    assert (terms["w2"].mode, terms["w2"].price_per_use, terms["w2"].currency) == (
        "postpay",
        0.5,
        "EUR",
    )
    assert terms["w3"].mode == "prepay"
    assert terms["w2"].max_uses == 5
    assert terms["w2"].valid_until == terms["w2"].valid_from + 3600
    assert [(t, p.member) for t, p in payments.agreed] == [
        ("team-1", m.name) for m in team.members[1:]
    ]
    agreed = [e.data for e in recorder.events if e.kind == "team.payment.agreed"]
    assert [(d["member"], d["mode"]) for d in agreed] == [
        (m.name, terms[m.name].mode) for m in team.members[1:]
    ]


def test_prices_reach_the_pool_and_a_score_plugin_reorders_the_selection(tmp_path):
    runtime, _ = make(tmp_path, ("prefer-w4", PreferW4()))
    store = runtime.open_store()
    try:
        pool = runtime.agents.pool(store)
        assert (pool.get("w2").price_per_call, pool.get("w2").currency) == (0.5, "EUR")
        chosen = pool.select("survey", 2)
        assert [m.name for m in chosen.chosen] == ["w4", "w1"]
        assert chosen.scores[0] == 10.0
    finally:
        store.close()
