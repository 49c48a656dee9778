"""Console: the eval runs (``toolang eval``), each with its summary, and one run's
cases with every evaluator's verdict. Runs are records of the execution store; an owner
sees its own only, the operator every owner's (``toolang_core.list_eval_runs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import EvalRunNotFound, list_eval_runs, load_eval_run
from toolang_server.console.pages import render
from toolang_server.http import caller_of, not_found, runtime_of, store_of

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import EvalRun, RegisterRoute

SHOWN_RUNS = 100
"""The newest runs the list shows."""


def run_row(run: EvalRun) -> dict[str, Any]:
    """What the list shows of one run (its summary beside its id and settings)."""
    summary = run.summary()
    return {
        "id": run.id,
        "created_at": run.created_at,
        "what": run.dataset or run.selection or "",
        "agent": run.agent,
        "model": run.model,
        "owner": run.owner,
        "tool_mode": run.tool_mode,
        "seconds": run.seconds,
        **summary,
    }


async def evals_page(request: Request) -> Response:
    """Console: the caller's eval runs, newest first."""
    runtime, caller = runtime_of(request), caller_of(request)
    runs = list_eval_runs(store_of(runtime), caller.owner)[:SHOWN_RUNS]
    return render(request, "evals.html", "/evals", "Evals", runs=[run_row(r) for r in runs])


async def eval_run_page(request: Request) -> Response:
    """Console: one eval run — its summary, per evaluator, and every case's verdicts."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    try:
        run = load_eval_run(store_of(runtime), run_id, caller.owner)
    except EvalRunNotFound:
        raise not_found("eval run", run_id) from None
    return render(
        request,
        "eval_run.html",
        "/evals",
        f"Eval run {run.id}",
        run=run_row(run),
        cases=[c.to_json() | {"passed": c.passed} for c in run.cases],
        raw=run.to_json(),
    )


def register(register_route: RegisterRoute) -> None:
    register_route("/evals", evals_page)
    register_route("/evals/{run_id}", eval_run_page)
