"""Conflict resolution: from the workers' candidates to one result.

``trust_weighted``, ``majority_vote`` and ``fail_on_conflict`` are decided here;
``leader_decides`` asks the leader agent (see :mod:`toolang_teams.coordinator`),
which receives the distinct candidates this module lists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from toolang_teams.types import Candidate, Strategy


@attrs.frozen
class Resolution:
    """The chosen result (``None``: the task fails, ``reason`` says why)."""

    chosen: Candidate | None
    reason: str
    conflict: bool


def normalise(result: str) -> str:
    """What two results must share to count as the same answer: case, surrounding and
    repeated whitespace and trailing punctuation do not matter."""
    return re.sub(r"\s+", " ", result).strip().rstrip(".!").strip().casefold()


def distinct(candidates: Sequence[Candidate]) -> list[Candidate]:
    """One successful candidate per normalised answer, in the order first given."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        if c.ok:
            seen.setdefault(normalise(c.result), c)
    return list(seen.values())


def resolve(strategy: Strategy, candidates: Sequence[Candidate]) -> Resolution:
    """Resolve by ``strategy`` (not ``leader_decides``: that needs the leader)."""
    ok = [c for c in candidates if c.ok]
    answers = distinct(candidates)
    conflict = len(answers) > 1
    if not ok:
        failures = "; ".join(f"{c.member}: {c.error or 'failed'}" for c in candidates)
        return Resolution(None, f"no member succeeded ({failures or 'no members'})", False)
    if strategy is Strategy.TRUST_WEIGHTED:
        best = sorted(ok, key=lambda c: (-c.trust, c.member))[0]
        return Resolution(best, f"{best.member} has the highest trust ({best.trust:.3f})", conflict)
    if strategy is Strategy.MAJORITY_VOTE:
        votes: dict[str, list[Candidate]] = {}
        for c in ok:
            votes.setdefault(normalise(c.result), []).append(c)
        # most votes first; a tie goes to the answer whose best backer is most trusted
        ranked = sorted(
            votes.values(),
            key=lambda group: (-len(group), -max(c.trust for c in group), group[0].member),
        )
        winner = ranked[0]
        return Resolution(
            winner[0], f"{len(winner)} of {len(ok)} successful members agree", conflict
        )
    if strategy is Strategy.FAIL_ON_CONFLICT:
        if conflict:
            listed = "; ".join(f"{c.member}: {c.result!r}" for c in answers)
            return Resolution(None, f"conflict: {len(answers)} distinct results ({listed})", True)
        return Resolution(ok[0], "every successful member agrees", False)
    raise ValueError(f"resolve: {strategy.value} needs the leader (coordinator)")


def leader_prompt(task: str, answers: Sequence[Candidate]) -> str:
    """What the leader reads to pick one of ``answers``."""
    lines = [
        f"Your team answered the task {task!r} with {len(answers)} different results.",
        "Pick the best one. Reply with its number only.",
        "",
    ]
    lines += [f"{i}. {c.result}" for i, c in enumerate(answers, 1)]
    return "\n".join(lines)


def leader_pick(answer: str, answers: Sequence[Candidate]) -> Resolution:
    """The candidate the leader's ``answer`` names (the first number in it)."""
    found = re.search(r"\d+", answer)
    if found and 1 <= int(found.group()) <= len(answers):
        chosen = answers[int(found.group()) - 1]
        return Resolution(chosen, f"the leader picked candidate {found.group()}", True)
    return Resolution(
        None, f"the leader's answer {answer[:80]!r} names no candidate 1-{len(answers)}", True
    )
