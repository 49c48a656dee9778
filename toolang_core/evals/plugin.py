"""The built-in ``evaluators`` plugin: registers the evaluators of :mod:`.builtin`.

Kept apart from them because every plugin host registers this plugin and only
``toolang eval`` calls its hook: the evaluators' classes are imported then, not by a
``toolang chat``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.markers import hookimpl

if TYPE_CHECKING:
    from toolang_core.evals.types import RegisterEvaluator


@hookimpl
def toolang_register_evaluators(register: RegisterEvaluator) -> None:
    from toolang_core.evals.builtin import BUILTIN

    for name, (factory, description) in BUILTIN.items():
        register(name, factory, description=description)
