"""``toolang eval``: run an agent on written cases or recorded turns and score it;
``toolang eval compare | list | show``: the stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli.output import echo_json, short, table, when
from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.evals.results import CaseChange, EvalRun


class _RunByDefault(click.Group):
    """``toolang eval DATASET …`` and ``toolang eval --from-turns …`` mean ``toolang eval
    run …``; ``compare``, ``list`` and ``show`` are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


OWNER_HELP = "Whose eval this is (default: $TOOLANG_OWNER, else none: the operator's)."


@click.group("eval", cls=_RunByDefault)
def eval_() -> None:
    """Evaluate an agent on a dataset or on recorded turns (docs/evals.md)."""


@eval_.command("run")
@click.argument("dataset", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--from-turns",
    "from_turns",
    default=None,
    metavar="SELECTION",
    help="Recorded turns: 'agent=operator status=completed since=7d limit=50'.",
)
@click.option("--agent", default=None, help="The agent every case runs with.")
@click.option("--model", default=None, help="The model every agent answers with.")
@click.option("--owner", envvar="TOOLANG_OWNER", default=None, help=OWNER_HELP)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1000),
    default=None,
    help="Cases running at once (default: [scheduler] max_running).",
)
@click.option(
    "--timeout",
    "timeout_seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Each case's turn limit in seconds.",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="[EVALUATOR=]RATE",
    help="Fail (exit 1) below this pass rate: of all cases, or of one evaluator.",
)
@click.option("--json", "as_json", is_flag=True, help="The run as JSON.")
@pass_state
def run(
    state: CliState,
    *,
    dataset: Path | None,
    from_turns: str | None,
    agent: str | None,
    model: str | None,
    owner: str | None,
    concurrency: int | None,
    timeout_seconds: float | None,
    thresholds: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run every case of DATASET (YAML or JSONL) and/or the recorded turns --from-turns
    selects through the runtime, in a home of their own, and score each answer.

    The run is stored (`toolang eval list`); the exit code is 1 when a --threshold is
    missed, 2 for a bad dataset, 5 or 6 for recorded turns of another owner.
    """
    import asyncio

    from toolang_core.errors import UsageError
    from toolang_core.evals.dataset import load_dataset
    from toolang_core.evals.registry import collect_evaluators
    from toolang_core.evals.results import Threshold, save_run, threshold_failures
    from toolang_core.evals.runner import EvalOptions
    from toolang_core.evals.selection import parse_selection, select_turns
    from toolang_core.evals.session import build_cases, evaluate

    if dataset is None and from_turns is None:
        raise UsageError("give a DATASET file, --from-turns SELECTION, or both")
    wanted = [Threshold.parse(t) for t in thresholds]
    owner = owner or None
    registry = collect_evaluators(state.host.hooks)
    loaded = load_dataset(dataset, registry) if dataset is not None else None
    runtime = state.runtime
    store = state.open_store(read_only=False)  # the run is recorded in it
    try:
        recorded = select_turns(store, parse_selection(from_turns), owner) if from_turns else []
        cases = build_cases(loaded, recorded, registry)
        if not cases:
            raise UsageError(f"--from-turns {from_turns!r}: no recorded turn matches")
        options = EvalOptions(agent, model, owner, concurrency, timeout_seconds)
        done = asyncio.run(
            evaluate(
                state.config,
                state.host,
                cases,
                options,
                env=state.env,
                recorded_store=store,
                dataset=str(dataset) if dataset is not None else None,
                selection=from_turns,
            )
        )
        save_run(store, done, runtime.redaction)
    finally:
        store.close()
    failures = threshold_failures(done, wanted)
    if as_json:
        echo_json({**done.to_json(), "threshold_failures": failures})
    else:
        show_run(done)
        for why in failures:
            click.echo(f"threshold missed: {why}")
    if failures:
        raise SystemExit(1)


@eval_.command("compare")
@click.argument("before")
@click.argument("after")
@click.option("--owner", envvar="TOOLANG_OWNER", default=None, help=OWNER_HELP)
@click.option("--all", "show_all", is_flag=True, help="Unchanged cases too.")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def compare(
    state: CliState, *, before: str, after: str, owner: str | None, show_all: bool, as_json: bool
) -> None:
    """What changed from run BEFORE to run AFTER, per case, regressions first."""
    from toolang_core.evals.results import compare_runs, load_run

    store = state.open_store(read_only=True)
    try:
        old, new = load_run(store, before, owner or None), load_run(store, after, owner or None)
    finally:
        store.close()
    changes = compare_runs(old, new)
    if as_json:
        echo_json({"before": old.id, "after": new.id, "cases": [c.to_json() for c in changes]})
        return
    shown = [c for c in changes if show_all or c.change != "same"]
    table([_change_row(c) for c in shown], ["change", "case", "evaluators", "before → after"])
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.change] = counts.get(change.change, 0) + 1
    click.echo(", ".join(f"{n} {k}" for k, n in counts.items()))
    before_rate, after_rate = old.summary()["pass_rate"], new.summary()["pass_rate"]
    click.echo(f"pass rate {before_rate:.1%} → {after_rate:.1%}")


def _change_row(change: CaseChange) -> list[str]:
    def side(result: Any) -> str:
        if result is None:
            return "-"
        return "pass" if result.passed else "fail"

    return [
        change.change,
        change.case_id,
        ",".join(change.evaluators) or "-",
        f"{side(change.before)} → {side(change.after)}",
    ]


@eval_.command("list")
@click.option("--owner", envvar="TOOLANG_OWNER", default=None, help=OWNER_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def list_(state: CliState, owner: str | None, as_json: bool) -> None:
    """The stored eval runs, newest first."""
    from toolang_core.evals.results import list_runs
    from toolang_core.store.errors import StoreMissing

    try:
        store = state.open_store(read_only=True)
    except StoreMissing:  # nothing ever ran here: no eval either
        runs = []
    else:
        try:
            runs = list_runs(store, owner or None)
        finally:
            store.close()
    if as_json:
        echo_json([{k: v for k, v in r.to_json().items() if k != "cases"} for r in runs])
        return
    rows = []
    for r in runs:
        summary = r.summary()
        what = r.dataset or f"--from-turns {r.selection}"
        rows.append(
            [
                r.id,
                when(r.created_at),
                f"{summary['passed']}/{summary['cases']}",
                r.model or "-",
                short(what, 50),
            ]
        )
    table(rows, ["id", "created", "passed", "model", "dataset"])


@eval_.command("show")
@click.argument("run_id")
@click.option("--owner", envvar="TOOLANG_OWNER", default=None, help=OWNER_HELP)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def show(state: CliState, run_id: str, owner: str | None, as_json: bool) -> None:
    """One stored eval run, case by case."""
    from toolang_core.evals.results import load_run

    store = state.open_store(read_only=True)
    try:
        found = load_run(store, run_id, owner or None)
    finally:
        store.close()
    if as_json:
        echo_json(found.to_json())
    else:
        show_run(found)


def show_run(run: EvalRun) -> None:
    """The run as a table, then its summary."""
    rows = []
    for case in run.cases:
        failed = [v for v in case.verdicts if not v.passed]
        why = "; ".join(f"{v.evaluator}: {v.reason}" for v in failed) or case.status
        seconds = "-" if case.latency_seconds is None else f"{case.latency_seconds * 1000:.0f} ms"
        rows.append(
            [
                case.case_id,
                "pass" if case.passed else "FAIL",
                seconds,
                str(case.tokens),
                short(why if failed else case.output, 70),
            ]
        )
    table(rows, ["case", "result", "latency", "tokens", "output / why it failed"])
    summary = run.summary()
    click.echo(
        f"{summary['passed']}/{summary['cases']} passed ({summary['pass_rate']:.1%}) "
        f"in {run.seconds:.2f} s; tools {run.tool_mode}"
    )
    for name, used in summary["evaluators"].items():
        click.echo(f"  {name:<12}{used['passed']}/{used['used']} passed")
    click.echo(f"eval run {run.id}")
