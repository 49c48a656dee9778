"""An eval run's results: the summary, thresholds, storage and the comparison of two runs.

A run is kept in the execution store as one record (kind ``eval_run``, keyed by its
id): results stay beside the turns they were drawn from, follow the store to
PostgreSQL, are masked by the runtime's redaction policy before they are written, and
any door that reads the store (the console, the API) can show them. A run belongs to
the owner who ran it: another owner is told it does not exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.errors import UsageError
from toolang_core.evals.types import CaseResult
from toolang_core.store.errors import TurnNotFound
from toolang_core.store.owners import may_see

if TYPE_CHECKING:
    from toolang_core.redaction import RedactionPolicy
    from toolang_core.store.protocol import ExecutionStore

RECORD_KIND: Final = "eval_run"


class EvalRunNotFound(TurnNotFound):
    """No eval run with that id (or not one the caller may see): exit 6."""


@attrs.frozen
class EvalRun:
    """One ``toolang eval``: what ran, with what, and every case's result."""

    id: str
    created_at: float
    cases: tuple[CaseResult, ...]
    dataset: str | None = None
    selection: str | None = None
    agent: str | None = None
    model: str | None = None
    owner: str | None = None
    tool_mode: str = "live"
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Cases, passed, pass rate, and per evaluator: passed of used."""
        passed = sum(c.passed for c in self.cases)
        by: dict[str, list[int]] = {}
        for case in self.cases:
            for verdict in case.verdicts:
                counts = by.setdefault(verdict.evaluator, [0, 0])
                counts[0] += verdict.passed
                counts[1] += 1
        return {
            "cases": len(self.cases),
            "passed": passed,
            "pass_rate": passed / len(self.cases) if self.cases else 0.0,
            "evaluators": {
                name: {"passed": p, "used": n, "pass_rate": p / n}
                for name, (p, n) in sorted(by.items())
            },
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "dataset": self.dataset,
            "selection": self.selection,
            "agent": self.agent,
            "model": self.model,
            "owner": self.owner,
            "tool_mode": self.tool_mode,
            "seconds": self.seconds,
            "summary": self.summary(),
            "cases": [c.to_json() for c in self.cases],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalRun:
        return cls(
            id=str(data["id"]),
            created_at=float(data["created_at"]),
            cases=tuple(CaseResult.from_json(c) for c in data.get("cases", ())),
            dataset=data.get("dataset"),
            selection=data.get("selection"),
            agent=data.get("agent"),
            model=data.get("model"),
            owner=data.get("owner"),
            tool_mode=str(data.get("tool_mode", "live")),
            seconds=float(data.get("seconds", 0.0)),
        )


# -- storage ---------------------------------------------------------------------------


def save_run(store: ExecutionStore, run: EvalRun, redaction: RedactionPolicy) -> None:
    """Write ``run`` as a record, masked by ``redaction``."""
    store.put_record(RECORD_KIND, run.id, redaction.value(run.to_json()), now=run.created_at)


ALIASES: Final = {"latest": 0, "previous": 1}
"""Names for ``viewer``'s newest runs: ``latest`` and the one before it, ``previous``."""


def load_run(store: ExecutionStore, run_id: str, viewer: str | None) -> EvalRun:
    """The run ``run_id`` (or an alias of :data:`ALIASES`) if ``viewer`` may see it.
    Public as ``toolang_core.load_eval_run``. :raises EvalRunNotFound:"""
    if run_id in ALIASES:
        runs = list_runs(store, viewer)
        if len(runs) <= ALIASES[run_id]:
            raise EvalRunNotFound(f"no {run_id} eval run yet (see `toolang eval list`)")
        return runs[ALIASES[run_id]]
    record = store.get_record(RECORD_KIND, run_id)
    if record is None or not may_see(record.data.get("owner"), viewer):
        raise EvalRunNotFound(f"no eval run with id {run_id!r} (see `toolang eval list`)")
    return EvalRun.from_json(record.data)


