"""What the runtime and the agent turn share: the turn-executor seam.

Below :mod:`toolang_core.runtime` (which claims turns and runs the after-turn stages),
:mod:`toolang_core.turn` (the agent executor) and :mod:`toolang_core.taskruns`; it
imports none of them.
"""
