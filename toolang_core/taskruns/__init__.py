"""Task runs: delegated background work with an id, on the one runtime.

A task run is a turn request of source ``task`` on its child thread ``task:<id>``;
:class:`~toolang_core.taskruns.controller.TaskRunController` spawns, reads, waits for,
cancels and prunes them; :mod:`toolang_core.taskruns.tools` offers them to models.
"""
