"""Collect the evaluators plugins offer through ``toolang_register_evaluators``.

Asked only by ``toolang eval`` (a run of the runtime never pays for it). Each plugin is
asked in isolation and its evaluators are kept all or nothing: one that registers a
bad or taken name is reported and contributes none, the others still do.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import attrs

if TYPE_CHECKING:
    from toolang_core.evals.types import EvaluatorFactory
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.plugins.facade import Hooks

HOOK: Final = "toolang_register_evaluators"
_NAME: Final = re.compile(r"^[a-z][a-z0-9_-]*$")


class EvaluatorRegistrationError(ValueError):
    """A plugin registered an evaluator that is malformed or already taken."""


@attrs.frozen
class EvaluatorRegistration:
    name: str
    factory: EvaluatorFactory
    plugin: str
    description: str = ""


@attrs.frozen
class Evaluators:
    """Every registered evaluator by name, and the plugins whose registration failed."""

    by_name: dict[str, EvaluatorRegistration]
    failures: tuple[HookFailure, ...] = ()

    def known(self) -> str:
        return ", ".join(sorted(self.by_name)) or "none"


class _Collector:
    def __init__(self, plugin: str, taken: dict[str, EvaluatorRegistration]) -> None:
        self.plugin, self.taken = plugin, taken
        self.mine: list[EvaluatorRegistration] = []

    def register(self, name: str, factory: Any, *, description: str = "") -> None:
        if not isinstance(name, str) or not _NAME.match(name):
            raise EvaluatorRegistrationError(f"evaluator name {name!r} must match {_NAME.pattern}")
        if not callable(factory):
            raise EvaluatorRegistrationError(f"evaluator {name!r}: factory must be callable")
        other = self.taken.get(name) or next((r for r in self.mine if r.name == name), None)
        if other is not None:
            raise EvaluatorRegistrationError(
                f"evaluator {name!r} is already registered by plugin {other.plugin!r}"
            )
        self.mine.append(EvaluatorRegistration(name, factory, self.plugin, description))


def collect_evaluators(hooks: Hooks) -> Evaluators:
    """Every active plugin's evaluators, asked in pluggy's order (the built-in plugin
    ``evaluators`` among them); a plugin that fails contributes none."""
    taken: dict[str, EvaluatorRegistration] = {}
    failures: list[HookFailure] = []
    for plugin in hooks.implementations(HOOK):
        collector = _Collector(plugin, taken)
        _, failure = hooks.registration(HOOK, plugin, register=collector.register)
        if failure is not None:
            failures.append(failure)
            continue
        taken.update((r.name, r) for r in collector.mine)
    return Evaluators(taken, tuple(failures))
