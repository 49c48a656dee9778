"""Replay mode: a turn whose tool calls are answered from another turn's record.

A replay request (:mod:`toolang_core.history.replay` makes them) carries in its
``meta["replay"]`` the tool calls the recorded turn made — each call's tool, its
parameters as they ran and its result — and the tools it may really run::

    {"turn_id": "<recorded turn>", "allow_tools": ["clock_now"],
     "calls": [{"name": "fs_read", "params": {"path": "a"}, "result": {"ok": true, …}}]}

While such a turn runs, each tool call the model asks for is answered by
:meth:`RecordedCalls.answer`:

* a call of the same tool with the same canonical parameters (:func:`canonical_params`)
  as a recorded one gets that call's recorded result — nothing runs, no hook is asked;
  the same call made again gets the next recorded result, and the last one after that;
* a call of a tool in ``allow_tools`` runs for real, through the whole tool-hook chain;
* any other call is **stopped**: it is never run, and the model is told so.

Every call is still recorded as a ``tool_call`` step of the replay turn, its chain one
stage ``replay`` (verdict ``recorded`` or ``stopped``), so the replay's trace says
what was answered from the record and what was stopped.

``meta["model"]``, on any request, names the model the turn runs with instead of its
agent's (a replay against another model, a fork with ``--model``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from toolang_core.errors import UsageError
from toolang_core.tools.approvals import canonical_params
from toolang_core.tools.chain import StageRecord
from toolang_core.tools.types import ToolCall, ToolResult
from toolang_core.turn import trace

REPLAY_META: Final = "replay"
"""The request metadata key of a replay (see the module docstring)."""
MODEL_META: Final = "model"
"""The request metadata key naming the model a turn runs with instead of its agent's."""
STOPPED: Final = "replay_stopped"
"""The ``error_type`` of a call a replay stopped."""

CallKey = tuple[str, str]


class BadReplay(UsageError):
    """A request's ``meta["replay"]`` or ``meta["model"]`` is not what it must be."""


@attrs.frozen
class RecordedCall:
    """One tool call of the recorded turn, with the result it got."""

    name: str
    params: Mapping[str, Any]
    result: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "result": dict(self.result)}


class RecordedCalls:
    """Answers a replay turn's tool calls from the recorded ones (module docstring)."""

    def __init__(
        self, turn_id: str, calls: Sequence[RecordedCall], allow_tools: Sequence[str]
    ) -> None:
        self.turn_id = turn_id
        self.allow_tools = frozenset(allow_tools)
        self._results: dict[CallKey, list[Mapping[str, Any]]] = {}
        for call in calls:
            self._results.setdefault(_key(call.name, call.params), []).append(call.result)
        self._used: dict[CallKey, int] = {}

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> RecordedCalls | None:
        """The recorded calls a request's ``meta`` carries (``None``: not a replay).

        :raises BadReplay: when ``meta["replay"]`` is not a replay's."""
        raw = meta.get(REPLAY_META)
        if raw is None:
            return None
        try:
            calls = [
                RecordedCall(str(c["name"]), dict(c.get("params") or {}), dict(c["result"]))
                for c in raw.get("calls", ())
            ]
            allowed = [str(name) for name in raw.get("allow_tools", ())]
            return cls(str(raw.get("turn_id", "")), calls, allowed)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise BadReplay(
                f"meta.replay: expected {{turn_id, calls: [{{name, params, result}}], "
                f"allow_tools: [names]}} ({exc!r})"
            ) from None

    def answer(self, call: ToolCall) -> tuple[ToolResult, StageRecord] | None:
        """The recorded result of ``call`` or its stop, with the stage that decided;
        ``None`` when ``call`` may run for real (its tool is allowed)."""
        key = _key(call.name, call.params)
        results = self._results.get(key)
        if results:
            used = self._used.get(key, 0)
            self._used[key] = used + 1
            result = trace.result_from_json(dict(results[min(used, len(results) - 1)]))
            detail = f"answered from the record of turn {self.turn_id}"
            return result, StageRecord("replay", "recorded", None, detail)
        if call.name in self.allow_tools:
            return None
        error = (
            f"not run: this is a replay of turn {self.turn_id}, which made no call of "
            f"{call.name} with these parameters; a replay runs no tool it was not allowed "
            f"(--allow-tools {call.name})"
        )
        result = ToolResult(ok=False, error=error, error_type=STOPPED)
        return result, StageRecord("replay", "stopped", None, error)


def model_of(meta: Mapping[str, Any]) -> str | None:
    """The model a request asks its turn to run with (``None``: its agent's).

    :raises BadReplay: when ``meta["model"]`` is there and not a model name."""
    value = meta.get(MODEL_META)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadReplay(f"meta.model {value!r}: expected a model name such as llm/gpt-4o-mini")
    return value


def _key(name: str, params: Mapping[str, Any]) -> CallKey:
    return name, canonical_params(params)
