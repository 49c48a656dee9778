"""The docs site builds in strict mode, and its generated references are complete.

Run by tox's ``docs`` env (it installs MkDocs and toolang-server; other envs do not
collect this directory: ``norecursedirs`` in pyproject.toml).
"""

from __future__ import annotations

import html
import logging
import re
import subprocess
import sys
from pathlib import Path

from mkdocs.config import load_config

from toolang_core.hookspecs import FAMILIES
from toolang_core.hookspecs.rules import HOOK_RULES
from toolang_server.openapi import api_document

ROOT = Path(__file__).resolve().parents[2]


def test_the_config_checks_every_link_anchor_and_page():
    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.strict
    levels = {
        f"{part}.{check}": level
        for part, checks in config.validation.items()
        for check, level in checks.items()
    }
    below = {name: level for name, level in levels.items() if level < logging.WARNING}
    assert len(levels) == 7
    assert not below, f"mkdocs.yml: checks below warn (strict mode would pass them): {below}"


def test_the_site_builds_strictly_with_every_route_and_hook(tmp_path):
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]

    api = html.unescape((site / "reference" / "api" / "index.html").read_text())
    api_text = re.sub(r"<[^>]+>", "", api)
    document = api_document()
    for path, item in document["paths"].items():
        for method in item:
            assert re.search(rf"{method.upper()}\s*{re.escape(path)}\s", api_text), (method, path)
    for name in document["components"]["schemas"]:
        assert f'id="{name.lower()}"' in api, name
    assert "Request body" in api_text and "Input parameters" in api_text
    assert "Streamed events" in api_text and "finished" in api_text

    hooks = (site / "reference" / "hooks" / "index.html").read_text()
    for family in FAMILIES:
        for hook in family.hook_names:
            assert f'id="{hook}"' in hooks, hook
            assert html.escape(HOOK_RULES[hook].name) in hooks, hook

    # a page's link to a plugin's README reaches the copy of it on the site
    cli = (site / "cli" / "index.html").read_text()
    assert 'href="../repository/plugins/toolang-authoring/"' in cli
    assert (site / "repository" / "plugins" / "toolang-authoring" / "index.html").is_file()
