"""The ontologist's fixture: a runtime with the plugin and a scripted model."""

from __future__ import annotations

import pytest

import toolang_tools_ontologist as plugin
from toolang_core.testing.models import text
from toolang_core.testing.runtimes import run_turn, tool_results


@pytest.fixture
def ontologist(toolang_runtime, toolang_scripted_model, tmp_path):
    """``run(steps, owner=…)``: one turn whose model plays ``steps`` then says done;
    returns ``(runtime, turn id, tool results)``. ``run.root`` is the ingest root."""
    root = tmp_path / "data"
    root.mkdir()

    def run(steps, *, owner="alice"):
        model = toolang_scripted_model([*steps, text("done")])
        runtime = toolang_runtime(
            '[models]\ndefault = "scripted"\n[agents]\nmax_steps = 100\n'
            f'[plugins.tools-ontologist]\ningest_root = "{root}"\nmax_rejected_shown = 50\n',
            plugins={"tools-ontologist": plugin, "scripted": model.plugin()},
        )
        turn_id = run_turn(runtime, owner=owner)
        return runtime, turn_id, tool_results(runtime, turn_id)

    run.root = root
    return run
