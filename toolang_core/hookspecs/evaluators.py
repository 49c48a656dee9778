"""Evaluator hooks: the scorers ``toolang eval`` judges an agent's answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.evals.types import RegisterEvaluator


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_evaluators(register: RegisterEvaluator) -> None:
    """Offer evaluators.

    Call ``register(name, factory, *, description="")`` once per evaluator. A dataset
    names an evaluator and gives its parameters (``- contains: "Paris"``); ``factory``
    is called with those parameters once per use while the dataset is read and returns
    an :class:`~toolang_core.evals.types.Evaluator` (raise ``ValueError`` for
    parameters it cannot take: the dataset is refused naming its file and line). A
    name another plugin registered first is refused. Called only by ``toolang eval``;
    return nothing.
    """