def list_runs(store: ExecutionStore, viewer: str | None) -> list[EvalRun]:
    """The runs ``viewer`` may see (``None``: the operator, every owner's), newest
    first. Public as ``toolang_core.list_eval_runs``."""
    runs = [
        EvalRun.from_json(r.data)
        for r in store.list_records(RECORD_KIND)
        if may_see(r.data.get("owner"), viewer)
    ]
    return sorted(runs, key=lambda r: r.created_at, reverse=True)


# -- thresholds ------------------------------------------------------------------------


@attrs.frozen
class Threshold:
    """``pass_rate`` (all cases) or an evaluator's pass rate must reach ``rate``."""

    name: str
    rate: float

    @classmethod
    def parse(cls, text: str) -> Threshold:
        """``0.9`` (the run's pass rate) or ``EVALUATOR=0.9``. :raises UsageError:"""
        name, sep, value = text.rpartition("=")
        try:
            rate = float(value)
        except ValueError:
            rate = -1.0
        if not 0.0 <= rate <= 1.0 or (sep and not name):
            raise UsageError(
                f"--threshold {text!r}: expected RATE or EVALUATOR=RATE, RATE from 0 to 1"
            )
        return cls(name or "pass_rate", rate)

    def failure(self, summary: Mapping[str, Any]) -> str | None:
        """Why ``summary`` misses this threshold, or ``None``."""
        if self.name == "pass_rate":
            got = float(summary["pass_rate"])
        else:
            used = summary["evaluators"].get(self.name)
            if used is None:
                return f"{self.name}: no case used this evaluator (threshold {self.rate:g})"
            got = float(used["pass_rate"])
        if got + 1e-12 < self.rate:
            return f"{self.name}: {got:.1%} passed, threshold {self.rate:.1%}"
        return None


def threshold_failures(run: EvalRun, thresholds: Sequence[Threshold]) -> list[str]:
    summary = run.summary()
    return [why for t in thresholds if (why := t.failure(summary)) is not None]


# -- comparison ------------------------------------------------------------------------

ORDER: Final = {"regressed": 0, "removed": 1, "fixed": 2, "changed": 3, "added": 4, "same": 5}


@attrs.frozen
class CaseChange:
    """How one case differs between two runs (``change``: regressed, fixed, changed —
    verdicts or output differ, both passing or both failing —, added, removed, same)."""

    case_id: str
    change: str
    before: CaseResult | None
    after: CaseResult | None
    evaluators: tuple[str, ...] = ()
    """The evaluators whose verdict flipped."""

    def to_json(self) -> dict[str, Any]:
        def side(result: CaseResult | None) -> dict[str, Any] | None:
            if result is None:
                return None
            failed = [v.evaluator for v in result.verdicts if not v.passed]
            return {"passed": result.passed, "failed": failed, "output": result.output}

        return {
            "case": self.case_id,
            "change": self.change,
            "evaluators": list(self.evaluators),
            "before": side(self.before),
            "after": side(self.after),
        }


def compare_runs(before: EvalRun, after: EvalRun) -> list[CaseChange]:
    """Every case of either run with its change, regressions first, then cases gone,
    fixes, other changes, new cases and unchanged ones (each in case order)."""
    old = {c.case_id: c for c in before.cases}
    new = {c.case_id: c for c in after.cases}
    order = [*old, *(k for k in new if k not in old)]
    changes = [_change(key, old.get(key), new.get(key)) for key in order]
    rank = {key: index for index, key in enumerate(order)}
    return sorted(changes, key=lambda c: (ORDER[c.change], rank[c.case_id]))


def _change(key: str, old: CaseResult | None, new: CaseResult | None) -> CaseChange:
    if old is None or new is None:
        return CaseChange(key, "added" if old is None else "removed", old, new)
    was = {v.evaluator: v.passed for v in old.verdicts}
    now = {v.evaluator: v.passed for v in new.verdicts}
    flipped = tuple(sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k)))
    if old.passed and not new.passed:
        change = "regressed"
    elif new.passed and not old.passed:
        change = "fixed"
    elif flipped or old.output != new.output:
        change = "changed"
    else:
        change = "same"
    return CaseChange(key, change, old, new, flipped)


list_eval_runs = list_runs
load_eval_run = load_run
