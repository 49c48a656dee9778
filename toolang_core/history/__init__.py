"""History as a tool: fork a thread at any turn, replay a turn against another model.

Both start a **new thread** whose earlier history is the original's up to the chosen
turn, by reference (:mod:`toolang_core.store.forks`: one record, nothing copied, the
original never written), owned by the original's owner — and one owner is refused
another owner's turns (:func:`toolang_core.store.owners.check_thread`).

- :func:`fork_thread` (``toolang threads fork``, ``POST /api/turns/{id}/fork``): the
  chosen turn runs again on the new thread, with its input edited, or another agent or
  model — a real turn, its tools run as any turn's do.
- :func:`plan_replay`, :func:`submit_replay`, :func:`replay_report` and, all three in
  one, :func:`replay_turn` (``toolang turns replay``, ``POST /api/turns/{id}/replay``):
  the turn runs again against another model or agent *without side effects* — its tool
  calls answered from the recorded ones (:mod:`toolang_core.turn.replay`), any other
  call stopped and reported unless allowed, nothing remembered.

Public (``toolang_core.history``): the evaluation of agents over recorded turns builds on
:func:`plan_replay` / :func:`submit_replay` / :func:`replay_report`.
"""

from toolang_core.history.fork import Forked, check_agent_and_model, fork_thread, pick_turn
from toolang_core.history.replay import (
    RecordedCall,
    ReplayedCall,
    ReplayPlan,
    ReplayReport,
    plan_replay,
    replay_report,
    replay_turn,
    submit_replay,
)

__all__ = [
    "Forked",
    "RecordedCall",
    "ReplayPlan",
    "ReplayReport",
    "ReplayedCall",
    "check_agent_and_model",
    "fork_thread",
    "pick_turn",
    "plan_replay",
    "replay_report",
    "replay_turn",
    "submit_replay",
]
