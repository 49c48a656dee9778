"""The inbox: every turn request enters here, is checked and is admitted under its
group's policy. Below :mod:`toolang_core.runtime` and :mod:`toolang_core.taskruns`
(which submits child turns through it)."""
