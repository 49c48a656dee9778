"""Set-up shared by the tests of `toolang chat` while its turn waits on a person: the
script-file model in an installed test distribution, and a look at the store's books."""

from __future__ import annotations

import json

AGENT = '[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n[models]\ndefault = "scripted"\n'


def scripted_chat(
    toolang_distribution,
    toolang_home,
    tmp_path,
    *,
    name,
    first_call,
    plugins,
    entry_points=None,
    modules=None,
):
    """Install the distribution ``name`` with the script-file model (and
    ``entry_points``/``modules`` besides), scripted to make ``first_call`` then answer
    "all done"; write the agent config. Return the environment for `toolang chat` in a
    subprocess, loading ``source-chat``, ``plugins`` and ``scripted``."""
    toolang_distribution(
        name,
        entry_points={
            "toolang": {
                **(entry_points or {}),
                "scripted": "toolang_core.testing.script_file_plugin",
            }
        },
        modules=modules,
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [first_call]}, {"text": "all done"}]))
    toolang_home.write_config(AGENT)
    return {
        "TOOLANG_LOAD_PLUGINS": ",".join(["source-chat", *plugins, "scripted"]),
        "TOOLANG_SCRIPT": str(script),
        "PYTHONPATH": str(toolang_distribution.root),
    }


def listed(toolang_home, book_type, *args):
    """``book_type(store).list(*args)`` over the store of ``toolang_home``'s config."""
    from toolang_core import Runtime, load_config

    config = load_config(toolang_home.config_path, env={})
    store = Runtime.with_plugins(config).open_store()
    try:
        return book_type(store).list(*args)
    finally:
        store.close()
