"""One ``toolang eval``: cases from a dataset and recorded turns, run and scored, as an
:class:`~toolang_core.evals.results.EvalRun`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from toolang_core.evals.dataset import build_use
from toolang_core.evals.results import EvalRun
from toolang_core.evals.runner import EvalOptions, run_cases
from toolang_core.evals.types import EvalCase, RecordedTurn
from toolang_core.ids import new_id

if TYPE_CHECKING:
    from pathlib import Path

    from toolang_core.config.model import ToolangConfig
    from toolang_core.evals.dataset import Dataset
    from toolang_core.evals.registry import Evaluators
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.protocol import ExecutionStore

RECORDED_DEFAULTS = (("exact", None), ("tool_call", "recorded"))
"""How every recorded turn is judged, before the dataset's evaluators: the same answer
(``exact`` against its recorded output) and the same tool calls."""


def build_cases(
    dataset: Dataset | None, recorded: Sequence[RecordedTurn], registry: Evaluators
) -> list[EvalCase]:
    """The dataset's cases (its evaluators for every case first, then the case's own),
    then one case per recorded turn (``turn:<id>``: the recorded output is its
    ``expected``; judged by :data:`RECORDED_DEFAULTS` and the dataset's evaluators)."""
    defaults = dataset.evaluators if dataset is not None else ()
    cases = [
        attrs.evolve(case, evaluators=(*defaults, *case.evaluators))
        for case in (dataset.cases if dataset is not None else ())
    ]
    for turn in recorded:
        origin = f"turn {turn.turn_id}"
        uses = (
            *(build_use(registry, name, params, origin) for name, params in RECORDED_DEFAULTS),
            *defaults,
        )
        cases.append(
            EvalCase(
                id=f"turn:{turn.turn_id}",
                input=turn.input,
                origin=origin,
                evaluators=uses,
                expected=turn.output,
                tags=("recorded",),
                recorded=turn,
            )
        )
    return cases


async def evaluate(
    config: ToolangConfig,
    host: PluginHost,
    cases: Sequence[EvalCase],
    options: EvalOptions,
    *,
    env: Mapping[str, str] | None = None,
    recorded_store: ExecutionStore | None = None,
    dataset: str | None = None,
    selection: str | None = None,
    home: Path | None = None,
) -> EvalRun:
    """Run and score ``cases`` (:func:`~toolang_core.evals.runner.run_cases`)."""
    started = time.time()
    clock = time.perf_counter()
    results, tool_mode = await run_cases(
        config, host, cases, options, env=env, recorded_store=recorded_store, home=home
    )
    return EvalRun(
        id=new_id(),
        created_at=started,
        cases=tuple(results),
        dataset=dataset,
        selection=selection,
        agent=options.agent,
        model=options.model,
        owner=options.owner,
        tool_mode=tool_mode,
        seconds=time.perf_counter() - clock,
    )
